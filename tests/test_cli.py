"""The `farm` command as a new user meets it: bad input gets one line and exit 2, a failing chapter
says where, what, and what to do next."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT


def farm(*args, cwd=ROOT, env=None):
    return subprocess.run([sys.executable, "-m", "farmlib.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("args, expected", [
    (["run", "sft", "--profile", "micro", "-p", "nosuchparam", "3"],
     "02_sft has no parameter 'nosuchparam'; its parameters are: profile (str), n_show (int)"),
    (["run", "sft", "--profile", "micro", "-p", "n_show", "notanumber"],
     "parameter n_show expects int (default 8), got 'notanumber'"),
    (["run", "ppo", "--profile", "micro", "-p", "overrides", "[1]"], "parameter overrides expects dict"),
    (["run", "sft", "--profile", "nosuch"],
     "unknown profile 'nosuch'; choose from micro, paper, real-cpu, real-micro, small, tiny, or a .toml file"),
    (["book", "--profile", "nosuch"],
     "unknown profile 'nosuch'; choose from micro, paper, real-cpu, real-micro, small, tiny, or a .toml file"),
    (["run", "nosuchchapter"], "no single notebook matches 'nosuchchapter'; the chapters are: 01_farmworld"),
    (["bok"], "invalid choice: 'bok'"),
    (["run"], "the following arguments are required: notebook"),
])
def test_bad_input_is_one_line_and_exit_2(args, expected, tmp_path):
    line = one_line_error(farm(*args, env={"FARM_RUNS": str(tmp_path)}))
    assert expected in line
    assert not (tmp_path / "micro").exists()  # nothing ran


def _notebook(cells):
    return {"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {"tags": tags}, "source": src, "outputs": [],
                       "execution_count": None} for i, (src, tags) in enumerate(cells)],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def test_failing_chapter_says_where_what_and_how_to_resume(tmp_path):
    root = tmp_path / "book"
    (root / "notebooks").mkdir(parents=True)
    nb = _notebook([('profile = "tiny"', ["parameters"]), ("x = 1", []),
                    ("# load the preferences\nprefs = {}['missing']  # a bug", [])])
    (root / "notebooks" / "01_broken.ipynb").write_text(json.dumps(nb))
    proc = farm("--root", str(root), "book", "--profile", "micro", "--no-html", env={"FARM_RUNS": str(tmp_path / "r")})
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr
    assert "chapter 01_broken failed at cell 3: `prefs = {}['missing']  # a bug`" in err
    assert "KeyError: 'missing'" in err
    assert f"the executed notebook with the full traceback: {root / 'book' / 'chapters' / '01_broken.ipynb'}" in err
    assert "rerun" in err and "reused" in err and "Traceback" not in err
    assert (root / "book" / "chapters" / "01_broken.ipynb").exists()


def test_progress_lines_without_a_terminal(tmp_path):
    """Piped (CI, a log), `farm book` prints a line per chapter start and finish, with cells and time."""
    root = tmp_path / "book"
    (root / "notebooks").mkdir(parents=True)
    nb = _notebook([('profile = "tiny"', ["parameters"]),
                    ("import farmlib\nimport tqdm.auto\nfrom farmlib.progress import progress\n"
                     "for _ in progress(range(3), desc='work'): pass", [])])
    (root / "notebooks" / "01_ok.ipynb").write_text(json.dumps(nb))
    proc = farm("--root", str(root), "book", "--profile", "micro", "--no-html", env={"FARM_RUNS": str(tmp_path / "r")})
    assert proc.returncode == 0, proc.stderr
    assert "[1/1] 01_ok | 0:00" in proc.stdout and "[1/1] 01_ok: " in proc.stdout
    assert "running over TCP" not in proc.stdout + proc.stderr  # the kernel's warning is gone
    outputs = json.dumps([c.get("outputs", []) for c in
                          json.loads((root / "book" / "chapters" / "01_ok.ipynb").read_text())["cells"]])
    assert "IProgress" not in outputs and "work" not in outputs, outputs  # no tqdm warning, no bar on the page
    assert json.loads((tmp_path / "r" / "micro" / "metrics" / "build_times.json").read_text())["01_ok"] > 0


@pytest.mark.parametrize("jobs", ["1", "2"])  # a chapter in farm's own process, or in one of its own
def test_a_chapters_cpu_seconds_count_its_kernels_work_and_not_its_waiting(tmp_path, jobs):
    """`farm book` records each chapter's CPU seconds beside its wall clock: what the kernel computed counts, a sleep
    (a chapter waiting for an artifact another builds) does not."""
    root = tmp_path / "book"
    (root / "notebooks").mkdir(parents=True)
    burnt = tmp_path / "burnt.txt"
    nb = _notebook([('profile = "tiny"', ["parameters"]),
                    ("import time\nt = time.process_time()\nx = sum(range(30_000_000))\n"
                     f"open({str(burnt)!r}, 'w').write(repr(time.process_time() - t))\ntime.sleep(3)", [])])
    (root / "notebooks" / "01_ok.ipynb").write_text(json.dumps(nb))
    proc = farm("--root", str(root), "book", "--profile", "micro", "--no-html",
                env={"FARM_RUNS": str(tmp_path / "r"), "FARM_BOOK_JOBS": jobs})
    assert proc.returncode == 0, proc.stderr
    times = json.loads((tmp_path / "r" / "micro" / "metrics" / "build_times.json").read_text())
    cpu = times["cpu_seconds"]["01_ok"]
    assert cpu >= float(burnt.read_text()) > 0.2  # the kernel's own work is in it
    assert times["01_ok"] - cpu > 2.0  # the three seconds asleep are not
    assert " s of CPU)" in proc.stdout


def test_farm_finds_the_book_from_outside_the_clone(tmp_path, monkeypatch):
    """Run from another folder, ``farm`` finds the clone it is installed from; a wrong --root is one line."""
    import subprocess
    import sys

    from farmlib.cli import book_root

    bad = subprocess.run([sys.executable, "-m", "farmlib.cli", "--root", str(tmp_path), "book"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no notebooks/" in bad.stderr
    monkeypatch.chdir(tmp_path)
    assert (book_root(None) / "notebooks" / "11_ppo.ipynb").exists()
