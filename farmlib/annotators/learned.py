"""How FarmWorld's judges are made: what each judge family learned from (training time only).

A judge (``p_sim``) is a *learned model that only sees text*: the world's pretrained base LM
(:meth:`farmlib.pipeline.Farm.base_model`, trained on world text) with a scalar head, fitted
Bradley–Terry (:func:`farmlib.methods.reward_model.bt_loss`) on comparisons its *makers* collected.
Those comparisons are not the crowd's labels:

* **other people**: each family's makers hired a small panel of labellers
  (a :class:`~farmlib.annotators.people.Crowd` with its own seed and a few people); a small panel's
  mean taste is not the crowd's, and each pair gets one noisy label;
* **other pairs**: answers of the world's writers (the makers' own mix of careful, hurried,
  rambling and list-loving writers) to instructions of the ``unlabeled`` split, never the
  evaluation, validation or preference instructions; a share of each family's pairs sets a
  correct answer against a corruption of it (:mod:`farmlib.world.degenerate`): the "web text" a
  judge has seen fail;
* **other amounts and capacity**: the families differ in how many pairs they saw and in what was
  trained (see :data:`JUDGE_FAMILIES`): ``gpt4`` fine-tunes the whole LM on the most pairs and
  the most degenerate examples; ``chatgpt`` fine-tunes on fewer pairs, labelled by fewer people;
  ``davinci`` keeps the pretrained LM frozen and learns only a linear read-out of its last hidden
  state (a probe) from a panel of three.

Why not a judge LM that reads the judging prompt (:class:`~farmlib.annotators.lm_judge.LMJudge`)?
A prompt with the system text and two outputs is 300–600 tokens; fine-tuning our 4-layer LM on such
prompts costs several minutes of CPU per family at the ``tiny`` profile (the pretraining step alone
takes about 2 s per 32 sequences of 256 tokens on the book's 2-core machine), beyond the book's
budget. A scorer reads each output once (``prompt + output``, as the reward model does) and a
comparison is the difference of two scores, so 13 members sharing 3 models score each output once
per family. The prompt's differences between members (position, batch, format, instructions to
prefer long or short answers) become named mechanisms on the answer
(:class:`farmlib.annotators.judges.JudgeConfig`).

The world is used *here*, to write and label the makers' pairs. At judging time a judge holds a
model and a tokenizer, and nothing else (a test checks it).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.world import DEMONSTRATOR, EXPERT, Writer
from farmlib.world.degenerate import CORRUPTIONS
from farmlib.world.vocabulary import words


@dataclass(frozen=True)
class FamilyConfig:
    """What one judge family learned from (never R*'s weights)."""

    name: str
    pairs: int  # comparisons its makers collected, at scale 1 (times the profile's scale)
    body: str = "full"  # full: fine-tune the whole LM | frozen: a linear probe on the pretrained LM
    labellers: int = 8  # people on the makers' panel (each pair: one of them, one noisy label)
    labeller_seed: int = 1
    degenerate: float = 0.2  # share of pairs that set a correct answer against a corruption of it
    epochs: float = 1.0
    lr: float = 1e-3
    batch_size: int = 32
    seed: int = 0


#: The three families. ``pairs`` of ``gpt4`` is the knob calibrated to the paper (see
#: :func:`calibrate`); the other families' amounts are fixed fractions of the ``tiny`` default.
JUDGE_FAMILIES: dict[str, FamilyConfig] = {
    "gpt4": FamilyConfig("gpt4", pairs=6000, body="full", labellers=8, labeller_seed=101, degenerate=0.3),
    "chatgpt": FamilyConfig("chatgpt", pairs=3000, body="full", labellers=4, labeller_seed=202, degenerate=0.15),
    "davinci": FamilyConfig("davinci", pairs=6000, body="frozen", labellers=3, labeller_seed=303, degenerate=0.05,
                            epochs=200, lr=3e-2),
}

#: The writers whose answers the makers collected (the world's writers, of mixed care and style).
MAKERS_WRITERS = (
    DEMONSTRATOR, EXPERT,
    Writer("hurried", accuracy=0.6, coverage=0.25, p_list=0.1, p_preamble=0.2, p_closing=0.0),
    Writer("rambler", accuracy=0.75, coverage=0.6, p_list=0.3, p_preamble=0.5, p_closing=0.4, p_ramble=0.4),
    Writer("lister", accuracy=0.7, coverage=0.5, p_list=0.9),
)


def makers_pairs(world, records: list[dict], fam: FamilyConfig, n: int, seed: int = 0) -> list[dict]:
    """``n`` comparisons on ``records``' instructions (cycled), labelled by the family's panel."""
    from farmlib.annotators.people import Crowd

    rng = random.Random(f"makers-{fam.name}-{seed}")
    kinds = list(CORRUPTIONS)
    pairs: list[dict] = []
    i = 0
    while len(pairs) < n and i < 20 * n + 100:
        rec = records[i % len(records)]
        i += 1
        a = world.write(rec, rng.choice(MAKERS_WRITERS), rng)
        if rng.random() < fam.degenerate:
            b = CORRUPTIONS[rng.choice(kinds)](a, rec, world, rng)
        else:
            b = world.write(rec, rng.choice(MAKERS_WRITERS), rng)
        if words(a) == words(b):
            continue
        if rng.random() < 0.5:
            a, b = b, a
        pairs.append({"instruction": rec["instruction"], "input": rec.get("input", ""), "output_1": a, "output_2": b})
    panel = Crowd(world, n_people=fam.labellers, seed=fam.labeller_seed, name=f"{fam.name}-makers")
    return panel.annotate_pairs(pairs, seed=seed)


def _fit_probe(model, tok, pairs: list[dict], fam: FamilyConfig, max_length: int) -> list[dict]:
    """Frozen body: last-token hidden states computed once, a linear head fitted Bradley–Terry on them."""
    from farmlib.methods.common import last_index, loser, positions, winner
    from farmlib.methods.reward_model import _texts, bt_loss

    backbone = getattr(model, model.base_model_prefix)
    device = next(model.parameters()).device

    @torch.no_grad()
    def feats(recs: list[dict]) -> torch.Tensor:
        out = []
        for i in range(0, len(recs), 64):
            side, tok.truncation_side = tok.truncation_side, "left"
            enc = tok(_texts(tok, recs[i:i + 64]), return_tensors="pt", padding=True, truncation=True,
                      max_length=max_length, add_special_tokens=False).to(device)
            tok.truncation_side = side
            h = backbone(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                         position_ids=positions(enc["attention_mask"])).last_hidden_state
            out.append(h[torch.arange(h.size(0)), last_index(enc["attention_mask"])].float())
        return torch.cat(out)

    hw = feats([dict(r, output=winner(r)) for r in pairs])
    hl = feats([dict(r, output=loser(r)) for r in pairs])
    mu, sd = torch.cat([hw, hl]).mean(0), torch.cat([hw, hl]).std(0) + 1e-4
    head = torch.nn.Linear(hw.size(1), 1, bias=False)
    torch.manual_seed(fam.seed)
    torch.nn.init.normal_(head.weight, std=0.01)
    opt = torch.optim.Adam(head.parameters(), lr=fam.lr, weight_decay=1e-3)
    history = []
    for step in range(int(fam.epochs)):  # full batch: one step an epoch
        loss = bt_loss(head((hw - mu) / sd).squeeze(-1), head((hl - mu) / sd).squeeze(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({"step": step, "loss": loss.item()})
    with torch.no_grad():  # fold the standardisation into the model's own head (the bias is a constant)
        model.score.weight.copy_((head.weight / sd).to(model.score.weight.dtype))
    return history


def train_judge(farm, fam: FamilyConfig) -> str:
    """The family's scorer: an artifact holding the model, its tokenizer and ``train_info.json``."""
    from farmlib.methods.reward_model import RewardModelConfig, fit, new_reward_model

    start, tok, max_len = farm.base_model(), farm.tokenizer(), farm.profile.model.max_length
    n = max(16, round(fam.pairs * farm.profile.scale))
    cfg = {"start": start, "family": asdict(fam), "n": n, "data": farm._splits_config(), "max_length": max_len}

    def build(work: Path) -> None:
        t0 = time.time()
        pairs = makers_pairs(farm.world, farm.splits()["unlabeled"], fam, n, seed=fam.seed)
        t_data = time.time() - t0
        model = new_reward_model(start, tok, farm.profile.device, fam.seed)
        if fam.body == "frozen":
            for p in model.parameters():
                p.requires_grad_(False)
            history = _fit_probe(model, tok, pairs, fam, max_len)
        else:
            history = fit(model, tok, pairs, RewardModelConfig(epochs=fam.epochs, lr=fam.lr,
                                                               batch_size=fam.batch_size, seed=fam.seed), max_len)
        model.eval()
        model.save_pretrained(work)
        tok.save_pretrained(work)
        write_json(work / "history.json", history)
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "data_seconds": t_data, "pairs": len(pairs),
                                              "family": asdict(fam), "final_loss": history[-1]["loss"] if history else
                                              math.nan})

    return farm.artifact("judge_lm", cfg, build)
