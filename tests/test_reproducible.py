"""Same profile, same seed, same machine: identical artifacts, bit for bit, from fresh processes (the
tokenizer, base and SFT models among them: the micro leaderboard builds them all); and a
method's seed really changes its run."""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import ROOT, power_cut

from farmlib.artifacts import artifact_digests
from farmlib.lm import model as lm
from farmlib.lm import supervised
from farmlib.methods import policy, reward_model, reward_model_path
from farmlib.profiles import ModelConfig, TrainConfig

# -- the whole leaderboard -------------------------------------------------------------------------
_LEADERBOARD = """
import json, sys
from farmlib import Farm
from farmlib.evaluation.leaderboard import leaderboard_of_methods
from farmlib.methods import BASELINES, METHODS
names = BASELINES + METHODS
board = leaderboard_of_methods(Farm("micro"), names[::-1] if sys.argv[1] == "reversed" else names)
print(json.dumps(board.drop(columns=["train_seconds", "paper_row", "paper_sim", "paper_human"]).to_dict("records")))
"""
#: Every kind of artifact the leaderboard builds.
KINDS = {"splits", "tokenizer", "base", "sft", "samples", "preferences", "backward_reader", "reward_model", "feedme",
         "reward_conditioning", "dpo", "kto", "best_of_n", "expert_iteration", "ppo", "quark", "judge_lm", "judge_head",
         "judge_calibration"}


def test_micro_leaderboard_is_bit_identical_across_processes(tmp_path):
    """Two fresh processes with different PYTHONHASHSEED, separate runs folders, one and two threads (``farm book``
    gives a chapter one or two by how the chapters overlap), and the methods built in opposite orders (so that
    nothing may depend on what ran before): every artifact of every method and baseline, and the leaderboard's
    numbers, are identical. The processes run one after the other: side by side, two PyTorch processes of two threads
    each on two cores took 120 s in CI, against 18 s for one alone."""
    t0, boards = time.time(), []
    for k, order in enumerate(("forward", "reversed")):
        env = {**os.environ, "FARM_RUNS": str(tmp_path / f"runs{k}"), "PYTHONHASHSEED": str(k + 1),
               "OMP_NUM_THREADS": str(k + 1), "MKL_NUM_THREADS": str(k + 1)}
        proc = subprocess.run([sys.executable, "-c", _LEADERBOARD, order], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=1800)
        assert proc.returncode == 0, proc.stderr[-3000:]
        rows = json.loads(proc.stdout.strip().splitlines()[-1])
        boards.append({r["method"]: r for r in rows})
    print(f"two micro leaderboards, one after the other, in {time.time() - t0:.0f} s")
    assert boards[0] == boards[1]
    assert all(r["win_rate_p_sim_eval"] == r["win_rate_p_sim_eval"] for r in boards[0].values())  # numbers, not NaN
    gaps = [r["se_gap_p_sim_eval"] for r in boards[0].values()]  # the judges' level against the people's, paired
    assert all(0 <= se < 50 for se in gaps) and any(se > 0 for se in gaps)
    a, b = (artifact_digests(tmp_path / f"runs{k}" / "micro") for k in range(2))
    assert {Path(k).parts[0] for k in a} == KINDS
    assert sorted(a) == sorted(b), "the two runs built different artifacts (different config keys)"
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, f"{len(differ)} files differ between two fresh builds: {differ[:10]}"


# -- a seed is used, and only the seed ------------------------------------------------------------
@pytest.mark.parametrize("name", ["reward_model", "dpo", "kto"])
def test_a_method_seed_changes_its_run(micro_farm, name):
    """Seeds 0 and 1 of a method give two artifacts with different weights."""
    weights = []
    for seed in (0, 1):
        cfg = micro_farm.method_config(name, {"epochs": 1, "seed": seed})
        path = reward_model_path(micro_farm, cfg) if name == "reward_model" else policy(micro_farm, name, cfg)[0]
        weights.append(hashlib.sha256((Path(path) / "model.safetensors").read_bytes()).hexdigest())
    assert weights[0] != weights[1], f"{name}: seed 1 trained the same weights as seed 0"


def test_fresh_weights_do_not_depend_on_the_global_generator(micro_farm):
    """A reward model's new head and LoRA adapters are drawn from their own seed, whatever ran before."""
    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    heads, adapters = [], []
    for state in (1, 2):
        torch.manual_seed(state)
        heads.append(reward_model.new_reward_model(sft, tok).score.weight)
        torch.manual_seed(state)
        peft = lm.with_lora(lm.load_model(sft), 2)
        adapters.append(torch.cat([p.flatten() for n, p in peft.named_parameters() if "lora_A" in n]))
    assert torch.equal(*heads) and torch.equal(*adapters)
    other = reward_model.new_reward_model(sft, tok, seed=1).score.weight
    assert not torch.equal(heads[0], other)


def test_resumed_training_equals_uninterrupted(tmp_path, monkeypatch):
    """LoRA training (with dropout) interrupted after a checkpoint and resumed ends with the same weights
    as the run that was never interrupted: the checkpoint carries the generator's state."""
    docs = [f"the goat number {i} eats grass" for i in range(64)]
    tok = lm.train_tokenizer(docs, 300)
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, save_every=3)
    mcfg = ModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32)
    pairs = [("", d) for d in docs]

    def fresh():
        return lm.with_lora(lm.new_model(mcfg, tok), 4, dropout=0.3)

    whole = fresh()
    supervised.train_lm(whole, tok, pairs, cfg)
    restore = power_cut(monkeypatch)
    with pytest.raises(RuntimeError):
        supervised.train_lm(fresh(), tok, pairs, cfg, tmp_path)
    restore()
    torch.manual_seed(123)  # whatever the process did meanwhile
    resumed = fresh()
    supervised.train_lm(resumed, tok, pairs, cfg, tmp_path)
    for (n, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), n


def test_farm_asks_torch_for_deterministic_kernels(monkeypatch, tmp_path):
    """On CPU warnings by default, strict mode with FARM_DETERMINISTIC=strict or on a CUDA profile (making
    the Farm touches no GPU), and a later Farm keeps strict mode; FARM_DETERMINISTIC=warn opts a CUDA profile out."""
    from farmlib import Farm

    monkeypatch.delenv("FARM_DETERMINISTIC", raising=False)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)

    def warn_only() -> bool:
        return torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()

    try:
        torch.use_deterministic_algorithms(False)
        Farm("micro", root=tmp_path)
        assert warn_only()
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        monkeypatch.setenv("FARM_DETERMINISTIC", "warn")
        Farm("micro", root=tmp_path, device="cuda")
        assert warn_only()
        monkeypatch.delenv("FARM_DETERMINISTIC")
        Farm("micro", root=tmp_path, device="cuda")
        assert torch.are_deterministic_algorithms_enabled() and not warn_only()
        Farm("micro", root=tmp_path)
        assert not warn_only()
        torch.use_deterministic_algorithms(False)
        monkeypatch.setenv("FARM_DETERMINISTIC", "strict")
        Farm("micro", root=tmp_path)
        assert torch.are_deterministic_algorithms_enabled() and not warn_only()
        monkeypatch.setenv("FARM_DETERMINISTIC", "yes")
        with pytest.raises(ValueError, match="FARM_DETERMINISTIC"):
            Farm("micro", root=tmp_path)
    finally:
        torch.use_deterministic_algorithms(True, warn_only=True)


_THREADS = """
import json, torch
import farmlib  # noqa: F401 - importing it sets MKL's arithmetic mode, before the first product
differ = []
for k, n in [(128, 384), (384, 128), (128, 2048)]:
    g = torch.Generator().manual_seed(k + n)
    for m in range(1, 17):
        x, w = torch.randn(m, 1, k, generator=g), torch.randn(n, k, generator=g)
        got = []
        for th in (1, 2):
            torch.set_num_threads(th)
            got.append(x @ w.T)
        differ += [] if torch.equal(*got) else [f"{k}x{n}, {m} rows"]
from farmlib.seeding import matvec
g = torch.Generator().manual_seed(0)
X, w = torch.randn(3193, 1050, generator=g), torch.randn(1050, generator=g)  # a judge head's fit
got = []
for th in (1, 2):
    torch.set_num_threads(th)
    got.append(matvec(X, w))
differ += [] if torch.equal(*got) else ["matvec 3193x1050"]
print(json.dumps(differ))
"""


def test_a_farm_multiplies_with_the_same_bits_on_one_thread_as_on_two():
    """The tiny model's product shapes at 1-16 rows (where MKL's default mode splits work by thread count:
    benchmarks/thread_invariance.py) and the matrix-vector product a judge head is fit with (``matvec``: gemv is
    not covered by MKL's strict mode), in a fresh process that imports farmlib with MKL_CBWR unset; and a mode set
    by the user is kept."""
    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    done = subprocess.run([sys.executable, "-c", _THREADS], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    env["MKL_CBWR"] = "COMPATIBLE"
    done = subprocess.run([sys.executable, "-c", "import os, farmlib; print(os.environ['MKL_CBWR'])"], env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "COMPATIBLE"


_BATCHES = """
import json, torch
from farmlib.methods import reward_model as R
seen = []
R._forward = lambda model, tok, texts, max_length: seen.append(list(texts)) or torch.zeros(len(texts))
class Tok:
    eos_token = "</s>"
recs = [{"instruction": f"Task {i:03d}", "input": "", "output": f"answer {i % 10}"} for i in range(300)]  # equal lengths
R.rewards(None, Tok(), recs, batch_size=16)
print(json.dumps(seen))
"""


def test_reward_model_batches_do_not_depend_on_the_hash_seed():
    """``rewards`` batches texts of similar length; among texts of equal length the order must come from the
    texts, not from a set's iteration order (which PYTHONHASHSEED changes): a batch's composition changes
    its scores in the last bits (two tiny builds once differed in 2,038 of 8,192 best-of-n scores)."""
    outs = []
    for seed in ("1", "2", "3"):
        proc = subprocess.run([sys.executable, "-c", _BATCHES], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert sum(map(len, outs[0])) == 300 and outs[0] == outs[1] == outs[2]
