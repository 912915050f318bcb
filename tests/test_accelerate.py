"""Supervised training in 2 processes (data parallel through accelerate, gloo on CPU) follows the
1-process loss curve. Slow-ish (about 35 s on 2 busy cores) but run by default."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

SCRIPT = ROOT / "tests" / "accelerate_train_lm.py"


def _run(cmd, out):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd + [str(SCRIPT), str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_two_processes_follow_the_one_process_loss_curve(tmp_path):
    pytest.importorskip("accelerate", reason="accelerate is not installed (pip install -e '.[scale]')")
    one = _run([sys.executable], tmp_path / "one.json")
    two = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"],
               tmp_path / "two.json")
    assert len(one) == len(two) == 8
    assert two == pytest.approx(one, abs=1e-4)  # the same gradients, summed in another order
    assert one[-1] < one[0] - 0.5  # and it learned
