"""Reproducible runs: same profile, same seeds, same machine ⇒ the same artifacts, bit for bit.

Every random draw in farmlib comes from a seed in a config: ``random.Random(seed)`` objects for data
order and the simulated annotators (a string seed hashes the same in every process, whatever
``PYTHONHASHSEED``), and torch's generator, seeded where fresh weights are drawn (:func:`seeded`) and
at the start of each training loop and sampler, so that nothing depends on what ran before in the
process. :func:`deterministic_torch` (called by ``Farm``) asks torch for deterministic kernels.

On a GPU, two more things. cuBLAS is deterministic only if ``CUBLAS_WORKSPACE_CONFIG`` is ``:4096:8``
(or ``:16:8``) when it is first used: :func:`deterministic_torch` sets ``:4096:8`` unless the variable is
set already, so set it yourself if your process multiplies CUDA matrices before it makes a ``Farm``.
And the backward of the fused attention kernels (flash, memory-efficient, cuDNN) is deterministic only
in torch's strict mode, where an op with no deterministic kernel raises instead of warning. So a ``Farm``
on a CUDA profile turns strict mode on; on CPU (deterministic without it) an op with no deterministic
kernel only warns. ``FARM_DETERMINISTIC=strict`` or ``=warn`` chooses either on any device (``warn``:
when an op you need has no deterministic kernel, or to trade the last bits for speed).
Measured on an H100 with torch 2.11 (``benchmarks/gpu_paths.py``, the micro leaderboard built twice in
fresh processes): in warn mode 8 of 224 artifact files differed between the two builds (best-of-n
scores, PPO's checkpoints and history); in strict mode none did, and every method ran.

On a CPU, MKL (torch's BLAS on x86) by default splits a product across threads differently at some row counts
and sums it in another order: on the machines measured, matrices of 4 to 15 rows come out in other bits on one
thread than on two (``benchmarks/thread_invariance.py``). The sampler multiplies such matrices when a batch's last
rows decode, and ``farm book`` hands a chapter one thread or two by what else computes, so a build's samples would
depend on how its chapters overlapped. MKL's conditional numerical reproducibility fixes the order whatever the
thread count: ``MKL_CBWR=AUTO,STRICT``, read at MKL's first product. Importing farmlib sets it unless it is set
already (this module sets it too, so that every artifact's key follows the mode), so set it yourself if your
process multiplies matrices before it imports farmlib. Measured: under it, every product and decoding step gives
the same bits on one thread as on two, at no cost in time. Strict mode covers matrix products (gemm) only, not
a matrix times a vector (gemv, where torch sends ``X @ w`` for a vector ``w``): farmlib writes those as
:func:`matvec`. Torch's own parallel reductions (a sum of more than 32,768 numbers) still depend on the thread
count; no artifact's computation was found to meet one (two cold builds, one with ``farm book -j 1``). And under
strict mode a batched matrix product (bmm, einsum) gives a row other bits in a batch of 8 than alone, where the
default mode did not: code whose result must not depend on its batch (the judges' features, cached by text) sums
products instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

MKL_CBWR = "AUTO,STRICT"
os.environ.setdefault("MKL_CBWR", MKL_CBWR)


def deterministic_torch(strict: bool | None = None, device: str = "cpu") -> None:
    """Deterministic kernels where torch has them: a warning where it has none, or with ``strict`` an error.
    ``strict`` defaults to ``$FARM_DETERMINISTIC`` (``strict`` or ``warn``), else to whether ``device`` is a
    CUDA device. Strict mode, once on, stays on."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if strict is None:
        mode = os.environ.get("FARM_DETERMINISTIC", "")
        if mode not in ("", "strict", "warn"):
            raise ValueError(f"FARM_DETERMINISTIC={mode!r}: use 'strict' or 'warn' (or leave it unset)")
        strict = mode == "strict" or (not mode and device.startswith("cuda"))
    already_strict = torch.are_deterministic_algorithms_enabled() and \
        not torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=not (strict or already_strict))
    torch.backends.cudnn.benchmark = False


def matvec(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for a vector ``w``, computed as a matrix product so that it gives the same bits on any thread
    count (MKL's strict mode covers gemm, not gemv)."""
    return (x @ w.unsqueeze(-1)).squeeze(-1)


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's generators seeded by ``seed``, then restore their state: what the block
    draws (a fresh head's weights, LoRA adapters) depends on ``seed`` alone, not on what ran before."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


def rng_state() -> dict:
    """Torch's generator states (CPU and every GPU), for a checkpoint."""
    return {"cpu": torch.random.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}


def set_rng_state(state: dict) -> None:
    """Restore what :func:`rng_state` saved, so a resumed run draws what the uninterrupted one would."""
    torch.random.set_rng_state(state["cpu"])
    if state["cuda"]:
        torch.cuda.set_rng_state_all(state["cuda"])
