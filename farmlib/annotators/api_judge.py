"""A judge behind any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama).

::

    judge = ChatJudge(ChatJudgeConfig("gpt4_b5_json", model="gpt-4-0613", batch_size=5,
                                      output_format="json"), cache="runs/annotations.sqlite")
    annotated = judge.annotate_pairs(records)      # adds "preference" (1, 2 or None), "annotator"
    judge.last_summary                             # {"n": 40, "failed": 3, "reasons": {...}, ...}

Reliability, because API judges are paid, slow and flaky:

* every reply is cached on disk under (answer-relevant config, exact prompt) before it is used:
  a rerun sends 0 requests, a crash loses nothing already answered, nothing is paid twice;
* up to ``concurrency`` prompts are in flight at once (a thread pool), under an adaptive limit
  (:class:`AdaptiveLimit`): timeouts, 429s and 503s halve it, a run of successes raises it again,
  so a slow single-slot server is not flooded into timing out every request;
* 429, 5xx, timeouts and dropped connections are retried with exponential backoff and jitter;
* a prompt that still fails after its retries does not stop the run: its comparisons get
  ``preference=None`` and an ``error`` (a short reason), are not cached (the next run asks them
  again), and one summary line is logged: ``judge: 3 of 40 comparisons failed: timeout after 5
  retries (rerun to retry them)``;
* errors that retrying cannot fix and that hit every request (401 wrong key, 403, 404 unknown
  model or URL) raise :class:`JudgeAPIError` at once, with a one-line message;
* a reply that cannot be parsed is asked again (``parse_retries``), then its comparisons are
  recorded as ``None``: a missing answer is never turned into a default preference;
* the key is read from the environment variable named in the config, at call time, and never
  stored in the config, the cache, the records, an error or a log line.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from farmlib.annotators.cache import AnnotationCache, cache_key
from farmlib.annotators.prompts import build_messages, parse_reply
from farmlib.progress import progress

log = logging.getLogger(__name__)

#: $ per 1M (prompt, completion) tokens. Edit for your provider; local servers cost 0.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4-0613": (30.0, 60.0),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-3.5-turbo": (0.5, 1.5),
    "text-davinci-003": (20.0, 20.0),
}

#: HTTP statuses that retrying cannot fix and that every request would get: raise at once.
FATAL = {401: "authentication failed (check the key in ${env})", 403: "permission denied",
         404: "model or endpoint not found"}
RETRYABLE = {408, 409, 429}  # and every 5xx
OVERLOAD = {408, 429, 503, 504, 529}  # and timeouts: fewer requests in flight


@dataclass(frozen=True)
class ChatJudgeConfig:
    """One API judge. Fields after ``seed`` are operational and do not change what it answers."""

    name: str
    model: str
    output_format: str = "raw"  # raw | json (with a one-sentence rationale)
    batch_size: int = 1  # comparisons per prompt
    in_context: bool = True
    prefer: str = ""  # "" | long | short
    temperature: float = 1.0
    max_tokens: int = 400
    seed: int = 0  # order randomization
    base_url: str | None = None  # None: api.openai.com
    api_key_env: str = "OPENAI_API_KEY"  # the *name* of the variable, never the key
    concurrency: int = 8  # the most prompts in flight
    adaptive: bool = True  # lower the in-flight limit on timeouts / 429s (False: always `concurrency`)
    max_retries: int = 5
    parse_retries: int = 1
    timeout: float = 60.0
    backoff: float = 1.0  # seconds before the first retry; doubles each time

    def answer_config(self) -> dict:
        """The part of the config that decides the answer (the cache key's config)."""
        keep = ("model", "output_format", "batch_size", "in_context", "prefer", "temperature", "max_tokens")
        return {k: getattr(self, k) for k in keep}


class JudgeAPIError(RuntimeError):
    """An error that retrying cannot fix and that every request would get (a wrong key, a wrong model)."""


class _PromptFailed(Exception):
    """One prompt failed for good; ``args[0]`` is the short reason recorded with its comparisons."""


class _Aborted(Exception):
    """Another prompt hit a fatal error: stop sending."""


class AdaptiveLimit:
    """How many requests may be in flight, adapted AIMD-style (like TCP's congestion window).

    * Starts at ``ceiling``; an overload signal (a timeout, 429, 503) halves the limit (rounding up,
      min 1), once per round: signals from requests sent before the last cut are stale (a burst of
      timeouts cuts once), and :meth:`release` says so.
    * ``limit`` successes in a row add 1, up to ``ceiling``; stepping back up to the limit that
      overloaded last takes ``patience`` times as many, so a server at capacity is probed rarely.
    * A request that timed out keeps its slot (the server is likely still working on it) until a
      request sent after it succeeds, or for about one typical reply time (at most its own wait).

    ``low`` is the lowest limit since :meth:`reset_low`. ``adaptive=False``: always ``ceiling``.
    """

    def __init__(self, ceiling: int, adaptive: bool = True, patience: int = 8):
        self.ceiling = self.limit = self.low = max(1, ceiling)
        self.adaptive, self.patience = adaptive, patience
        self.in_flight = self.cuts = self._ok = self._sent = 0
        self._bad = self.ceiling + 1  # the limit in force at the last overload signal
        self._reply_seconds: float | None = None  # moving average over successes
        self._ghosts: list[tuple[int, float]] = []  # (send number, until) of requests that timed out
        self._cond = threading.Condition()

    def acquire(self) -> tuple[int, int]:
        """Wait for a free slot; returns the ticket to hand to :meth:`release`."""
        with self._cond:
            while True:
                now = time.monotonic()
                self._ghosts = [g for g in self._ghosts if g[1] > now]
                if self.in_flight + len(self._ghosts) < self.limit:
                    break
                self._cond.wait(min(g[1] for g in self._ghosts) - now if self._ghosts else None)
            self.in_flight += 1
            self._sent += 1
            return self.cuts, self._sent

    def release(self, ticket: tuple[int, int], outcome: str, seconds: float = 0.0) -> bool:
        """Free a slot after ``seconds``; ``outcome``: ``"ok"``, ``"timeout"``, ``"overload"`` or
        ``"other"`` (no change). True for an overload signal that is stale (see the class doc)."""
        cuts, sent = ticket
        with self._cond:
            self.in_flight -= 1
            stale = False
            if self.adaptive and outcome in ("timeout", "overload"):
                self._ok = 0
                stale = cuts != self.cuts
                if not stale:
                    self._bad = max(2, self.limit)
                    self.limit = (self.limit + 1) // 2
                    self.low = min(self.low, self.limit)
                    self.cuts += 1
                if outcome == "timeout":
                    hold = min(seconds, self._reply_seconds or seconds)
                    self._ghosts.append((sent, time.monotonic() + hold))
            elif self.adaptive and outcome == "ok":
                r = self._reply_seconds
                self._reply_seconds = seconds if r is None else 0.8 * r + 0.2 * seconds
                self._ghosts = [g for g in self._ghosts if g[0] > sent]  # served after them: they are done
                self._ok += 1
                run = self.limit * (self.patience if self.limit + 1 == self._bad else 1)
                if self._ok >= run and self.limit < self.ceiling:
                    self.limit, self._ok = self.limit + 1, 0
            self._cond.notify_all()
            return stale

    def reset_low(self) -> None:
        with self._cond:
            self.low = self.limit


class ChatJudge:
    """Preferences from a chat-completions model; see the module docstring."""

    def __init__(self, config: ChatJudgeConfig, cache: str | os.PathLike | AnnotationCache | None = None,
                 client=None, limiter: AdaptiveLimit | None = None):
        self.config, self.name = config, config.name
        self.cache = cache if isinstance(cache, AnnotationCache) or cache is None else AnnotationCache(cache)
        self._client = client
        self._lock = threading.Lock()
        self._abort = threading.Event()  # set by a fatal error: the other prompts stop sending
        self._fatal: JudgeAPIError | None = None
        self.limiter = limiter or AdaptiveLimit(config.concurrency, config.adaptive)  # shared: one per server
        self.requests = self.prompt_tokens = self.completion_tokens = self.comparisons = 0
        self.seconds = 0.0
        self.last_summary: dict = {}
        self.unparseable_keys: list[str] = []  # cache keys of the last call's replies that could not be read

    # -- the client ---------------------------------------------------------------------------
    def client(self):
        if self._client is None:
            import openai

            c = self.config
            key = os.environ.get(c.api_key_env)
            if not key:
                if c.base_url is None:
                    raise JudgeAPIError(f"judge {c.name!r}: set the environment variable {c.api_key_env}")
                key = "not-needed"  # local servers (vLLM, llama.cpp, Ollama) accept any key
            self._client = openai.OpenAI(api_key=key, base_url=c.base_url, max_retries=0, timeout=c.timeout)
        return self._client

    def _redact(self, text: str) -> str:
        """``text`` on one line, at most 120 characters, with no key in it."""
        key = os.environ.get(self.config.api_key_env) or ""
        if len(key) >= 4:
            text = text.replace(key, "***")
        text = re.sub(r"\b(sk-|Bearer\s+)[\w\-.*]{6,}", r"\1***", text)
        text = " ".join(text.split())
        return text if len(text) <= 120 else text[:117] + "..."

    def _server_message(self, e) -> str:
        body = getattr(e, "body", None)
        msg = body.get("message") if isinstance(body, dict) else None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            msg = body["error"].get("message")
        return self._redact(str(msg)) if msg else ""

    def _request(self, messages: list[dict]) -> dict:
        """One completion, retried on rate limits, server errors, timeouts and dropped connections.

        Raises :class:`_PromptFailed` when this prompt fails for good, :class:`JudgeAPIError` on an
        error every request would get (and then stops the other prompts).
        """
        import openai

        c = self.config
        failures = 0  # retries used: an overload already answered by a cut costs none (the limit was too high)
        while True:
            if self._abort.is_set():
                raise _Aborted
            ticket, outcome, wait = self.limiter.acquire(), "other", 0.0
            t0 = time.monotonic()
            try:
                if self._abort.is_set():
                    raise _Aborted
                with self._lock:
                    self.requests += 1
                resp = self.client().chat.completions.create(
                    model=c.model, messages=messages, temperature=c.temperature, max_tokens=c.max_tokens)
                outcome = "ok"
                usage = resp.usage
                return {"reply": resp.choices[0].message.content or "",
                        "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                        "completion_tokens": getattr(usage, "completion_tokens", 0) or 0}
            except openai.APITimeoutError:
                outcome, why = "timeout", "timeout"
            except openai.APIConnectionError:
                why = "connection error"
            except openai.APIStatusError as e:
                code = e.status_code
                if code in FATAL:
                    what = FATAL[code].replace("${env}", c.api_key_env)
                    detail = self._server_message(e)
                    self._fatal = JudgeAPIError(f"judge {c.name!r} ({c.model} at {c.base_url or 'api.openai.com'}): "
                                                f"HTTP {code} {what}" + (f": {detail}" if detail else ""))
                    self._abort.set()
                    raise self._fatal from None
                if code not in RETRYABLE and code < 500:  # 400, 413, 422...: this prompt, for good
                    detail = self._server_message(e)
                    raise _PromptFailed(f"HTTP {code}" + (f": {detail}" if detail else "")) from None
                outcome = "overload" if code in OVERLOAD else "other"
                why = f"HTTP {code}"
                try:
                    wait = min(float(e.response.headers.get("retry-after", 0)), 60.0)
                except (TypeError, ValueError):
                    wait = 0.0
            finally:
                stale = self.limiter.release(ticket, outcome, time.monotonic() - t0)
            if not stale:
                failures += 1
            if failures > c.max_retries:
                raise _PromptFailed(f"{why} after {c.max_retries} retr{'y' if c.max_retries == 1 else 'ies'}")
            self._abort.wait(max(wait, c.backoff * 2 ** max(failures - 1, 0) * (0.5 + random.random())))

    # -- one prompt ---------------------------------------------------------------------------
    def _ask(self, shown: list[dict]) -> tuple[list[int | None], str | None, str | None, str]:
        """(preferences, error, the reply, its cache key) for one prompt's comparisons (as shown), from the
        cache or the server."""
        c = self.config
        messages = build_messages(shown, c.output_format, c.in_context, c.prefer)
        key = cache_key(c.answer_config(), messages)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return parse_reply(hit["reply"], len(shown), c.output_format), None, hit["reply"], key
        t0 = time.perf_counter()
        tokens = [0, 0]
        try:
            for _ in range(c.parse_retries + 1):
                ans = self._request(messages)
                tokens[0] += ans["prompt_tokens"]
                tokens[1] += ans["completion_tokens"]
                prefs = parse_reply(ans["reply"], len(shown), c.output_format)
                if None not in prefs:
                    break
        except _PromptFailed as e:
            return [None] * len(shown), str(e), None, key  # not cached: the next run asks again
        finally:
            with self._lock:  # what was paid, retries included
                self.prompt_tokens += tokens[0]
                self.completion_tokens += tokens[1]
                self.seconds += time.perf_counter() - t0
        ans.update(prompt_tokens=tokens[0], completion_tokens=tokens[1])
        if self.cache is not None:
            self.cache.put(key, ans)
        return prefs, None, ans["reply"], key

    # -- the interface ------------------------------------------------------------------------
    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        """Annotate each pair; each is shown in a random (seeded, so cacheable) order.

        Comparisons whose prompt failed for good get ``preference=None`` and ``error``; see
        :attr:`last_summary` and the logged summary line.
        """
        c = self.config
        rng = random.Random(f"{c.name}-{c.seed}-{seed}")
        swaps = [rng.random() < 0.5 for _ in records]
        shown = [dict(r, output_1=r["output_2"], output_2=r["output_1"]) if s else r for r, s in zip(records, swaps)]
        chunks = [list(range(i, min(i + c.batch_size, len(records)))) for i in range(0, len(records), c.batch_size)]
        prefs: list[int | None] = [None] * len(records)
        errors: list[str | None] = [None] * len(records)
        unparsed: list[str] = []  # replies (answered, cached) in which a comparison could not be read
        self.unparseable_keys = []
        if chunks:
            self.client()  # a missing key fails here, before any request
        self._abort.clear()
        self._fatal = None
        self.limiter.reset_low()
        pool = ThreadPoolExecutor(max_workers=c.concurrency)
        try:
            with progress(total=len(records), desc=c.name, unit="pair") as bar:
                futures = [(idx, pool.submit(self._ask, [shown[i] for i in idx])) for idx in chunks]
                for idx, fut in futures:
                    ps, err, reply, key = fut.result()
                    for i, p in zip(idx, ps):
                        prefs[i] = None if p is None else (3 - p if swaps[i] else p)
                        errors[i] = err
                    if err is None and None in ps:
                        unparsed += [reply or ""] * ps.count(None)
                        self.unparseable_keys.append(key)
                    bar.update(len(idx))
        except BaseException as e:  # a fatal error (or Ctrl-C): send nothing more
            self._abort.set()
            pool.shutdown(wait=not isinstance(e, KeyboardInterrupt), cancel_futures=True)
            if isinstance(e, _Aborted) and self._fatal is not None:
                raise self._fatal from None
            raise
        pool.shutdown()
        reasons = Counter(e for e in errors if e is not None)
        failed = sum(reasons.values())
        self.comparisons += len(records) - failed
        self.last_summary = {"judge": c.name, "n": len(records), "failed": failed, "reasons": dict(reasons),
                             "missing": sum(p is None for p in prefs), "unparseable": len(unparsed),
                             "unparseable_share": len(unparsed) / max(len(records), 1),
                             "example": unparsed[0][:EXAMPLE_CHARS] if unparsed else None,
                             "limit": self.limiter.limit, "low": self.limiter.low}
        if failed:
            why = "; ".join(r if len(reasons) == 1 else f"{r} ({k})" for r, k in reasons.most_common())
            log.warning("%s: %d of %d comparisons failed: %s (rerun to retry them)", c.name, failed, len(records), why)
        if unparsed:
            log.warning("%s", unparseable_line(self.last_summary))
        out = []
        for r, p, e in zip(records, prefs, errors):
            a = {k: v for k, v in r.items() if k != "error"}
            out.append(dict(a, preference=p, annotator=c.name) | ({"error": e} if e else {}))
        return out

    def forget_unparseable(self) -> int:
        """Remove from the cache the replies of the last :meth:`annotate_pairs` that could not be read, so the
        next call asks again (they are cached as answered: a rerun alone gives the same reply). Returns how many."""
        if self.cache is None:
            return 0
        keys, self.unparseable_keys = list(self.unparseable_keys), []
        return self.cache.delete(keys)

    def cost_per_1000(self) -> float:
        """Dollars per 1000 comparisons answered so far, from token usage and :data:`PRICES` (0 if unknown)."""
        p_in, p_out = PRICES.get(self.config.model, (0.0, 0.0))
        dollars = (self.prompt_tokens * p_in + self.completion_tokens * p_out) / 1e6
        return 1000 * dollars / max(self.comparisons, 1)


#: Characters of an unparseable reply shown as its example.
EXAMPLE_CHARS = 120


def unparseable_line(summary: dict) -> str:
    """One line saying how many of a judge's replies could not be read, with one cut short, and how to ask again."""
    return (f"{summary['judge']}: {summary['unparseable']} of {summary['n']} comparisons unparseable "
            f"({summary['unparseable_share']:.0%}), e.g. {summary['example']!r}; replies are cached as answered: "
            "to ask again, change the judge's seed or call judge.forget_unparseable()")


def chat_pool(configs: list[ChatJudgeConfig], cache: str | os.PathLike, **overrides) -> list[ChatJudge]:
    """ChatJudges sharing one cache, and one in-flight limit per (server, model) (``overrides``: e.g.
    ``base_url=``, ``concurrency=``): what one judge learns about a slow server, the next one keeps."""
    store = AnnotationCache(cache)
    limits: dict[tuple, AdaptiveLimit] = {}
    judges = []
    for c in (dataclasses.replace(c, **overrides) for c in configs):
        limit = limits.setdefault((c.base_url, c.model), AdaptiveLimit(c.concurrency, c.adaptive))
        judges.append(ChatJudge(c, cache=store, limiter=limit))
    return judges


#: The pool's model families mapped to API model names (override for your provider).
API_MODELS = {"gpt4": "gpt-4-0613", "chatgpt": "gpt-3.5-turbo", "davinci": "text-davinci-003"}


def chat_configs(pool: list | None = None, models: dict[str, str] | None = None, **overrides) -> list[ChatJudgeConfig]:
    """The 13-member pool (:func:`farmlib.annotators.default_pool`) as API judge configs."""
    from farmlib.annotators import default_pool

    models = {**API_MODELS, **(models or {})}
    out = []
    for j in pool or default_pool():
        out.append(ChatJudgeConfig(j.name, model=models[j.model], output_format=j.output_format,
                                   batch_size=j.batch_size, in_context=j.in_context, prefer=j.prefer,
                                   temperature=j.temperature, seed=j.seed, **overrides))
    return out


def estimate_cost_per_1000(config: ChatJudgeConfig, records: list[dict], chars_per_token: float = 4.0) -> float:
    """What ``config`` would cost per 1000 comparisons of ``records`` at :data:`PRICES`, sending nothing.

    Prompt tokens are counted from the exact messages our templates build (``chars_per_token``
    characters per token); completion tokens from the reply format (a label, or a JSON object with a
    one-sentence rationale, per comparison).
    """
    p_in, p_out = PRICES.get(config.model, (0.0, 0.0))
    prompt = completion = 0.0
    for i in range(0, len(records), config.batch_size):
        chunk = records[i:i + config.batch_size]
        messages = build_messages(chunk, config.output_format, config.in_context, config.prefer)
        prompt += sum(len(m["content"]) for m in messages) / chars_per_token
        completion += len(chunk) * (25 if config.output_format == "json" else 3)
    return 1000 * (prompt * p_in + completion * p_out) / 1e6 / max(len(records), 1)
