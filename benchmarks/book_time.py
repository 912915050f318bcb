"""Time the book build: cold (empty artifact cache) and warm (everything cached), per chapter.

    python benchmarks/book_time.py [--profile tiny]

Prints seconds per chapter for both builds (side by side, chapters overlap: the total is the wall clock)
and the warm/cold ratio. Targets (tiny, 2 CPU cores): cold <= 1,200 s (20 minutes), warm <= 60 s.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from farmlib.book import build_book

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--runs", help="artifact folder to use (default: a fresh temporary one)")
    args = ap.parse_args()
    runs = args.runs or tempfile.mkdtemp(prefix="farm-bench-")
    os.environ["FARM_RUNS"] = str(runs)
    cold = build_book(args.profile, ROOT)
    warm = build_book(args.profile, ROOT)
    print(f"\nprofile={args.profile}  artifacts={runs}")
    print(f"{'step':<22}{'cold s':>10}{'warm s':>10}")
    for k in cold:
        print(f"{k:<22}{cold[k]:>10.1f}{warm.get(k, float('nan')):>10.1f}")
    print(f"cold total {cold['total']:.0f} s (target <= 1200); warm total {warm['total']:.0f} s (target <= 60); "
          f"warm/cold = {warm['total'] / cold['total']:.3f}")


if __name__ == "__main__":
    main()
