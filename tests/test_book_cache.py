"""`farm book` executes a chapter again only when something it depends on changed: its notebook, its
parameters, farmlib's source; a failed chapter is never reused."""

import json
import shutil

import pytest

import farmlib.book as book
from farmlib.book import ChapterFailed, build_book

#: A toy chapter: it logs each execution and writes a metrics file, as the real chapters do.
CODE = """import os, pathlib
from farmlib.book import note_metrics_written
runs = pathlib.Path(os.environ["FARM_RUNS"])
with open(runs / "executions.log", "a") as f:
    f.write("{name}\\n")
(runs / profile / "metrics").mkdir(parents=True, exist_ok=True)
(runs / profile / "metrics" / "{name}.json").write_text(str(n))
note_metrics_written(runs / profile / "metrics" / "{name}.json")  # as Farm.write_metrics does"""


def write_chapter(root, name: str, n: int = 1, extra: str = "", reads_metrics: bool = False) -> None:
    cells = [(f'profile = "tiny"\nn = {n}', ["parameters"]), (CODE.format(name=name) + extra, [])]
    nb = {"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {"tags": tags}, "source": src, "outputs": [],
                     "execution_count": None} for i, (src, tags) in enumerate(cells)],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                       **({"reads_metrics": True} if reads_metrics else {})},
          "nbformat": 4, "nbformat_minor": 5}
    (root / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A book of two toy chapters; ``toy.build(...)`` returns the chapters executed, in order."""
    root, runs = tmp_path / "book", tmp_path / "runs"
    (root / "notebooks").mkdir(parents=True)
    runs.mkdir()
    monkeypatch.setenv("FARM_RUNS", str(runs))
    for name in ("01_a", "02_b"):
        write_chapter(root, name)

    class Toy:
        def __init__(self):
            self.root, self.runs = root, runs

        def build(self, **kw) -> list[str]:
            log = runs / "executions.log"
            log.unlink(missing_ok=True)
            build_book("micro", root, html=False, **{"jobs": 1, **kw})
            return log.read_text().split() if log.exists() else []

    return Toy()


def test_unchanged_chapters_are_reused(toy, capsys):
    assert toy.build() == ["01_a", "02_b"]
    capsys.readouterr()
    assert toy.build() == []
    out = capsys.readouterr().out
    assert "[1/2] 01_a: reused" in out and "[2/2] 02_b: reused" in out
    assert toy.build(force=True) == ["01_a", "02_b"]  # farm book --force


def test_a_changed_notebook_or_parameter_reexecutes_that_chapter(toy):
    toy.build()
    write_chapter(toy.root, "02_b", extra="\nprint('edited')")
    assert toy.build() == ["02_b"]
    write_chapter(toy.root, "01_a", n=2)  # the parameters cell's default
    assert toy.build() == ["01_a"]
    assert toy.build(only=["02_b"], parameters={"n": 3}) == ["02_b"]  # an injected parameter
    assert toy.build() == ["02_b"]  # back to the defaults


def test_a_changed_library_reexecutes_every_chapter(toy, tmp_path, monkeypatch):
    library = tmp_path / "farmlib"
    shutil.copytree(book.LIBRARY, library, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(book, "LIBRARY", library)
    toy.build()
    assert toy.build() == []
    path = library / "lm" / "sampling.py"
    path.write_text(path.read_text() + "\n# a change\n")
    assert toy.build() == ["01_a", "02_b"]


def test_a_missing_or_changed_metrics_file_reexecutes_its_chapter(toy):
    toy.build()
    (toy.runs / "micro" / "metrics" / "01_a.json").unlink()
    assert toy.build() == ["01_a"]
    (toy.runs / "micro" / "metrics" / "02_b.json").write_text("written by another run")
    assert toy.build() == ["02_b"]


def test_a_failed_chapter_is_never_reused(toy):
    toy.build()
    write_chapter(toy.root, "02_b", extra="\nraise ValueError('broken')")
    with pytest.raises(ChapterFailed):
        toy.build()
    write_chapter(toy.root, "02_b")  # back to the notebook of the last successful run: the same key
    assert toy.build() == ["02_b"]  # its executed copy is the failed run's, so it runs again
    assert toy.build() == []


def test_chapters_side_by_side_record_their_own_metrics(toy, capsys):
    """Two chapters in two processes: both run, each records the metrics it wrote (a second build reuses
    both, and a changed metrics file re-executes only its chapter), and a failure is raised after the
    chapters that were running have finished."""
    write_chapter(toy.root, "03_c", extra="\nimport time; time.sleep(1)")
    assert sorted(toy.build(jobs=2)) == ["01_a", "02_b", "03_c"]
    assert toy.build(jobs=2) == []
    (toy.runs / "micro" / "metrics" / "02_b.json").write_text("written by another run")
    assert toy.build(jobs=2) == ["02_b"]
    write_chapter(toy.root, "01_a", extra="\nraise ValueError('broken')")
    with pytest.raises(ChapterFailed, match="broken"):
        toy.build(jobs=2, force=True)
    assert "02_b" in (toy.runs / "executions.log").read_text()  # the chapter beside it ran to the end


def test_executed_copies_go_where_they_are_asked(toy):
    """``executed=``: the copies go to that folder, which is also where reuse looks (one at a time or side by
    side); the book's own folder is untouched, and asking for HTML from another folder is refused."""
    other = toy.root / "elsewhere"
    for jobs in (1, 2):
        assert sorted(toy.build(executed=other, jobs=jobs, force=True)) == ["01_a", "02_b"]
        assert sorted(p.name for p in other.iterdir()) == ["01_a.ipynb", "02_b.ipynb"]
        assert toy.build(executed=other, jobs=jobs) == []
    assert not (toy.root / book.EXECUTED).exists()
    with pytest.raises(book.BookError, match="needs html=False"):
        build_book("micro", toy.root, executed=other)


def test_a_chapter_waiting_for_an_artifact_frees_its_place(toy):
    """Side by side, a chapter waiting for an artifact another chapter is building does not count against
    ``jobs``: with two places, chapter 03 starts and finishes while 02 waits for 01's artifact."""
    build = """
from farmlib.artifacts import ArtifactStore
import time
def slow(work):
    (runs / "x-started").touch()
    time.sleep({sleep})
    with open(runs / "executions.log", "a") as f:
        f.write("x-built\\n")
ArtifactStore(runs / "store").get_or_build("x", {{}}, slow)
with open(runs / "executions.log", "a") as f:
    f.write("{name}-done\\n")"""
    write_chapter(toy.root, "01_a", extra=build.format(sleep=8, name="01_a"))
    # 02_b asks for the artifact only once 01_a is building it (a marker file, not a head start in seconds)
    wait = "\nimport time\nwhile not (runs / 'x-started').exists():\n    time.sleep(0.05)"
    write_chapter(toy.root, "02_b", extra=wait + build.format(sleep=0, name="02_b"))
    write_chapter(toy.root, "03_c")
    log = toy.build(jobs=2)
    # 03_c ran while 01_a built the artifact and 02_b waited for it; which of those two then logs first is a race
    assert log.count("x-built") == 1, log  # 02_b waited for 01_a's build rather than building its own
    assert log.index("03_c") < log.index("x-built") < min(log.index("01_a-done"), log.index("02_b-done")), log


def test_a_chapter_takes_up_the_threads_it_is_handed(tmp_path, monkeypatch):
    """Side by side, ``farm book`` writes how many threads a chapter may use; its loops take that up."""
    import torch

    from farmlib import progress as prog

    before = torch.get_num_threads()
    f = tmp_path / "threads.txt"
    monkeypatch.setenv(prog.THREADS_ENV, str(f))
    try:
        for n in (1, 2, 1):
            f.write_text(str(n))
            prog._threads_checked[0] = 0.0
            assert list(prog.progress(range(3), desc="x")) == [0, 1, 2]
            assert torch.get_num_threads() == n
    finally:
        torch.set_num_threads(before)


def test_a_chapter_reading_the_metrics_runs_last_and_again_when_they_change(toy):
    """A chapter that reads the other chapters' metrics (chapter 20's claims) starts only once every other chapter
    has finished, also side by side, is reused while their metrics are unchanged, and runs again when one changes."""
    read = "\nseen = sorted(p.name for p in (runs / profile / 'metrics').glob('0*.json'))\n" \
           "open(runs / 'executions.log', 'a').write(' '.join(seen) + '\\n')"
    done = "\nimport time; time.sleep(8)\nopen(runs / 'executions.log', 'a').write('01_a-done\\n')"
    write_chapter(toy.root, "01_a", extra=done)
    write_chapter(toy.root, "09_summary", extra=read, reads_metrics=True)
    log = toy.build(jobs=2)
    assert sorted(log[:3]) == ["01_a", "01_a-done", "02_b"], log  # 02_b finished long before 01_a: no matter
    assert log[3:] == ["09_summary", "01_a.json", "02_b.json", "09_summary.json"], log
    assert toy.build(jobs=2) == [] and toy.build(jobs=1) == []
    write_chapter(toy.root, "02_b", n=2)  # another chapter's numbers change: the summary reads them again
    assert toy.build(jobs=2)[:2] == ["02_b", "09_summary"]
    (toy.runs / "micro" / "metrics" / "01_a.json").write_text("written by another run")
    assert toy.build(jobs=1)[:3] == ["01_a", "01_a-done", "09_summary"]


def test_a_change_to_the_books_css_alone_reaches_the_built_html(tmp_path):
    # Sphinx copies _static only when it rewrites a page: with every page unchanged, the old CSS would stay
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "farm.css").write_text("td { padding: 1em }")
    assert book._sync_static(tmp_path) == []  # nothing built yet: nothing to copy into
    built = tmp_path / "_build" / "html" / "_static"
    built.mkdir(parents=True)
    (built / "farm.css").write_text("td { padding: 0 }")
    (built / "theme.css").write_text("the theme's own")
    assert book._sync_static(tmp_path) == ["farm.css"]
    assert (built / "farm.css").read_text() == "td { padding: 1em }" and (built / "theme.css").read_text() == "the theme's own"
    assert book._sync_static(tmp_path) == []  # equal now: nothing to do


def test_a_chapters_cold_time_is_kept_when_a_rebuild_only_reads(toy):
    """A chapter that built an artifact records its time as a cold one; a forced rebuild that finds the artifact
    built updates the chapter's last time but keeps the cold one (the course page's table reads both)."""
    build = """
from farmlib.artifacts import ArtifactStore
import time
def slow(work):
    time.sleep(4)
ArtifactStore(runs / "store").get_or_build("x", {}, slow)"""
    write_chapter(toy.root, "01_a", extra=build)
    times = toy.runs / "micro" / "metrics" / "build_times.json"
    for jobs in (1, 2):
        shutil.rmtree(toy.runs / "store", ignore_errors=True)
        times.unlink(missing_ok=True)
        toy.build(jobs=jobs, force=True)
        first = json.loads(times.read_text())
        assert set(first["cold"]) == {"01_a"} and first["cold"]["01_a"] == first["01_a"] >= 4
        assert first["cold_cpu_seconds"]["01_a"] == first["cpu_seconds"]["01_a"]
        toy.build(jobs=jobs, force=True)
        again = json.loads(times.read_text())
        # both ran again and built nothing: their last times are new, 01_a's cold time is the first build's
        # (wall-clock times are not compared: a busy machine can make a reading chapter as slow as a building one)
        assert again["cold"] == first["cold"], (first, again)
        assert again["01_a"] != first["01_a"] and again["02_b"] != first["02_b"], (first, again)
