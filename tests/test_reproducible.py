"""Same profile, same seed, same machine: identical artifacts, bit for bit, from fresh processes."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

_BUILD = """
import json, sys
from farmlib import Farm
farm = Farm("micro")
paths = {"tokenizer": farm.tokenizer_path(), "base": farm.base_model(), "sft": farm.sft_model()}
paths["samples"] = str(farm.store.root)  # only for the relative layout
outs = farm.samples(paths["sft"], "eval")
print(json.dumps({"paths": paths, "outputs": [o["output"] for o in outs]}))
"""


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.name in ("model.safetensors", "tokenizer.json")}


def test_micro_base_and_sft_are_bit_identical_across_processes(tmp_path):
    results = []
    for k in range(2):
        env = {**os.environ, "FARM_RUNS": str(tmp_path / f"runs{k}")}
        proc = subprocess.run([sys.executable, "-c", _BUILD], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for kind in ("tokenizer", "base", "sft"):
        a, b = (_digest(Path(r["paths"][kind])) for r in results)
        assert a and a == b, f"{kind} differs between two fresh builds: {a} vs {b}"
        assert Path(results[0]["paths"][kind]).name == Path(results[1]["paths"][kind]).name  # same key
    assert results[0]["outputs"] == results[1]["outputs"]  # and the samples drawn from them
