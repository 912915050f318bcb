"""Every method on a GPU: the leaderboard of a profile built from scratch on each of ``--builds`` (devices), each
in a fresh process, one after the other; builds on the same device are compared bit for bit, and builds on
different devices by their numbers. Prints each build's time per row, its peak GPU memory and the leaderboard.

    python benchmarks/gpu_paths.py [--profile micro] [--builds cuda cuda cpu] [--methods dpo ppo] [--runs DIR]
                                   [--deterministic warn]

The CPU claim (same profile, seed and machine => the same bits) is tested in ``tests/test_reproducible.py``;
this is its GPU counterpart, to run where a GPU is at hand (CI has none). A ``Farm`` on a CUDA device asks
torch for its strict deterministic mode (``farmlib.seeding``); ``--deterministic warn`` sets
``FARM_DETERMINISTIC=warn`` to see what the last bits of speed cost in reproducibility.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_BUILD = """
import json, sys, time
import torch
from farmlib import Farm
from farmlib.evaluation.leaderboard import leaderboard_of_methods
from farmlib.methods import BASELINES, METHODS
farm = Farm(sys.argv[1], device=sys.argv[2])
t0 = time.time()
for name in sys.argv[3:] or BASELINES + METHODS:
    t = time.time()
    row = leaderboard_of_methods(farm, [name]).drop(columns=["config", "paper_row", "paper_sim", "paper_human"])
    row = row.to_dict("records")[0]
    row["seconds"] = time.time() - t
    print("ROW " + json.dumps(row), flush=True)
weights = next(farm.load(farm.sft_model()).parameters())
gpu = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0
print("DONE " + json.dumps({"seconds": time.time() - t0, "weights_on": str(weights.device), "peak_gpu_mib": gpu}))
"""
#: Columns that are wall-clock times, not results.
TIMES = ("seconds", "train_seconds")


def build(profile: str, device: str, runs: Path, deterministic: str, methods: list[str]) -> tuple[list[dict], dict]:
    """One leaderboard built from scratch in a fresh process; its rows as they finish and its summary."""
    env = {**os.environ, "FARM_RUNS": str(runs), "PYTHONPATH": str(ROOT)}
    if deterministic:
        env["FARM_DETERMINISTIC"] = deterministic
    proc = subprocess.Popen([sys.executable, "-c", _BUILD, profile, device, *methods], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)
    rows, done = [], {}
    for line in proc.stdout:
        if line.startswith("ROW "):
            rows.append(json.loads(line[4:]))
            r = rows[-1]
            print(f"  {device:5s} {r['method']:24s} {r['seconds']:7.1f} s  p_sim_eval {r['win_rate_p_sim_eval']:5.1f}"
                  f"  people {r.get('win_rate_human', float('nan')):5.1f}", flush=True)
        elif line.startswith("DONE "):
            done = json.loads(line[5:])
    if proc.wait() != 0:
        raise SystemExit(f"the {device} build failed (exit {proc.returncode})")
    return rows, done


def main() -> None:
    from farmlib.artifacts import artifact_digests

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="micro")
    ap.add_argument("--builds", nargs="+", default=["cuda", "cuda", "cpu"], help="a device per build")
    ap.add_argument("--methods", nargs="*", default=[], help="leaderboard rows to build (default: every row)")
    ap.add_argument("--runs", default="", help="a folder for the builds' artifacts (default: a temporary one)")
    ap.add_argument("--deterministic", choices=["strict", "warn"], default="",
                    help="FARM_DETERMINISTIC (default: unset, so strict on a GPU and warn on CPU)")
    args = ap.parse_args()
    runs = Path(args.runs or tempfile.mkdtemp(prefix="gpu_paths-"))
    results = []
    for k, device in enumerate(args.builds):
        print(f"build {k}: {args.profile} on {device}", flush=True)
        rows, done = build(args.profile, device, runs / f"build{k}", args.deterministic, args.methods)
        print(f"build {k}: {done['seconds']:.0f} s, SFT weights on {done['weights_on']}, "
              f"peak GPU memory {done['peak_gpu_mib']:.0f} MiB", flush=True)
        results.append((device, rows, done, artifact_digests(runs / f"build{k}" / args.profile)))

    first = {}
    for k, (device, rows, _, digests) in enumerate(results):
        board = [{c: v for c, v in r.items() if c not in TIMES} for r in rows]
        if device not in first:
            first[device] = (k, board, digests)
            continue
        j, board0, digests0 = first[device]
        differ = sorted(p for p in digests0 if digests0[p] != digests.get(p))
        same = board == board0 and not differ and sorted(digests) == sorted(digests0)
        print(f"builds {j} and {k} on {device}: " + ("identical leaderboards and artifacts, bit for bit"
              if same else f"{len(differ)} of {len(digests0)} files differ, e.g. {differ[:5]}"))
    if len(first) > 1:
        (d0, (_, b0, _)), (d1, (_, b1, _)) = list(first.items())[:2]
        for col in [c for c in b0[0] if c.startswith("win_rate_")]:
            gaps = [abs(r0[col] - r1[col]) for r0, r1 in zip(b0, b1)]
            print(f"{col}: {d0} vs {d1} differ by {max(gaps):.1f} points at most (mean {sum(gaps) / len(gaps):.1f})")
    secs = {d: results[k][2]["seconds"] for d, (k, _, _) in first.items()}
    if "cpu" in secs and len(secs) > 1:
        for d, s in secs.items():
            if d != "cpu":
                print(f"{d} build: {secs['cpu'] / s:.2f}x the speed of the cpu build ({s:.0f} s against {secs['cpu']:.0f} s)")


if __name__ == "__main__":
    t = time.time()
    main()
    print(f"total {time.time() - t:.0f} s")
