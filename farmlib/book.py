"""Build the book: execute every chapter notebook with papermill, then render with Jupyter Book.

Notebooks in ``notebooks/`` are committed without outputs; their executed copies go to
``book/chapters/`` (a build product) and ``_toc.yml`` points at those. Artifacts are cached
under ``runs/<profile>/``, so a warm rebuild only re-executes cheap cells.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from farmlib.artifacts import write_json

EXECUTED = Path("book") / "chapters"


def chapters(root: Path) -> list[Path]:
    """Chapter notebooks in reading order (file names start with their number)."""
    return sorted((root / "notebooks").glob("[0-9]*.ipynb"))


def execute_notebook(src: Path, dst: Path, parameters: dict, cwd: Path | None = None) -> float:
    """Run one notebook with papermill; returns seconds taken. Raises if a cell fails."""
    import papermill as pm

    dst.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    pm.execute_notebook(str(src), str(dst), parameters=parameters, kernel_name="python3",
                        cwd=str(cwd or src.parent.parent), progress_bar=False, log_output=False)
    _hide_default_parameters(dst)
    return time.time() - t0


def _hide_default_parameters(path: Path) -> None:
    """In the executed copy, hide the defaults cell: papermill's injected cell shows what ran."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells):
        for c in nb.cells:
            tags = c.metadata.get("tags", [])
            if "parameters" in tags and "remove-cell" not in tags:
                c.metadata["tags"] = tags + ["remove-cell"]
        nbformat.write(nb, path)


def build_book(profile: str = "tiny", root: str | Path = ".", html: bool = True,
               only: list[str] | None = None, parameters: dict | None = None) -> dict[str, float]:
    """Execute the chapters for ``profile`` and build ``_build/html``; returns seconds per step."""
    root = Path(root).resolve()
    os.environ.setdefault("FARM_RUNS", str(root / "runs"))
    times: dict[str, float] = {}
    todo = [c for c in chapters(root) if not only or any(o in c.stem for o in only)]
    for i, nb in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] executing {nb.name} (profile={profile})", flush=True)
        times[nb.stem] = execute_notebook(nb, root / EXECUTED / nb.name,
                                          {"profile": profile, **(parameters or {})}, cwd=root)
        print(f"      {times[nb.stem]:.1f} s", flush=True)
    if html:
        print("building HTML with Jupyter Book", flush=True)
        t0 = time.time()
        cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
               "build", str(root), "--quiet"]
        index = root / "_build" / "html" / "index.html"
        proc = subprocess.run(cmd, cwd=root)
        if proc.returncode != 0 or not index.exists():
            raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode}); see the log above")
        times["html"] = time.time() - t0
        print(f"      {times['html']:.1f} s -> {root / '_build' / 'html' / 'index.html'}", flush=True)
    times["total"] = sum(times.values())
    write_json(Path(os.environ["FARM_RUNS"]) / profile / "metrics" / "build_times.json", times)
    return times
