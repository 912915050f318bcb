"""Throughput of an API judge with N requests in flight vs one at a time (goal: >= 0.8 * N x).

Runs against the loopback chat-completions server with a fixed latency per reply, so the ratio
measures our client (thread pool, cache, parsing), not a provider::

    python benchmarks/judge_concurrency.py --n 8 --latency 0.2 --pairs 64
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from farmlib.api_judge import ChatJudge, ChatJudgeConfig
from farmlib.loopback import LoopbackServer


def run(concurrency: int, latency: float, n_pairs: int) -> tuple[float, int]:
    pairs = [{"instruction": f"Task {i}", "input": "", "output_1": "x" * (i % 7), "output_2": "y" * 3}
             for i in range(n_pairs)]
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(latency=latency) as srv:
        judge = ChatJudge(ChatJudgeConfig("bench", model="loop", base_url=srv.url, concurrency=concurrency),
                          cache=Path(tmp) / "cache.sqlite")
        t0 = time.perf_counter()
        out = judge.annotate_pairs(pairs)
        seconds = time.perf_counter() - t0
        assert all(r["preference"] in (1, 2) for r in out)
        judge.annotate_pairs(pairs)  # the rerun: all from the cache
        return n_pairs / seconds, srv.requests - n_pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--pairs", type=int, default=64)
    a = ap.parse_args()
    os.environ.pop("OPENAI_API_KEY", None)
    seq, _ = run(1, a.latency, a.pairs)
    par, rerun = run(a.n, a.latency, a.pairs)
    ratio = par / seq
    print(f"sequential: {seq:.1f} pairs/s; concurrency {a.n}: {par:.1f} pairs/s")
    print(f"ratio: {ratio:.2f}x = {ratio / a.n:.2f} * N (goal >= 0.80 * N)")
    print(f"requests sent by a rerun (cache): {rerun}")


if __name__ == "__main__":
    main()
