"""Quark (Lu et al., 2022), top-quantile variant: learn to write like your own best samples.

Each round: sample from the policy (conditioned on the control tag ``[best]``) for fresh prompts,
score with the reward model, bin the samples into ``n_bins`` reward quantiles (:func:`quantile_bins`),
and train on the top bin only, after the tag, with the loss

    NLL(top-bin response | [best] + prompt) + kl_coef * KL(policy(. | [best] + prompt) || SFT(. | prompt))

averaged over response tokens (:func:`quark_loss`; full-vocabulary KL), with no entropy bonus; both
models' logits are divided by the sampling temperature, the distribution the samples came from
(:func:`batch_loss`). The data pool is reset after every rollout: a round trains only on its own
samples. At test time sample with ``[best]``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.lm.model import adds_bos, load_model
from farmlib.methods.common import masked_mean, response_logits, rollout, score
from farmlib.methods.reward_model import load_reward_model
from farmlib.progress import progress
from farmlib.world import format_prompt

TAG = "[best] "


@dataclass
class QuarkConfig:
    """Quark, top-quantile variant, against the surrogate reward model."""

    rounds: int = 4  # sample-score-train rounds
    prompts_per_round: int = 256  # fresh prompts sampled each round
    n_bins: int = 5  # reward quantiles; only the top one is trained on
    epochs: int = 2  # passes over each round's top bin
    batch_size: int = 16  # responses per gradient step
    lr: float = 3e-4  # initial learning rate, decaying linearly to 0
    kl_coef: float = 0.05  # weight of the full-vocabulary KL to the SFT model
    temperature: float = 1.0  # rollout sampling temperature
    split: str = "unlabeled"  # where the prompts come from
    seed: int = 0  # sampling


def quark_loss(logits: torch.Tensor, ref_logits: torch.Tensor, response: torch.Tensor, mask: torch.Tensor,
               kl_coef: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``NLL(response) + kl_coef * KL(policy || ref)`` from ``[B, T, V]`` logits, each averaged over the
    response tokens in ``mask`` (the KL over the full vocabulary); returns (loss, nll, kl)."""
    logp = torch.log_softmax(logits, -1)
    nll = -masked_mean(logp.gather(-1, response[..., None]).squeeze(-1), mask)
    kl = masked_mean((logp.exp() * (logp - torch.log_softmax(ref_logits, -1))).sum(-1), mask)
    return nll + kl_coef * kl, nll, kl


def quantile_bins(rewards: list[float], n_bins: int) -> list[int]:
    """Bin index (0 = worst, ``n_bins - 1`` = best) of each reward by rank, equal-sized bins."""
    order = sorted(range(len(rewards)), key=lambda i: rewards[i])
    bins = [0] * len(rewards)
    for rank, i in enumerate(order):
        bins[i] = min(n_bins - 1, rank * n_bins // len(rewards))
    return bins


def train(farm, rm_path: str, cfg: QuarkConfig | None = None) -> str:
    cfg = cfg or farm.method_config("quark")
    sft, tok, prof = farm.sft_model(), farm.tokenizer(), farm.profile

    def build(work: Path) -> None:
        torch.manual_seed(cfg.seed)
        t0 = time.time()
        policy, ref = load_model(sft, prof.device), load_model(sft, prof.device).requires_grad_(False)
        rm = load_reward_model(rm_path, prof.device).requires_grad_(False)
        opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr)
        records = farm.splits()[cfg.split]
        history = []
        total = cfg.rounds * cfg.epochs * math.ceil(cfg.prompts_per_round / cfg.n_bins / cfg.batch_size)
        step = 0
        for rnd in progress(range(cfg.rounds), desc="quark", leave=False):
            recs = [records[(rnd * cfg.prompts_per_round + i) % len(records)] for i in range(cfg.prompts_per_round)]
            plain = [format_prompt(r["instruction"], r["input"]) for r in recs]
            # rollout with the tag; the pool holds this round's samples only
            policy.eval()
            seq, mask, response_mask, nq = rollout(policy, tok, [TAG + p for p in plain], cfg.temperature,
                                                   prof.max_new_tokens)
            with torch.no_grad():
                r = score(rm, seq, mask, nq).tolist()
            bins = quantile_bins(r, cfg.n_bins)
            top = [i for i, b in enumerate(bins) if b == cfg.n_bins - 1]
            prompts = [plain[i] for i in top]
            responses = [seq[i, nq:][response_mask[i].bool()].tolist() for i in top]  # up to and including EOS
            policy.train()
            for _ in range(cfg.epochs):
                for s in range(0, len(top), cfg.batch_size):
                    b = slice(s, s + cfg.batch_size)
                    loss, nll, kl = batch_loss(policy, ref, tok, prompts[b], responses[b], cfg)
                    for g in opt.param_groups:
                        g["lr"] = cfg.lr * (1 - step / total)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                    opt.step()
                    step += 1
            history.append({"round": rnd + 1, "reward_mean": sum(r) / len(r),
                            "reward_top_bin": sum(r[i] for i in top) / len(top), "nll": nll.item(),
                            "kl": kl.item(), "seconds": time.time() - t0})
        policy.eval()
        policy.save_pretrained(work)
        tok.save_pretrained(work)
        write_json(work / "history.json", history)
        write_json(work / "train_info.json", {"seconds": time.time() - t0})

    return farm.artifact("quark", {"sft": sft, "rm": rm_path, **asdict(cfg)}, build)


def batch_loss(policy, ref, tok, prompts: list[str], responses: list[list[int]],
               cfg: QuarkConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`quark_loss` on top-bin responses: the policy reads them after ``TAG + prompt``, the
    reference after the plain prompt; both at the sampling temperature (``logits / T``, the distribution
    the responses came from). Returns (loss, nll, kl)."""
    device = next(policy.parameters()).device
    seq, mask, resp_mask, nq = _batch(tok, [TAG + p for p in prompts], responses, device)
    logits = response_logits(policy, seq, mask, nq, cfg.temperature)
    ref_seq, ref_mask, _, ref_nq = _batch(tok, prompts, responses, device)
    with torch.no_grad():
        ref_logits = response_logits(ref, ref_seq, ref_mask, ref_nq, cfg.temperature)
    return quark_loss(logits, ref_logits, seq[:, nq:], resp_mask, cfg.kl_coef)


def _batch(tok, prompts: list[str], responses: list[list[int]], device: str | torch.device = "cpu"):
    """Left-padded prompts + right-padded responses: (seq, mask, response mask, n_query), on ``device``."""
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=adds_bos(tok))
    T = max(len(r) for r in responses)
    resp = torch.full((len(responses), T), tok.pad_token_id)
    resp_mask = torch.zeros((len(responses), T))
    for i, r in enumerate(responses):
        resp[i, :len(r)] = torch.tensor(r)
        resp_mask[i, :len(r)] = 1
    seq = torch.cat([enc["input_ids"], resp], 1)
    mask = torch.cat([enc["attention_mask"], resp_mask.long()], 1)
    return seq.to(device), mask.to(device), resp_mask.to(device), enc["input_ids"].size(1)
