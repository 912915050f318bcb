"""The surrogate reward model: a Bradley–Terry classifier initialised from the SFT model.

For a pair where output ``w`` was preferred to ``l``, Bradley–Terry says
``P(w > l) = sigmoid(r(x, w) - r(x, l))``; training minimises the negative log-likelihood
(:func:`bt_loss`). ``r`` is a scalar head on the SFT transformer's last token
(``AutoModelForSequenceClassification`` with one label), so it saves and loads like any HF model
and serves PPO as the value model's initialisation.

A reward model may instead read its own language model (``reads="likelihood"``): ``r(x, y) = a · (1/|y|)
Σ_t log p_θ(y_t | x, y_<t)``, the mean log-probability its LM head (the tied input embedding) gives the
response, with ``a`` learned beside θ: the length-normalised implicit reward of SimPO (Meng et al. 2024).
A small model's knowledge lives in its next-token predictions, not in its last hidden state: on tiny, a
linear read-out of the SFT model's last state was at chance against R*, its mean log-likelihood was not.

With ``backward=True`` the score also reads the answer back to its question: ``+ λ · (1/|x|) log q(x | y)``, where
``q`` is a frozen backward model (:mod:`farmlib.methods.backward_reader`) and ``λ``, starting at 1, is learned
beside ``a``. The likelihood rates a true sentence that answers another question as high as the right answer; the
backward model does not.

With ``repeats=True`` the score also charges what the likelihood pays for: ``+ ρ · g(y)``, ``g`` how much of the answer
says again what it said, ``ρ`` fitted on the same labels once the rest is trained (:mod:`farmlib.methods.repeat_reader`).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
import transformers
from transformers import AutoModelForSequenceClassification

from farmlib.artifacts import read_json, write_json
from farmlib.data import paired
from farmlib.lm.model import adds_bos, cache_kwargs, cache_of
from farmlib.lm.supervised import length_grouped_batches, lr_at
from farmlib.methods import backward_reader, repeat_reader
from farmlib.methods.common import likelihood_weight, loser, mean_loglik, positions, reads_likelihood, score, winner
from farmlib.profiles import TrainConfig
from farmlib.progress import progress
from farmlib.provenance import data_digest
from farmlib.seeding import seeded
from farmlib.world import format_prompt


@dataclass
class RewardModelConfig:
    """Bradley–Terry reward model training."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs (see Farm.annotator)
    epochs: float = 2.0  # passes over the pairs
    lr: float = 5e-4  # peak learning rate (AdamW, warmup then cosine decay)
    batch_size: int = 32  # pairs per step
    seed: int = 0  # initialisation of the head and data order
    flip_rate: float = 0.0  # share of training labels flipped at random on top of the annotator's (label-noise ablation)
    group_by_length: bool = True  # batches of pairs of similar length (less padding)
    group_by_prompt: bool = False  # a step takes whole prompts: all their labelled pairs, each output read once
    reads: str = "last"  # "last": a head on the last token (the paper's); "likelihood": a · mean log p(y|x)
    backward: bool = False  # also λ · mean log q(x|y), the backward reader's (a frozen model trained first)
    backward_epochs: float = 0.0  # the backward model's passes over its demonstrations (0: the SFT model's)
    repeats: bool = False  # also ρ · said_again(y), ρ fitted on the labels once the rest is trained (repeat_reader)


#: Learning rate of ``a`` and ``λ``, the readers' weights: single numbers, next to weights already trained.
WEIGHT_LR = 1e-2
WEIGHTS = ("likelihood_weight", "backward_weight")
READS = ("last", "likelihood")


def flip_labels(pairs: list[dict], rate: float, seed: int = 0) -> list[dict]:
    """``pairs`` with each preference (1 or 2) flipped with probability ``rate``, drawn from ``seed`` and
    ``rate``; each pair's draw does not depend on the others, so a higher rate flips a superset."""
    if not rate:
        return pairs
    out = []
    for i, r in enumerate(pairs):
        u = random.Random(f"flip-{seed}-{i}").random()
        out.append(dict(r, preference=3 - r["preference"]) if u < rate and r["preference"] in (1, 2) else r)
    return out


def bt_loss(r_chosen: torch.Tensor, r_rejected: torch.Tensor) -> torch.Tensor:
    """Bradley–Terry negative log-likelihood: ``mean(-log sigmoid(r_w - r_l))``."""
    return -F.logsigmoid(r_chosen - r_rejected).mean()


def load_reward_model(path: str, device: str = "cpu", backward: bool = True):
    """The reward model saved at ``path``, with its backward reader when it has one and, when it has a repeat reader,
    the tokenizer that reader decodes samples with (``backward=False``: neither, as PPO's value model starts from it)."""
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1).to(device).eval()
    if not backward:
        return model
    if repeat_reader.weight(model):  # it decodes what PPO and Quark sample to read its repeats
        from farmlib.lm.model import load_tokenizer

        model.repeat_tokenizer = load_tokenizer(path)
    return backward_reader.load(model, path, device)


def _texts(tokenizer, records: list[dict], key: str = "output") -> list[str]:
    return [format_prompt(r["instruction"], r.get("input", "")) + r[key] + tokenizer.eos_token for r in records]


#: A prompt with at least this many distinct responses to score is read once for all of them (:func:`rewards`): the two
#: answers of a pair already cost 0.55x of reading each text whole (a pair's prompt is most of its tokens).
SHARE_PROMPT = 2


def rewards(model, tokenizer, records: list[dict], key: str = "output", batch_size: int = 64,
            max_length: int = 256) -> torch.Tensor:
    """``r(x, y)`` for each record (``y = record[key]``), no grad. Each distinct text is scored once. A prompt
    with ``SHARE_PROMPT`` or more distinct responses (best-of-n's candidates) is read once per batch of responses
    and its keys and values reused for each (:func:`_shared_prompt_scores`); the other texts go in batches of similar
    length (little padding). A backward reader's term and a repeat reader's are added record by record
    (:func:`backward_reader.term`, :func:`repeat_reader.term`)."""
    texts = _texts(tokenizer, records, key)
    by_prompt: dict[str, set[str]] = {}
    prompt_of: dict[str, str] = {}
    for r, t in zip(records, texts):
        prompt_of[t] = format_prompt(r["instruction"], r.get("input", ""))
        by_prompt.setdefault(prompt_of[t], set()).add(t)
    scored: dict[str, float] = {}
    rest: list[str] = []
    with torch.no_grad():
        shared: list[tuple[list[int], dict[str, list[int]]]] = []  # (prompt's ids, {text: response's ids})
        for prompt, group in sorted(by_prompt.items(), key=lambda kv: (len(kv[0]), kv[0])):
            if len(group) < SHARE_PROMPT:
                rest += group
                continue
            pre = tokenizer(prompt, add_special_tokens=adds_bos(tokenizer))["input_ids"]
            responses: dict[str, list[int]] = {}
            for t in sorted(group, key=lambda t: (len(t), t)):  # an order set iteration (hash seeds) cannot change
                response = _split(tokenizer, pre, t, max_length)
                if response is None:  # the tokens straddle the prompt's end, or the text is truncated: read it whole
                    rest.append(t)
                else:
                    responses[t] = response
            if responses:
                shared.append((pre, responses))
        if shared:
            got = _shared_prompt_scores(model, [pre for pre, _ in shared], [list(r.values()) for _, r in shared],
                                        batch_size)
            for (_, responses), scores in zip(shared, got):
                scored.update(zip(responses, scores))
        rest = sorted(set(rest), key=lambda t: (len(t), t))  # batches made the same way in every process
        for i in range(0, len(rest), batch_size):
            chunk = rest[i:i + batch_size]
            if reads_likelihood(model):  # the response is what follows the prompt's tokens
                prompts = [tokenizer(prompt_of[t], add_special_tokens=adds_bos(tokenizer))["input_ids"] for t in chunk]
                scored.update(zip(chunk, _forward(model, tokenizer, chunk, max_length, prompts=prompts).tolist()))
            else:
                scored.update(zip(chunk, _forward(model, tokenizer, chunk, max_length).tolist()))
    out = torch.tensor([scored[t] for t in texts])
    for extra in (backward_reader.term(model, records, key), repeat_reader.term(model, records, key)):
        if extra is not None:
            out = out + extra
    return out


def _prompt_cache(model, prompts: list[list[int]]):
    """Read ``prompts`` (token ids, left-padded together) once: the transformer's key/value cache, the mask, and
    the last prompt token's hidden state (it predicts the response's first token)."""
    backbone = getattr(model, model.base_model_prefix)
    device = next(model.parameters()).device
    n_q = max(map(len, prompts))
    q = torch.zeros(len(prompts), n_q, dtype=torch.long, device=device)
    qm = torch.zeros_like(q)
    for i, ids in enumerate(prompts):
        q[i, n_q - len(ids):] = torch.tensor(ids)
        qm[i, n_q - len(ids):] = 1
    out = backbone(input_ids=q, attention_mask=qm, position_ids=positions(qm), use_cache=True)
    return cache_of(out), qm, out.last_hidden_state[:, -1]


def _response_scores(model, cache, prompt_mask: torch.Tensor, prompt_last: torch.Tensor, responses: list[list[int]],
                     owner: list[int]) -> torch.Tensor:
    """Scores of ``prompt[owner[j]] + responses[j]`` (token ids) on a prompt cache (:func:`_prompt_cache`, used up:
    its rows become the responses' rows); read at each response's last token (the EOS), as :func:`score` reads."""
    backbone = getattr(model, model.base_model_prefix)
    rows = torch.tensor(owner, device=prompt_mask.device)
    cache.batch_select_indices(rows)
    qm = prompt_mask[rows]
    k, n_r = len(responses), max(map(len, responses))
    ids = torch.zeros(k, n_r, dtype=torch.long, device=qm.device)
    rm_ = torch.zeros_like(ids)
    for j, r in enumerate(responses):
        ids[j, :len(r)] = torch.tensor(r)
        rm_[j, :len(r)] = 1
    pos = qm.sum(1, keepdim=True) + torch.arange(n_r, device=qm.device)
    hidden = backbone(input_ids=ids, attention_mask=torch.cat([qm, rm_], 1), position_ids=pos,
                      use_cache=True, **cache_kwargs(backbone, cache)).last_hidden_state
    last = torch.tensor([len(r) - 1 for r in responses], device=qm.device)
    r = model.score(hidden[torch.arange(k, device=qm.device), last]).squeeze(-1).float()
    if reads_likelihood(model):
        before = torch.cat([prompt_last[rows][:, None], hidden[:, :-1]], 1)  # the states that predict each token
        r = r + likelihood_weight(model) * mean_loglik(model, before, ids, rm_)
    return r


def _split(tokenizer, pre: list[int], text: str, max_length: int) -> list[int] | None:
    """The response's token ids of ``text`` if its tokens are the prompt's (``pre``) followed by the response's
    (no token straddles the prompt's end) and it needs no truncation; else None (read it whole)."""
    ids = tokenizer(text, add_special_tokens=adds_bos(tokenizer))["input_ids"]
    if len(ids) <= max_length and len(ids) > len(pre) and ids[:len(pre)] == pre:
        return ids[len(pre):]
    return None


def _shared_prompt_scores(model, prompts: list[list[int]], responses: list[list[list[int]]],
                          batch_size: int) -> list[list[float]]:
    """Scores of ``prompts[i] + r`` for each response ``r`` in ``responses[i]`` (token ids), no grad: the responses
    go in batches of ``batch_size``, in order, and each batch reads the prompts its responses share once (left-padded
    together) and attends to their cached keys and values. Many prompts with a few responses each (expert
    iteration's 8 candidates) fill a batch as one prompt with many does."""
    flat = [(i, r) for i, rs in enumerate(responses) for r in rs]
    out: list[float] = []
    for s in range(0, len(flat), batch_size):
        chunk = flat[s:s + batch_size]
        read = list(dict.fromkeys(i for i, _ in chunk))  # the prompts this batch's responses answer
        cache, qm, last = _prompt_cache(model, [prompts[i] for i in read])
        where = {i: k for k, i in enumerate(read)}
        out += _response_scores(model, cache, qm, last, [r for _, r in chunk], [where[i] for i, _ in chunk]).tolist()
    it = iter(out)
    return [[next(it) for _ in rs] for rs in responses]


def prompt_groups(pairs: list[dict], by_prompt: bool = True) -> list[dict]:
    """Labelled pairs gathered by prompt: ``{"instruction", "input", "outputs", "wins"}``, where ``outputs`` are the
    prompt's distinct outputs (each winner before its loser, in order of appearance) and ``wins`` the ``(w, l)``
    indices into them of each pair. ``by_prompt=False``: every pair is its own group, ``outputs = [winner, loser]``.
    k outputs of one instruction give up to k(k-1)/2 pairs for the price of reading k answers."""
    groups: list[dict] = []
    index: dict = {}
    for p in pairs:
        key = (p["instruction"], p.get("input", "")) if by_prompt else len(groups)
        if key not in index:
            index[key] = {"instruction": p["instruction"], "input": p.get("input", ""), "outputs": [], "wins": []}
            groups.append(index[key])
        g = index[key]
        ids = []
        for text in (winner(p), loser(p)):
            if text not in g["outputs"]:
                g["outputs"].append(text)
            ids.append(g["outputs"].index(text))
        g["wins"].append(tuple(ids))
    return groups


def group_rewards(model, tokenizer, groups: list[dict], max_length: int) -> torch.Tensor:
    """``r(x, y)`` of every output of every group (:func:`prompt_groups`), flat and in order, with grad. Each
    group's prompt is read once for all its outputs (the prompt is most of a tiny pair's tokens); a batch with a
    text whose tokens straddle the prompt's end, or that needs truncating, is read whole, text by text."""
    records = [{"instruction": g["instruction"], "input": g["input"], "output": o} for g in groups for o in g["outputs"]]
    owner = [i for i, g in enumerate(groups) for _ in g["outputs"]]
    prompts = [tokenizer(format_prompt(g["instruction"], g["input"]), add_special_tokens=adds_bos(tokenizer))["input_ids"]
               for g in groups]
    texts = _texts(tokenizer, records)
    responses = [_split(tokenizer, prompts[i], t, max_length) for i, t in zip(owner, texts)]
    if any(s is None for s in responses):
        return _forward(model, tokenizer, texts, max_length, prompts=[prompts[i] for i in owner])
    cache, qm, last = _prompt_cache(model, prompts)
    return _response_scores(model, cache, qm, last, responses, owner)


def _win_indices(groups: list[dict]) -> tuple[torch.Tensor, torch.Tensor]:
    """Where each pair's winner and loser sit in :func:`group_rewards`' flat output."""
    won, lost, start = [], [], 0
    for g in groups:
        won += [start + a for a, _ in g["wins"]]
        lost += [start + b for _, b in g["wins"]]
        start += len(g["outputs"])
    return torch.tensor(won), torch.tensor(lost)


def pair_rewards(model, tokenizer, batch: list[dict], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(r(x, chosen), r(x, rejected))`` for a batch of pairs, with grad, each pair's prompt read once for both."""
    groups = prompt_groups(batch, by_prompt=False)
    won, lost = _win_indices(groups)
    r = group_rewards(model, tokenizer, groups, max_length)
    return r[won], r[lost]


def _forward(model, tokenizer, texts: list[str], max_length: int, prompts: list[list[int]] | None = None) -> torch.Tensor:
    """Scores of whole ``texts`` (truncated on the left). A reward model that reads its likelihood needs each text's
    prompt (token ids, ``prompts``): what is not the prompt is the response."""
    device = next(model.parameters()).device
    side, tokenizer.truncation_side = tokenizer.truncation_side, "left"
    enc = tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=max_length,
                    add_special_tokens=adds_bos(tokenizer)).to(device)
    tokenizer.truncation_side = side
    n_response = None
    if prompts is not None:
        n_text = enc["attention_mask"].sum(1).tolist()
        full = [len(tokenizer(t, add_special_tokens=adds_bos(tokenizer))["input_ids"]) for t in texts]
        n_response = torch.tensor([max(1, min(f - len(p), n - 1)) for f, p, n in zip(full, prompts, n_text)],
                                  device=device)  # a text truncated on the left keeps its response's tail
    return score(model, enc["input_ids"], enc["attention_mask"], n_response=n_response,  # at the EOS, as PPO scores
                 backward=False)  # the backward term goes on by record (rewards, fit)


def pairwise_accuracy(model, tokenizer, prefs: list[dict], max_length: int = 256) -> tuple[float, float]:
    """Share of pairs where the preferred output gets the higher reward, and its standard error."""
    return pairwise_accuracies(model, tokenizer, [prefs], max_length)[0]


def pairwise_accuracies(model, tokenizer, labellings: list[list[dict]], max_length: int = 256) -> list[tuple[float, float]]:
    """:func:`pairwise_accuracy` of each list of labelled pairs, from one :func:`rewards` call: both answers of a pair
    read their prompt once, and the same pairs labelled by several sources are scored once."""
    prefs = [p for ps in labellings for p in ps]
    r = rewards(model, tokenizer, [dict(p, output=p[k]) for k in ("output_1", "output_2") for p in prefs],
                max_length=max_length).tolist()
    out, start = [], 0
    for ps in labellings:
        hits = [(r[len(prefs) + i] > r[i]) == (p["preference"] == 2) for i, p in enumerate(ps, start)]
        acc = sum(hits) / max(len(hits), 1)
        out.append((acc, math.sqrt(acc * (1 - acc) / max(len(hits), 1))))
        start += len(ps)
    return out


def fit(model, tok, pairs: list[dict], cfg: RewardModelConfig, max_length: int) -> list[dict]:
    """Minimise the Bradley–Terry loss of ``model`` on annotated pairs (in place); per-step history. A step takes
    ``cfg.batch_size`` pairs, or with ``cfg.group_by_prompt`` that many prompts with all their pairs."""
    model.train()
    a = [p for n, p in model.named_parameters() if n in WEIGHTS]
    rest = [p for n, p in model.named_parameters() if n not in WEIGHTS]
    opt = torch.optim.AdamW([{"params": rest, "lr": cfg.lr}, {"params": a, "lr": WEIGHT_LR, "fixed": True}])
    groups = prompt_groups(pairs, cfg.group_by_prompt)
    back = backward_reader.scores(model, [{"instruction": g["instruction"], "input": g["input"], "output": o}
                                          for g in groups for o in g["outputs"]])  # frozen: read once
    if back is not None:
        starts = [0]
        for g in groups:
            starts.append(starts[-1] + len(g["outputs"]))
    steps_per_epoch = math.ceil(len(groups) / cfg.batch_size)
    total = int(steps_per_epoch * cfg.epochs)
    sched = TrainConfig(lr=cfg.lr, warmup_ratio=0.05)
    history, t0 = [], time.time()
    torch.manual_seed(cfg.seed)
    # a group's length in characters: its instruction and longest output (its outputs are padded together)
    lengths = [len(g["instruction"]) + len(g["input"]) + max(map(len, g["outputs"]))
               if cfg.group_by_length else 0 for g in groups]
    batches: list[list[int]] = []
    for step in progress(range(total), desc="reward model", leave=False, mininterval=2):
        if step % steps_per_epoch == 0:
            batches = length_grouped_batches(lengths, cfg.batch_size, cfg.seed + step)
        batch = [groups[j] for j in batches[step % steps_per_epoch]]
        won, lost = _win_indices(batch)
        r = group_rewards(model, tok, batch, max_length)  # each prompt read once for all its outputs
        if back is not None:
            b = [back[k] for j in batches[step % steps_per_epoch] for k in range(starts[j], starts[j + 1])]
            r = r + backward_reader.weight(model) * torch.tensor(b, device=r.device)
        r_w, r_l = r[won], r[lost]
        loss = bt_loss(r_w, r_l)
        for g in opt.param_groups:
            g["lr"] = WEIGHT_LR if g.get("fixed") else lr_at(step, total, sched)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(rest, 1.0)
        opt.step()
        history.append({"step": step, "epoch": step / steps_per_epoch, "loss": loss.item(),
                        "accuracy": (r_w > r_l).float().mean().item(), "seconds": time.time() - t0,
                        **{n: p.item() for n, p in model.named_parameters() if n in WEIGHTS}})
    model.eval()
    return history


def fit_repeats(model, tok, pairs: list[dict], max_length: int) -> dict:
    """Fit the repeat reader's ``ρ`` on labelled ``pairs`` with the rest of ``model`` fixed
    (:func:`repeat_reader.fit_weight`) and set it in the model's config; returns ``{"repeat_weight": ρ,
    "repeat_scale": s}``."""
    model.config.repeat_weight = 0.0  # the score the fit reads is the model's without the reader
    pairs = [p for p in pairs if p["preference"] in (1, 2)]
    won = [dict(p, output=winner(p)) for p in pairs]
    lost = [dict(p, output=loser(p)) for p in pairs]
    r = rewards(model, tok, won + lost, max_length=max_length) if pairs else torch.zeros(0)  # each prompt read once
    dr = r[:len(pairs)] - r[len(pairs):]
    rho, s = repeat_reader.fit_weight(dr, repeat_reader.feature(won) - repeat_reader.feature(lost))
    model.config.repeat_weight = rho
    return {"repeat_weight": rho, "repeat_scale": s}


def settle(model):
    """A trained reward model ready to save: a learned likelihood weight moves into its config (``likelihood_weight``),
    where :func:`load_reward_model` finds it again (a backward reader's λ is saved by :func:`save`)."""
    w = getattr(model, "likelihood_weight", None)
    if isinstance(w, torch.nn.Parameter):
        del model.likelihood_weight
        model.config.likelihood_weight = w.item()
    return model


def save(model, tok, work: Path) -> None:
    """Save a trained reward model (settled), its tokenizer, and its backward reader beside it."""
    settle(model)
    backward_reader.save(model, work)
    model.save_pretrained(work)
    tok.save_pretrained(work)


def new_reward_model(sft: str, tok, device: str = "cpu", seed: int = 0, reads: str = "last",
                     backward: str | None = None, max_length: int = 256):
    """A scalar head on the SFT transformer (the head freshly initialised from ``seed``); with
    ``reads="likelihood"``, the head is zero and frozen and the score is ``a`` (a parameter, starting at 1) times
    the mean log-probability of the response under the model's own tied LM head. ``backward``: the path of a
    backward model (:func:`backward_reader.train`) whose term ``λ · mean log q(x | y)`` is added, λ a parameter
    starting at 1; ``max_length`` the longest text it reads."""
    if reads not in READS:
        raise ValueError(f"reward_model.reads is {reads!r}; choose from {', '.join(READS)}")
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the new head and the unused LM head are expected: no load report
    try:
        with seeded(seed):
            model = AutoModelForSequenceClassification.from_pretrained(sft, num_labels=1)
    finally:
        transformers.logging.set_verbosity(verbosity)
    model.config.pad_token_id = tok.pad_token_id
    if reads == "likelihood":
        if not getattr(model.config, "tie_word_embeddings", False):
            raise ValueError(f"reward_model.reads = 'likelihood' needs an LM head tied to the input embedding; "
                             f"{sft} unties them: set methods.reward_model.reads = 'last'")
        torch.nn.init.zeros_(model.score.weight)
        model.score.requires_grad_(False)
        model.likelihood_weight = torch.nn.Parameter(torch.ones(()))
    if backward:
        backward_reader.attach(model, backward, max_length, device)
        model.backward_weight = torch.nn.Parameter(torch.ones((), device=device))
    return model.to(device)


def with_lora_head(model, r: int, seed: int = 0):
    """LoRA adapters of rank ``r`` on the transformer's linear layers, the new scalar head trained in full (peft's
    sequence-classification task): what a LoRA profile trains instead of every weight (a 4-bit base model cannot
    train its own weights at all). Returns (the same HF model, now with adapters, for :func:`fit` and the scorers;
    the peft wrapper, whose ``merge_and_unload()`` gives the plain model to save)."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules="all-linear", task_type="SEQ_CLS")
    with seeded(seed):
        wrapped = get_peft_model(model, cfg)
    return wrapped.base_model.model, wrapped


def train(farm, cfg: RewardModelConfig | None = None, sft: str | None = None) -> str:
    """Fit the reward model on ``cfg.annotator``'s preference pairs; an artifact with ``metrics.json``
    (held-out accuracy against the annotator's labels and against R*). ``sft``: the model it starts from (default
    the book's SFT 10k, whose samples the pairs are; another, an ensemble's member, learns from the same pairs)."""
    cfg = cfg or farm.method_config("reward_model")
    from farmlib.annotators.validation import sft_pairs

    tr = flip_labels(farm.preference_data(cfg.annotator), cfg.flip_rate, cfg.seed)
    sft, tok, max_len = sft or farm.sft_model(), farm.tokenizer(), farm.profile.model.max_length
    held = sft_pairs(farm, split="val")  # pairs of SFT samples on instructions never trained on
    lora = farm.profile.model.lora_r
    back = backward_reader.of_config(farm, cfg)

    def build(work: Path) -> None:
        t0 = time.time()
        model = new_reward_model(sft, tok, farm.profile.device, cfg.seed, cfg.reads, back, max_len)
        if lora:
            model, wrapped = with_lora_head(model, lora, cfg.seed)
        history = fit(model, tok, tr, cfg, max_len)
        repeats = fit_repeats(model, tok, tr, max_len) if cfg.repeats else {}
        val = farm.annotator(cfg.annotator, seed=1).annotate_pairs(held, seed=1)
        val = [r for r in val if r["preference"] in (1, 2)]
        truth: list[dict] = []  # R*'s labels (on real data there is no R* to check against)
        if farm.is_farmworld:
            true_r = [[farm.world.true_reward(r["instruction"], r["input"], r[f"output_{k}"]) for k in (1, 2)]
                      for r in held]
            truth = [dict(r, preference=1 if a > b else 2) for r, (a, b) in zip(held, true_r) if a != b]
        (acc, se), on_truth = pairwise_accuracies(model, tok, [val, truth], max_len)
        acc_true, se_true = on_truth if farm.is_farmworld else (None, None)
        if lora:
            model = wrapped.merge_and_unload()
        weights = {n: getattr(model, n).item() for n in WEIGHTS if hasattr(model, n)}
        save(model, tok, work)
        write_json(work / "history.json", history)
        write_json(work / "metrics.json", {"val_accuracy": acc, "val_se": se, "n_val": len(val),
                                           "val_accuracy_true": acc_true, "val_se_true": se_true,
                                           "n_val_true": len(truth), "n_train": len(tr), **weights, **repeats,
                                           "seconds": time.time() - t0})

    return farm.artifact("reward_model", {"sft": sft, "n": len(tr), **asdict(cfg), **({"lora_r": lora} if lora else {}),
                                          **({"backward_model": back} if back else {}),
                                          "pairs": data_digest(tr), "held": data_digest(held)}, build)


def metrics(path: str) -> dict:
    return read_json(Path(path) / "metrics.json")


#: Where the accuracy curve's pairs come from, in order: the preference split's instructions, then the
#: unlabeled split's (more instructions), then a second pair of samples for each (more pairs per instruction).
CURVE_SOURCES = (("preference", 11, 12), ("unlabeled", 11, 12), ("preference", 13, 14), ("unlabeled", 13, 14))


def curve_pairs(farm, n: int) -> list[dict]:
    """At least ``n`` pairs of SFT samples (temperature 1), if the splits hold them, taken from
    :data:`CURVE_SOURCES` in order: the first pairs are the same whatever ``n`` is. Identical pairs are dropped."""
    sft, pairs = farm.sft_model(), []
    for split, sa, sb in CURVE_SOURCES:
        if len(pairs) >= n:
            break
        k = len(farm.splits()[split])  # a whole split each time: a sample depends on its batch-mates
        a, b = (farm.samples(sft, split, temperature=1.0, seed=s, generator=f"sft_{s}", n=k) for s in (sa, sb))
        pairs += paired(a, b, same=str)
    return pairs


def accuracy_curve(farm, labels: tuple[str, ...] = ("true_reward", "human", "p_sim_ann"),
                   sizes: tuple[int, ...] = (250, 500, 1000, 2000), cfg: RewardModelConfig | None = None) -> list[dict]:
    """What limits the reward model: held-out accuracy (against R* and against the people's majority) of
    reward models fitted on the first ``n`` preference pairs labelled by each source in ``labels``
    (``true_reward``: R* itself, no noise). One artifact per point, holding only its metrics."""
    from farmlib.annotators.validation import sft_pairs

    cfg = cfg or farm.method_config("reward_model")
    sft, tok, max_len = farm.sft_model(), farm.tokenizer(), farm.profile.model.max_length
    pairs = curve_pairs(farm, max(sizes))
    held = sft_pairs(farm, split="val")
    crowd, w = farm.annotator("human"), farm.world

    def true_label(r: dict) -> int:
        r1, r2 = (w.true_reward(r["instruction"], r["input"], r[f"output_{k}"]) for k in (1, 2))
        return 0 if r1 == r2 else (2 if r2 > r1 else 1)  # 0: a tie, no label

    held_true = [dict(r, preference=true_label(r)) for r in held]
    held_true = [r for r in held_true if r["preference"]]
    held_people = [dict(r, preference=crowd.majority_label(r)) for r in held]
    back = backward_reader.of_config(farm, cfg)
    rows = []
    for source in labels:
        labelled = ([dict(r, preference=true_label(r)) for r in pairs] if source == "true_reward"
                    else farm.annotator(source, cfg.seed).annotate_pairs(pairs, seed=cfg.seed))
        agree = [x["preference"] == true_label(r) for x, r in zip(labelled, pairs) if true_label(r) and x["preference"]]
        for n in sorted({min(s, len(pairs)) for s in sizes}):
            data = [r for r in labelled[:n] if r["preference"] in (1, 2)]

            def build(work: Path, data=data) -> None:
                model = new_reward_model(sft, tok, farm.profile.device, reads=cfg.reads, backward=back,
                                         max_length=max_len)
                fit(model, tok, data, cfg, max_len)
                repeats = fit_repeats(model, tok, data, max_len) if cfg.repeats else {}
                (acc_t, se_t), (acc_p, se_p) = pairwise_accuracies(model, tok, [held_true, held_people], max_len)
                write_json(work / "metrics.json", {"acc_true": acc_t, "se_true": se_t, "acc_people": acc_p,
                                                   "se_people": se_p, **repeats})

            path = farm.artifact("reward_model_curve", {"sft": sft, "labels": source, "n": n, **asdict(cfg),
                                                        **({"backward_model": back} if back else {}),
                                                        "pairs": data_digest([data, held_true, held_people])}, build)
            rows.append({"labels": source, "label agreement with R*": sum(agree) / max(len(agree), 1),
                         "pairs": len(data), **read_json(Path(path) / "metrics.json")})
    return rows


# -- what scale would close the gap? ------------------------------------------------------------------
def held_out_gaps(farm) -> list[float]:
    """``|R*(y_1) - R*(y_2)|`` on the held-out pairs that :func:`train` scores against R* (pairs of SFT
    samples on the validation instructions; ties dropped)."""
    from farmlib.annotators.validation import sft_pairs

    w = farm.world
    gaps = [abs(w.true_reward(r["instruction"], r["input"], r["output_1"])
                - w.true_reward(r["instruction"], r["input"], r["output_2"])) for r in sft_pairs(farm, split="val")]
    return [g for g in gaps if g > 0]


def noisy_accuracy(gaps: list[float], sigma: float) -> float:
    """Expected held-out accuracy against R* of the scorer ``R* + N(0, sigma²)`` (independent noise on each
    output): a pair with gap ``g`` is ranked right with probability ``Φ(g / (sigma √2))``."""
    if sigma <= 0:
        return 1.0
    return sum(0.5 * (1 + math.erf(g / (2 * sigma))) for g in gaps) / len(gaps)


def sigma_for_accuracy(gaps: list[float], accuracy: float) -> float:
    """The noise ``sigma`` at which :func:`noisy_accuracy` is ``accuracy`` (in (0.5, 1]; 1 gives 0): the error of a
    scorer ``R* + N(0, sigma²)`` that ranks that share of the held-out pairs as R* does."""
    if not 0.5 < accuracy <= 1:
        raise ValueError(f"accuracy is {accuracy}; a scorer's accuracy against R* lies in (0.5, 1]")
    if accuracy == 1:
        return 0.0
    lo, hi = 0.0, 1.0
    while noisy_accuracy(gaps, hi) > accuracy:  # accuracy falls with sigma: find a bracket, then bisect
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if noisy_accuracy(gaps, mid) > accuracy else (lo, mid)
    return (lo + hi) / 2


def crossing(xs: list[float], ys: list[float], target: float) -> float | None:
    """The first ``x`` at which ``ys`` (read in increasing ``x``) reaches ``target``, by linear
    interpolation between neighbouring points; None when it never does."""
    pts = sorted(zip(xs, ys))
    if pts and pts[0][1] >= target:
        return pts[0][0]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y0 < target <= y1:
            return x0 + (target - y0) * (x1 - x0) / (y1 - y0)
    return None


def pairs_for_accuracy(pairs: list[float], acc: list[float], se: list[float], target: float) -> dict:
    """Extrapolate an accuracy curve: the weighted (1/se²) least-squares line ``acc = a + b·log2(pairs)``
    and the number of pairs at which it reaches ``target`` (None when it does not rise). An order of
    magnitude, not a measurement: a few points, and accuracy saturates before 100 %."""
    w = [1 / max(s, 1e-6) ** 2 for s in se]
    x = [math.log2(p) for p in pairs]
    sw = sum(w)
    mx, my = sum(wi * xi for wi, xi in zip(w, x)) / sw, sum(wi * yi for wi, yi in zip(w, acc)) / sw
    sxx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x))
    slope = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, acc)) / sxx if sxx > 0 else 0.0
    needed = 2 ** (mx + (target - my) / slope) if slope > 0 else None
    return {"per_doubling": slope, "pairs_needed": needed}
