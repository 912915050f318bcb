"""Throughput of an API judge: N requests in flight vs one at a time, and on a single-slot server.

Runs against the loopback chat-completions server with a fixed latency per reply, so the numbers
measure our client (thread pool, adaptive limit, cache, parsing), not a provider::

    python benchmarks/judge_concurrency.py --n 8 --latency 0.2 --pairs 64

1. A server that serves everything at once: N in flight should be >= 0.8 * N times as fast.
2. A server with one slot (``--slot-latency`` a reply, queued requests wait) and a client timeout
   of ``--timeout``: a fixed limit of N times out and fails prompts; the adaptive limit cuts itself
   and answers everything, and its next batch starts from the limit it learned.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

from farmlib.annotators.api_judge import ChatJudge, ChatJudgeConfig
from farmlib.annotators.loopback import LoopbackServer


def make_pairs(n_pairs: int) -> list[dict]:
    return [{"instruction": f"Task {i}", "input": "", "output_1": "x" * (i % 7), "output_2": "y" * 3}
            for i in range(n_pairs)]


def run(concurrency: int, latency: float, n_pairs: int) -> tuple[float, int]:
    pairs = make_pairs(n_pairs)
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(latency=latency) as srv:
        judge = ChatJudge(ChatJudgeConfig("bench", model="loop", base_url=srv.url, concurrency=concurrency),
                          cache=Path(tmp) / "cache.sqlite")
        t0 = time.perf_counter()
        out = judge.annotate_pairs(pairs)
        seconds = time.perf_counter() - t0
        assert all(r["preference"] in (1, 2) for r in out)
        judge.annotate_pairs(pairs)  # the rerun: all from the cache
        return n_pairs / seconds, srv.requests - n_pairs


def run_slot(adaptive: bool, concurrency: int, latency: float, timeout: float, n_pairs: int, batch: int,
             passes: int = 1) -> list[dict]:
    """``passes`` batches of ``n_pairs`` new pairs, one judge, a single-slot server: per batch, what got
    answered, how fast, at what cost (a later batch starts from the limit the judge has learned)."""
    pairs = make_pairs(n_pairs * passes)
    out = []
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(slots=1, latency=latency) as srv:
        cfg = ChatJudgeConfig("bench", model="loop", base_url=srv.url, concurrency=concurrency, adaptive=adaptive,
                              batch_size=batch, timeout=timeout, backoff=0.05)
        judge = ChatJudge(cfg, cache=Path(tmp) / "cache.sqlite")
        for k in range(passes):
            sent, t0 = srv.requests, time.perf_counter()
            done = judge.annotate_pairs(pairs[k * n_pairs:(k + 1) * n_pairs])
            seconds = time.perf_counter() - t0
            answered = sum(r["preference"] in (1, 2) for r in done)
            out.append({"seconds": seconds, "answered": answered, "failed": judge.last_summary["failed"],
                        "requests": srv.requests - sent, "low": judge.last_summary["low"],
                        "rate": answered / seconds})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--pairs", type=int, default=64)
    ap.add_argument("--slot-latency", type=float, default=0.2, help="seconds a reply on the single-slot server")
    ap.add_argument("--timeout", type=float, default=0.5, help="client timeout on the single-slot server")
    ap.add_argument("--slot-pairs", type=int, default=40)
    ap.add_argument("--batch", type=int, default=2)
    a = ap.parse_args()
    os.environ.pop("OPENAI_API_KEY", None)
    logging.getLogger("farmlib.annotators.api_judge").setLevel(logging.ERROR)  # failures are counted below
    seq, _ = run(1, a.latency, a.pairs)
    par, rerun = run(a.n, a.latency, a.pairs)
    ratio = par / seq
    print(f"sequential: {seq:.1f} pairs/s; concurrency {a.n}: {par:.1f} pairs/s")
    print(f"ratio: {ratio:.2f}x = {ratio / a.n:.2f} * N (goal >= 0.80 * N)")
    print(f"requests sent by a rerun (cache): {rerun}")

    prompts = -(-a.slot_pairs // a.batch)
    ideal = a.slot_pairs / (prompts * a.slot_latency)
    print(f"\nsingle-slot server: {a.slot_latency} s a reply, client timeout {a.timeout} s, {a.slot_pairs} pairs "
          f"in {prompts} prompts (ideal {ideal:.1f} pairs/s)")
    cases = [(f"fixed {a.n}", False, a.n, 1), (f"adaptive from {a.n}", True, a.n, 2), ("fixed 2 (hand-tuned)", False, 2, 1)]
    for label, adaptive, n, passes in cases:
        for k, r in enumerate(run_slot(adaptive, n, a.slot_latency, a.timeout, a.slot_pairs, a.batch, passes)):
            name = label if k == 0 else "  its next batch"
            print(f"  {name:<21} {r['answered']:>3}/{a.slot_pairs} answered, {r['failed']:>3} failed, "
                  f"{r['requests']:>3} requests, {r['seconds']:5.1f} s, {r['rate']:5.1f} answered pairs/s, "
                  f"lowest limit {r['low']}")

if __name__ == "__main__":
    main()
