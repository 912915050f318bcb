"""``farm``: the one way to run things.

    farm book [--profile tiny] [--force] [-j N] execute every changed chapter and build the book
    farm run NOTEBOOK -p NAME VALUE ...         rerun one chapter with new parameters
    farm leaderboard FILE... [-o out.csv]       win-rates from AlpacaEval annotation files
    farm data fetch [--dataset NAME] [--dir DIR]  download the manifest's files and verify them
    farm data check [--dataset NAME] [--dir DIR]  verify a local data folder against the manifest
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _value(text: str):
    """Parse a parameter value as JSON where it can be (numbers, booleans, lists), else a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def cmd_book(args) -> int:
    from farmlib.book import build_book

    times = build_book(args.profile, args.root, html=not args.no_html, only=args.only, force=args.force,
                       jobs=args.jobs)
    print("seconds per step:", json.dumps({k: round(v, 1) for k, v in times.items()}))
    return 0


def cmd_run(args) -> int:
    from farmlib.book import BookError, Status, check_parameters, execute_notebook

    src = Path(args.notebook)
    if not src.exists():
        alts = sorted(Path(args.root, "notebooks").glob(f"*{args.notebook}*.ipynb"))
        if len(alts) != 1:
            names = ", ".join(p.stem for p in sorted(Path(args.root, "notebooks").glob("[0-9]*.ipynb")))
            raise BookError(f"no single notebook matches {args.notebook!r}; the chapters are: {names}")
        src = alts[0]
    import os

    from farmlib.artifacts import runs_root
    from farmlib.book import resolve_profile

    profile = resolve_profile(args.profile)  # a bad name or file: one line, before anything runs
    if args.profile.endswith(".toml"):
        args.profile = str(Path(args.profile).resolve())  # the chapter runs in the clone: it gets the full path
    params = {"profile": args.profile, **{k: _value(v) for k, v in (args.param or [])}}
    check_parameters(src, params)
    os.environ.setdefault("FARM_RUNS", str(Path(args.root).resolve() / "runs"))  # as farm book: the clone's runs/
    out = Path(args.output or runs_root() / profile.name / "notebooks" / src.name)  # beside the artifacts
    with Status(1) as status:
        status.chapter(1, src.stem)
        secs = execute_notebook(src, out, params, cwd=Path(args.root).resolve(), on_cell=status.on_cell)
    print(f"{src.name} ran in {secs:.1f} s with {params} -> {out}")
    return 0


def cmd_leaderboard(args) -> int:
    from farmlib.data import DataFormatError
    from farmlib.evaluation.win_rate import leaderboard_from_files

    try:
        table = leaderboard_from_files(args.files)
    except DataFormatError as e:
        print(f"farm leaderboard: {e}", file=sys.stderr)
        return 2
    csv = table.to_csv(index=False)
    if args.output:
        Path(args.output).write_text(csv)
    print(csv, end="")
    return 0


def cmd_data(args) -> int:
    from farmlib import datacards

    folder = Path(args.dir) if args.dir else datacards.default_dir()
    try:
        manifest = datacards.load_manifest()
        datacards.select(manifest, args.dataset)
    except FileNotFoundError:
        print(f"farm data: no manifest at {datacards.MANIFEST} (run from a checkout of the project)", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"farm data: {e}", file=sys.stderr)
        return 2
    if args.action == "fetch":
        results = datacards.fetch(folder, args.dataset, manifest)
    else:
        results = datacards.check(folder, args.dataset, manifest)
    counts = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        print(r.line(), file=sys.stderr if r.status in ("missing", "mismatch") else sys.stdout)
    print(f"farm data {args.action} {folder}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if counts.get("missing") or counts.get("mismatch") else 0


def book_root(root: str | None) -> Path:
    """The folder that holds the book (``notebooks/``): ``root`` if given, else the current folder if it holds
    one, else the clone farmlib is installed from (an editable install knows it); a BookError otherwise."""
    from farmlib.book import BookError

    if root is not None:
        if not (Path(root) / "notebooks").is_dir():
            raise BookError(f"--root {root}: no notebooks/ folder there (the book's chapters live in <clone>/notebooks)")
        return Path(root)
    installed = Path(__file__).resolve().parents[1]
    for candidate in (Path.cwd(), installed):
        if (candidate / "notebooks").is_dir() and any((candidate / "notebooks").glob("[0-9]*.ipynb")):
            return candidate
    raise BookError(f"no book found: neither {Path.cwd()} nor {installed} holds notebooks/; run farm from the "
                    "clone, or pass --root <clone>")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    from farmlib.book import BookError, ChapterFailed

    ap = _Parser(prog="farm", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=None,
                    help="the book's folder (default: the current folder if it holds notebooks/, else the clone "
                         "farmlib is installed from)")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    b = sub.add_parser("book", help="execute every chapter and build the HTML book")
    b.add_argument("--profile", default="tiny")
    b.add_argument("--only", nargs="*", help="execute only chapters whose name contains one of these")
    b.add_argument("--no-html", action="store_true", help="execute the notebooks but skip Jupyter Book")
    b.add_argument("--force", action="store_true",
                   help="execute every chapter, also those unchanged since their last run (notebook, parameters, farmlib)")
    b.add_argument("-j", "--jobs", type=int, default=None,
                   help="chapters executed side by side (default: 2 on a CPU profile with 2+ cores, else 1)")
    b.set_defaults(fn=cmd_book)

    r = sub.add_parser("run", help="rerun one chapter with papermill")
    r.add_argument("notebook", help="a notebook path or part of its name (e.g. sft)")
    r.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    r.add_argument("--profile", default="tiny")
    r.add_argument("-o", "--output", help="where to write the executed notebook")
    r.set_defaults(fn=cmd_run)

    lb = sub.add_parser("leaderboard", help="CSV leaderboard from AlpacaEval annotation files")
    lb.add_argument("files", nargs="+")
    lb.add_argument("-o", "--output", help="also write the CSV here")
    lb.set_defaults(fn=cmd_leaderboard)

    d = sub.add_parser("data", help="fetch the data files or check a local copy (data/manifest.json)")
    d.add_argument("action", choices=["fetch", "check"])
    d.add_argument("--dataset", action="append",
                   help="only this dataset (repeatable; fetch defaults to the hub's, alpaca_farm; check to all)")
    d.add_argument("--dir", help="the data folder (default: $FARM_DATA or ~/.cache/farmlib/data)")
    d.set_defaults(fn=cmd_data)

    args = ap.parse_args(argv)
    try:
        if args.cmd in ("book", "run"):
            args.root = str(book_root(args.root))
        return args.fn(args)
    except ChapterFailed as e:
        print(f"farm {args.cmd}: {e}", file=sys.stderr)
        return 1
    except BookError as e:
        print(f"farm {args.cmd}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
