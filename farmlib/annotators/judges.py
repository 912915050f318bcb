"""Simulated judges (``p_sim``): learned models that only see text, and the paper's pools.

A judge family (:class:`JudgeLM`) is a linear head, trained Bradley–Terry on comparisons its makers
collected (other people than the crowd, other pairs, other amounts and capacity:
:mod:`farmlib.annotators.learned`), on what a pretrained LM reads of the text (:class:`TextReader`:
the world's base LM, frozen). It reads ``prompt + output`` and returns a number; a comparison is
the difference of two numbers. At judging time a judge holds that reader and a weight vector: no
world, no reward code, no people. The three families (``gpt4``, ``chatgpt``, ``davinci``) differ only
in what they learned from (:data:`farmlib.annotators.learned.JUDGE_FAMILIES`).

The 13 members of the paper's pool (:func:`default_pool`) share the three models and differ by
what their prompt does to the answer, each a named mechanism (:class:`JudgeConfig`):

* **output position**: a logit in favour of the output shown first (``position_bias``), doubled
  without in-context examples (``in_context=False``);
* **batch size**: a judge reading ``k`` comparisons at once blurs them: each comparison's margin is
  pulled towards the batch's mean margin by ``0.05 (k - 1)`` (cross-talk);
* **output format**: ``json`` replies are unparseable 1 % of the time (label ``None``);
* **temperature**: the label is sampled from ``sigmoid(margin / temperature)``; 0 is greedy;
* **prompt instructions** ``prefer="long"`` / ``"short"``: the instruction adds
  ``±0.5 clip(Δwords / 20, -1, 1)`` to the margin — a prompt, not a change of the model.

``p_sim^eval`` (:func:`pool_eval`): a random member per comparison; ``p_sim^ann``
(:func:`pool_ann`): the same mixed with a fair coin (weight 0.5: 25 % flips); ``p_sim^single``
(:func:`single_judge`): the GPT-4 family at temperature 0. Build them with ``Farm.annotator``, which
trains (once, cached) and loads the three models.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from farmlib.annotators.base import _sigmoid
from farmlib.world.vocabulary import ITEM_MARKER, said_again


def surface(text: str, question: str = "") -> list[float]:
    """What any reader notices at a glance: log length in words, log lines, whether it is a list, how
    varied its words are (distinct words and distinct word pairs, as shares), and how much of it says again
    what it already said (:func:`said_again`, with the ``question`` it answers). What each is worth is the
    head's to learn."""
    n_words, n_lines = len(text.split()), text.count("\n") + 1
    w = text.lower().split()
    pairs = list(zip(w, w[1:]))
    return [math.log1p(n_words), math.log(n_lines), float(len(ITEM_MARKER.findall(text)) >= 2),
            len(set(w)) / max(len(w), 1), len(set(pairs)) / max(len(pairs), 1), said_again(text, question)]


N_SURFACE = 6  # len(surface(...))
BUCKET = 16  # a reader pads each output to its length rounded up to a multiple of this (TextReader.bucket)
N_FLUENCY = 4  # the reader's log-probability statistics of the response
MIN_ROWS = 16  # a product's rows are padded to at least this many (per_row)


# A reader's features and a head's score are cached by text (TextReader._cache, ScoreStore), in whichever batch a
# chapter first asked for them, so a text's bits must not depend on the texts computed beside it. Two products broke
# that on an AVX2 EPYC (benchmarks/thread_invariance.py): MKL multiplies one to three rows by another kernel than
# four or more (every row of the 2048-wide LM head differed), and one row of a matrix-vector product came out in
# other bits alone than among thousands.
def per_row(layer, x: torch.Tensor) -> torch.Tensor:
    """``layer(x)`` for a linear ``layer``, each row in the bits it has among any other rows: fewer than
    :data:`MIN_ROWS` rows are padded with zeros."""
    short = MIN_ROWS - x.shape[0]
    if short <= 0:
        return layer(x)
    return layer(torch.cat([x, x.new_zeros(short, *x.shape[1:])]))[:x.shape[0]]


def rowdot(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for a vector ``w``, each row's products summed on their own: the same bits whatever rows are
    beside it, on any thread count."""
    return (x * w).sum(-1)


class TextReader:
    """The pretrained LM the judges read with. Per output (one forward pass, cached, shared by the
    families): the last-token and mean response states of every layer; how fluent the LM finds the
    response (mean and spread of its tokens' log-probabilities, the share of tokens it finds very
    unlikely, their sum); and :func:`surface` features."""

    def __init__(self, model, tokenizer, max_length: int = 256, batch_size: int = 64):
        self.model, self.tok = model.eval(), tokenizer
        self.max_length, self.batch_size = max_length, batch_size
        self._cache: dict[tuple[str, str, str], torch.Tensor] = {}
        self.seconds = 0.0  # time spent reading
        self.read = 0  # outputs actually run through the model

    @classmethod
    def load(cls, path: str | Path, tokenizer, device: str = "cpu", max_length: int = 256) -> TextReader:
        from transformers import AutoModelForCausalLM

        return cls(AutoModelForCausalLM.from_pretrained(str(path)).to(device), tokenizer, max_length)

    @property
    def layers(self) -> int:
        return self.model.config.num_hidden_layers

    @property
    def hidden(self) -> int:
        return self.model.config.hidden_size

    @property
    def width(self) -> int:
        return self.layers * 2 * self.hidden + N_FLUENCY + N_SURFACE

    def _texts(self, keys: list[tuple[str, str, str]]) -> list[str]:
        from farmlib.world import format_prompt

        return [format_prompt(i, x) + o + self.tok.eos_token for i, x, o in keys]

    def bucket(self, keys: list[tuple[str, str, str]]) -> list[int]:
        """The padded length each output is read at: its token count rounded up to a multiple of
        :data:`BUCKET` (at most ``max_length``). An output's features then depend on its text only, never
        on the batch it was read in, so what the :class:`ScoreStore` keeps is the same whichever chapter
        or process read it first."""
        lengths = [len(ids) for ids in self.tok(self._texts(keys), add_special_tokens=False)["input_ids"]]
        return [min(self.max_length, -(-n // BUCKET) * BUCKET) for n in lengths]

    @torch.no_grad()
    def _forward(self, keys: list[tuple[str, str, str]], length: int | None = None) -> torch.Tensor:
        """Features of ``keys``, padded (on the left) to ``length`` tokens, or to the longest if None."""
        from farmlib.methods.common import last_index, positions
        from farmlib.world import format_prompt

        prompts = [format_prompt(i, x) for i, x, _ in keys]
        texts = self._texts(keys)
        n_prompt = [len(ids) for ids in self.tok(prompts, add_special_tokens=False)["input_ids"]]
        side, self.tok.truncation_side = self.tok.truncation_side, "left"
        enc = self.tok(texts, return_tensors="pt", padding="max_length" if length else True, truncation=True,
                       max_length=length or self.max_length, add_special_tokens=False)
        self.tok.truncation_side = side
        device = next(self.model.parameters()).device
        ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
        body, head = self.model.get_decoder(), self.model.get_output_embeddings()
        out = body(input_ids=ids, attention_mask=mask, position_ids=positions(mask), output_hidden_states=True)
        hs = out.hidden_states[1:]  # one per layer
        total = mask.sum(1)
        n_resp = (total - torch.tensor(n_prompt, device=device)).clamp(min=1)
        resp = (mask.cumsum(1) > (total - n_resp)[:, None]) & mask.bool()  # the last n_resp real tokens
        w = resp.float() / resp.sum(1, keepdim=True)
        end = last_index(mask)
        rows = torch.arange(mask.size(0), device=device)
        # the response's mean as a product and a sum, not a batched matrix product: MKL's strict mode (farmlib.seeding)
        # gives a bmm's first row other bits in a batch of 8 than alone, and a text's features must not depend on
        # what it was read with
        feats = [torch.cat([h[rows, end], (w[..., None] * h).sum(1)], -1).float() for h in hs]
        # fluency: log-probabilities the LM gives the response's tokens (each predicted from the one before;
        # the LM head runs only at the positions that predict one)
        r = resp[:, 1:]
        logits = per_row(head, out.last_hidden_state[:, :-1][r]).float()
        lp_r = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:][r][:, None])[:, 0]
        lp = torch.zeros(r.shape, dtype=lp_r.dtype, device=device).masked_scatter(r, lp_r)
        r = r.float()
        n = r.sum(1).clamp(min=1)
        mean = (lp * r).sum(1) / n
        spread = ((((lp - mean[:, None]) ** 2) * r).sum(1) / n).sqrt()
        unlikely = ((lp < -6).float() * r).sum(1) / n
        fluency = torch.stack([mean, spread, unlikely, (lp * r).sum(1) / 100], -1)
        extra = torch.tensor([surface(o, f"{i} {x}") for i, x, o in keys], device=device)
        return torch.cat([*feats, fluency, extra], -1).cpu()

    def features(self, records: list[dict], key: str = "output") -> torch.Tensor:
        """``[n, width]``: per layer (last token, mean of the response), then fluency, then surface."""
        keys = [(r["instruction"], r.get("input", ""), r[key]) for r in records]
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if todo:
            t0 = time.perf_counter()
            by_length: dict[int, list[tuple[str, str, str]]] = {}
            for k, n in zip(todo, self.bucket(todo)):
                by_length.setdefault(n, []).append(k)
            for n, group in sorted(by_length.items()):  # batches of one padded length
                for i in range(0, len(group), self.batch_size):
                    chunk = group[i:i + self.batch_size]
                    self._cache.update(zip(chunk, self._forward(chunk, n)))
            self.seconds += time.perf_counter() - t0
            self.read += len(todo)
        if not keys:
            return torch.zeros(0, self.width)
        return torch.stack([self._cache[k] for k in keys])


def feature_index(reads: str, layers: int, hidden: int) -> list[int]:
    """Which features a family's head reads (its capacity): ``all`` (every layer's states, fluency and
    surface), ``fluency`` (fluency and surface) or ``surface`` (surface only)."""
    start = layers * 2 * hidden
    fluency = list(range(start, start + N_FLUENCY))
    surf = list(range(start + N_FLUENCY, start + N_FLUENCY + N_SURFACE))
    if reads == "all":
        return list(range(start)) + fluency + surf
    if reads == "fluency":
        return fluency + surf
    if reads == "surface":
        return surf
    if reads == "fluency_only":  # what a family reads of its own tuned LM
        return fluency
    raise ValueError(f"unknown reads {reads!r}: all | fluency | surface | fluency_only")


class JudgeLM:
    """One judge family: a linear head, learned Bradley–Terry, on what its readers see of the text: the
    world's base LM (``reader``) and, where the family has one, its own instruction-tuned LM (``tuned``: how
    likely an LM that learned to answer instructions finds the response, a knowledge the base LM lacks)."""

    def __init__(self, reader: TextReader, weight: torch.Tensor, index: list[int], name: str = "judge_lm",
                 logit_scale: float = 1.0, tuned: TextReader | None = None, tuned_index: list[int] = (),
                 store: ScoreStore | None = None, knowledge=None):
        self.reader, self.tuned, self.name, self.store = reader, tuned, name, store
        self.knowledge = knowledge  # a KnowledgeReader, for a family that knows the world's answers
        self.weight, self.index, self.logit_scale = weight.float(), torch.tensor(index), logit_scale
        self.tuned_index = torch.tensor(list(tuned_index), dtype=torch.long)
        self._cache: dict[tuple[str, str, str], float] = {}  # the head's raw score (before logit_scale)
        self.scored = 0  # outputs actually read (not found in memory or in the store)

    @classmethod
    def load(cls, path: str | Path, reader: TextReader, name: str = "judge_lm", logit_scale: float = 1.0,
             tuned_readers: dict | None = None, store: ScoreStore | None = None, knowledge=None) -> JudgeLM:
        """A trained head (``judge_head`` artifact; its unit is the spread of its margins on its makers'
        pairs), its scores multiplied by ``logit_scale`` (how decisive the judge is). The family's tuned LM,
        if any, is read from the artifact the head names (a folder relative to the head's); pass a dict as
        ``tuned_readers`` to share that reader, and what it has read, between heads loaded more than once.
        ``store``: the head's scores on disk (:class:`ScoreStore`), shared by every process that judges.
        ``knowledge``: a :class:`~farmlib.annotators.knowledge.KnowledgeReader`, required by a head that reads
        what the family knows of the world (``knows``), ignored by one that does not."""
        head = torch.load(Path(path) / "head.pt")
        if head.get("knows") and knowledge is None:
            raise ValueError(f"{Path(path) / 'head.pt'}: field 'knows' is set: this head reads the world's answers; "
                             "pass knowledge=KnowledgeReader(Knowledge.of(world))")
        tuned = None
        if head.get("tuned"):
            where = (Path(path) / head["tuned"]).resolve()
            tuned = (tuned_readers or {}).get(where)
            if tuned is None:
                device = next(reader.model.parameters()).device
                tuned = TextReader.load(where, reader.tok, str(device), reader.max_length)
                if tuned_readers is not None:
                    tuned_readers[where] = tuned
        return cls(reader, head["weight"], head["index"], name, logit_scale, tuned, head.get("tuned_index", ()), store,
                   knowledge if head.get("knows") else None)

    def features(self, records: list[dict], key: str = "output") -> torch.Tensor:
        """What the head reads of each record's ``key``: the base reader's chosen features, then the tuned
        LM's, then what it knows of the answer (:func:`read_features`)."""
        return read_features(self.reader, self.index, self.tuned, self.tuned_index, records, key, self.knowledge)

    def scores(self, records: list[dict], key: str = "output") -> list[float]:
        """``r(x, y)`` for each record (``y = record[key]``): ``logit_scale`` times the head's score."""
        keys = [(r["instruction"], r.get("input", ""), r[key]) for r in records]
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if todo and self.store is not None:
            self._cache.update(self.store.get(todo))
            todo = [k for k in todo if k not in self._cache]
        if todo:
            f = self.features([{"instruction": i, "input": x, "output": o} for i, x, o in todo])
            raw = dict(zip(todo, rowdot(f, self.weight).tolist()))
            self._cache.update(raw)
            if self.store is not None:
                self.store.put(raw)
            self.scored += len(todo)
        return [self.logit_scale * self._cache[k] for k in keys]


class ScoreStore:
    """A judge head's scores on disk (SQLite, one row per ``(instruction, input, output)``), written as they
    are computed: an output a family has read once, in any chapter or process, is never read again, as an
    API judge's replies are kept (:mod:`farmlib.annotators.cache`). A score depends only on the head and
    the text, so the store belongs to one head artifact (:meth:`farmlib.pipeline.Farm.judge_lms`)."""

    def __init__(self, path: str | Path):
        import sqlite3

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=120)  # chapters side by side may write at once
        self._db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, score REAL NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(k: tuple[str, str, str]) -> str:
        return hashlib.sha256("\x00".join(k).encode()).hexdigest()

    def get(self, keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], float]:
        by_hash = {self.key(k): k for k in keys}
        hashes, found = list(by_hash), {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i:i + 500]
            rows = self._db.execute(f"SELECT key, score FROM scores WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            found.update((by_hash[h], v) for h, v in rows)
        return found

    def put(self, scores: dict[tuple[str, str, str], float]) -> None:
        self._db.executemany("INSERT OR IGNORE INTO scores VALUES (?, ?)",
                             [(self.key(k), v) for k, v in scores.items()])
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]


def read_features(reader: TextReader, index, tuned: TextReader | None, tuned_index, records: list[dict],
                  key: str = "output", knowledge=None) -> torch.Tensor:
    """``reader``'s features at ``index``, ``tuned``'s at ``tuned_index`` beside them (if ``tuned``), then
    ``knowledge``'s (a :class:`~farmlib.annotators.knowledge.KnowledgeReader`, if given)."""
    parts = [reader.features(records, key)[:, torch.as_tensor(index, dtype=torch.long)]]
    if tuned is not None:
        parts.append(tuned.features(records, key)[:, torch.as_tensor(tuned_index, dtype=torch.long)])
    if knowledge is not None:
        parts.append(knowledge.features(records, key))
    return torch.cat(parts, 1)


@dataclass(frozen=True)
class JudgeConfig:
    """One pool member: a family's model, and what its prompt does to the answer."""

    name: str
    model: str = "gpt4"  # gpt4 | chatgpt | davinci: which learned scorer it reads with
    batch_size: int = 1  # comparisons per prompt; more per call blurs them (cross-talk)
    in_context: bool = True  # in-context examples calm the position bias
    output_format: str = "raw"  # raw | json (with a short rationale; occasionally unparseable)
    prefer: str = ""  # "" | long | short: the prompt tells the judge which answers to prefer
    position_bias: float = 0.0  # logit added in favour of the output shown first
    temperature: float = 1.0  # of the judge's two-way answer, as in the paper; 0: greedy
    seed: int = 0
    cost_per_1000: float = 0.0  # the paper's price of the analogous API judge ($ / 1000)


CROSS_TALK = 0.05  # per extra comparison in the prompt
PREFER_WEIGHT = 0.5  # the margin a "prefer long/short" instruction adds at 20 words of difference
UNPARSEABLE = 0.01  # share of json replies that cannot be parsed


class LearnedJudge:
    """A pool member: a family's :class:`JudgeLM` read through the member's prompt mechanisms."""

    def __init__(self, lm: JudgeLM, config: JudgeConfig):
        self.lm, self.config, self.name = lm, config, config.name
        self.seconds = 0.0
        self.calls = 0

    def margins(self, shown: list[dict]) -> list[float]:
        """The logit for "output 2 is better" of each comparison as shown, before sampling."""
        c = self.config
        s1, s2 = self.lm.scores(shown, "output_1"), self.lm.scores(shown, "output_2")
        d = [b - a for a, b in zip(s1, s2)]
        if c.prefer:
            sign = 1.0 if c.prefer == "long" else -1.0
            d = [x + sign * PREFER_WEIGHT * max(-1.0, min(1.0, (len(r["output_2"].split()) - len(r["output_1"].split()))
                                                           / 20)) for x, r in zip(d, shown)]
        if c.batch_size > 1:  # the comparisons of one prompt blur into each other
            lam = min(CROSS_TALK * (c.batch_size - 1), 1.0)
            out = []
            for i in range(0, len(d), c.batch_size):
                chunk = d[i:i + c.batch_size]
                m = sum(chunk) / len(chunk)
                out += [(1 - lam) * x + lam * m for x in chunk]
            d = out
        pos = c.position_bias * (1.0 if c.in_context else 2.0)
        return [x - pos for x in d]

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        """Annotate each pair, shown in a random order that is undone afterwards."""
        c = self.config
        rng = random.Random(f"{self.name}-{c.seed}-{seed}")
        t0 = time.perf_counter()
        swaps = [rng.random() < 0.5 for _ in records]
        shown = [dict(r, output_1=r["output_2"], output_2=r["output_1"]) if s else r for r, s in zip(records, swaps)]
        out = []
        for r, s, sh, logit in zip(records, swaps, shown, self.margins(shown)):
            if c.temperature == 0:  # greedy: the same prompt always gets the same answer
                key = "\x00".join([c.name, sh["instruction"], sh.get("input", ""), sh["output_1"], sh["output_2"]])
                u = random.Random(hashlib.sha256(key.encode()).hexdigest()).random()
                pref = None if c.output_format == "json" and u < UNPARSEABLE else (2 if logit > 0 else 1)
            elif c.output_format == "json" and rng.random() < UNPARSEABLE:
                pref = None  # a reply that could not be parsed
            else:
                pref = 2 if rng.random() < _sigmoid(logit / c.temperature) else 1
            if pref is not None and s:
                pref = 3 - pref
            out.append(dict(r, preference=pref, annotator=self.name))
        self.seconds += time.perf_counter() - t0
        self.calls += len(records)
        return out


def default_pool(seed: int = 0) -> list[JudgeConfig]:
    """13 judges as in the paper: 5 GPT-4-like, 4 ChatGPT-like, 4 Davinci003-like, varied prompts."""
    g = dict(model="gpt4", cost_per_1000=15.0)
    c = dict(model="chatgpt", position_bias=0.15, cost_per_1000=1.0)
    d = dict(model="davinci", position_bias=0.25, cost_per_1000=8.0)
    pool = [
        JudgeConfig("gpt4_b1_raw", batch_size=1, **g),
        JudgeConfig("gpt4_b5_json", batch_size=5, output_format="json", **g),
        JudgeConfig("gpt4_b3_noicl", batch_size=3, in_context=False, **g),
        JudgeConfig("gpt4_prefer_long", batch_size=1, prefer="long", **g),
        JudgeConfig("gpt4_prefer_short", batch_size=1, prefer="short", **g),
        JudgeConfig("chatgpt_b1_raw", batch_size=1, **c),
        JudgeConfig("chatgpt_b5_json", batch_size=5, output_format="json", **c),
        JudgeConfig("chatgpt_b2_noicl", batch_size=2, in_context=False, **c),
        JudgeConfig("chatgpt_b4_raw", batch_size=4, **c),
        JudgeConfig("davinci_b1_raw", batch_size=1, **d),
        JudgeConfig("davinci_b5_raw", batch_size=5, **d),
        JudgeConfig("davinci_b2_json", batch_size=2, output_format="json", **d),
        JudgeConfig("davinci_b3_noicl", batch_size=3, in_context=False, **d),
    ]
    return [replace(j, seed=seed) for j in pool]


def members(lms: dict[str, JudgeLM], seed: int = 0) -> dict[str, LearnedJudge]:
    """The 13 pool members by name, reading with the families' models ``lms``."""
    return {c.name: LearnedJudge(lms[c.model], c) for c in default_pool(seed)}


@dataclass
class Pool:
    """``p_sim^eval``: each comparison goes to a random member; ``flip`` mixes in a fair coin."""

    judges: list[LearnedJudge]
    flip: float = 0.0  # weight of the fair coin: 0.5 = 25 % flipped labels (p_sim^ann)
    name: str = "pool"
    seed: int = 0
    judged: int = 0  # comparisons actually sent to a judge
    last_summary: dict | None = None  # the last call's missing labels, overall and per member

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        rng = random.Random(f"{self.name}-{self.seed}-{seed}")
        out: list[dict | None] = [None] * len(records)
        by_judge: dict[int, list[int]] = {}
        for i, r in enumerate(records):
            if rng.random() < self.flip:  # the coin answers; no judge is asked
                out[i] = dict(r, preference=rng.choice([1, 2]), annotator=f"{self.name}:coin")
            else:
                by_judge.setdefault(rng.randrange(len(self.judges)), []).append(i)
        for j, idx in by_judge.items():
            done = self.judges[j].annotate_pairs([records[i] for i in idx], seed=seed)
            for i, a in zip(idx, done):
                out[i] = dict(a, annotator=f"{self.name}:{a['annotator']}")
            self.judged += len(idx)
        self._report(out, by_judge)
        return out  # type: ignore[return-value]

    def _report(self, out: list[dict], by_judge: dict[int, list[int]]) -> None:
        """Count the missing labels; past :data:`MISSING_WARN` print one line per member that had any (with an
        example reply, where the member keeps one), on stdout, so the chapter's page shows it."""
        judged = [i for idx in by_judge.values() for i in idx]
        missing = sum(out[i]["preference"] is None for i in judged)
        members = {}
        for j, idx in by_judge.items():
            lost = sum(out[i]["preference"] is None for i in idx)
            if lost:
                summary = getattr(self.judges[j], "last_summary", None) or {}
                members[self.judges[j].config.name if hasattr(self.judges[j], "config") else str(j)] = {
                    "missing": lost, "n": len(idx), "example": summary.get("example")}
        self.last_summary = {"n": len(judged), "missing": missing, "share": missing / max(len(judged), 1),
                             "members": members}
        if judged and missing / len(judged) > MISSING_WARN:
            print(f"Warning: {self.name} has no label for {missing} of {len(judged)} comparisons "
                  f"({missing / len(judged):.0%}, above {MISSING_WARN:.0%}):")
            for name, m in members.items():
                ex = f", e.g. {m['example']!r}" if m["example"] else ""
                print(f"  {name}: {m['missing']} of {m['n']}{ex}")


#: The share of missing labels above which a pool says so on the page.
MISSING_WARN = 0.2


def pool_eval(lms: dict[str, JudgeLM], seed: int = 0) -> Pool:
    """``p_sim^eval``: the 13-judge pool, no added noise (the evaluation annotator)."""
    return Pool(list(members(lms, seed).values()), name="p_sim_eval", seed=seed)


def pool_ann(lms: dict[str, JudgeLM], flip: float = 0.5, seed: int = 0) -> Pool:
    """``p_sim^ann``: the pool mixed with a fair coin at weight ``flip`` (0.5 = 25 % label flips)."""
    return Pool(list(members(lms, seed).values()), flip=flip, name="p_sim_ann", seed=seed)


def single_judge(lms: dict[str, JudgeLM], seed: int = 0) -> LearnedJudge:
    """``p_sim^single``: the GPT-4 family at temperature 0 (batches of 5, json; low variance)."""
    cfg = replace(default_pool(seed)[1], name="p_sim_single", temperature=0.0)
    return LearnedJudge(lms[cfg.model], cfg)
