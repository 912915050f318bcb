"""Artifacts follow their code: the digest in an artifact's key covers the farmlib source its builder can run,
and nothing else (farmlib.provenance)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from farmlib.provenance import NOT_CODE, data_digest, outer_function, source_digest

ROOT = Path(__file__).resolve().parents[1]

#: Builders across farmlib: (module, the function that defines the builder).
BUILDERS = {
    "splits": ("farmlib.rooms.data", "DataRoom.path"),
    "base": ("farmlib.rooms.models", "ModelRoom.base_model"),
    "sft": ("farmlib.rooms.models", "ModelRoom.sft_model"),
    "samples": ("farmlib.rooms.models", "ModelRoom.samples"),
    "finetune": ("farmlib.rooms.models", "ModelRoom.finetune"),
    "preferences": ("farmlib.rooms.annotators", "AnnotatorRoom.preference_data"),
    "reward_model": ("farmlib.methods.reward_model", "train"),
    "best_of_n": ("farmlib.methods.best_of_n", "select"),
    "dpo": ("farmlib.methods.dpo", "train"),
    "kto": ("farmlib.methods.kto", "train"),
    "quark": ("farmlib.methods.quark", "train"),
    "ppo": ("farmlib.methods.ppo", "train"),
    "judge_head": ("farmlib.annotators.learned", "train_judge"),
}

DIGESTS = """
import json, sys
from farmlib.provenance import source_digest, modules_digest
out = {k: source_digest(m, f)[0] for k, (m, f) in json.loads(sys.argv[1]).items()}
out["judges"] = modules_digest("farmlib.annotators.learned", "farmlib.annotators.judges")
out["people"] = modules_digest("farmlib.annotators.people")
print(json.dumps(out))
"""


def digests(src: Path) -> dict[str, str]:
    """Every builder's digest as computed from the farmlib copy under ``src``, in a fresh interpreter."""
    run = subprocess.run([sys.executable, "-c", DIGESTS, json.dumps(BUILDERS)], cwd=src, capture_output=True,
                         text=True, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(run.stdout)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def scratch(tmp_path) -> Path:
    shutil.copytree(ROOT / "farmlib", tmp_path / "farmlib", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_outer_function_names_the_defining_function():
    assert outer_function("Farm.sft_model.<locals>.build") == "Farm.sft_model"
    assert outer_function("train.<locals>.build") == "train"
    assert outer_function("accuracy_curve.<locals>.build") == "accuracy_curve"


def test_the_digest_covers_what_the_builder_runs_and_not_what_only_stores_it():
    digest, modules = source_digest("farmlib.methods.ppo", "train")
    own, *others = modules
    assert own.startswith("farmlib.methods.ppo:") and "policy_loss" in own and "ppo_loop" in own
    assert {"farmlib.lm.model", "farmlib.methods.reward_model", "farmlib.world.farmworld"} <= set(others)
    assert not set(others) & set(NOT_CODE), "plumbing modules must not key artifacts"
    _, sft = source_digest("farmlib.rooms.models", "ModelRoom.sft_model")
    assert "ModelRoom.train_and_save" in sft[0] and "ModelRoom.samples" not in sft[0]
    assert not any(m.startswith(("farmlib.methods", "farmlib.annotators")) for m in sft[1:]), \
        "the SFT model's key must not follow the methods' or the judges' code"


def test_data_digest_is_order_sensitive_and_stable():
    assert data_digest([{"a": 1, "b": 2}]) == data_digest([{"b": 2, "a": 1}])
    assert data_digest([1, 2]) != data_digest([2, 1])


def test_editing_ppo_changes_ppo_digest_only(scratch):
    before = digests(scratch)
    edit(scratch / "farmlib/methods/ppo.py", "torch.max(", "-torch.min(-")  # same numbers, other code
    edit(scratch / "farmlib/methods/ppo.py", "torch.max(", "-torch.min(-")
    after = digests(scratch)
    assert [k for k in before if before[k] != after[k]] == ["ppo"]


def test_editing_dpos_loss_leaves_the_judges_and_the_reward_model_alone(scratch):
    """The log-probability DPO, KTO and the backward reader share lives in ``farmlib.lm.likelihood``, so DPO's
    own loss keys DPO's artifacts and no one else's."""
    before = digests(scratch)
    edit(scratch / "farmlib/methods/dpo.py", "-F.logsigmoid(margin).mean()", "F.softplus(-margin).mean()")
    after = digests(scratch)
    assert [k for k in before if before[k] != after[k]] == ["dpo"]


def test_comments_docstrings_and_layout_change_no_digest(scratch):
    before = digests(scratch)
    fam = scratch / "farmlib/world/families.py"
    text = fam.read_text()
    first_def = text.index("\ndef ")
    fam.write_text(text[:first_def] + "\n# a comment says why, it builds nothing\n" + text[first_def:])
    edit(scratch / "farmlib/world/true_reward.py", '"""', '"""A docstring edit. ')
    edit(scratch / "farmlib/methods/dpo.py", "def train(farm, cfg: DPOConfig | None = None,",
         "def train(farm,\n          cfg: DPOConfig | None = None,")
    assert digests(scratch) == before


def test_editing_the_world_changes_every_digest(scratch):
    before = digests(scratch)
    edit(scratch / "farmlib/world/true_reward.py", "DETAIL_CAP = 40", "DETAIL_CAP = 41")
    after = digests(scratch)
    assert all(before[k] != after[k] for k in before), [k for k in before if before[k] == after[k]]


def test_editing_the_judges_changes_their_key_not_the_people(scratch):
    before = digests(scratch)
    path = scratch / "farmlib/annotators/judges.py"
    path.write_text(path.read_text() + "\n\nJUDGE_EDIT = 1\n")
    after = digests(scratch)
    changed = {k for k in before if before[k] != after[k]}
    assert "judges" in changed and not {"people", "splits", "base", "sft", "samples", "dpo", "kto"} & changed


def finished(runs: Path) -> set[str]:
    """``kind/hash`` of every finished artifact under a profile's runs folder."""
    return {p.parent.relative_to(runs).as_posix() for p in runs.glob("*/*/_DONE")}


def test_editing_ppo_rebuilds_ppo_and_what_is_built_from_it_only(tmp_path):
    """On micro: run the PPO chapter, edit ``ppo.policy_loss``, run it again: only PPO and its samples are new;
    then a comment in the world's families: nothing is new. The executed chapter goes beside the artifacts
    (``$FARM_RUNS``), not into the working directory."""
    src = tmp_path / "clone"
    for part in ("farmlib", "notebooks"):
        shutil.copytree(ROOT / part, src / part, ignore=shutil.ignore_patterns("__pycache__"))
    runs = tmp_path / "runs"
    env = {**__import__("os").environ, "FARM_RUNS": str(runs), "PYTHONPATH": str(src)}

    def run_chapter() -> set[str]:
        subprocess.run([sys.executable, "-m", "farmlib.cli", "run", "ppo", "--profile", "micro", "-p", "overrides",
                        '{"steps": 2}'], cwd=src, env=env, check=True, capture_output=True)
        return finished(runs / "micro")

    first = run_chapter()
    assert (runs / "micro" / "notebooks" / "11_ppo.ipynb").exists() and not (src / "runs").exists()
    edit(src / "farmlib/methods/ppo.py", "torch.max(-adv * ratio,", "-torch.min(adv * ratio,")
    new = run_chapter() - first
    assert {k.split("/")[0] for k in new} == {"ppo", "samples"}, sorted(new)
    for k in new:
        record = json.loads((runs / "micro" / k / "_artifact.json").read_text())
        assert k.startswith("ppo/") or record["model"].startswith("ppo/"), f"{k} is not built from PPO"
    second = first | new
    fam = src / "farmlib/world/families.py"
    fam.write_text("# a comment: it builds nothing\n" + fam.read_text())
    assert run_chapter() == second
