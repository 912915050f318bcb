"""Profiles as TOML files: a built-in base, any field overridden (nested too), checked before anything runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from farmlib.profiles import PROFILES, ProfileError, get_profile

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_file_overrides_fields_nested_ones_and_methods(tmp_path):
    p = get_profile(write(tmp_path, """
base = "small"
device = "cuda:1"
[model]
lora_r = 8
[real]
base_url = "http://localhost:8000/v1"
models = { gpt4 = "mine" }
[methods.ppo]
steps = 80
kl_coef = 1
"""))
    assert p.device == "cuda:1" and p.model.lora_r == 8 and p.model.pretrained == PROFILES["small"].model.pretrained
    assert p.real.base_url == "http://localhost:8000/v1" and p.real.models == {"gpt4": "mine"}
    assert p.real.splits == PROFILES["small"].real.splits
    assert p.methods["ppo"] == {"steps": 80, "kl_coef": 1.0} and isinstance(p.methods["ppo"]["kl_coef"], float)
    assert p.name.startswith("small-")


def test_files_that_resolve_alike_share_a_name_and_an_empty_file_is_its_base(tmp_path):
    a = get_profile(write(tmp_path, 'base = "micro"\n[methods.ppo]\nsteps = 3\n', "a.toml"))
    b = get_profile(write(tmp_path, '# the same, written otherwise\nbase = "micro"\nmethods = { ppo = { steps = 3 } }\n',
                          "b.toml"))
    assert a.name == b.name != "micro" and a == b
    assert get_profile(write(tmp_path, 'base = "micro"\n', "c.toml")).name == "micro"
    assert get_profile(write(tmp_path, 'base = "micro"\nname = "lesson"\n', "d.toml")).name == "lesson"
    assert get_profile(write(tmp_path, 'base = "micro"\nmethods.ppo.steps = 4\n', "e.toml")).methods["ppo"]["steps"] == 4


@pytest.mark.parametrize("text, message", [
    ('base = "micro"\nmodle = 3\n', "unknown field 'modle'; the fields of [profile] are: data, scale"),
    ('base = "micro"\n[model]\nhidden = 3\n', "unknown field 'model.hidden'; the fields of [model] are: pretrained"),
    ('base = "micro"\nscale = "big"\n', "scale must be float, got 'big'"),
    ('base = "micro"\n[sft]\nbatch_size = 2.5\n', "sft.batch_size must be int, got 2.5"),
    ('base = "micro"\n[model]\nload_in_4bit = 1\n', "model.load_in_4bit must be bool, got 1"),
    ('base = "micro"\ndata = "imagenet"\n', "data is 'imagenet'; choose from farmworld, alpaca_farm, alpaca_eval_805"),
    ('base = "micro"\ndevice = "tpu"\n', "device is 'tpu'; choose cpu, cuda, cuda:N or mps"),
    ('base = "huge"\n', "base is 'huge'; choose from micro, paper, real-cpu, real-micro, small, tiny"),
    ('base = "small"\n[real]\njudges = "oracle"\n', "real.judges is 'oracle'; choose from chat, loopback, lm"),
    ('base = "micro"\n[methods.ppoo]\nsteps = 3\n', "unknown method [methods.ppoo]; choose from best_of_n"),
    ('base = "micro"\n[methods.ppo]\nstep = 3\n', "unknown field 'methods.ppo.step'; the fields of [methods.ppo] are"),
    ('base = "micro"\n[methods.ppo]\nsteps = "many"\n', "methods.ppo.steps must be int, got 'many'"),
    ('base = "micro"\nscale = 0\n', "scale must be above 0, got 0"),
    ('base = "micro\n', "not valid TOML"),
])
def test_a_bad_file_is_one_line_naming_the_file_and_the_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as err:
        get_profile(path)
    line = str(err.value)
    assert line.startswith(f"{path}: ") and message in line and "\n" not in line


def test_a_missing_file_says_so(tmp_path):
    with pytest.raises(ProfileError, match="no such profile file"):
        get_profile(tmp_path / "nope.toml")


def test_the_example_files_resolve():
    files = sorted((ROOT / "examples" / "profiles").glob("*.toml"))
    assert len(files) >= 3
    for f in files:
        assert get_profile(f).name


def test_farm_takes_a_file_and_rejects_a_bad_one_in_one_line(tmp_path):
    env = {**os.environ, "FARM_RUNS": str(tmp_path / "runs")}
    bad = write(tmp_path, 'base = "micro"\n[methods.ppo]\nstep = 3\n', "bad.toml")
    for cmd in (["book", "--profile", str(bad)], ["run", "farmworld", "--profile", str(bad)]):
        r = subprocess.run([sys.executable, "-m", "farmlib.cli", *cmd], cwd=ROOT, env=env, capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "methods.ppo.step" in r.stderr
    good = write(tmp_path, 'base = "micro"\nname = "lesson"\n', "good.toml")
    subprocess.run([sys.executable, "-m", "farmlib.cli", "run", "farmworld", "--profile", str(good), "-p", "n_examples",
                    "2"], cwd=ROOT, env=env, check=True, capture_output=True)
    metrics = json.loads((tmp_path / "runs" / "lesson" / "metrics" / "farmworld.json").read_text())
    assert metrics["profile"] == "lesson" and metrics["resolved_profile"]["scale"] == PROFILES["micro"].scale
    assert (tmp_path / "runs" / "lesson" / "notebooks" / "01_farmworld.ipynb").exists()


def test_a_change_to_the_base_leaves_a_files_folder_where_it_was(tmp_path, monkeypatch):
    import dataclasses

    from farmlib import profiles

    f = write(tmp_path, 'base = "micro"\nworld_seed = 1\n', "w.toml")
    before = get_profile(f).name
    micro = profiles.PROFILES["micro"]
    monkeypatch.setitem(profiles.PROFILES, "micro", dataclasses.replace(
        micro, methods={**micro.methods, "best_of_n": {"n_max": 8}}))  # a method's default moved in the base
    after = get_profile(f)
    assert after.name == before != "micro" and after.methods["best_of_n"] == {"n_max": 8}
