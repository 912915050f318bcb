"""KTO (Ethayarajh et al., 2024), a method the paper lacks, in one plain PyTorch loop.

KTO needs no pairs: each output is labelled desirable or undesirable on its own. From our pairwise
feedback the winner of each pair is desirable and the loser undesirable — the same data DPO sees,
read one output at a time.

Each output's implicit reward ``beta * log(pi(y|x) / ref(y|x))`` is set against a reference point
``z0``: the policy's KL from the reference, estimated on the batch's *mismatched* pairs (each prompt
with another example's completion) and not differentiated. The loss (:func:`kto_loss`, Eq. 7 of the
paper; a test checks it equals the loss TRL's ``KTOTrainer`` minimises on the same batch) pushes a
desirable output's reward above ``z0`` and an undesirable one's below it. The reference's
log-probabilities of the examples are computed once before training, as in our DPO loop; the examples are
read in their shuffled order, as TRL reads them.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.lm.likelihood import sequence_logprobs
from farmlib.lm.model import load_model
from farmlib.lm.supervised import collate, encode_pairs, length_grouped_batches, lr_at
from farmlib.methods.common import loser, winner
from farmlib.profiles import TrainConfig
from farmlib.progress import progress
from farmlib.provenance import data_digest
from farmlib.world import format_prompt


@dataclass
class KTOConfig:
    """KTO from the SFT model, against the frozen SFT model."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs
    beta: float = 0.1  # strength of the KL constraint to the SFT model
    epochs: float = 1.0  # passes over the examples (two per pair)
    # peak learning rate (5 % warm-up, then cosine decay), DPO's: on tiny at 5e-4 even R*'s own labels collapsed
    # the policy (70 % disfluent, people 9 %)
    lr: float = 1e-4
    batch_size: int = 32  # examples per step
    seed: int = 0  # data order


def examples(prefs: list[dict], eos: str = "", seed: int = 0) -> list[dict]:
    """The unpaired data: ``{"prompt", "completion", "label"}`` rows, the winner of each pair desirable
    (``True``), the loser not, in a seeded shuffled order."""
    rows = []
    for r in prefs:
        prompt = format_prompt(r["instruction"], r["input"])
        rows += [{"prompt": prompt, "completion": winner(r) + eos, "label": True},
                 {"prompt": prompt, "completion": loser(r) + eos, "label": False}]
    random.Random(seed).shuffle(rows)
    return rows


def dataset(prefs: list[dict], eos: str, seed: int = 0):
    """:func:`examples` as a ``datasets.Dataset`` in TRL's unpaired format, for comparing with TRL's ``KTOTrainer``."""
    from datasets import Dataset

    return Dataset.from_list(examples(prefs, eos, seed))


def kto_loss(pi_logp: torch.Tensor, ref_logp: torch.Tensor, desirable: torch.Tensor, z0: torch.Tensor,
             beta: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean KTO loss and each example's implicit reward ``beta * (log pi - log ref)``: desirable outputs
    pay ``1 - sigmoid(beta * (log-ratio - z0))``, undesirable ones ``1 - sigmoid(beta * (z0 - log-ratio))``."""
    ratio = pi_logp - ref_logp
    value = torch.where(desirable, beta * (ratio - z0), beta * (z0 - ratio))
    return (1 - torch.sigmoid(value)).mean(), beta * ratio.detach()


def mismatched(batch: list[int], encoded: list[tuple[list[int], int]], max_length: int) -> list[tuple[list[int], int]]:
    """The KL pairs of a batch, as TRL builds them: each example's prompt with the previous example's
    completion (the last feeds the first), so the completions are the batch's own, each under another prompt."""
    out = []
    for j, k in zip(batch, batch[-1:] + batch[:-1]):
        ids, n_prompt = encoded[j]
        other, n_other = encoded[k]
        out.append(((ids[:n_prompt] + other[n_other:])[:max_length], n_prompt))
    return out


def fit(policy, ref, tok, prefs: list[dict], cfg: KTOConfig, max_length: int) -> list[dict]:
    """Minimise the KTO loss of ``policy`` (in place) on the pairs' winners and losers; per-step history."""
    device = next(policy.parameters()).device
    rows = examples(prefs, seed=cfg.seed)
    encoded = encode_pairs(tok, [(r["prompt"], r["completion"]) for r in rows], max_length)  # adds the EOS
    desirable = torch.tensor([r["label"] for r in rows])

    def batch_of(items) -> dict[str, torch.Tensor]:
        return {k: v.to(device) for k, v in collate(items, tok.pad_token_id).items()}

    with torch.no_grad():  # the frozen reference's log-probabilities of every example, once
        ref_logp = torch.zeros(len(rows))
        for idx in length_grouped_batches([len(ids) for ids, _ in encoded], 64, 0):
            ref_logp[idx] = sequence_logprobs(ref, batch_of([encoded[j] for j in idx])).cpu()
    steps_per_epoch = math.ceil(len(rows) / cfg.batch_size)
    total = int(steps_per_epoch * cfg.epochs)
    sched = TrainConfig(lr=cfg.lr, warmup_ratio=0.05)
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
    # consecutive examples of the seeded shuffle, as TRL reads them: batches grouped by length (as in our DPO
    # loop) mixed desirable and undesirable outputs unevenly and trained a far worse policy (people's
    # win-rate 6 % against 15 % on tiny)
    batches = [list(range(i, min(i + cfg.batch_size, len(rows)))) for i in range(0, len(rows), cfg.batch_size)]
    policy.train()
    history, t0 = [], time.time()
    for step in progress(range(total), desc="kto", leave=False, mininterval=2):
        idx = batches[step % steps_per_epoch]
        with torch.no_grad():  # the reference point z0: KL(policy || ref) on mismatched pairs, not differentiated
            kl_batch = batch_of(mismatched(idx, encoded, max_length))
            z0 = (sequence_logprobs(policy, kl_batch) - sequence_logprobs(ref, kl_batch)).mean().clamp(min=0)
        logp = sequence_logprobs(policy, batch_of([encoded[j] for j in idx]))
        good = desirable[idx].to(device)
        loss, reward = kto_loss(logp, ref_logp[idx].to(device), good, z0, cfg.beta)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, sched)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        history.append({"step": step, "epoch": step / steps_per_epoch, "loss": loss.item(), "kl": z0.item(),
                        "rewards/chosen": reward[good].mean().item() if good.any() else math.nan,
                        "rewards/rejected": reward[~good].mean().item() if (~good).any() else math.nan,
                        "lr": opt.param_groups[0]["lr"], "seconds": time.time() - t0})
    policy.eval()
    return history


def train(farm, cfg: KTOConfig | None = None) -> str:
    """KTO from the SFT model on the annotator's pairs; the artifact keeps the per-step log as ``history.json``."""
    cfg = cfg or farm.method_config("kto")
    prefs, sft, tok = farm.preference_data(cfg.annotator), farm.sft_model(), farm.tokenizer()
    prof = farm.profile

    def build(work: Path) -> None:
        t0 = time.time()
        torch.manual_seed(cfg.seed)  # dropout, where the model has any
        policy, ref = load_model(sft, prof.device), load_model(sft, prof.device)
        history = fit(policy, ref, tok, prefs, cfg, prof.model.max_length)
        policy.save_pretrained(work)
        tok.save_pretrained(work)
        write_json(work / "history.json", history)
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "examples": 2 * len(prefs)})

    return farm.artifact("kto", {"sft": sft, "n": len(prefs), **asdict(cfg), "pairs": data_digest(prefs)}, build)
