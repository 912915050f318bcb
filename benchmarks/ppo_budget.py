"""PPO along its budget, against R* itself and against the book's reward model: how many rollouts PPO needs before
R* moves the policy, and whether the reward model's PPO follows it there (issue 33's PPO row; chapter 11's
exercise 8 is one point of this curve).

    python benchmarks/ppo_budget.py [--profile tiny|FILE.toml] [--world-seed S] [--budgets 40x64,80x128,160x128]
                                    [--rewards true_reward,reward_model] [--seed 0] [--ppo JSON] [--out F.json]

Each budget is STEPSxROLLOUTS (steps, and prompts sampled a step). The profile's own budget runs the profile's PPO
as chapters 5 and 11 do (so a built book's artifacts are reused); every other budget runs with minibatches of
min(64, rollouts) and ``--ppo``'s fields, by default the larger batch's settings of FINDINGS.md's "PPO's ceiling"
(lr 3e-4, KL coefficient 0.01). For each run, on the whole evaluation set: the people's win-rate against the
reference paired with SFT 10k's over the instructions, mean R*, the distinct answers, the shares that repeat and
stumble (R*'s parts, as the leaderboard flags them), the most frequent answer, and what the reward model's score
gained over SFT 10k's answers split as chapter 11 splits it (:mod:`farmlib.evaluation.score_parts`; the split's
ratios only where the score gained is beyond twice its paired standard error, for they divide by it).
Artifacts go to the profile's runs folder, so a second run, or a built book, is reused.
"""

from __future__ import annotations

import argparse
import collections
import json
import time

from farm_args import add_farm_args, farm_from_args

from farmlib import methods
from farmlib.evaluation import score_parts
from farmlib.evaluation.ceilings import ppo_ceiling
from farmlib.evaluation.leaderboard import defect_rates
from farmlib.evaluation.paired import instruction_scores, paired_difference
from farmlib.methods import ppo
from farmlib.methods.reward_model import load_reward_model

REWARDS = ("true_reward", "reward_model")
LARGER_BATCH = {"lr": 3e-4, "kl_coef": 0.01}


def budget(text: str) -> tuple[int, int]:
    steps, rollouts = text.lower().split("x")
    return int(steps), int(rollouts)


def overrides_for(farm, steps: int, rollouts: int, extra: dict, seed: int) -> dict:
    """The profile's own PPO at its own budget; elsewhere ``extra`` at minibatches of min(64, rollouts)."""
    cfg = farm.method_config("ppo")
    seeded = {"seed": seed} if seed else {}
    if (steps, rollouts) == (cfg.steps, cfg.rollout_batch):
        return seeded
    return {"steps": steps, "rollout_batch": rollouts, "minibatch": min(64, rollouts), **extra, **seeded}


def run_one(farm, reward: str, over: dict) -> tuple[str, list[dict], float]:
    """Train (or reuse) one PPO run and sample its evaluation answers: (its name, the answers, training seconds)."""
    t = time.time()
    if reward == "true_reward":
        res = ppo_ceiling(farm, **over)
        return "PPO on R*", res["outputs"], time.time() - t
    cfg = farm.method_config("ppo", over)
    name = farm.run_name("ppo", cfg)
    path = ppo.train(farm, methods.reward_model_path(farm), cfg)
    return "PPO on the reward model", farm.samples(path, "eval", generator=name), time.time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_farm_args(ap)
    ap.add_argument("--budgets", type=lambda t: [budget(b) for b in t.split(",")],
                    default=[(40, 64), (80, 128), (160, 128)])
    ap.add_argument("--rewards", type=lambda t: t.split(","), default=list(REWARDS))
    ap.add_argument("--seed", type=int, default=0, help="PPO's seed (rollouts and minibatch order)")
    ap.add_argument("--ppo", type=json.loads, default=LARGER_BATCH,
                    help="PPOConfig fields for every budget but the profile's own, as JSON")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    for r in args.rewards:
        if r not in REWARDS:
            ap.error(f"--rewards: {r!r} is not one of {', '.join(REWARDS)}")
    farm = farm_from_args(args)
    tok = farm.tokenizer()
    rm = load_reward_model(methods.reward_model_path(farm))
    sft = farm.samples(farm.sft_model(), "eval", generator="sft10k")
    sft_wr, sft_ann = farm.evaluate(sft, "human")
    sft_scores = instruction_scores(sft_ann)
    print(f"{args.profile}, world seed {farm.profile.world_seed}, PPO seed {args.seed}; people paired against SFT 10k "
          f"over {len(sft)} evaluation instructions; settings beyond the profile's budget: {json.dumps(args.ppo)}")
    head = (f"{'reward':24s} {'budget':>8} {'people - SFT':>13} {'mean R*':>8} {'distinct':>8} {'repeats':>8} "
            f"{'stumbles':>8} {'score +':>8} {'likelihood share':>16} {'R*/score':>8} {'s':>5}")
    print(head)
    rows = []
    for steps, rollouts in args.budgets:
        for reward in args.rewards:
            over = overrides_for(farm, steps, rollouts, args.ppo, args.seed)
            name, outs, secs = run_one(farm, reward, over)
            wr, ann = farm.evaluate(outs, "human")
            d, se = paired_difference(instruction_scores(ann), sft_scores)
            defects = defect_rates(farm, outs)
            answers = collections.Counter(o["output"] for o in outs)
            parts = score_parts.table(rm, tok, {"SFT 10k": sft, name: outs}, farm.true_rewards, base="SFT 10k")
            # the split's ratios divide by the score gained: None where that gain is within twice its noise
            g = score_parts.gain(parts, "SFT 10k", name)
            row = {"reward": reward, "steps": steps, "rollouts": rollouts, "overrides": over,
                   "win_rate": wr.win_rate, "se": wr.standard_error, "people_vs_sft10k": d, "people_vs_sft10k_se": se,
                   "true_reward": parts[1]["true_reward"], "sft10k_true_reward": parts[0]["true_reward"],
                   "distinct": len(answers), "commonest": answers.most_common(1)[0],
                   "repetition_rate": defects["repetition_rate"], "disfluency_rate": defects["disfluency_rate"],
                   "score_gain": g, "seconds": secs}
            rows.append(row)
            share = "–" if g["reader_share"] is None else f"{100 * g['reader_share']:.0f} %"
            per = "–" if g["true_per_score"] is None else f"{g['true_per_score']:.2f}"
            print(f"{name:24s} {steps:>3}x{rollouts:<4} {d:+6.1f} ± {se:3.1f} {row['true_reward']:8.3f} "
                  f"{len(answers):8d} {row['repetition_rate']:8.1%} {row['disfluency_rate']:8.1%} "
                  f"{g['score']:+8.3f} {share:>16} {per:>8} {secs:5.0f}", flush=True)
    sft_defects = defect_rates(farm, sft)
    print(f"SFT 10k: mean R* {parts[0]['true_reward']:.3f}, {len(set(o['output'] for o in sft))} distinct answers, "
          f"{sft_defects['repetition_rate']:.1%} repeat, {sft_defects['disfluency_rate']:.1%} stumble; "
          f"win-rate {sft_wr.win_rate:.1f} %")
    for r in rows:
        text, k = r["commonest"]
        print(f"  {r['reward']:12s} {r['steps']}x{r['rollouts']}: commonest answer ({k} of {len(sft)}): {text[:90]!r}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"profile": args.profile, "world_seed": farm.profile.world_seed, "seed": args.seed,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
