import json
from pathlib import Path

import pytest
from conftest import power_cut

from farmlib.artifacts import ArtifactStore, config_hash, damage
from farmlib.lm.model import new_model, train_tokenizer
from farmlib.lm.supervised import train_lm
from farmlib.profiles import ModelConfig, TrainConfig


def test_config_hash_is_stable_and_sensitive():
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


def test_get_or_build_builds_once(tmp_path):
    store, calls = ArtifactStore(tmp_path), []

    def build(work):
        calls.append(work)
        (work / "x.txt").write_text("hello")

    p1 = store.get_or_build("thing", {"n": 1}, build)
    p2 = store.get_or_build("thing", {"n": 1}, build)
    assert p1 == p2 and len(calls) == 1 and (p1 / "x.txt").read_text() == "hello"
    record = json.loads((p1 / "_artifact.json").read_text())
    assert record["n"] == 1 and len(record["code"]) == 16 and record["code_modules"]
    store.get_or_build("thing", {"n": 2}, build)
    assert len(calls) == 2


def test_interrupted_build_is_not_finished_and_resumes(tmp_path):
    store = ArtifactStore(tmp_path)

    def crash(work):
        (work / "half.txt").write_text("first half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.get_or_build("thing", {"n": 1}, crash)
    assert not store.exists("thing", {"n": 1}, crash)
    seen = []

    def resume(work):
        seen.append((work / "half.txt").read_text())
        (work / "rest.txt").write_text("second half")

    p = store.get_or_build("thing", {"n": 1}, resume)
    assert seen == ["first half"] and (p / "rest.txt").exists()


def test_training_resumes_from_checkpoint(tmp_path, monkeypatch):
    docs = [f"the goat number {i} eats grass" for i in range(64)]
    tok = train_tokenizer(docs, 300)
    cfg = TrainConfig(epochs=1, lr=1e-3, batch_size=8, save_every=3)
    mcfg = ModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32)
    pairs = [("", d) for d in docs]
    restore = power_cut(monkeypatch)
    with pytest.raises(RuntimeError):
        train_lm(new_model(mcfg, tok), tok, pairs, cfg, tmp_path)
    assert (tmp_path / "checkpoint.pt").exists()
    restore()
    hist = train_lm(new_model(mcfg, tok), tok, pairs, cfg, tmp_path)
    assert [h["step"] for h in hist] == list(range(8))  # steps 0-2 from the checkpoint, 3-7 now
    assert not (tmp_path / "checkpoint.pt").exists()


def test_farm_reuses_artifacts(micro_farm, monkeypatch):
    import farmlib.rooms.models as models

    monkeypatch.setattr(models, "train_lm", lambda *a, **k: (_ for _ in ()).throw(AssertionError("retrained")))
    path = micro_farm.sft_model()
    assert path == micro_farm.sft_model() and (micro_farm.root / "sft").exists()
    outs = micro_farm.samples(path, generator="sft")
    assert len(outs) == len(micro_farm.splits()["eval"]) and all(o["generator"] == "sft" for o in outs)


def test_damaged_artifact_is_detected_kept_aside_and_rebuilt(tmp_path, capsys):
    calls = []

    def build(work):
        calls.append(1)
        (work / "model.safetensors").write_bytes(b"\x08" * 4096)

    p = ArtifactStore(tmp_path).get_or_build("sft", {"n": 1}, build)
    with open(p / "model.safetensors", "r+b") as fh:  # a truncated download / full disk
        fh.truncate(100)
    p2 = ArtifactStore(tmp_path).get_or_build("sft", {"n": 1}, build)  # a new process's store
    assert p2 == p and len(calls) == 2 and (p / "model.safetensors").stat().st_size == 4096
    err = capsys.readouterr().err
    assert "is damaged (model.safetensors has 100 bytes, 4096 were written)" in err and str(p) in err
    aside = list(tmp_path.glob("sft/*.damaged-*"))
    assert len(aside) == 1 and (aside[0] / "model.safetensors").stat().st_size == 100  # nothing is lost


def test_same_size_corruption_is_caught_by_the_checksum(tmp_path):
    store = ArtifactStore(tmp_path)
    p = store.get_or_build("x", {}, lambda w: (w / "a.json").write_text('{"a": 1}'))
    (p / "a.json").write_text('{"a": 2}')
    assert "SHA-256" in damage(p)
    (p / "a.json").unlink()
    assert damage(p) == "a.json is missing"


_BUILDER = """
import sys, time
from pathlib import Path
from farmlib.artifacts import ArtifactStore

def build(work):
    with open(sys.argv[2], "a") as log:
        log.write("built\\n")
    time.sleep(1.0)  # long enough for the other process to arrive while this one builds
    (work / "out.txt").write_text("done")

print(ArtifactStore(sys.argv[1]).get_or_build("thing", {"n": 1}, build))
"""


def test_two_processes_build_an_artifact_once(tmp_path):
    """Two `farm` processes on the same runs/ folder: one builds, the other waits and reuses it."""
    import subprocess
    import sys

    script, log = tmp_path / "b.py", tmp_path / "builds.log"
    script.write_text(_BUILDER)
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "runs"), str(log)],
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert log.read_text() == "built\n" and outs[0] == outs[1]
    assert damage(Path(outs[0])) is None and (Path(outs[0]) / "out.txt").read_text() == "done"


_WRITER = """
import sys
from farmlib.artifacts import write_json
for i in range(300):
    write_json(sys.argv[1], {"writer": sys.argv[2], "i": i})
"""


def test_two_processes_write_the_same_json_safely(tmp_path):
    """Metrics and build times are rewritten by concurrent builds; neither writer may crash."""
    import subprocess
    import sys

    script, target = tmp_path / "w.py", tmp_path / "m.json"
    script.write_text(_WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), str(target), str(k)], stderr=subprocess.PIPE, text=True)
             for k in range(2)]
    errs = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    assert json.loads(target.read_text())["i"] == 299
