"""Progress bars for long work that reach the terminal, not the rendered book.

Inside a chapter executed by ``farm book``/``farm run``, ``$FARM_PROGRESS`` names a file: bars are
written there and the ``farm`` process shows the latest one on its status line. Run any other way
(a script, Jupyter), they are ordinary ``tqdm.auto`` bars.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable

from tqdm.auto import tqdm as _auto_tqdm
from tqdm.std import tqdm as _std_tqdm

ENV = "FARM_PROGRESS"
#: Set by ``farm book`` when chapters run side by side: a file holding how many threads this chapter may use
#: now (all the cores while it is the only chapter computing, its share while others compute too).
THREADS_ENV = "FARM_THREADS"
_stream = None
_threads_checked = [0.0]
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # cursor moves of nested bars


def _file():
    global _stream
    path = os.environ.get(ENV)
    if not path:
        return None
    if _stream is None or _stream.name != path:
        _stream = open(path, "a", buffering=1)  # noqa: SIM115 - kept open for the kernel's life
    return _stream


def follow_threads(every: float = 1.0) -> None:
    """Set torch's thread count to what ``farm book`` hands this chapter (``$FARM_THREADS``), at most once
    every ``every`` seconds. Results do not depend on it: importing farmlib puts MKL in its thread-invariant mode
    (:mod:`farmlib.seeding`), without which the sampler's decoding steps of 4 to 15 rows give other bits on 1 thread
    than on 2."""
    path = os.environ.get(THREADS_ENV)
    now = time.time()
    if not path or now - _threads_checked[0] < every:
        return
    _threads_checked[0] = now
    try:
        n = int(open(path).read())
    except (OSError, ValueError):
        return
    import torch

    if n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)


def _following(iterable: Iterable):
    for item in iterable:
        follow_threads()
        yield item


def progress(iterable: Iterable | None = None, **kwargs):
    """``tqdm(iterable, **kwargs)``, shown on ``farm``'s status line when run by ``farm`` (where chapters run
    side by side, each step also takes up the thread count ``farm book`` hands out: :func:`follow_threads`)."""
    f = _file()
    kwargs.setdefault("leave", False)
    if iterable is not None and os.environ.get(THREADS_ENV):
        if hasattr(iterable, "__len__"):
            kwargs.setdefault("total", len(iterable))
        iterable = _following(iterable)
    if f is None:
        return _auto_tqdm(iterable, **kwargs)
    kwargs.setdefault("mininterval", 0.5)
    kwargs.pop("file", None)
    known = kwargs.get("total") is not None or hasattr(iterable, "__len__")
    if known:  # a short bar for one status line: "ppo 25% 10/40 [00:12<00:36]"
        kwargs.setdefault("bar_format", "{desc} {percentage:.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}]")
    return _std_tqdm(iterable, file=f, **kwargs)


def latest(path: str | os.PathLike, max_bytes: int = 4096) -> str:
    """The last non-empty bar state written to a progress file ("" if none)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - max_bytes))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    parts = [p for p in _ANSI.sub("", tail).replace("\r", "\n").split("\n") if p]
    return parts[-1].strip() if parts else ""  # a closed bar ends with a blank line: ""
