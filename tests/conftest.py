from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared() -> Path:
    """The real AlpacaEval / AlpacaFarm files beside the project (never copied into it)."""
    if not SHARED.exists():
        pytest.skip(f"real data files not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def micro_farm(tmp_path_factory):
    """A micro-profile farm with its base and SFT models built once per session."""
    from farmlib import Farm

    farm = Farm("micro", root=tmp_path_factory.mktemp("runs") / "micro")
    farm.sft_model()
    return farm


def power_cut(monkeypatch, at: int = 5):
    """Make ``train_lm``'s loss raise on its ``at``-th call (an interrupted run); returns the undo."""
    import farmlib.lm.supervised as supervised

    real_loss, calls = supervised.lm_loss, {"n": 0}

    def flaky(model, batch):
        calls["n"] += 1
        if calls["n"] == at:
            raise RuntimeError("power cut")
        return real_loss(model, batch)

    monkeypatch.setattr(supervised, "lm_loss", flaky)
    return lambda: monkeypatch.setattr(supervised, "lm_loss", real_loss)
