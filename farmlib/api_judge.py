"""A judge behind any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama).

::

    judge = ChatJudge(ChatJudgeConfig("gpt4_b5_json", model="gpt-4-0613", batch_size=5,
                                      output_format="json"), cache="runs/annotations.sqlite")
    annotated = judge.annotate_pairs(records)      # adds "preference" (1, 2 or None), "annotator"

Reliability, because API judges are paid, slow and flaky:

* every reply is cached on disk under (answer-relevant config, exact prompt) before it is used:
  a rerun sends 0 requests, a crash loses nothing already answered, nothing is paid twice;
* ``concurrency`` prompts are in flight at once (a thread pool);
* 429, 5xx, timeouts and dropped connections are retried with exponential backoff and jitter;
* a reply that cannot be parsed is asked again (``parse_retries``), then its comparisons are
  recorded as ``None``: a missing answer is never turned into a default preference;
* the key is read from the environment variable named in the config, at call time, and never
  stored in the config, the cache, the records or a log line.
"""

from __future__ import annotations

import dataclasses
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tqdm.auto import tqdm

from farmlib.annotation_cache import AnnotationCache, cache_key
from farmlib.prompts import build_messages, parse_reply

#: $ per 1M (prompt, completion) tokens. Edit for your provider; local servers cost 0.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4-0613": (30.0, 60.0),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-3.5-turbo": (0.5, 1.5),
    "text-davinci-003": (20.0, 20.0),
}


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
    concurrency: int = 8
    max_retries: int = 5
    parse_retries: int = 1
    timeout: float = 60.0
    backoff: float = 1.0  # seconds before the first retry; doubles each time

    def answer_config(self) -> dict:
        """The part of the config that decides the answer (the cache key's config)."""
        keep = ("model", "output_format", "batch_size", "in_context", "prefer", "temperature", "max_tokens")
        return {k: getattr(self, k) for k in keep}


class JudgeAPIError(RuntimeError):
    """A request that failed for good (after retries, or with an error retrying cannot fix)."""


class ChatJudge:
    """Preferences from a chat-completions model; see the module docstring."""

    def __init__(self, config: ChatJudgeConfig, cache: str | os.PathLike | AnnotationCache | None = None,
                 client=None):
        self.config, self.name = config, config.name
        self.cache = cache if isinstance(cache, AnnotationCache) or cache is None else AnnotationCache(cache)
        self._client = client
        self._lock = threading.Lock()
        self.requests = self.prompt_tokens = self.completion_tokens = self.comparisons = 0
        self.seconds = 0.0

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

    def _request(self, messages: list[dict]) -> dict:
        """One completion, retried on rate limits, server errors, timeouts and dropped connections."""
        import openai

        c = self.config
        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                     openai.APIConnectionError)
        for attempt in range(c.max_retries + 1):
            try:
                with self._lock:
                    self.requests += 1
                resp = self.client().chat.completions.create(
                    model=c.model, messages=messages, temperature=c.temperature, max_tokens=c.max_tokens)
                usage = resp.usage
                return {"reply": resp.choices[0].message.content or "",
                        "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                        "completion_tokens": getattr(usage, "completion_tokens", 0) or 0}
            except retryable as e:
                if attempt == c.max_retries:
                    raise JudgeAPIError(f"judge {c.name!r} ({c.model}): gave up after {attempt + 1} tries: "
                                        f"{type(e).__name__}") from None
                time.sleep(c.backoff * 2 ** attempt * (0.5 + random.random()))
            except openai.APIStatusError as e:  # 400, 401, 404...: retrying will not help
                raise JudgeAPIError(f"judge {c.name!r} ({c.model}): HTTP {e.status_code}") from None
        raise AssertionError("unreachable")

    # -- one prompt ---------------------------------------------------------------------------
    def _ask(self, shown: list[dict]) -> list[int | None]:
        """Preferences for one prompt's comparisons (as shown), from the cache or the server."""
        c = self.config
        messages = build_messages(shown, c.output_format, c.in_context, c.prefer)
        key = cache_key(c.answer_config(), messages)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return parse_reply(hit["reply"], len(shown), c.output_format)
        t0 = time.perf_counter()
        tokens = [0, 0]
        for _ in range(c.parse_retries + 1):
            ans = self._request(messages)
            tokens[0] += ans["prompt_tokens"]
            tokens[1] += ans["completion_tokens"]
            prefs = parse_reply(ans["reply"], len(shown), c.output_format)
            if None not in prefs:
                break
        ans.update(prompt_tokens=tokens[0], completion_tokens=tokens[1])  # what was paid, retries included
        with self._lock:
            self.prompt_tokens += tokens[0]
            self.completion_tokens += tokens[1]
            self.seconds += time.perf_counter() - t0
        if self.cache is not None:
            self.cache.put(key, ans)
        return prefs

    # -- the interface ------------------------------------------------------------------------
    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        """Annotate each pair; each is shown in a random (seeded, so cacheable) order."""
        c = self.config
        rng = random.Random(f"{c.name}-{c.seed}-{seed}")
        swaps = [rng.random() < 0.5 for _ in records]
        shown = [dict(r, output_1=r["output_2"], output_2=r["output_1"]) if s else r for r, s in zip(records, swaps)]
        chunks = [list(range(i, min(i + c.batch_size, len(records)))) for i in range(0, len(records), c.batch_size)]
        prefs: list[int | None] = [None] * len(records)
        with ThreadPoolExecutor(max_workers=c.concurrency) as pool, \
                tqdm(total=len(records), desc=c.name, unit="pair", leave=False) as bar:
            futures = [(idx, pool.submit(self._ask, [shown[i] for i in idx])) for idx in chunks]
            for idx, fut in futures:
                for i, p in zip(idx, fut.result()):
                    prefs[i] = None if p is None else (3 - p if swaps[i] else p)
                bar.update(len(idx))
        self.comparisons += len(records)
        return [dict(r, preference=p, annotator=c.name) for r, p in zip(records, prefs)]

    def cost_per_1000(self) -> float:
        """Dollars per 1000 comparisons so far, from token usage and :data:`PRICES` (0 if unknown)."""
        p_in, p_out = PRICES.get(self.config.model, (0.0, 0.0))
        dollars = (self.prompt_tokens * p_in + self.completion_tokens * p_out) / 1e6
        return 1000 * dollars / max(self.comparisons, 1)


def chat_pool(configs: list[ChatJudgeConfig], cache: str | os.PathLike, **overrides) -> list[ChatJudge]:
    """ChatJudges sharing one cache (``overrides``: e.g. ``base_url=``, ``concurrency=``)."""
    store = AnnotationCache(cache)
    return [ChatJudge(dataclasses.replace(c, **overrides), cache=store) for c in configs]


#: The pool's model families mapped to API model names (override for your provider).
API_MODELS = {"gpt4": "gpt-4-0613", "chatgpt": "gpt-3.5-turbo", "davinci": "text-davinci-003"}


def chat_configs(pool: list | None = None, models: dict[str, str] | None = None, **overrides) -> list[ChatJudgeConfig]:
    """The 13-member pool (:func:`farmlib.annotators.default_pool`) as API judge configs."""
    from farmlib.annotators import default_pool

    models = {**API_MODELS, **(models or {})}
    out = []
    for j in pool or default_pool():
        prefer = "long" if j.name.endswith("prefer_long") else "short" if j.name.endswith("prefer_short") else ""
        out.append(ChatJudgeConfig(j.name, model=models[j.model], output_format=j.output_format,
                                   batch_size=j.batch_size, in_context=j.in_context, prefer=prefer,
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
