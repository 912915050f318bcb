import json

import pytest

import farmlib.sft as sft_mod
from farmlib.artifacts import ArtifactStore, config_hash
from farmlib.model import new_model, train_tokenizer
from farmlib.profiles import ModelConfig, TrainConfig
from farmlib.sft import train_lm


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
    assert json.loads((p1 / "_artifact.json").read_text()) == {"n": 1}
    store.get_or_build("thing", {"n": 2}, build)
    assert len(calls) == 2


def test_interrupted_build_is_not_finished_and_resumes(tmp_path):
    store = ArtifactStore(tmp_path)

    def crash(work):
        (work / "half.txt").write_text("first half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.get_or_build("thing", {"n": 1}, crash)
    assert not store.exists("thing", {"n": 1})
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
    real_loss, calls = sft_mod.lm_loss, {"n": 0}

    def flaky(model, batch):
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("power cut")
        return real_loss(model, batch)

    monkeypatch.setattr(sft_mod, "lm_loss", flaky)
    with pytest.raises(RuntimeError):
        train_lm(new_model(mcfg, tok), tok, pairs, cfg, tmp_path)
    assert (tmp_path / "checkpoint.pt").exists()
    monkeypatch.setattr(sft_mod, "lm_loss", real_loss)
    hist = train_lm(new_model(mcfg, tok), tok, pairs, cfg, tmp_path)
    assert [h["step"] for h in hist] == list(range(8))  # steps 0-2 from the checkpoint, 3-7 now
    assert not (tmp_path / "checkpoint.pt").exists()


def test_farm_reuses_artifacts(micro_farm, monkeypatch):
    import farmlib.pipeline as pipeline

    monkeypatch.setattr(pipeline, "train_lm", lambda *a, **k: (_ for _ in ()).throw(AssertionError("retrained")))
    path = micro_farm.sft_model()
    assert path == micro_farm.sft_model() and (micro_farm.root / "sft").exists()
    outs = micro_farm.samples(path, generator="sft")
    assert len(outs) == len(micro_farm.splits()["eval"]) and all(o["generator"] == "sft" for o in outs)
