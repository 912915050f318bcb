"""What several methods share: reading a preference pair, log-probabilities of responses, rollouts,
and reward-model scores.

Layout of a batch of responses: prompts left-padded to ``n_query`` tokens, responses right-padded,
so the logits at positions ``n_query-1 .. -2`` predict the response tokens.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import torch

from farmlib.lm.model import adds_bos
from farmlib.lm.sampling import positions, sample_batch


@dataclass
class PairsFinetuneConfig:
    """Supervised fine-tuning on examples made from preference pairs (FeedME, reward conditioning)."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs
    epochs: float = 2.0  # passes over the examples
    lr: float = 5e-4  # peak learning rate
    batch_size: int = 32  # examples per step
    seed: int = 0  # data order


# -- a preference pair ---------------------------------------------------------------------------
def winner(pair: dict) -> str:
    """The preferred output of an annotated pair (``preference`` 1 or 2)."""
    return pair[f"output_{pair['preference']}"]


def loser(pair: dict) -> str:
    """The other output."""
    return pair[f"output_{3 - pair['preference']}"]


# -- responses under a model -----------------------------------------------------------------------
def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def last_index(mask: torch.Tensor) -> torch.Tensor:
    """Index of the last 1 in each row of ``mask`` (the last real token, whichever side is padded)."""
    return mask.size(1) - 1 - mask.flip(1).argmax(1)


def until_eos(resp: torch.Tensor, eos_id: int) -> torch.Tensor:
    """Mask of the generated tokens: 1 up to and including each row's first EOS, 0 after it.

    Read from the generated length, never from the pad id: when the pad token is the EOS token
    (Pythia, Llama), ``resp != pad`` would also mask the EOS itself.
    """
    is_eos = (resp == eos_id).long()
    return (is_eos.cumsum(1) - is_eos == 0).long()  # no EOS strictly before this token


def response_logits(model, seq: torch.Tensor, mask: torch.Tensor, n_query: int,
                    temperature: float = 1.0) -> torch.Tensor:
    """``[B, T, V]`` logits that predict the response tokens ``seq[:, n_query:]``, divided by the
    sampling ``temperature`` (so their softmax is the distribution the tokens were drawn from)."""
    keep = seq.size(1) - n_query + 1  # the LM head runs only at the last positions, which predict the response
    logits = model(input_ids=seq, attention_mask=mask, position_ids=positions(mask), logits_to_keep=keep).logits
    return logits[:, :-1].float() / temperature


def response_logprobs(model, seq: torch.Tensor, mask: torch.Tensor, n_query: int,
                      temperature: float = 1.0) -> torch.Tensor:
    """``[B, T]`` log-probabilities of the response tokens ``seq[:, n_query:]`` under
    ``softmax(logits / temperature)``."""
    logp = torch.log_softmax(response_logits(model, seq, mask, n_query, temperature), -1)
    return logp.gather(-1, seq[:, n_query:, None]).squeeze(-1)


def head_values(model, seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B, L]`` scalar head of a sequence classifier (reward or value model) at every position.

    The transformer is found through ``base_model_prefix`` (``model`` for Llama, ``gpt_neox`` for
    GPT-NeoX), so any ``AutoModelForSequenceClassification`` with a ``score`` head works.
    """
    backbone = getattr(model, model.base_model_prefix)
    hidden = backbone(input_ids=seq, attention_mask=mask, position_ids=positions(mask)).last_hidden_state
    return model.score(hidden).squeeze(-1).float()


def likelihood_weight(model) -> torch.Tensor | float:
    """``a`` of a reward model that reads its LM's likelihood (0 for one that reads its head alone): a parameter
    while it trains, then a number in its config (:func:`farmlib.methods.reward_model.new_reward_model`)."""
    w = getattr(model, "likelihood_weight", None)
    return w if w is not None else float(getattr(model.config, "likelihood_weight", 0.0) or 0.0)


def reads_likelihood(model) -> bool:
    """Whether ``model`` (a reward model, or None) adds its likelihood to its head's score."""
    if model is None:
        return False
    a = likelihood_weight(model)
    return isinstance(a, torch.Tensor) or a != 0


def mean_loglik(model, before: torch.Tensor, tokens: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """``[B]`` mean over the real tokens (``token_mask``) of ``log p(tokens)`` under the model's own LM head, from
    the hidden states ``before`` (``[B, T, H]``, each the state just before its token). The LM head is the input
    embedding (tied weights), so a sequence classifier holds it."""
    emb = model.get_input_embeddings().weight
    logp = torch.log_softmax(before.float() @ emb.float().T, -1).gather(-1, tokens[..., None]).squeeze(-1)
    return (logp * token_mask).sum(1) / token_mask.sum(1).clamp(min=1)


def response_mask_of(mask: torch.Tensor, n_response: torch.Tensor) -> torch.Tensor:
    """Mask of each row's last ``n_response`` real tokens (its response, EOS included), whichever side is padded."""
    from_end = mask.flip(1).cumsum(1).flip(1)  # real tokens from here to the row's end
    return (mask.bool() & (from_end <= n_response[:, None])).long()


def score(rm, seq: torch.Tensor, mask: torch.Tensor, n_query: int | None = None,
          n_response: torch.Tensor | None = None, backward: bool = True) -> torch.Tensor:
    """The reward model's score of each sequence: its head read at the last real token (the last 1 of ``mask``,
    so an EOS counts even when it is also the pad token), plus, for a model that reads its likelihood,
    ``a`` times the mean log-probability of the response (the tokens from ``n_query`` on, or each row's last
    ``n_response`` real tokens), plus, for one with a backward reader and a sampled sequence (``n_query``),
    its term ``λ · mean log p(x | y)`` (:mod:`farmlib.methods.backward_reader`), and for one with a repeat reader its
    ``ρ · g(y)`` (:mod:`farmlib.methods.repeat_reader`; ``backward=False``: neither term).
    A :class:`TrueRewardScorer` scores the response by R* instead."""
    if isinstance(rm, TrueRewardScorer):
        return rm(seq, mask, n_query)
    backbone = getattr(rm, rm.base_model_prefix)
    hidden = backbone(input_ids=seq, attention_mask=mask, position_ids=positions(mask)).last_hidden_state
    rows = torch.arange(seq.size(0), device=seq.device)
    r = rm.score(hidden[rows, last_index(mask)]).squeeze(-1).float()
    if reads_likelihood(rm):
        if n_response is None:
            if n_query is None:
                raise ValueError("a reward model that reads its likelihood needs n_query or n_response to find the response")
            n_response = mask[:, n_query:].sum(1)
        resp = response_mask_of(mask, n_response)[:, 1:]
        r = r + likelihood_weight(rm) * mean_loglik(rm, hidden[:, :-1], seq[:, 1:], resp)
    if backward and n_query is not None:
        from farmlib.methods.backward_reader import term_of_ids  # it reads DPO's log-probabilities, which read ours
        from farmlib.methods.repeat_reader import term_of_ids as repeat_term_of_ids

        for b in (term_of_ids(rm, seq, mask, n_query), repeat_term_of_ids(rm, seq, mask, n_query)):
            if b is not None:
                r = r + b
    return r


class TrueRewardScorer:
    """R* itself as the reward (FarmWorld only): the ceiling of what any learned reward model could give a
    method, measured before blaming the reward model. A diagnostic for the ceilings, never a judge: the
    judges never read R* (``tests/test_annotators.py``).

    With ``noise = sigma > 0`` it scores ``R* + sigma · z(prompt, response)``, ``z`` a standard normal fixed by a
    hash of the pair: a reward of known accuracy against R* (:func:`~farmlib.methods.reward_model.noisy_accuracy`)
    whose errors are random, where a learned reward model's are systematic. The same response always gets the same
    error, so PPO cannot average it away by sampling the response again."""

    def __init__(self, world, tok, records: list[dict], noise: float = 0.0):
        from farmlib.world import format_prompt

        self.world, self.tok, self.noise = world, tok, noise
        self.by_prompt = {format_prompt(r["instruction"], r["input"]): r for r in records}

    def requires_grad_(self, flag: bool = True) -> TrueRewardScorer:
        """Nothing to freeze: R* has no parameters (a reward model's interface, for the loops)."""
        return self

    def __call__(self, seq: torch.Tensor, mask: torch.Tensor, n_query: int | None) -> torch.Tensor:
        if n_query is None:
            raise ValueError("R* scores a response: pass n_query (where the prompt ends)")
        out = []
        for i in range(seq.size(0)):
            prompt = self.tok.decode(seq[i, :n_query][mask[i, :n_query].bool()], skip_special_tokens=True)
            rec = self.by_prompt.get(prompt)
            if rec is None:
                raise KeyError(f"no record for the prompt {prompt[:80]!r}: R* scores only the prompts it was given")
            resp = seq[i, n_query:][mask[i, n_query:].bool()]
            text = self.tok.decode(resp, skip_special_tokens=True).strip()
            r = self.world.true_reward(rec["instruction"], rec["input"], text)
            out.append(r + self.noise * fixed_normal(prompt, text) if self.noise else r)
        return torch.tensor(out, dtype=torch.float32, device=seq.device)


def fixed_normal(prompt: str, text: str) -> float:
    """A standard normal drawn from the SHA-256 of ``(prompt, text)`` by Box–Muller: the same pair, the same
    number, on every machine."""
    h = hashlib.sha256((prompt + "\x00" + text).encode()).digest()
    u1, u2 = (int.from_bytes(h[:8], "big") + 1) / 2**64, int.from_bytes(h[8:16], "big") / 2**64
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


@torch.no_grad()
def rollout(policy, tok, prompts: list[str], temperature: float, max_new_tokens: int):
    """Sample responses; return (seq, mask, response mask, n_query). The response mask covers each
    response up to and including its first EOS."""
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=adds_bos(tok))
    device = next(policy.parameters()).device
    q, qm = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    resp = sample_batch(policy, q, qm, tok.eos_token_id, tok.pad_token_id, temperature, max_new_tokens)
    if resp.size(1) == 0:  # nothing generated at all: one EOS each
        resp = torch.full((q.size(0), 1), tok.eos_token_id, device=device)
    response_mask = until_eos(resp, tok.eos_token_id)
    return torch.cat([q, resp], 1), torch.cat([qm, response_mask], 1), response_mask.float(), q.size(1)
