"""Does a larger reward model learn what the judges know? (issue: learning from feedback must work)

    python benchmarks/reward_model_scale.py pack DIR [--profile tiny] [--per-instruction 8]
    python benchmarks/reward_model_scale.py train DIR --width W [--layers L] [--sources ...] [--reads last] [--device cuda]
    python benchmarks/reward_model_scale.py report DIR [--profile tiny] [--out F]

A policy-sized reward model (1M parameters on tiny) fits the judges' labels and still picks no better best-of-16
than before any label (``reward_readouts.py --label-curve``). This measures the reward model's size as the lever:
each ``train`` pretrains a Llama of width ``W`` on the profile's own world corpus, trains it on the same
demonstrations as SFT 10k (the paper's reward model starts from an SFT model), then fits a likelihood-reading reward
model on every pair among ``--per-instruction`` SFT samples of each preference instruction, labelled by each source:
none (the model's likelihood as it is), R* itself (the ceiling of any teacher), the judges' mean score without
noise (the best the simulator's labels can be), and ``p_sim_ann`` (what the profile's reward model learns from).
The policy and its candidates stay the profile's: chapter 9's ``n_max`` samples of each eval instruction.

The three steps can run on different machines. ``pack`` (where the profile's farm is built: SFT 10k, its samples,
the judges) writes the corpus, the demonstrations, the labelled pairs, chapter 9's candidates and chapter 5's
held-out pairs (labelled by R*) into ``DIR``, with the tokenizer. ``train`` reads only ``DIR`` and farmlib (torch
and transformers): the first run of a width builds its model in ``DIR/w{W}`` (``w{W}x{L}`` at another depth), later
runs (one source each, side by side on one GPU: ``--device cuda``) reuse it. A GPU run is not in torch's
deterministic mode and differs from a CPU run in the last bits. It writes ``DIR/scores-w{W}-{source}.json``
(``-last`` appended with ``--reads last``, the paper's head on the last token): each candidate's reward and the
held-out accuracy against R*. ``report`` judges each selector's best-of-n picks with the people, against the
reference. On CPU, width 128 is the profile's own base model and SFT 10k: its four rows give ``reward_readouts.py
--label-curve``'s held-out accuracies.

On one GPU, each width's sources side by side (about 100 to 190 s to pretrain and SFT-train a width up to 94M
parameters on an H100; a reward model's epoch over the pairs about 45 s at 28M when few processes share the card)::

    for w in 512 768; do
      (python benchmarks/reward_model_scale.py train DIR --width $w --sources none --device cuda &&
       for s in true-reward judges p-sim-ann; do
         python benchmarks/reward_model_scale.py train DIR --width $w --sources $s --device cuda & done; wait) &
    done; wait
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import time
from pathlib import Path

#: Label sources by their name here: none, then reward_readouts.CURVE_LABELS (R*, p_sim_ann, the judges' noise-free
#: mean score).
SOURCES = {"none": None, "true-reward": "true_reward", "judges": "judges' mean score", "p-sim-ann": "p_sim_ann"}
#: Depth by width when ``--layers`` is not given: 128 is the tiny policy's own shape.
LAYERS = {64: 2, 128: 4, 256: 6, 512: 8, 768: 12, 1024: 16}


def pack(args) -> None:
    """Everything ``train`` reads, from the profile's farm."""
    from reward_readouts import CURVE_LABELS, held_out_truth, label, within_instruction_pairs

    from farmlib import Farm
    from farmlib.methods import best_of_n
    from farmlib.world import format_prompt

    farm = Farm(args.profile)
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    farm.tokenizer().save_pretrained(out / "tokenizer")
    prompts: dict[tuple[str, str], int] = {}
    outputs: dict[str, int] = {}

    def ids(r: dict, *keys: str) -> list[int]:
        p = prompts.setdefault((r["instruction"], r["input"]), len(prompts))
        return [p] + [outputs.setdefault(r[k], len(outputs)) for k in keys]

    pairs = within_instruction_pairs(farm, args.per_instruction)
    labelled = {src: [ids(r, "output_1", "output_2") + [r["preference"]] for r in label(farm, pairs, src)]
                for src in CURVE_LABELS}
    cands = best_of_n.candidates(farm, farm.method_config("best_of_n"))  # [k][i]
    flat = [ids(cands[k][i], "output") for i in range(len(cands[0])) for k in range(len(cands))]
    truth = [ids(r, "output_1", "output_2") + [r["preference"]] for r in held_out_truth(farm)]
    p = farm.profile
    sft = [[format_prompt(r["instruction"], r["input"]), r["output"]] for r in farm.splits()["sft"]]
    data = {"profile": p.name, "world_seed": p.world_seed, "max_length": p.model.max_length,
            "model": vars(p.model), "pretrain": vars(p.pretrain), "sft_train": vars(p.sft),
            "docs": farm.pretraining_docs(), "sft": sft, "n": len(cands), "n_prompts": len(cands[0]),
            "prompts": [list(k) for k in prompts], "outputs": list(outputs), "pairs": labelled,
            "candidates": flat, "truth": truth}
    with gzip.open(out / "pack.json.gz", "wt") as fh:
        json.dump(data, fh)
    print(f"{out / 'pack.json.gz'}: {len(data['docs'])} documents, {len(sft)} demonstrations, "
          + ", ".join(f"{len(v)} {k} pairs" for k, v in labelled.items())
          + f", {len(flat)} candidates, {len(truth)} held-out pairs")


def read_pack(d: Path) -> dict:
    with gzip.open(d / "pack.json.gz", "rt") as fh:
        return json.load(fh)


def records(data: dict, rows: list[list[int]], keys: tuple[str, ...]) -> list[dict]:
    """Pack rows ``[prompt, output ids..., (preference)]`` as the library's records."""
    out = []
    for row in rows:
        ins, inp = data["prompts"][row[0]]
        r = {"instruction": ins, "input": inp, **{k: data["outputs"][j] for k, j in zip(keys, row[1:])}}
        if len(row) > len(keys) + 1:
            r["preference"] = row[-1]
        out.append(r)
    return out


def model_dir(width: int, layers: int) -> str:
    """A width's folder in DIR: ``wW`` at its default depth, ``wWxL`` at another."""
    return f"w{width}" if layers == LAYERS.get(width) else f"w{width}x{layers}"


def sft_model(data: dict, d: Path, width: int, layers: int, device: str) -> tuple[Path, dict]:
    """A Llama of this width pretrained on the pack's corpus, then trained on its demonstrations (cached)."""
    from farmlib.lm.model import load_tokenizer, n_params, new_model
    from farmlib.lm.supervised import train_lm
    from farmlib.profiles import ModelConfig, TrainConfig

    path = d / model_dir(width, layers) / "sft"
    if (path / "info.json").exists():
        return path, json.loads((path / "info.json").read_text())
    tok = load_tokenizer(d / "tokenizer")
    heads = width // 32 if width <= 256 else width // 64
    cfg = ModelConfig(**{**data["model"], "hidden_size": width, "num_layers": layers, "num_heads": heads,
                         "intermediate_size": 3 * width})
    scale = math.sqrt(data["model"]["hidden_size"] / width)  # a wider model takes a smaller step
    pre = TrainConfig(**{**data["pretrain"], "lr": data["pretrain"]["lr"] * scale})
    sft = TrainConfig(**{**data["sft_train"], "lr": data["sft_train"]["lr"] * scale})
    t0 = time.time()
    model = new_model(cfg, tok, seed=pre.seed)
    h1 = train_lm(model, tok, [("", x) for x in data["docs"]], pre, None, data["max_length"], device,
                  desc=f"pretrain w{width}")
    h2 = train_lm(model, tok, [tuple(x) for x in data["sft"]], sft, None, data["max_length"], device,
                  desc=f"SFT w{width}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    info = {"width": width, "layers": layers, "heads": heads, "params": n_params(model), "pretrain_lr": pre.lr,
            "sft_lr": sft.lr, "pretrain_loss": sum(h["loss"] for h in h1[-50:]) / len(h1[-50:]),
            "sft_loss": sum(h["loss"] for h in h2[-50:]) / len(h2[-50:]), "seconds": time.time() - t0}
    (path / "info.json").write_text(json.dumps(info))
    return path, info


def train(args) -> None:
    from farmlib.lm.model import load_tokenizer
    from farmlib.methods import reward_model

    d = Path(args.dir)
    data = read_pack(d)
    layers = args.layers or LAYERS[args.width]
    path, info = sft_model(data, d, args.width, layers, args.device)
    print(f"w{args.width}: {info['params'] / 1e6:.1f}M parameters, pretrain loss {info['pretrain_loss']:.3f}, "
          f"SFT loss {info['sft_loss']:.3f} ({info['seconds']:.0f} s)", flush=True)
    tok, max_len = load_tokenizer(path), data["max_length"]
    cands = records(data, data["candidates"], ("output",))
    truth = records(data, data["truth"], ("output_1", "output_2"))
    lr = args.lr * math.sqrt(data["model"]["hidden_size"] / args.width)
    for source in args.sources:
        t0 = time.time()
        rm = reward_model.new_reward_model(str(path), tok, args.device, reads=args.reads)
        n = 0
        if SOURCES[source]:
            pairs = records(data, data["pairs"][SOURCES[source]], ("output_1", "output_2"))
            n = len(pairs)
            cfg = reward_model.RewardModelConfig(reads=args.reads, lr=lr, epochs=args.epochs, batch_size=4,
                                                 group_by_prompt=True)
            reward_model.fit(rm, tok, pairs, cfg, max_len)
        rm.eval()
        scores = reward_model.rewards(rm, tok, cands, max_length=max_len).tolist()
        acc, se = reward_model.pairwise_accuracy(rm, tok, truth, max_len)
        res = {**info, "source": source, "reads": args.reads, "pairs": n, "rm_lr": lr if n else None,
               "epochs": args.epochs if n else None, "accuracy_vs_true": acc, "accuracy_se": se, "scores": scores,
               "rm_seconds": time.time() - t0}
        name = model_dir(args.width, layers)
        reads = "" if args.reads == "likelihood" else f"-{args.reads}"
        (d / f"scores-{name}-{source}{reads}.json").write_text(json.dumps(res))
        if args.save:
            reward_model.settle(rm).save_pretrained(d / name / f"rm-{source}{reads}")
            tok.save_pretrained(d / name / f"rm-{source}{reads}")
        print(f"w{args.width} {source}{reads}: {n} pairs, held-out accuracy vs R* {100 * acc:.1f} ± {100 * se:.1f} % "
              f"({time.time() - t0:.0f} s)", flush=True)


def report(args) -> None:
    from farmlib import Farm
    from farmlib.methods.best_of_n import prefix_choices

    d = Path(args.dir)
    data = read_pack(d)
    farm = Farm(args.profile)
    n, m = data["n"], data["n_prompts"]
    cands = records(data, data["candidates"], ("output",))  # prompt i's n candidates in a row
    by_prompt = [cands[i * n:(i + 1) * n] for i in range(m)]
    truth = farm.true_rewards(cands)
    selectors = {"R* (oracle)": ({}, truth)}
    found = [json.loads(f.read_text()) for f in d.glob("scores-w*.json")]
    for res in sorted(found, key=lambda r: (r["width"], r["layers"], r.get("reads", "likelihood") != "likelihood",
                                            list(SOURCES).index(r["source"]))):
        reads = "" if res.get("reads", "likelihood") == "likelihood" else f", reads {res['reads']}"
        shape = f"w{res['width']}x{res['layers']} ({res['params'] / 1e6:.1f}M)"
        selectors[f"{shape}, {res['source']}{reads}"] = (res, res["scores"])
    reference = farm.reference_outputs()[:m]
    w = farm.world
    rows = []
    for name, (res, scores) in selectors.items():
        picks = prefix_choices([scores[i * n:(i + 1) * n] for i in range(m)], [1, n])[n]
        chosen = [dict(by_prompt[i][k], generator=name) for i, k in enumerate(picks)]
        wr = farm.evaluate(chosen, "human", reference=reference)[0]
        rstar = [truth[i * n + k] for i, k in enumerate(picks)]
        disfluent = sum(w.reward_breakdown(c["instruction"], c["input"], c["output"])["disfluency"] > 0
                        for c in chosen) / m
        rows.append({"selector": name, "pairs": res.get("pairs"), "win_rate": wr.win_rate, "se": wr.standard_error,
                     "mean_true_reward": sum(rstar) / m, "disfluent": disfluent,
                     "accuracy_vs_true": res.get("accuracy_vs_true"), "accuracy_se": res.get("accuracy_se")})
    print(f"{data['profile']}, world seed {data['world_seed']}: best-of-{n} on {m} eval instructions, people vs the "
          "reference")
    print(f"{'selector':<44}{'pairs':>8}{'people':>14}{'mean R*':>9}{'disfluent':>10}{'acc vs R*':>15}")
    for r in rows:
        acc = f"{100 * r['accuracy_vs_true']:>9.1f} ± {100 * r['accuracy_se']:.1f}" if r["accuracy_vs_true"] else ""
        print(f"{r['selector']:<44}{r['pairs'] or '':>8}{r['win_rate']:>8.1f} ± {r['se']:.1f}"
              f"{r['mean_true_reward']:>9.2f}{100 * r['disfluent']:>9.0f}%{acc}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="gather what train reads (where the profile's farm is built)")
    p.add_argument("dir")
    p.add_argument("--profile", default="tiny")
    p.add_argument("--per-instruction", type=int, default=8, help="SFT samples per preference instruction")
    t = sub.add_parser("train", help="one width: pretrain, SFT, a reward model per source, scores")
    t.add_argument("dir")
    t.add_argument("--width", type=int, required=True)
    t.add_argument("--layers", type=int, default=None, help=f"default by width: {LAYERS}")
    t.add_argument("--sources", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    t.add_argument("--lr", type=float, default=3e-4, help="the reward model's lr at the profile's width "
                                                          "(scaled by sqrt(width ratio))")
    t.add_argument("--epochs", type=float, default=3.0)
    t.add_argument("--reads", default="likelihood", choices=("likelihood", "last"),
                   help="the reward model's read-out: its likelihood, or the paper's head on the last token")
    t.add_argument("--device", default="cpu")
    t.add_argument("--save", action="store_true", help="also save each reward model in DIR/wW/rm-SOURCE")
    r = sub.add_parser("report", help="the people's verdict on each selector's picks")
    r.add_argument("dir")
    r.add_argument("--profile", default="tiny")
    r.add_argument("--out", default=None)
    args = ap.parse_args()
    {"pack": pack, "train": train, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
