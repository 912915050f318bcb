"""Artifacts on disk, keyed by the hash of the config and the code that made them.

``runs/<profile>/<kind>/<hash>/`` holds one finished artifact, its ``_artifact.json`` (the config
that made it, with the digest of the farmlib source its builder can run and the modules that digest covers:
:mod:`farmlib.provenance`) and ``_files.json`` (each file's size and SHA-256). A build works in
``<hash>.partial/`` (where a trainer may leave checkpoints to resume from) and is renamed into
place only when complete, so an interrupted build never looks finished and a rerun picks up where
it stopped. A file lock keeps two processes from building the same thing. An artifact is checked
against ``_files.json`` when it is handed out; a damaged one is moved aside (nothing is deleted)
and built again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: Files above this size are checked by size only (hashing a 7B model at every hand-out is slow).
HASH_LIMIT = 256 * 2**20
MANIFEST = "_files.json"


def config_hash(config: dict) -> str:
    """A short stable hash of a JSON-able config."""
    blob = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def keyed_by_code(config: dict, build: Callable) -> dict:
    """``config`` with ``code``: the digest of the farmlib source ``build`` can run."""
    from farmlib.provenance import code_digest

    return {**config, "code": code_digest(build)[0]}


def runs_root() -> Path:
    """Where artifacts live: ``$FARM_RUNS`` or ``./runs``."""
    return Path(os.environ.get("FARM_RUNS", "runs"))


#: A file to which a process appends the name of each artifact it builds (``farm book`` sets it per chapter: a
#: chapter's time is a cold one when it built something, :mod:`farmlib.course`).
BUILT_LOG_ENV = "FARM_BUILT_LOG"

#: A file a process creates while it waits for another process's artifact (``farm book`` sets it per chapter:
#: a waiting chapter does not count as computing, so another chapter may start meanwhile).
WAITING_ENV = "FARM_WAITING"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process builds it: wait, saying so
            mark = Path(os.environ[WAITING_ENV]) if os.environ.get(WAITING_ENV) else None
            if mark:
                mark.write_text(f"{path.parent.name}/{path.name.removesuffix('.lock')}")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX)
            finally:
                if mark:
                    mark.unlink(missing_ok=True)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(folder: Path) -> dict[str, dict]:
    """``{relative path: {"size", "sha256"}}`` of every file in an artifact folder."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel not in (MANIFEST, "_DONE"):
            size = p.stat().st_size
            out[rel] = {"size": size, "sha256": _sha256(p) if size <= HASH_LIMIT else None}
    return out


def damage(folder: Path) -> str | None:
    """Why ``folder`` no longer matches its manifest (None: intact, or written before manifests)."""
    try:
        files = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return f"{MANIFEST} unreadable ({e})"
    for rel, want in files.items():
        p = folder / rel
        if not p.is_file():
            return f"{rel} is missing"
        size = p.stat().st_size
        if size != want["size"]:
            return f"{rel} has {size} bytes, {want['size']} were written"
        if want.get("sha256") and _sha256(p) != want["sha256"]:
            return f"{rel} does not match its SHA-256"
    return None


class ArtifactStore:
    """Get-or-build of artifacts for one profile."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._verified: set[Path] = set()  # checked once per process

    def path(self, kind: str, config: dict, build: Callable[[Path], None]) -> Path:
        """Where the artifact ``build`` makes from ``config`` lives (built or not)."""
        return self.root / kind / config_hash(keyed_by_code(config, build))

    def exists(self, kind: str, config: dict, build: Callable[[Path], None]) -> bool:
        return (self.path(kind, config, build) / "_DONE").exists()

    def get_or_build(self, kind: str, config: dict, build: Callable[[Path], None]) -> Path:
        """Return the artifact's folder, calling ``build(workdir)`` first if it is missing. The key is
        ``config`` and the digest of the code ``build`` can run (:func:`farmlib.provenance.code_digest`): an
        edit to that code builds the artifact anew, beside the old one."""
        config = keyed_by_code(config, build)
        final = self.root / kind / config_hash(config)
        if (final / "_DONE").exists() and self._intact(final, repair=False):
            return final
        with _locked(final.with_name(final.name + ".lock")):
            if (final / "_DONE").exists() and self._intact(final, repair=True):  # built by another process meanwhile
                return final
            work = final.with_name(final.name + ".partial")
            work.mkdir(parents=True, exist_ok=True)
            build(work)
            from farmlib.provenance import code_digest

            record = {**config, "code_modules": list(code_digest(build)[1])}  # what the digest covers (not keyed)
            (work / "_artifact.json").write_text(json.dumps(record, indent=2, sort_keys=True, default=str))
            write_json(work / MANIFEST, manifest(work))
            (work / "_DONE").write_text("")
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
            self._verified.add(final)
            if os.environ.get(BUILT_LOG_ENV):
                with open(os.environ[BUILT_LOG_ENV], "a") as fh:
                    fh.write(f"{kind}/{final.name}\n")
        return final

    def _intact(self, final: Path, repair: bool) -> bool:
        """Check a finished artifact against its manifest; with ``repair`` (under the lock) move a
        damaged one aside, kept for inspection, so that the caller builds it again."""
        if final in self._verified:
            return True
        why = damage(final)
        if why is None:
            self._verified.add(final)
            return True
        if not repair:
            return False
        aside = final.with_name(f"{final.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        os.replace(final, aside)
        print(f"artifact {final} is damaged ({why}); moved to {aside.name} and building it again",
              file=sys.stderr, flush=True)
        return False


def write_json(path: str | Path, obj) -> None:
    """Write JSON atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # per process: two writers never share it
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, path)


def read_json(path: str | Path):
    return json.loads(Path(path).read_text())


def read_artifact(path: str | Path, name: str = "history.json"):
    """A JSON file of an artifact folder: a trainer's ``history.json``, ``train_info.json``, ``held_out.json``."""
    return read_json(Path(path) / name)


#: Keys of the JSON files that hold wall-clock times (train_info.json, info.json, history.json, metrics.json).
TIMING = {"seconds", "steps_per_second", "lm_seconds", "data_seconds", "read_seconds"}


def _without_timing(obj):
    if isinstance(obj, dict):
        return {k: _without_timing(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [_without_timing(v) for v in obj]
    return obj


def artifact_digests(root: str | Path) -> dict[str, str]:
    """SHA-256 of every file of every finished artifact under ``root`` (``kind/hash/file``), to compare two
    builds bit for bit: JSON files are hashed without their wall-clock times (:data:`TIMING`), and
    ``_files.json`` (which hashes them with) is left out."""
    root = Path(root)
    out = {}
    for p in sorted(root.glob("*/*/**/*")):
        rel = p.relative_to(root)
        if not p.is_file() or p.name in (MANIFEST, "_DONE") or rel.parts[1].endswith((".lock", ".partial")):
            continue
        data = p.read_bytes()
        if p.suffix == ".json":
            data = json.dumps(_without_timing(json.loads(data)), sort_keys=True).encode()
        out[rel.as_posix()] = hashlib.sha256(data).hexdigest()
    return out
