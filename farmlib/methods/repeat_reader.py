"""The repeat reader: the one thing a likelihood pays for that every reader charges — saying a thing twice.

A reward model that reads its language model's likelihood of the answer (``reads="likelihood"``) inherits that
model's taste for repetition: a sentence said a second time is likely text, since the model can copy it from its own
context (Holtzman et al. 2020, *The Curious Case of Neural Text Degeneration*; Welleck et al. 2020 train it away with
an unlikelihood loss). The judges and the people charge for it. The reward model's weights learn from the labels
too, but at the small learning rate that keeps what the SFT model knows, the labels barely move that taste, and
PPO climbs it: its answers repeat more than SFT's.

With ``methods.reward_model.repeats`` the score adds ``ρ · g(y)``, where ``g`` is how much of the answer says again
what it already said (:func:`farmlib.world.vocabulary.said_again`, one of the judges' glance features: 1 for a
sentence, clause, fact or item said twice, else the share of its words in a four-word run said before). ``ρ`` is what
the labels teach, fitted after the rest of the reward model (:func:`fit_weight`): a Bradley–Terry fit of each label on
the fitted score's difference and ``g``'s,

    P(w > l) = sigmoid(s · (r(x, w) − r(x, l)) + c · (g(w) − g(l))),    ρ = c / s,

so the score keeps the reward model's own scale (what PPO weighs against its KL penalty) and ``ρ`` is in its units.
Before any label ``ρ`` is 0.
"""

from __future__ import annotations

import torch

from farmlib.methods.backward_reader import fit_weights, question, records_of_ids
from farmlib.world.vocabulary import said_again


def feature(records: list[dict], key: str = "output") -> torch.Tensor:
    """``g(y)`` of each record: how much of ``record[key]`` says again what it said (the question names "it")."""
    return torch.tensor([said_again(r[key], question(r["instruction"], r.get("input", ""))) for r in records],
                        dtype=torch.float32)


def fit_weight(dr: torch.Tensor, dg: torch.Tensor) -> tuple[float, float]:
    """``(ρ, s)``: the Bradley–Terry fit ``P(w > l) = sigmoid(s · dr + c · dg)`` of labelled pairs
    (:func:`~farmlib.methods.backward_reader.fit_weights`), where ``dr`` is each pair's score difference (winner minus
    loser) and ``dg`` its :func:`feature` difference; ``ρ = c / s``. No pair whose ``g`` differs, or labels that
    disagree with the score itself (``s <= 0``, no scale to read ρ in): ``ρ = 0``, nothing learned."""
    if not bool((dg != 0).any()):
        return 0.0, 1.0
    s, c = fit_weights(dr.tolist(), dg.tolist())
    return (c / s if s > 0 else 0.0), s


def weight(rm) -> float:
    """``ρ`` of a reward model (0 for one without a repeat reader, or no model)."""
    return float(getattr(getattr(rm, "config", None), "repeat_weight", 0.0) or 0.0)


def term(rm, records: list[dict], key: str = "output") -> torch.Tensor | None:
    """``ρ · g(y)`` of each record, or None when ``rm`` has no repeat reader."""
    rho = weight(rm)
    return None if not rho else rho * feature(records, key)


def term_of_ids(rm, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> torch.Tensor | None:
    """:func:`term` of sampled sequences (prompt tokens before ``n_query``, left-padded; the response after it),
    decoded with the tokenizer :func:`farmlib.methods.reward_model.load_reward_model` hands the reward model;
    None without a repeat reader or that tokenizer (PPO's value model)."""
    tok = getattr(rm, "repeat_tokenizer", None)
    if not weight(rm) or tok is None:
        return None
    return term(rm, records_of_ids(tok, seq, mask, n_query)).to(seq.device)
