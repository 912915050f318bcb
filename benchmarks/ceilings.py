"""The ceilings of learning from feedback in FarmWorld (issue: learning from feedback must work): what the true
reward R* itself achieves under the people, before any reward model is blamed.

    python benchmarks/ceilings.py [--profile tiny|FILE.toml] [--world-seed S] [--n-max 256] [--n-prompts 200]
                                  [--ppo-steps 40] [--ppo JSON] [--ppo-accuracy 0.7,0.8,0.9] [--out ceilings.json]

Prints, on the first ``--n-prompts`` evaluation instructions, SFT's win-rate against the reference under the
people, the oracle best-of-n (R*'s favourite of n SFT samples) along n with its KL bound, and PPO trained
against R* itself on the whole evaluation set (skipped with ``--ppo-steps 0``), with a few of its answers
beside SFT's to read. ``--ppo`` sets more of PPO's fields over the profile's; on tiny, world seeds 0 and 1,
``--ppo-steps 160 --ppo '{"rollout_batch": 128, "minibatch": 64, "lr": 3e-4, "kl_coef": 0.01}'`` (about 10
minutes on 2 cores) moves the policy where the profile's 40 steps of 64 rollouts do not (FINDINGS.md, "PPO's ceiling").
``--ppo-accuracy`` adds one PPO run per accuracy against a reward of that accuracy against R* whose errors are
random (R* plus noise fixed per answer): how accurate a reward model must be before PPO can use it.
Artifacts go to the profile's runs folder, so a second run reuses them.
"""

from __future__ import annotations

import argparse
import json
import time

from farm_args import add_farm_args, farm_from_args

from farmlib.evaluation.ceilings import oracle_best_of_n, ppo_ceiling


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_farm_args(ap)
    ap.add_argument("--n-max", type=int, default=256)
    ap.add_argument("--n-prompts", type=int, default=200)
    ap.add_argument("--ppo-steps", type=int, default=40)
    ap.add_argument("--ppo", type=json.loads, default={}, help="more PPOConfig fields, as JSON")
    ap.add_argument("--ppo-accuracy", type=lambda t: [float(x) for x in t.split(",")], default=[],
                    help="comma-separated accuracies against R* of noisy-R* rewards for PPO")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    farm = farm_from_args(args)
    t0 = time.time()
    sft_outs = farm.samples(farm.sft_model(), "eval", generator="sft10k")
    sft = farm.evaluate(sft_outs, "human")[0]
    print(f"{args.profile}, world seed {farm.profile.world_seed}: SFT 10k under the people, whole eval set: {sft}")
    rows = oracle_best_of_n(farm, args.n_max, args.n_prompts)
    print(f"\noracle best-of-n (R* picks), first {args.n_prompts} eval instructions, people vs reference:")
    print(f"{'n':>5} {'KL':>6} {'mean R*':>8} {'win-rate':>9} {'se':>5}")
    for r in rows:
        print(f"{r['n']:>5} {r['kl']:>6.2f} {r['true_reward']:>8.3f} {r['win_rate']:>8.1f}% {r['se']:>5.1f}")
    out = {"profile": args.profile, "world_seed": farm.profile.world_seed, "sft": sft.to_dict(), "oracle_best_of_n": rows,
           "seconds": {"oracle": time.time() - t0}}
    if args.ppo_steps:
        t1 = time.time()
        ppo = ppo_ceiling(farm, **{**args.ppo, "steps": args.ppo_steps})
        out["ppo_true_reward"] = {k: v for k, v in ppo.items() if k != "outputs"}
        out["seconds"]["ppo"] = time.time() - t1
        print(f"\nPPO on R* ({ppo['steps']} steps of {ppo['rollout_batch']} rollouts), whole eval set, people vs reference: "
              f"{ppo['win_rate']:.1f} ± {ppo['se']:.1f} % (SFT {sft.win_rate:.1f}); mean R* {ppo['true_reward']:.3f} "
              f"(SFT {sum(farm.true_rewards(sft_outs)) / len(sft_outs):.3f})")
        for s, p in list(zip(sft_outs, ppo["outputs"]))[:6]:
            print(f"\n  {s['instruction'][:90]!r}\n    SFT: {s['output'][:140]!r}\n    PPO(R*): {p['output'][:140]!r}")
    if args.ppo_steps and args.ppo_accuracy:
        rows = []
        print(f"\nPPO against R* plus a fixed random error ({args.ppo_steps} steps), whole eval set, people vs reference:")
        print(f"{'accuracy':>9} {'sigma':>6} {'win-rate':>9} {'se':>5} {'mean R*':>8} {'repetitive':>11} {'disfluent':>10}")
        for acc in [*args.ppo_accuracy, None]:
            t1 = time.time()
            r = ppo_ceiling(farm, accuracy=acc, **{**args.ppo, "steps": args.ppo_steps})
            rows.append({**{k: v for k, v in r.items() if k != "outputs"}, "seconds": time.time() - t1})
            print(f"{r['accuracy']:>9.2f} {r['reward_noise']:>6.3f} {r['win_rate']:>8.1f}% {r['se']:>5.1f} "
                  f"{r['true_reward']:>8.3f} {r['repetitive']:>11.3f} {r['disfluent']:>10.3f}", flush=True)
        out["ppo_noisy_true_reward"] = rows
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
