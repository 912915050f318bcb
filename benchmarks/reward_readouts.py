"""What a selector must read to turn SFT samples into better answers (issue: learning from feedback must work).

    python benchmarks/reward_readouts.py [--profile tiny|FILE.toml] [--world-seed S] [--n 16] [--n-prompts 200]
                                         [--temperature 1.0] [--no-labels] [--out F]

One draw of SFT samples (``--temperature``, default 1; chapter 5's ceiling draw when the sizes match, so it is cached after a
book build) on the first ``--n-prompts`` evaluation instructions; each selector picks its favourite of the first
1, 4 and n candidates, and the people judge the picks against the reference. Selectors: R* itself (the oracle);
each judge family's own score (they know the world's answers, never R*); the SFT model's mean log-likelihood of
the answer (the likelihood-reading reward model before any label); and reward models trained on the profile's
preference pairs that read the last token's state (AlpacaFarm's) or their likelihood (FarmWorld's). Prints each
selector's win-rates, the share of its picks that are disfluent, for the reward models held-out accuracy against
R*, and the paired difference of its best-of-n from the SFT likelihood's on the same instructions (the noise of
which instructions were drawn cancels). ``--no-labels`` keeps what needs no judge (R*, the SFT likelihood and its
held-out accuracy): on a new world seed it skips training the judges.

``--capacity`` adds the likelihood of models that know more than SFT 10k, each read with no label: SFT 52k (more
demonstrations), the mean over three SFT 10k training seeds (an ensemble), and with ``--big`` a model about five times
the policy's size (width 256, 6 layers), pretrained and SFT-trained on the same corpus and demonstrations (about 25
minutes on 2 cores; cached after): whether a reward model larger or better taught than the policy reads R* better.

``--backward`` adds the backward reader (:mod:`farmlib.methods.backward_reader`, trained on the demonstrations the
first time, about 5 minutes on 2 cores): ``log p(question | answer)`` alone, added to the SFT likelihood at weight 1,
and at the weight a Bradley–Terry fit on the reward model's own preference pairs gives it (a noisy-channel reranker).

``--label-curve N1,N2,...`` adds likelihood-reading reward models trained on every pair among ``--per-instruction``
SFT samples of each preference instruction (:meth:`Farm.preference_samples`), the first N of them (shuffled), labelled
by R* itself, by ``p_sim_ann``, and by the judges' mean score without its noise (``--curve-lr``, ``--curve-epochs``;
a step takes 4 instructions with all their pairs, each answer read once; not cached: about 3 minutes per 44,000 pairs
and 3 epochs on 2 cores): whether more labels, even perfect ones, teach the reward model R*.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time

from farm_args import add_farm_args, farm_from_args

from farmlib import Farm
from farmlib.evaluation.paired import instruction_scores, paired_difference
from farmlib.methods import reward_model
from farmlib.methods.best_of_n import BestOfNCurveConfig, draw, prefix_choices


def held_out_truth(farm) -> list[dict]:
    """Chapter 5's held-out pairs of SFT samples, labelled by R* (ties dropped)."""
    from farmlib.annotators.validation import sft_pairs

    out = []
    for r in sft_pairs(farm, split="val"):
        a, b = (farm.world.true_reward(r["instruction"], r["input"], r[f"output_{k}"]) for k in (1, 2))
        if a != b:
            out.append(dict(r, preference=1 if a > b else 2))
    return out


def capacity_readers(farm, flat: list[dict], truth: list[dict], big: bool):
    """(name, scores of ``flat``, (held-out accuracy vs R*, its standard error)) for each reader that knows more than
    SFT 10k: the mean log-likelihood of each model, or for an ensemble the mean of its members'."""
    from farmlib.methods import sft52k
    from farmlib.profiles import ModelConfig

    tok, max_len, device = farm.tokenizer(), farm.profile.model.max_length, farm.profile.device
    seeds = [farm.sft_model(train=dataclasses.replace(farm.profile.sft, seed=s)) for s in (0, 1, 2)]
    groups = {"SFT 52k mean log-likelihood": [sft52k(farm)], "mean of 3 SFT 10k seeds' log-likelihoods": seeds}
    if big:
        m = farm.profile.model
        larger = Farm(farm.profile, root=farm.root,  # same tokenizer and data: only the models' keys differ
                      model=ModelConfig(**{**dataclasses.asdict(m), "hidden_size": 2 * m.hidden_size,
                                           "num_layers": m.num_layers + 2, "num_heads": 2 * m.num_heads,
                                           "intermediate_size": 2 * m.intermediate_size}))
        groups["a larger SFT (width x2, +2 layers) mean log-likelihood"] = [larger.sft_model()]
    sides = [[dict(r, output=r[f"output_{k}"]) for r in truth] for k in (1, 2)]
    for name, paths in groups.items():
        scores, diff = [0.0] * len(flat), [0.0] * len(truth)
        for path in paths:
            lm = reward_model.new_reward_model(path, tok, device, reads="likelihood")
            scores = [a + b / len(paths) for a, b in zip(scores, reward_model.rewards(lm, tok, flat, max_length=max_len).tolist())]
            one, two = (reward_model.rewards(lm, tok, side, max_length=max_len).tolist() for side in sides)
            diff = [d + a - b for d, a, b in zip(diff, one, two)]
        right = [(d > 0) == (r["preference"] == 1) for d, r in zip(diff, truth)]
        acc = sum(right) / len(right)
        yield name, scores, (acc, math.sqrt(acc * (1 - acc) / len(right)))


def backward_readers(farm, flat: list[dict], likelihood: list[list[float]], no_labels: bool):
    """(name, per-prompt scores of ``flat``) for the backward reader alone, added to the SFT likelihood
    (``likelihood``, per prompt) at weight 1, and, with labels, at the weight fitted on the reward model's pairs."""
    from farmlib.lm.model import load_model
    from farmlib.methods import backward_reader
    from farmlib.methods.common import loser, winner

    tok, max_len = farm.tokenizer(), farm.profile.model.max_length
    model = load_model(backward_reader.train(farm, farm.method_config("reward_model").backward_epochs), farm.profile.device)
    n = len(likelihood[0])
    back = backward_reader.loglik(model, tok, flat, max_len)
    back = [back[i * n:(i + 1) * n] for i in range(len(likelihood))]
    yield "backward reader, log p(question | answer) (no label)", back

    def mix(lam: float) -> list[list[float]]:
        return [[f + lam * b for f, b in zip(fs, bs)] for fs, bs in zip(likelihood, back)]

    yield "SFT likelihood + backward, weight 1 (no label)", mix(1.0)
    if no_labels:
        return
    cfg = farm.method_config("reward_model")
    pairs = farm.preference_data(cfg.annotator)
    sides = [[dict(p, output=pick(p)) for p in pairs] for pick in (winner, loser)]
    untrained = reward_model.new_reward_model(farm.sft_model(), tok, farm.profile.device, reads="likelihood")
    fw, fl = (reward_model.rewards(untrained, tok, side, max_length=max_len).tolist() for side in sides)
    bw, bl = (backward_reader.loglik(model, tok, side, max_len) for side in sides)
    wf, wb = backward_reader.fit_weights([a - b for a, b in zip(fw, fl)], [a - b for a, b in zip(bw, bl)])
    yield f"SFT likelihood + backward, weight {wb / wf:.2f} ({len(pairs)} {cfg.annotator} pairs)", mix(wb / wf)


def within_instruction_pairs(farm, per: int, seed: int = 0) -> list[dict]:
    """Every pair of distinct answers among the first ``per`` SFT samples of each preference instruction
    (:meth:`Farm.preference_samples`), unlabelled, shuffled."""
    import itertools
    import random

    samples = farm.preference_samples(per)
    pairs = []
    for outs in zip(*samples):
        for a, b in itertools.combinations(outs, 2):
            if a["output"] != b["output"]:
                pairs.append({"instruction": a["instruction"], "input": a["input"], "output_1": a["output"],
                              "output_2": b["output"]})
    random.Random(seed).shuffle(pairs)
    return pairs


#: The label curve's sources: R* itself, the noisy pool the reward model learns from, and the pool's own mean score
#: without its noise or prompt mechanisms (:func:`ceilings.teacher_scores`).
CURVE_LABELS = ("true_reward", "p_sim_ann", "judges' mean score")


def label(farm, pairs: list[dict], source: str) -> list[dict]:
    """``pairs`` labelled by ``source`` (one of :data:`CURVE_LABELS`), ties and unlabelled pairs dropped."""
    if source != CURVE_LABELS[2]:
        return [r for r in farm.annotator(source, 0).annotate_pairs(pairs, seed=0) if r["preference"] in (1, 2)]
    from farmlib.evaluation.ceilings import teacher_scores

    s = teacher_scores(farm, [dict(r, output=r[f"output_{k}"]) for r in pairs for k in (1, 2)])
    return [dict(r, preference=1 if a > b else 2) for r, a, b in zip(pairs, s[0::2], s[1::2]) if a != b]


def label_curve(farm, sizes: list[int], per: int, lr: float, epochs: float):
    """(name, trained reward model) for each source of :data:`CURVE_LABELS` and each n in ``sizes``: the first n
    of :func:`within_instruction_pairs`, all the pairs of a prompt in one step (``group_by_prompt``)."""
    pairs = within_instruction_pairs(farm, per)
    tok, max_len = farm.tokenizer(), farm.profile.model.max_length
    cfg = farm.method_config("reward_model", {"reads": "likelihood", "lr": lr, "epochs": epochs,
                                              "batch_size": 4, "group_by_prompt": True})
    for source in CURVE_LABELS:
        for n in sizes:
            data = label(farm, pairs[:n], source)
            rm = reward_model.new_reward_model(farm.sft_model(), tok, farm.profile.device, reads="likelihood")
            reward_model.fit(rm, tok, data, cfg, max_len)
            yield f"likelihood RM, {len(data)} {source} pairs ({per} per instruction, lr {lr:g}, {epochs:g} ep.)", rm.eval()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_farm_args(ap)
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--n-max", type=int, default=64, help="the draw's size (64: chapter 5's ceiling draw)")
    ap.add_argument("--n-prompts", type=int, default=200)
    ap.add_argument("--temperature", type=float, default=1.0, help="the candidates' (1.0: the paper's best-of-n)")
    ap.add_argument("--no-labels", action="store_true", help="only what needs no judge")
    ap.add_argument("--capacity", action="store_true", help="also the likelihood of SFT 52k and of three SFT seeds")
    ap.add_argument("--big", action="store_true", help="with --capacity: also a model 5x the policy (slow)")
    ap.add_argument("--backward", action="store_true", help="also the backward reader, log p(question | answer)")
    ap.add_argument("--label-curve", default=None, help="pair counts, e.g. 1000,8000,40000 (slow)")
    ap.add_argument("--per-instruction", type=int, default=8, help="with --label-curve: SFT samples per instruction")
    ap.add_argument("--curve-lr", type=float, default=3e-4, help="with --label-curve: the reward models' lr")
    ap.add_argument("--curve-epochs", type=float, default=3.0, help="with --label-curve: passes over the pairs")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    farm = farm_from_args(args)
    t0 = time.time()
    _, cands = draw(farm, BestOfNCurveConfig(n_max=args.n_max, n_prompts=args.n_prompts,
                                                temperature=args.temperature))
    cands = [row[:args.n] for row in cands]  # best-of-n reads the first n of a larger draw
    flat = [c for row in cands for c in row]
    tok, max_len, w = farm.tokenizer(), farm.profile.model.max_length, farm.world

    def per_prompt(scores: list[float]) -> list[list[float]]:
        return [scores[i * args.n:(i + 1) * args.n] for i in range(len(cands))]

    selectors = {"R* (oracle)": per_prompt(farm.true_rewards(flat))}
    for fam, lm in ({} if args.no_labels else farm.annotators.judge_lms()).items():
        selectors[f"judge {fam}'s score"] = per_prompt(lm.scores(flat))
    untrained = reward_model.new_reward_model(farm.sft_model(), tok, farm.profile.device, reads="likelihood")
    no_label = "SFT mean log-likelihood (no label)"
    selectors[no_label] = per_prompt(reward_model.rewards(untrained, tok, flat, max_length=max_len).tolist())
    truth = held_out_truth(farm)
    accuracy = {no_label: reward_model.pairwise_accuracy(untrained, tok, truth, max_len)}
    if args.capacity:
        for name, scores, acc in capacity_readers(farm, flat, truth, args.big):
            selectors[name], accuracy[name] = per_prompt(scores), acc
    defaults = reward_model.RewardModelConfig()
    trained = () if args.no_labels else (("last", {"reads": "last", "lr": defaults.lr, "epochs": defaults.epochs}),
                                          ("likelihood", {}))
    for name, over in trained:
        path = reward_model.train(farm, farm.method_config("reward_model", over))
        m = reward_model.metrics(path)
        label = f"reward model, reads={name} ({m['n_train']} pairs)"
        rm = reward_model.load_reward_model(path, farm.profile.device)
        selectors[label] = per_prompt(reward_model.rewards(rm, tok, flat, max_length=max_len).tolist())
        accuracy[label] = (m["val_accuracy_true"], m["val_se_true"])
    if args.backward:
        for name, scores in backward_readers(farm, flat, selectors[no_label], args.no_labels):
            selectors[name] = scores
    if args.label_curve:
        sizes = [int(x) for x in args.label_curve.split(",")]
        for name, rm in label_curve(farm, sizes, args.per_instruction, args.curve_lr, args.curve_epochs):
            selectors[name] = per_prompt(reward_model.rewards(rm, tok, flat, max_length=max_len).tolist())
            accuracy[name] = reward_model.pairwise_accuracy(rm, tok, truth, max_len)
    reference = farm.reference_outputs()[:len(cands)]
    ns = sorted({1, 4, args.n})
    rows, scores_of = [], {}
    for name, scores in selectors.items():
        picks = prefix_choices(scores, ns)
        row = {"selector": name}
        for n in ns:
            chosen = [dict(cands[i][k], generator=f"{name}@{n}") for i, k in enumerate(picks[n])]
            wr, annotations = farm.evaluate(chosen, "human", reference=reference)
            row[f"best-of-{n}"], row[f"se-{n}"] = wr.win_rate, wr.standard_error
            if n == args.n:
                scores_of[name] = instruction_scores(annotations)
        top = [cands[i][k] for i, k in enumerate(picks[args.n])]
        row["disfluent picks"] = sum(w.reward_breakdown(c["instruction"], c["input"], c["output"])["disfluency"] > 0
                                     for c in top) / len(top)
        row["accuracy vs R*"] = accuracy.get(name)
        rows.append(row)
    for row in rows:
        row["vs no label"] = paired_difference(scores_of[row["selector"]], scores_of[no_label])
    print(f"{args.profile}, world seed {farm.profile.world_seed}, temperature {args.temperature}: best-of-n under the people vs the reference, first "
          f"{len(cands)} eval instructions ({time.time() - t0:.0f} s)")
    print(f"{'selector':<72}" + "".join(f"{'n=' + str(n):>14}" for n in ns) + f"{'disfluent':>11}{'acc vs R*':>15}{'vs no label':>15}")
    for r in rows:
        acc = r["accuracy vs R*"]
        print(f"{r['selector']:<72}" + "".join(f"{r[f'best-of-{n}']:>8.1f} ± {r[f'se-{n}']:.1f}" for n in ns)
              + f"{100 * r['disfluent picks']:>10.0f}%" + (f"{100 * acc[0]:>9.1f} ± {100 * acc[1]:.1f}" if acc else f"{'':>15}")
              + "{:>+9.1f} ± {:.1f}".format(*r["vs no label"]))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"profile": args.profile, "world_seed": farm.profile.world_seed, "n": args.n,
                       "temperature": args.temperature, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
