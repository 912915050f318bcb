"""Does the paper's reward model over-optimise in FarmWorld? Best-of-n along n with a fresh last-token head.

    python benchmarks/paper_head_overoptimisation.py [--profile tiny|FILE.toml] [--pairs 8000] [--n-max 256]
                                                     [--labels p_sim_ann p_sim_single]

The book's reward model reads the SFT model's likelihood and the backward reader, a prior its labels barely move,
and best-of-n with it does not fall by n = 256 (chapter 16). The paper's reward model is a new head on the last
token, trained from the SFT model on the annotators' labels alone (``RewardModelConfig``'s defaults: lr 5e-4, two
epochs). For each label source this fits that model on ``--pairs`` of chapter 5's curve pairs (pairs of SFT samples,
``reward_model.curve_pairs``) and follows best-of-n along n on chapter 16's instructions, with ``--n-max``
candidates each: the people's and the judges' win-rate against the reference, the paired fall from the peak
(``overoptimisation.verdict``), the picks' mean R* and length. The paper (Fig. 5): with ``p_sim_ann``'s noisy labels
the win-rate peaks and falls; with a single judge's it does not. About 8 minutes on 2 cores for the defaults
(the draw of 200 x 256 candidates is shared, and every reward model and score is an artifact, cached).
"""

from __future__ import annotations

import argparse
import json
import time

from farmlib import Farm
from farmlib.evaluation import overoptimisation as O
from farmlib.methods import reward_model as R
from farmlib.methods.best_of_n import powers_of_two, prefix_draw

ANNOTATORS = ("human", "p_sim_eval")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--pairs", type=int, default=8000, help="curve pairs the reward model learns from (ties dropped)")
    ap.add_argument("--n-max", type=int, default=256)
    ap.add_argument("--labels", nargs="+", default=["p_sim_ann", "p_sim_single"])
    ap.add_argument("--out", default=None, help="a JSON file for the curves")
    args = ap.parse_args()
    farm = Farm(args.profile)
    pairs = R.curve_pairs(farm, args.pairs)[:args.pairs]
    cfg = farm.method_config("best_of_n_curve", {"n_max": args.n_max})
    out = {}
    for labels in args.labels:
        t0 = time.time()
        data = [r for r in farm.annotator(labels, 0).annotate_pairs(pairs, seed=0) if r["preference"] in (1, 2)]
        farm.preference_data = lambda _annotator, data=data: data  # the curve pairs in place of the profile's
        path = R.train(farm, R.RewardModelConfig(annotator=labels))
        m = R.metrics(path)
        draw = prefix_draw(farm, path, cfg)
        curve = O.best_of_n_curve(farm, draw, powers_of_two(cfg.n_max), farm.reference_outputs()[:len(draw["candidates"])],
                                  ANNOTATORS)
        verdict = O.verdict(curve, ANNOTATORS)
        cols = ["true reward R*", "length"] + [f"{k} {a}" for a in ANNOTATORS for k in ("win-rate", "se")]
        print(f"\n{labels}: {len(data)} pairs; held-out accuracy {100 * m['val_accuracy']:.1f} % against its labeller, "
              f"{100 * m['val_accuracy_true']:.1f} % against R* ({time.time() - t0:.0f} s)")
        print(curve[cols].round(3).to_string())
        for a, v in verdict.items():
            print(f"  {a}: peak {v['peak']:.1f} % at n = {v['peak_n']}, {v['last']:.1f} % at n = {cfg.n_max}: fall "
                  f"{v['drop']:.1f} ± {v['se_drop']:.1f} (paired){' — beyond twice its noise' if v['significant_fall'] else ''}")
        out[labels] = {"pairs": len(data), "reward_model": m, "verdict": verdict,
                       "curve": curve[cols].reset_index().to_dict(orient="records")}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
