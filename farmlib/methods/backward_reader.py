"""The backward reader: how well an answer accounts for its own question, ``log p(x | y)``.

A reward model that reads the SFT model's likelihood ``log p(y | x)`` rates a fluent, true sentence that answers
another question ("What does the camel eat?" → "The camel makes its home in the rivers.") as high as the right
answer: both are likely text after that prompt. A model trained the other way round, to write the instruction
(and its input) given the answer, reads what that misses. An answer that names the input's animals, numbers or
words, or the attribute the question asks about, makes *this* question likely; one that answers another question
does not. This is the noisy-channel, or maximum-mutual-information, reranker of Li et al. (2016, *A
Diversity-Promoting Objective Function for Neural Conversation Models*):

    score(x, y) = (1 / |y|) log p(y | x)  +  λ · (1 / |x|) log p(x | y)

Both terms are per-token means, so λ does not depend on how long questions and answers run. λ is what the labels
teach: a Bradley–Terry (logistic) fit of the preference on the two readers' differences (:func:`fit_weights`).

The backward model learns from the demonstrations of the splits in :data:`SPLITS` (the instruction, not the
answer, is what it predicts), from the base model, with the profile's SFT settings. It leaves out ``val``,
whose instructions chapter 5 holds out for the reward model's accuracy.
"""

from __future__ import annotations

import math

import torch

from farmlib.lm.supervised import collate, encode_pairs
from farmlib.methods.dpo import sequence_logprobs

#: The splits whose demonstrations the backward model learns from (each (instruction, input, answer) once).
SPLITS = ("sft", "preference", "unlabeled")


def prompt(output: str) -> str:
    """What the backward model reads: the answer, then the start of an instruction."""
    return f"### Response:\n{output}\n\n### Instruction:\n"


def question(instruction: str, input: str = "") -> str:
    """What the backward model writes: the instruction, and its input where there is one."""
    return f"{instruction}\n\n### Input:\n{input}" if input else instruction


def train(farm) -> str:
    """The backward model (an artifact): the base model trained to write each demonstration's question given its
    answer."""
    sp = farm.splits()
    pairs = [(prompt(r["output"]), question(r["instruction"], r["input"])) for s in SPLITS for r in sp[s]]
    return farm.models.finetune("backward_reader", {"splits": list(SPLITS)}, pairs, farm.profile.sft,
                                start=farm.models.base_model())


@torch.no_grad()
def loglik(model, tokenizer, records: list[dict], max_length: int, batch_size: int = 64,
           key: str = "output") -> list[float]:
    """The mean log-probability per token of each record's question (and the EOS after it) given its answer
    (``record[key]``). Read in batches of similar length; the result is in ``records``' order."""
    data = encode_pairs(tokenizer, [(prompt(r[key]), question(r["instruction"], r.get("input", "")))
                                    for r in records], max_length)
    order = sorted(range(len(data)), key=lambda i: len(data[i][0]))
    out = [0.0] * len(data)
    model.eval()
    for s in range(0, len(order), batch_size):
        idx = order[s:s + batch_size]
        b = collate([data[i] for i in idx], tokenizer.pad_token_id)
        means = sequence_logprobs(model, b) / (b["labels"] != -100).sum(1).clamp(min=1)
        for i, v in zip(idx, means.tolist()):
            out[i] = v
    return out


def fit_weights(forward_diff: list[float], backward_diff: list[float]) -> tuple[float, float]:
    """The Bradley–Terry weights ``(w_forward, w_backward)`` of ``P(winner) = σ(w_f Δf + w_b Δb)``, where each
    Δ is the winner's score minus the loser's: a logistic regression without intercept (a pair's order is
    arbitrary), fitted by L-BFGS. λ of the module's formula is ``w_backward / w_forward``."""
    if not forward_diff or len(forward_diff) != len(backward_diff):
        raise ValueError(f"fit_weights needs as many forward as backward differences, at least one "
                         f"(got {len(forward_diff)} and {len(backward_diff)})")
    x = torch.tensor([forward_diff, backward_diff], dtype=torch.float64).T
    w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=500, tolerance_grad=1e-10, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.softplus(-(x @ w)).mean()
        loss.backward()
        return loss

    opt.step(closure)
    wf, wb = w.tolist()
    if not (math.isfinite(wf) and math.isfinite(wb)):
        raise ValueError("fit_weights did not converge: the pairs are separable by the two readers")
    return wf, wb
