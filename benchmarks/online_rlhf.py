"""Online RLHF: PPO in rounds, the reward model refitted between rounds on labelled pairs of the policy's own samples.

    python benchmarks/online_rlhf.py [--profile tiny|FILE.toml] [--world-seed S] [--labels human] [--rounds 4]
                                     [--steps 40] [--pairs-per-round 800] [--rm-lr 1e-4] [--prompts preference]
                                     [--reward-model PATH] [--kl-coef 0.01] [--seed 0] [--out F.json]

As Bai et al. (2022) refreshed their preference model on the current policy's samples: PPO against the reward model
(the chapter's, or ``--reward-model``) for ``--steps`` steps of 128 rollouts (lr 3e-4, KL coefficient ``--kl-coef``,
0.01 by default: the settings that take PPO on R* to its ceiling); then two samples of the policy and one of SFT 10k on
``--pairs-per-round`` preference instructions, the pairs (policy, policy) and (policy, SFT) labelled by ``--labels``
(an annotator: ``human`` is one person of the crowd a pair; ``true_reward`` is R* itself, a ceiling), and the reward
model refitted for one epoch on every pair labelled so far. After each round the policy's answers to the evaluation
instructions are judged by the people against the reference. Prints, per round: the people's win-rate, mean R*, the
shares of repetitive and disfluent answers (FarmWorld only), and how often the reward model agreed with the round's
new labels before its refit. ``--seed`` draws PPO's rollouts, the pairs' samples, their labels and the evaluation
samples afresh (seed 0 is the run FINDINGS.md reports first). About 2.5 minutes a round on 2 cores (tiny). Not
part of the book: an exploration of whether what the reward model misses is found by looking at what PPO found
(FINDINGS.md, "Online RLHF").
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from farm_args import add_farm_args, farm_from_args

from farmlib import methods
from farmlib.evaluation.leaderboard import defect_rates
from farmlib.lm.model import load_model
from farmlib.lm.sampling import respond
from farmlib.methods import ppo, reward_model
from farmlib.world import format_prompt


def label(farm, labels: str, a: list[dict], b: list[dict], seed: int) -> list[dict]:
    """The pairs ``(a[i], b[i])`` labelled by ``labels``; ties, unparsed labels and identical outputs dropped."""
    pairs = [{"instruction": x["instruction"], "input": x["input"], "output_1": x["output"], "output_2": y["output"]}
             for x, y in zip(a, b)]
    return [r for r in farm.annotator(labels).annotate_pairs(pairs, seed=seed)
            if r.get("preference") in (1, 2) and r["output_1"] != r["output_2"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_farm_args(ap)
    ap.add_argument("--labels", default="human", help="who labels each round's pairs (an annotator's name)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=40, help="PPO steps a round")
    ap.add_argument("--pairs-per-round", type=int, default=800, help="preference instructions sampled a round")
    ap.add_argument("--rm-lr", type=float, default=1e-4)
    ap.add_argument("--prompts", default="preference", help="the split PPO's prompts come from")
    ap.add_argument("--reward-model", default=None, help="the starting reward model (default: the chapter's)")
    ap.add_argument("--kl-coef", type=float, default=0.01, help="PPO's KL coefficient against SFT 10k")
    ap.add_argument("--seed", type=int, default=0, help="PPO's, the samples' and the labels' seed")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    farm = farm_from_args(args)
    tok, prof, sft = farm.tokenizer(), farm.profile, farm.sft_model()
    policy, ref, sft_lm = (load_model(sft, prof.device) for _ in range(3))
    start = args.reward_model or methods.reward_model_path(farm)
    rm, value = reward_model.load_reward_model(start, prof.device), reward_model.load_reward_model(start, prof.device, backward=False)
    splits = farm.splits()
    prompts = [format_prompt(r["instruction"], r["input"]) for r in splits[args.prompts]]
    held = [format_prompt(r["instruction"], r["input"]) for r in splits["val"][:128]]
    cfg = ppo.PPOConfig(steps=args.steps, rollout_batch=128, minibatch=64, lr=3e-4, kl_coef=args.kl_coef,
                        eval_every=args.steps, seed=args.seed)
    refit = reward_model.RewardModelConfig(reads="likelihood", lr=args.rm_lr, epochs=1, batch_size=4,
                                           group_by_prompt=True)
    pref, bank, rows, t0 = splits["preference"], [], [], time.time()
    for k in range(args.rounds):
        turn = (k * args.steps * cfg.rollout_batch) % len(prompts)  # each round starts where the last stopped
        ppo.ppo_loop(policy, ref, value, rm, tok, prompts[turn:] + prompts[:turn], held, cfg, prof.max_new_tokens)
        # sampled in memory, not cached: a round's policy has no artifact path to key its samples by
        outs = [dict(r, output=o, generator=f"online-{args.labels}-{k + 1}") for r, o in zip(
            splits["eval"], respond(policy, tok, splits["eval"], temperature=prof.temperature,
                                    max_new_tokens=prof.max_new_tokens, batch_size=prof.gen_batch_size,
                                    seed=args.seed))]
        wr = farm.evaluate(outs, "human")[0]
        row = {"round": k + 1, "people": wr.win_rate, "se": wr.standard_error}
        if farm.is_farmworld:
            r = farm.true_rewards(outs)
            row.update(mean_true_reward=sum(r) / len(r), **defect_rates(farm, outs))
        if k < args.rounds - 1:
            recs = [pref[(k * args.pairs_per_round + i) % len(pref)] for i in range(args.pairs_per_round)]
            seeds = (10 * k + j + 100 * args.seed for j in (1, 2, 3))
            a, b, s = ([dict(r, output=o) for r, o in zip(recs, respond(m, tok, recs, temperature=1.0,
                                                                        max_new_tokens=prof.max_new_tokens,
                                                                        batch_size=256, seed=sd))]
                       for sd, m in zip(seeds, (policy, policy, sft_lm)))
            at = len(bank) + 10**6 * args.seed
            new = label(farm, args.labels, a, b, at) + label(farm, args.labels, a, s, at)
            row["new_pairs"] = len(new)
            row["rm_agrees_before_refit"] = reward_model.pairwise_accuracy(rm, tok, new, prof.model.max_length)[0]
            bank += new
            rm.train().requires_grad_(True)
            reward_model.fit(rm, tok, bank, refit, prof.model.max_length)
            rm.eval().requires_grad_(False)
        row["seconds"] = time.time() - t0
        rows.append(row)
        print(f"round {k + 1}: people {wr.win_rate:.1f} ± {wr.standard_error:.1f}"
              + (f", mean R* {row['mean_true_reward']:.3f}, repetitive {100 * row['repetition_rate']:.1f} %, "
                 f"disfluent {100 * row['disfluency_rate']:.1f} %" if farm.is_farmworld else "")
              + (f"; {row['new_pairs']} new pairs, the reward model agreed with {100 * row['rm_agrees_before_refit']:.1f} %"
                 if "new_pairs" in row else "") + f" ({row['seconds']:.0f} s)", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"profile": args.profile, "world_seed": prof.world_seed,
                                              "labels": args.labels, "kl_coef": args.kl_coef, "seed": args.seed,
                                              "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
