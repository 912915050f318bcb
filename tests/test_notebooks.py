"""Every chapter runs end to end on the micro profile (seconds each)."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from farmlib.book import chapters, execute_notebook

CHAPTERS = chapters(ROOT)


def test_notebooks_are_committed_without_outputs():
    for nb in CHAPTERS:
        cells = json.loads(nb.read_text())["cells"]
        assert not any(c.get("outputs") or c.get("execution_count") for c in cells if c["cell_type"] == "code"), nb
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells), nb


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_on_micro_profile(nb, tmp_path_factory, monkeypatch):
    runs = tmp_path_factory.getbasetemp() / "nb_runs"  # shared by the chapters, like a book build
    monkeypatch.setenv("FARM_RUNS", str(runs))
    execute_notebook(nb, tmp_path_factory.mktemp("out") / nb.name, {"profile": "micro"}, cwd=ROOT)
    metrics = list((runs / "micro" / "metrics").glob("*.json"))
    assert metrics, "chapter wrote no metrics"


def test_farm_run_takes_parameters(tmp_path):
    env = {**os.environ, "FARM_RUNS": str(tmp_path / "runs")}
    out = tmp_path / "fw.ipynb"
    subprocess.run([sys.executable, "-m", "farmlib.cli", "run", "farmworld", "--profile", "micro",
                    "-p", "n_examples", "3", "-o", str(out)], cwd=ROOT, env=env, check=True, capture_output=True)
    nb = json.loads(out.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert injected and "n_examples = 3" in "".join(injected[0]["source"])
