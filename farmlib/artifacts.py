"""Artifacts on disk, keyed by the hash of the config that made them.

``runs/<profile>/<kind>/<hash>/`` holds one finished artifact and its ``_artifact.json`` (the config that made it). A build
works in ``<hash>.partial/`` (where a trainer may leave checkpoints to resume from) and is
renamed into place only when complete, so an interrupted build never looks finished and a
rerun picks up where it stopped. A file lock keeps two processes from building the same thing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: Bump when a change to farmlib changes what an artifact contains.
ARTIFACT_VERSION = 1


def config_hash(config: dict) -> str:
    """A short stable hash of a JSON-able config."""
    blob = json.dumps({"v": ARTIFACT_VERSION, **config}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def runs_root() -> Path:
    """Where artifacts live: ``$FARM_RUNS`` or ``./runs``."""
    return Path(os.environ.get("FARM_RUNS", "runs"))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class ArtifactStore:
    """Get-or-build of artifacts for one profile."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, kind: str, config: dict) -> Path:
        return self.root / kind / config_hash(config)

    def exists(self, kind: str, config: dict) -> bool:
        return (self.path(kind, config) / "_DONE").exists()

    def get_or_build(self, kind: str, config: dict, build: Callable[[Path], None]) -> Path:
        """Return the artifact's folder, calling ``build(workdir)`` first if it is missing."""
        final = self.path(kind, config)
        if (final / "_DONE").exists():
            return final
        with _locked(final.with_name(final.name + ".lock")):
            if (final / "_DONE").exists():  # built by another process meanwhile
                return final
            work = final.with_name(final.name + ".partial")
            work.mkdir(parents=True, exist_ok=True)
            build(work)
            (work / "_artifact.json").write_text(json.dumps(config, indent=2, sort_keys=True, default=str))
            (work / "_DONE").write_text("")
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
        return final


def write_json(path: str | Path, obj) -> None:
    """Write JSON atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, path)


def read_json(path: str | Path):
    return json.loads(Path(path).read_text())
