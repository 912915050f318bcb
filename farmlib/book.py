"""Build the book: execute every chapter notebook with papermill, then render with Jupyter Book.

Notebooks in ``notebooks/`` are committed without outputs; their executed copies go to
``book/chapters/`` (a build product) and ``_toc.yml`` points at those. Artifacts are cached
under ``runs/<profile>/``, so a failed build resumes where it stopped. A chapter is not executed
again while nothing it depends on has changed (:func:`chapter_key`): its executed copy records the
key it ran under and the metrics files it wrote, and is reused while both still match.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from farmlib.artifacts import BUILT_LOG_ENV, WAITING_ENV, read_json, write_json
from farmlib.course import write_times_page
from farmlib.progress import ENV as PROGRESS_ENV
from farmlib.progress import THREADS_ENV, latest

EXECUTED = Path("book") / "chapters"
#: Names a file to which :meth:`farmlib.pipeline.Farm.write_metrics` appends the name of each metrics file
#: it writes: how a build knows which metrics belong to which chapter, also when chapters run side by side.
METRICS_LOG_ENV = "FARM_METRICS_LOG"


class BookError(RuntimeError):
    """Bad input the user can fix; its message is one complete line."""


class ChapterFailed(BookError):
    """A chapter's cell raised; the message says where, what, and what to do next."""


def chapters(root: Path) -> list[Path]:
    """Chapter notebooks in reading order (file names start with their number)."""
    return sorted((root / "notebooks").glob("[0-9]*.ipynb"))


# -- parameters ---------------------------------------------------------------------------------
def notebook_parameters(src: Path) -> dict[str, object]:
    """The notebook's parameters cell as ``{name: default value}``."""
    import papermill as pm

    out = {}
    for name, p in pm.inspect_notebook(str(src)).items():
        try:
            out[name] = ast.literal_eval(p["default"])
        except (ValueError, SyntaxError):
            out[name] = None  # an expression: any value is accepted
    return out


def _type_name(v) -> str:
    return type(v).__name__


def check_parameters(src: Path, params: dict) -> None:
    """Raise ``BookError`` (one line) unless every parameter exists in ``src`` with the default's type."""
    defaults = notebook_parameters(src)
    valid = ", ".join(f"{k} ({_type_name(v)})" for k, v in defaults.items())
    for name, value in params.items():
        if name not in defaults:
            raise BookError(f"{src.stem} has no parameter {name!r}; its parameters are: {valid}")
        want = defaults[name]
        if want is None or value is None:
            continue
        ok = isinstance(value, type(want)) or (isinstance(want, float) and isinstance(value, int))
        if isinstance(want, int) and isinstance(value, bool) != isinstance(want, bool):
            ok = False
        if not ok:
            raise BookError(f"{src.stem}: parameter {name} expects {_type_name(want)} (default {want!r}), "
                            f"got {value!r}; its parameters are: {valid}")
    if "profile" in params:
        resolve_profile(params["profile"])


# -- execution ----------------------------------------------------------------------------------
def _engine():
    """A papermill engine that reports each cell it starts to ``on_cell(index, total)``."""
    from papermill.engines import NBClientEngine, papermill_engines

    class FarmEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, on_cell=None, **kwargs):
            if on_cell is not None:
                start, total = nb_man.cell_start, len(nb_man.nb.cells)

                def cell_start(cell, cell_index=None, **kw):
                    on_cell(cell_index or 0, total)
                    return start(cell, cell_index, **kw)

                nb_man.cell_start = cell_start
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register("farm", FarmEngine)
    return "farm"


def _failure(src: Path, dst: Path, err) -> ChapterFailed:
    """What the user needs when a chapter fails: where, what, where the traceback is, what next."""
    import nbformat

    first = ""
    try:
        nb = nbformat.read(dst, as_version=4)
        added = {"injected-parameters", "papermill-error-cell-tag"}  # cells papermill inserted
        cells = [c for c in nb.cells if not added & set(c.metadata.get("tags", []))]
        for i, c in enumerate(cells):  # numbered as in the source notebook
            if c.get("metadata", {}).get("papermill", {}).get("exception"):
                lines = [ln for ln in c.source.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
                first = f"cell {i + 1}: `{lines[0].strip() if lines else ''}`\n  "
                break
    except Exception:  # noqa: BLE001 - the message is still useful without the cell
        pass
    what = f"{err.ename}: {err.evalue}" if hasattr(err, "ename") else f"{type(err).__name__}: {err}"
    return ChapterFailed(f"chapter {src.stem} failed at {first}{what}\n"
                     f"  the executed notebook with the full traceback: {dst}\n"
                     f"  fix the cause and rerun: every artifact already built is reused, so it resumes here")


def execute_notebook(src: Path, dst: Path, parameters: dict, cwd: Path | None = None,
                     on_cell: Callable[[int, int], None] | None = None) -> float:
    """Run one notebook with papermill; returns seconds taken. Raises ``BookError`` if a cell fails."""
    import papermill as pm

    dst.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        pm.execute_notebook(str(src), str(dst), parameters=parameters, kernel_name="python3",
                            cwd=str(cwd or src.parent.parent), progress_bar=False, log_output=False,
                            engine_name=_engine(), on_cell=on_cell,
                            # a local kernel on loopback: its TCP-encryption warning is noise here
                            extra_arguments=["--IPKernelApp.log_level=ERROR"])
    except pm.PapermillExecutionError as e:
        raise _failure(src, dst, e) from None
    _hide_default_parameters(dst)
    return time.time() - t0


def _hide_default_parameters(path: Path) -> None:
    """In the executed copy, remove the defaults cell and collapse papermill's injected cell (the
    parameters that ran stay one click away)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells):
        for c in nb.cells:
            tags = c.metadata.get("tags", [])
            if "parameters" in tags and "remove-cell" not in tags:
                c.metadata["tags"] = tags + ["remove-cell"]
            if "injected-parameters" in tags and "hide-input" not in tags:
                c.metadata["tags"] = tags + ["hide-input"]
        nbformat.write(nb, path)


# -- the execution cache ---------------------------------------------------------------------------
LIBRARY = Path(__file__).resolve().parent  # farmlib's source: a change to any of it re-executes every chapter


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def library_digest(folder: Path | None = None) -> str:
    """SHA-256 over the names and contents of every file of farmlib (bytecode caches aside)."""
    folder = folder or LIBRARY
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return _sha256(b"".join(f"{p.relative_to(folder)}\0{_sha256(p.read_bytes())}\n".encode() for p in files))


def resolve_profile(profile):
    """The :class:`~farmlib.profiles.Profile` a name or file stands for; a BookError (one line) if none."""
    from farmlib.profiles import get_profile

    try:
        return get_profile(profile)
    except ValueError as e:
        raise BookError(str(e)) from None


def chapter_key(src: Path, parameters: dict, library: str, runs: Path) -> str:
    """What an executed chapter depends on: its notebook, the parameters it ran with (the profile among
    them), farmlib's source (``library_digest``), and the artifact folder it read and wrote."""
    inputs = {"notebook": _sha256(src.read_bytes()), "parameters": parameters, "farmlib": library,
              "runs": str(runs)}
    if str(parameters.get("profile", "")).endswith(".toml"):  # a file: what it says, not only its name
        inputs["resolved_profile"] = resolve_profile(parameters["profile"]).to_dict()
    return _sha256(json.dumps(inputs, sort_keys=True, default=str).encode())


def reads_metrics(src: Path) -> bool:
    """Whether the chapter reads the metrics the other chapters write (``"reads_metrics": true`` in its notebook's
    metadata): it runs after every other chapter, and its key holds those metrics (:func:`summary_key`)."""
    return bool(json.loads(src.read_text()).get("metadata", {}).get("reads_metrics"))


def summary_key(key: str, metrics: Path, own: list[str]) -> str:
    """A metrics-reading chapter's key: its :func:`chapter_key` and every metrics file in ``metrics`` but its
    ``own`` and the build's timings, so that it runs again when another chapter's numbers change."""
    files = sorted(p for p in metrics.glob("*.json") if p.name not in {"build_times.json", *own})
    return _sha256(json.dumps([key, {p.name: _sha256(p.read_bytes()) for p in files}]).encode())


def _recorded_metrics(dst: Path) -> list[str]:
    """The metrics files an executed chapter recorded writing (none when it never ran to the end)."""
    try:
        return sorted(json.loads(dst.read_text())["metadata"]["farm"]["metrics"])
    except (OSError, ValueError, KeyError):
        return []


def note_metrics_written(path: Path) -> None:
    """Tell the build executing this chapter (if any) that the chapter wrote the metrics file ``path``."""
    log = os.environ.get(METRICS_LOG_ENV)
    if log:
        with open(log, "a") as fh:
            fh.write(Path(path).name + "\n")


def _written(log: Path) -> list[str]:
    """The metrics files a chapter reported writing (:func:`note_metrics_written`)."""
    return sorted(set(log.read_text().split())) if log.exists() else []


def _record(dst: Path, key: str, metrics: Path, written: list[str], seconds: float) -> None:
    """Write into a successfully executed notebook's metadata what :func:`reusable` checks."""
    import nbformat

    nb = nbformat.read(dst, as_version=4)
    nb.metadata["farm"] = {"key": key, "seconds": round(seconds, 1),
                           "metrics": {n: _sha256((metrics / n).read_bytes()) for n in sorted(written)}}
    nbformat.write(nb, dst)


def reusable(dst: Path, key: str, metrics: Path) -> bool:
    """Whether the executed chapter ``dst`` ran to the end under ``key`` and the metrics files it wrote
    are still there, unchanged."""
    try:
        record = json.loads(dst.read_text())["metadata"]["farm"]
    except (OSError, ValueError, KeyError):
        return False
    return record.get("key") == key and all(
        (metrics / n).is_file() and _sha256((metrics / n).read_bytes()) == h for n, h in record["metrics"].items())


# -- the status line ------------------------------------------------------------------------------
def _clock(s: float) -> str:
    s = int(s)
    return f"{s // 60}:{s % 60:02d}"


class Status:
    """One status line for a build: chapter i/n, cell k/m, elapsed, the kernel's progress bar, ETA.

    On a terminal the line is redrawn in place twice a second; elsewhere (CI, a log file) a line is
    printed when a chapter starts and at most every ``every`` seconds while it runs.
    """

    def __init__(self, n_chapters: int, estimate: float | None = None, stream=None, every: float = 30.0):
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.n, self.estimate, self.every = n_chapters, estimate, every
        self.t_book = time.time()
        self.i, self.name, self.cell, self.cells, self.t_chapter = 0, "", 0, 0, time.time()
        self.side: dict[int, tuple[str, float, Path]] = {}  # chapters running in their own processes
        fd, path = tempfile.mkstemp(prefix="farm-progress-", suffix=".txt")
        os.close(fd)
        self.progress_file = Path(path)
        self._stop = threading.Event()
        self._last_print = 0.0
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        os.environ[PROGRESS_ENV] = str(self.progress_file)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        os.environ.pop(PROGRESS_ENV, None)
        self.progress_file.unlink(missing_ok=True)
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def chapter(self, i: int, name: str) -> None:
        self.i, self.name, self.cell, self.cells, self.t_chapter = i, name, 0, 0, time.time()
        self.progress_file.write_text("")
        self._last_print = 0.0
        self.render(force=True)

    def start(self, i: int, name: str, folder: Path) -> None:
        """A chapter started in its own process, writing its status files into ``folder``."""
        self.side[i] = (name, time.time(), folder)
        self._last_print = 0.0
        self.render(force=True)

    def finish(self, i: int) -> None:
        self.side.pop(i, None)

    def on_cell(self, index: int, total: int) -> None:
        self.cell, self.cells = index + 1, total

    def done(self, message: str) -> None:
        """A permanent line (a finished chapter)."""
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(message + "\n")
        self.stream.flush()

    def line(self) -> str:
        now = time.time()
        if self.side:
            parts = []
            for i, (name, t0, folder) in sorted(self.side.items()):
                cell = (folder / "cell.txt").read_text().split() if (folder / "cell.txt").exists() else []
                bar = latest(folder / "progress.txt")
                try:
                    bar = f"waiting for {(folder / 'waiting.txt').read_text()}"
                except OSError:
                    pass
                parts.append(" | ".join([f"[{i}/{self.n}] {name}", *([f"cell {cell[0]}/{cell[1]}"] if len(cell) == 2
                                                                      else []), _clock(now - t0), *([bar] if bar else [])]))
        else:
            parts = [f"[{self.i}/{self.n}] {self.name}"]
            if self.cells:
                parts.append(f"cell {self.cell}/{self.cells}")
            parts.append(_clock(now - self.t_chapter))
            bar = latest(self.progress_file)
            if bar:
                parts.append(bar)
        if self.n > 1:
            book = f"book {_clock(now - self.t_book)}"
            parts.append(book + (f" of ~{_clock(self.estimate)}" if self.estimate else ""))
        return " | ".join(parts)

    def render(self, force: bool = False) -> None:
        if self.tty:
            width = os.get_terminal_size(self.stream.fileno()).columns
            self.stream.write("\r\033[K" + self.line()[: width - 1 if width >= 40 else 200])
            self.stream.flush()
        elif force or time.time() - self._last_print >= self.every:
            self._last_print = time.time()
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            self.render()


def _sync_static(root: Path) -> list[str]:
    """Copy the book's own ``_static`` files (its CSS) into the built HTML where they differ. Sphinx copies static
    files only when it rewrites a page, so a change to the CSS alone would never reach an existing ``_build``.
    Returns the paths copied, relative to ``_static``."""
    src, dst = root / "_static", root / "_build" / "html" / "_static"
    if not dst.is_dir():
        return []
    copied = []
    for f in sorted(p for p in src.rglob("*") if p.is_file()):
        target = dst / f.relative_to(src)
        if not target.is_file() or target.read_bytes() != f.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())
            copied.append(str(f.relative_to(src)))
    return copied


@contextmanager
def _book_lock(path: Path):
    """One ``farm book`` per runs folder and profile at a time; a second one waits, then reuses."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"another `farm book` is building with {path.parent}; waiting for it to finish", flush=True)
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def default_jobs(profile: str = "tiny") -> int:
    """How many chapters ``farm book`` executes side by side: ``$FARM_BOOK_JOBS``, else 2 on a CPU profile
    with at least 2 cores, else 1 (on a GPU, one chapter at a time).

    Why 2: most chapters wait for artifacts another chapter builds (the file locks of
    :mod:`farmlib.artifacts` make the second one wait, then reuse), but much of a chapter is one-core Python
    (sampling, judging, plotting, starting a kernel), and two single-threaded trainings get through 16 %
    more work on 2 cores than one two-threaded training. Each chapter then gets ``cores // jobs`` threads, and
    every core while it is the only chapter computing (:func:`_execute_side_by_side`).
    On this machine the results do not depend on it: training and reading give the same bits with 1 or 2
    threads (the reproducibility tests check artifacts bit for bit)."""
    if os.environ.get("FARM_BOOK_JOBS"):
        return max(1, int(os.environ["FARM_BOOK_JOBS"]))
    try:
        cpu = resolve_profile(profile).device == "cpu"
    except BookError:
        cpu = True
    return min(2, os.cpu_count() or 1) if cpu else 1


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (a chapter's kernel among them): against a
    chapter's wall clock, what it computed rather than waited for."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def _execute_main() -> None:
    """A chapter executed in its own process (``build_book`` with ``jobs > 1``): argv is the notebook, its
    executed copy, the parameters (JSON), the working folder and a folder for the status files."""
    src, dst, params, cwd, folder = sys.argv[1:6]
    cells = Path(folder) / "cell.txt"
    try:
        execute_notebook(Path(src), Path(dst), json.loads(params), cwd=Path(cwd),
                         on_cell=lambda i, n: cells.write_text(f"{i + 1} {n}"))
        (Path(folder) / "cpu.txt").write_text(repr(_cpu_seconds()))
    except BookError as e:
        (Path(folder) / "error.txt").write_text(str(e))
        sys.exit(3)


def _execute_side_by_side(pending: list[tuple[int, Path]], jobs: int, params: dict, root: Path,
                          key_of: Callable[[Path, list[str]], str], summaries: set[Path], metrics: Path,
                          status: Status, max_running: int | None = None,
                          executed: Path | None = None, cpu: dict[str, float] | None = None,
                          built: set[str] | None = None) -> dict[str, float]:
    """Execute ``pending`` chapters (numbered) in reading order into ``executed`` (default ``root/book/chapters``),
    ``jobs`` computing at a time, each in its own process with ``cores // jobs`` threads (all the cores while it
    computes alone: :func:`farmlib.progress.follow_threads`); record each as it finishes. A chapter waiting for an artifact
    another chapter is building does not count (it holds no core), so the next chapter starts meanwhile, up
    to ``max_running`` chapters in all: chapter 4's judges, which need only the base LM, train while
    chapter 3 waits for chapter 2's SFT model. After a failure no new chapter starts; the running ones
    finish, then the first failure is raised. ``cpu``: filled with each chapter's CPU seconds; ``built``: with the
    chapters that built an artifact."""
    import shutil

    max_running = max_running or 2 * jobs
    executed = executed or root / EXECUTED
    cores = os.cpu_count() or 1
    threads = str(max(1, cores // jobs))
    running: dict[subprocess.Popen, tuple[int, Path, float, Path]] = {}
    seconds: dict[str, float] = {}
    failures: list[str] = []
    queue = list(pending)

    def computing() -> int:  # running chapters not waiting for an artifact another chapter builds
        return sum(not (folder / "waiting.txt").exists() for _, _, _, folder in running.values())

    def hand_out_threads() -> None:  # a chapter computing alone gets every core; several share them
        n = str(max(1, cores // max(1, computing())))
        for _, _, _, folder in running.values():
            f = folder / "threads.txt"
            if not f.exists() or f.read_text() != n:
                (folder / "threads.tmp").write_text(n)
                os.replace(folder / "threads.tmp", f)

    try:
        while (queue and not failures) or running:
            while queue and computing() < jobs and len(running) < max_running and not failures:
                if running and queue[0][1] in summaries:  # it reads what the running chapters write
                    break
                i, nb = queue.pop(0)
                folder = Path(tempfile.mkdtemp(prefix="farm-chapter-"))
                env = {**os.environ, PROGRESS_ENV: str(folder / "progress.txt"),
                       METRICS_LOG_ENV: str(folder / "metrics.log"), WAITING_ENV: str(folder / "waiting.txt"),
                       BUILT_LOG_ENV: str(folder / "built.log"),
                       THREADS_ENV: str(folder / "threads.txt"), "OMP_NUM_THREADS": threads,
                       "MKL_NUM_THREADS": threads}
                cmd = [sys.executable, "-c", "from farmlib.book import _execute_main; _execute_main()", str(nb),
                       str(executed / nb.name), json.dumps(params), str(root), str(folder)]
                with open(folder / "stderr.txt", "w") as err:
                    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
                running[proc] = (i, nb, time.time(), folder)
                status.start(i, nb.stem, folder)
            hand_out_threads()
            time.sleep(0.2)
            for proc in [p for p in running if p.poll() is not None]:
                i, nb, t0, folder = running.pop(proc)
                status.finish(i)
                if proc.returncode == 0:
                    seconds[nb.stem] = time.time() - t0
                    written = _written(folder / "metrics.log")
                    _record(executed / nb.name, key_of(nb, written), metrics, written, seconds[nb.stem])
                    used = float((folder / "cpu.txt").read_text()) if (folder / "cpu.txt").exists() else None
                    if cpu is not None and used is not None:
                        cpu[nb.stem] = used
                    if built is not None and (folder / "built.log").exists():
                        built.add(nb.stem)
                    status.done(f"[{i}/{status.n}] {nb.stem}: {seconds[nb.stem]:.1f} s"
                                + (f" ({used:.0f} s of CPU)" if used is not None else ""))
                else:
                    error = folder / "error.txt"
                    failures.append(error.read_text() if error.exists() else
                                    f"chapter {nb.stem} failed (exit {proc.returncode}):\n  " +
                                    "\n  ".join((folder / "stderr.txt").read_text().strip().splitlines()[-15:]))
                    status.done(f"[{i}/{status.n}] {nb.stem}: failed")
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        for proc in running:  # interrupted (Ctrl-C): stop the chapters still running
            proc.terminate()
    if failures:
        raise ChapterFailed(failures[0])
    return seconds


def build_book(profile: str = "tiny", root: str | Path = ".", html: bool = True,
               only: list[str] | None = None, parameters: dict | None = None,
               force: bool = False, jobs: int | None = None, executed: str | Path | None = None) -> dict[str, float]:
    """Execute the chapters for ``profile`` and build ``_build/html``; returns seconds per step (``total``:
    the wall clock).

    A chapter whose :func:`chapter_key` matches the one its executed copy recorded, and whose metrics
    files are unchanged, is reused without running (``force``: execute every chapter anyway). ``jobs``
    chapters run side by side (default :func:`default_jobs`), in reading order. ``executed``: the folder for the
    executed copies (default ``book/chapters``, which ``_toc.yml`` renders; another folder only without ``html``).
    Raises ``BookError`` with a message for the user when a chapter fails or the input is wrong.
    """
    resolved = resolve_profile(profile)
    if str(profile).endswith(".toml"):
        profile = str(Path(profile).resolve())  # the chapters run elsewhere: they get the file's full path
    root = Path(root).resolve()
    executed = Path(executed).resolve() if executed else root / EXECUTED
    if html and executed != root / EXECUTED:
        raise BookError(f"the HTML renders {root / EXECUTED}; executing into {executed} needs html=False")
    os.environ.setdefault("FARM_RUNS", str(root / "runs"))
    runs = Path(os.environ["FARM_RUNS"]).resolve() / resolved.name
    metrics = runs / "metrics"
    todo = [c for c in chapters(root) if not only or any(o in c.stem for o in only)]
    if not todo:
        raise BookError(f"no chapter in {root / 'notebooks'} matches {only}")
    params = {"profile": profile, **(parameters or {})}
    for nb in todo:
        check_parameters(nb, params)
    library = library_digest()
    keys = {nb: chapter_key(nb, params, library, runs) for nb in todo}
    summaries = {nb for nb in todo if reads_metrics(nb)}

    def key_of(nb: Path, written: list[str]) -> str:  # what an executed chapter records, having written ``written``
        return summary_key(keys[nb], metrics, written) if nb in summaries else keys[nb]

    reuse = {nb: not force and reusable(executed / nb.name, keys[nb], metrics) for nb in todo if nb not in summaries}
    for nb in summaries:  # reused only when every other chapter is, and their metrics are those it read
        reuse[nb] = (not force and all(reuse.values()) and
                     reusable(executed / nb.name, key_of(nb, _recorded_metrics(executed / nb.name)), metrics))
    last = metrics / "build_times.json"  # seconds of each chapter's last execution: the next estimate
    prev = read_json(last) if last.exists() else {}
    estimate = None
    if all(reuse[c] or c.stem in prev for c in todo):
        estimate = sum(prev[c.stem] for c in todo if not reuse[c]) + (prev.get("html", 0.0) if html else 0.0)

    times: dict[str, float] = {}
    ran: dict[str, float] = {}  # seconds of the steps that ran (not reused)
    cpu: dict[str, float] = {}  # their CPU seconds: the work a build's wall clock shares among the cores
    built: set[str] = set()  # the chapters that built an artifact: their times are cold ones
    jobs = max(1, jobs or default_jobs(profile))
    t_build = time.time()
    with _book_lock(runs / ".book.lock"), Status(len(todo), estimate and estimate / jobs) as status:
        pending = []
        for i, nb in enumerate(todo, 1):
            if reuse[nb]:
                times[nb.stem] = 0.0
                status.done(f"[{i}/{len(todo)}] {nb.stem}: reused (notebook, parameters and farmlib unchanged)")
            elif jobs == 1:
                status.chapter(i, nb.stem)
                dst = executed / nb.name
                with tempfile.TemporaryDirectory(prefix="farm-chapter-") as tmp:
                    log = Path(tmp) / "metrics.log"
                    os.environ[METRICS_LOG_ENV], os.environ[BUILT_LOG_ENV] = str(log), str(Path(tmp) / "built.log")
                    c0 = _cpu_seconds()
                    try:
                        times[nb.stem] = ran[nb.stem] = execute_notebook(nb, dst, params, cwd=root,
                                                                              on_cell=status.on_cell)
                    finally:
                        os.environ.pop(METRICS_LOG_ENV, None)
                        os.environ.pop(BUILT_LOG_ENV, None)
                    cpu[nb.stem] = _cpu_seconds() - c0
                    if (Path(tmp) / "built.log").exists():
                        built.add(nb.stem)
                    written = _written(log)
                    _record(dst, key_of(nb, written), metrics, written, times[nb.stem])
                status.done(f"[{i}/{len(todo)}] {nb.stem}: {times[nb.stem]:.1f} s"
                            + (f" ({cpu[nb.stem]:.0f} s of CPU)" if nb.stem in cpu else ""))
            else:
                pending.append((i, nb))
        if pending:
            seconds = _execute_side_by_side(pending, jobs, params, root, key_of, summaries, metrics, status,
                                            executed=executed, cpu=cpu, built=built)
            times.update(seconds)
            ran.update(seconds)
        cold = {**prev.get("cold", {}), **{c: ran[c] for c in built}}
        cold_cpu = {**prev.get("cold_cpu_seconds", {}), **{c: cpu[c] for c in built if c in cpu}}
        if html:
            latest = {k: v for k, v in prev.items() if isinstance(v, (int, float)) and k not in ("html", "total")}
            write_times_page(root, {**latest, **ran, **cold}, {**prev.get("cpu_seconds", {}), **cpu, **cold_cpu},
                             resolved.name)
            status.chapter(len(todo), "building HTML with Jupyter Book")
            t0 = time.time()
            cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
                   "build", str(root), "--quiet"]
            index = root / "_build" / "html" / "index.html"
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
            if proc.returncode != 0 or not index.exists():
                log = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
                raise ChapterFailed("jupyter-book build failed (exit {}):\n  {}".format(proc.returncode, "\n  ".join(log)))
            _sync_static(root)
            times["html"] = ran["html"] = time.time() - t0
            status.done(f"HTML: {times['html']:.1f} s -> {index}")
    times["total"] = time.time() - t_build  # wall clock: chapters side by side overlap
    if only is None and parameters is None:  # a whole default build: the next build's estimate
        write_json(last, {**{k: v for k, v in prev.items() if k != "total"}, **ran,
                          "cpu_seconds": {**prev.get("cpu_seconds", {}), **cpu},
                          "cold": cold, "cold_cpu_seconds": cold_cpu})
    return times
