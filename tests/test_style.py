import shutil
import subprocess

from conftest import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff")
    assert ruff, "ruff is part of the test extras: pip install -e '.[test]'"
    proc = subprocess.run([ruff, "check", "farmlib", "tests", "benchmarks", "notebooks"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
