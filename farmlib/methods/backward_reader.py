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
teach: a Bradley–Terry (logistic) fit of the preference on the two readers' differences (:func:`fit_weights`), or,
inside the book's reward model (``methods.reward_model.backward``), a parameter fitted beside the reward model's
own weights. There the backward model is frozen and rides along with the reward model (:func:`attach`): every
score the reward model gives, from records (:func:`term`) or from the token ids PPO and Quark sample
(:func:`term_of_ids`), adds ``λ · (1 / |x|) log p(x | y)``.

The backward model learns from the demonstrations of the splits in :data:`SPLITS` (the instruction, not the
answer, is what it predicts), from the base model, with the profile's SFT settings over the reward model's
``backward_epochs`` passes. It leaves out ``val``,
whose instructions chapter 5 holds out for the reward model's accuracy.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import OrderedDict
from pathlib import Path

import torch

from farmlib.lm.likelihood import sequence_logprobs
from farmlib.lm.supervised import collate, encode_pairs
from farmlib.provenance import data_digest
from farmlib.seeding import matvec

#: The splits whose demonstrations the backward model learns from (each (instruction, input, answer) once).
SPLITS = ("sft", "preference", "unlabeled")


def prompt(output: str) -> str:
    """What the backward model reads: the answer, then the start of an instruction."""
    return f"### Response:\n{output}\n\n### Instruction:\n"


def question(instruction: str, input: str = "") -> str:
    """What the backward model writes: the instruction, and its input where there is one."""
    return f"{instruction}\n\n### Input:\n{input}" if input else instruction


def question_of_prompt(text: str) -> str:
    """The inverse of :func:`farmlib.world.format_prompt` (after any prefix, such as Quark's reward tag): the
    instruction and its input as :func:`question` writes them."""
    start, end = "### Instruction:\n", "\n\n### Response:\n"
    i, j = text.find(start), text.rfind(end)
    if i < 0 or j < i:
        raise ValueError(f"not a prompt of ours (no '### Instruction:' before '### Response:'): {text[:80]!r}")
    return text[i + len(start):j]


def train(farm, epochs: float = 0) -> str:
    """The backward model (an artifact): the base model trained to write each demonstration's question given its
    answer, with the profile's SFT settings over ``epochs`` passes (0: the SFT model's)."""
    sp = farm.splits()
    pairs = [(prompt(r["output"]), question(r["instruction"], r["input"])) for s in SPLITS for r in sp[s]]
    train_cfg = dataclasses.replace(farm.profile.sft, epochs=epochs) if epochs else farm.profile.sft
    return farm.models.finetune("backward_reader", {"splits": list(SPLITS)}, pairs, train_cfg,
                                start=farm.models.base_model())


def of_config(farm, cfg) -> str | None:
    """The backward model a reward-model config (``RewardModelConfig``) reads, or None when it reads none."""
    return train(farm, cfg.backward_epochs) if cfg.backward else None


@torch.no_grad()
def loglik(model, tokenizer, records: list[dict], max_length: int, batch_size: int = 64,
           key: str = "output") -> list[float]:
    """The mean log-probability per token of each record's question (and the EOS after it) given its answer
    (``record[key]``). Read in batches of similar length; the result is in ``records``' order."""
    return _loglik(model, tokenizer, [(r[key], question(r["instruction"], r.get("input", ""))) for r in records],
                   max_length, batch_size)


def _loglik(model, tokenizer, pairs: list[tuple[str, str]], max_length: int, batch_size: int = 64) -> list[float]:
    """:func:`loglik` of ``(answer, question)`` pairs."""
    data = encode_pairs(tokenizer, [(prompt(a), q) for a, q in pairs], max_length)
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
        loss = torch.nn.functional.softplus(-matvec(x, w)).mean()
        loss.backward()
        return loss

    opt.step(closure)
    wf, wb = w.tolist()
    if not (math.isfinite(wf) and math.isfinite(wb)):
        raise ValueError("fit_weights did not converge: the pairs are separable by the two readers")
    return wf, wb


# -- the backward term of a reward model ---------------------------------------------------------------
class Attached:
    """A reward model's frozen backward model, its tokenizer and the longest text it reads: a plain attribute of
    the reward model (not a submodule), so the reward model's parameters, optimiser and saved weights stay its own."""

    def __init__(self, model, tokenizer, max_length: int):
        self.model, self.tokenizer, self.max_length = model.eval().requires_grad_(False), tokenizer, max_length
        self._weights: str | None = None

    def weights(self) -> str:
        """A digest of the frozen backward model's weights: every reward model built on the same backward reader
        carries a copy of it, and these copies read alike."""
        if self._weights is None:
            h = hashlib.sha256()
            for name, t in sorted(self.model.state_dict().items()):
                h.update(name.encode())
                h.update(t.detach().cpu().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes())
            self._weights = h.hexdigest()
        return self._weights


#: The latest reads of the backward model, by its weights and the set of (answer, question) texts read. The
#: reward models of one chapter carry the same frozen backward model and often read the same texts: chapter 17's
#: label-noise variants score one draw of candidates and label the same pairs, a learning curve's reward models
#: share their held-out pairs, an ensemble's members score the same answers. A read is a function of its set
#: alone (the batches are made from the sorted set), so a remembered read has the bits a new one would have.
_READS: OrderedDict[tuple, dict[tuple[str, str], float]] = OrderedDict()
_READS_KEPT = 8


def attach(rm, path: str | Path, max_length: int, device: str = "cpu"):
    """``rm`` with the backward model saved at ``path`` (model and tokenizer) riding along; returns ``rm``."""
    from farmlib.lm.model import load_model, load_tokenizer

    rm.backward_reader = Attached(load_model(path, device), load_tokenizer(path), max_length)
    return rm


def attached(rm) -> Attached | None:
    return getattr(rm, "backward_reader", None)


def weight(rm) -> torch.Tensor | float:
    """λ of a reward model with a backward term: a parameter while it trains, then a number in its config."""
    w = getattr(rm, "backward_weight", None)
    return w if w is not None else float(getattr(rm.config, "backward_weight", 0.0) or 0.0)


def save(rm, work: Path) -> None:
    """Save ``rm``'s backward model beside it (``work / "backward"``), where :func:`load` finds it; λ and the
    length go to the reward model's config (saved with it)."""
    b = attached(rm)
    if b is None:
        return
    w = weight(rm)
    if isinstance(w, torch.nn.Parameter):
        del rm.backward_weight
        rm.config.backward_weight = w.item()
    rm.config.backward_max_length = b.max_length
    b.model.save_pretrained(work / "backward")
    b.tokenizer.save_pretrained(work / "backward")


def load(rm, path: str | Path, device: str = "cpu"):
    """Attach the backward model saved with the reward model at ``path``, if there is one; returns ``rm``."""
    if (Path(path) / "backward").is_dir():
        attach(rm, Path(path) / "backward", rm.config.backward_max_length, device)
    return rm


def scores(rm, records: list[dict], key: str = "output") -> list[float] | None:
    """The backward model's :func:`loglik` of each record (unweighted; each distinct text read once), or None
    when ``rm`` has no backward term."""
    b = attached(rm)
    if b is None:
        return None
    pairs = [(r[key], question(r["instruction"], r.get("input", ""))) for r in records]
    distinct = sorted(set(pairs))
    k = (b.weights(), b.max_length, data_digest(distinct))
    read = _READS.get(k)
    if read is None:
        read = _READS[k] = dict(zip(distinct, _loglik(b.model, b.tokenizer, distinct, b.max_length)))
        while len(_READS) > _READS_KEPT:
            _READS.popitem(last=False)
    _READS.move_to_end(k)
    return [read[p] for p in pairs]


def term(rm, records: list[dict], key: str = "output") -> torch.Tensor | None:
    """``λ · (1 / |x|) log p(x | y)`` of each record (no grad), or None when ``rm`` has no backward term."""
    s = scores(rm, records, key)
    return None if s is None else float(torch.as_tensor(weight(rm)).detach()) * torch.tensor(s)


def term_of_ids(rm, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> torch.Tensor | None:
    """:func:`term` of sampled sequences (prompt tokens before ``n_query``, left-padded; the response after it),
    decoded as :class:`~farmlib.methods.common.TrueRewardScorer` decodes them."""
    b = attached(rm)
    if b is None:
        return None
    return term(rm, records_of_ids(b.tokenizer, seq, mask, n_query)).to(seq.device)


def records_of_ids(tok, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> list[dict]:
    """Sampled sequences (prompt tokens before ``n_query``, left-padded; the response after it) as records: the
    question (:func:`question_of_prompt`, whole, so ``input`` is empty) and the decoded response."""
    records = []
    for i in range(seq.size(0)):
        q = question_of_prompt(tok.decode(seq[i, :n_query][mask[i, :n_query].bool()], skip_special_tokens=True))
        resp = tok.decode(seq[i, n_query:][mask[i, n_query:].bool()], skip_special_tokens=True).strip()
        records.append({"instruction": q, "input": "", "output": resp})
    return records
