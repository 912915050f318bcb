"""Past the paper's 10,000 pairs: what a reward model learns from many more labels, and whose taste it learns.

    python benchmarks/label_scale.py [--profile tiny|FILE.toml] [--pairs 1000 50000] [--labels true_reward p_sim_ann]

Simulated labels are nearly free, so ``preference_data`` may draw several pairs of SFT samples per instruction.
For each label source and number of pairs, the profile's reward model (``reward_model.train``, cached) is trained
and read three ways: its held-out accuracy against R* (chapter 5's pairs), and best-of-n on chapter 9's own
candidates, judged by the people and by ``p_sim_eval`` against the reference, with the picks' mean R*. A reward
model learns its labeller's taste: where the simulated judges and the people part, more of the judges' labels
move its picks towards the judges. The tiny run of the defaults takes about 30 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time

from farmlib import Farm
from farmlib.methods import best_of_n, reward_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--pairs", type=int, nargs="+", default=[1000, 50000], help="pairs drawn (ties are dropped)")
    ap.add_argument("--labels", nargs="+", default=["true_reward", "p_sim_ann"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    t0, rows = time.time(), []
    sft = None
    for labels in args.labels:
        for n in args.pairs:
            farm = Farm(args.profile, n_preference=n)
            cfg = farm.method_config("best_of_n")
            if sft is None:
                sft = farm.evaluate(farm.samples(farm.sft_model(), "eval", generator="sft10k"), "human")[0]
            path = reward_model.train(farm, farm.method_config("reward_model", {"annotator": labels}))
            m = reward_model.metrics(path)
            picks = best_of_n.select(farm, path, cfg)["outputs"][cfg.n_max]
            people, judges = (farm.evaluate(picks, a)[0] for a in ("human", "p_sim_eval"))
            rows.append({"labels": labels, "pairs": m["n_train"], "accuracy vs R*": m["val_accuracy_true"],
                         "se": m["val_se_true"], "people": people.win_rate, "se people": people.standard_error,
                         "p_sim_eval": judges.win_rate, "mean R*": sum(farm.true_rewards(picks)) / len(picks)})
            print(json.dumps(rows[-1]), flush=True)
    print(f"\n{args.profile}: best-of-{cfg.n_max} on chapter 9's candidates, {len(picks)} eval instructions; SFT 10k "
          f"{sft.win_rate:.1f} ± {sft.standard_error:.1f} % under the people ({time.time() - t0:.0f} s)")
    print(f"{'labels':<13}{'pairs':>8}{'acc vs R*':>15}{'people':>15}{'p_sim_eval':>12}{'mean R*':>9}")
    for r in rows:
        print(f"{r['labels']:<13}{r['pairs']:>8,}{100 * r['accuracy vs R*']:>9.1f} ± {100 * r['se']:.1f}"
              f"{r['people']:>9.1f} ± {r['se people']:.1f}{r['p_sim_eval']:>12.1f}{r['mean R*']:>9.3f}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"profile": args.profile, "sft10k": sft.win_rate, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
