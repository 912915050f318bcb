"""The data manifest (``data/manifest.json``): fetch the files it lists and check a local copy against it.

Each file of the manifest has its dataset, where it comes from (``source``: ``hf`` for a hub dataset
repository, ``github``, or ``unknown``), its ``repo``, ``revision`` and ``path`` there, its place
``local`` under a data folder, and its ``bytes``, ``sha256`` and number of ``records`` where known
(``null``: unknown until the first fetch). The data cards (``data/*.md``) say the rest.

A data folder holds each file at ``DIR/<local>``; the AlpacaFarm splits are then under
``DIR/alpaca_farm`` with the hub's layout, which is what ``load_alpaca_farm(split, folder=DIR/"alpaca_farm")``
reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[1] / "data" / "manifest.json"


def default_dir() -> Path:
    """``$FARM_DATA``, else ``~/.cache/farmlib/data``."""
    return Path(os.environ.get("FARM_DATA") or Path.home() / ".cache" / "farmlib" / "data")


def load_manifest(path: str | Path = MANIFEST) -> dict:
    return json.loads(Path(path).read_text())


def select(manifest: dict, datasets: list[str] | None = None) -> list[dict]:
    """The manifest's file entries of ``datasets`` (all when None); an unknown name raises ValueError."""
    known = list(manifest["datasets"])
    for d in datasets or []:
        if d not in known:
            raise ValueError(f"unknown dataset {d!r}; choose from {', '.join(known)}")
    return [f for f in manifest["files"] if datasets is None or f["dataset"] in datasets]


def facts(path: str | Path) -> dict:
    """``bytes``, ``sha256`` and ``records`` (the length of its JSON list, else None) of a file."""
    data = Path(path).read_bytes()
    try:
        parsed = json.loads(data)
        records = len(parsed) if isinstance(parsed, list) else None
    except ValueError:
        records = None
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "records": records}


def fingerprint(records: list[dict]) -> str:
    """SHA-256 of generated records (FarmWorld's splits), as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def farmworld_fingerprints(profile: str) -> dict[str, dict]:
    """``{split: {"records": n, "sha256": fingerprint}}`` of a FarmWorld profile's splits, generated now."""
    from farmlib.profiles import get_profile
    from farmlib.world import FarmWorld, make_splits

    p = get_profile(profile)
    splits = make_splits(FarmWorld(p.world_seed), p.split_sizes(), seed=p.world_seed)
    return {s: {"records": len(r), "sha256": fingerprint(r)} for s, r in splits.items()}


@dataclass
class Result:
    """One file's verdict: ``ok``, ``unverified`` (present, but the manifest has no checksum for it),
    ``mismatch`` (``detail`` names the fields) or ``missing``."""

    entry: dict
    status: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.status:10} {self.entry['local']}" + (f": {self.detail}" if self.detail else "")


def where_from(entry: dict) -> str:
    """Where a file comes from, in words."""
    if entry["source"] == "hf":
        return f"the hub dataset {entry['repo']} at revision {entry['revision']}, file {entry['path']}"
    if entry["source"] == "github" and entry["path"]:
        return f"https://github.com/{entry['repo']}/blob/{entry['revision']}/{entry['path']}"
    if entry["source"] == "github":
        return f"the GitHub repository {entry['repo']} ({entry.get('note', '')})"
    return "a source not established (see its data card)"


def check_file(entry: dict, folder: str | Path) -> Result:
    """Compare ``folder/<local>`` with the manifest: size, SHA-256 and number of records."""
    path = Path(folder) / entry["local"]
    if not path.is_file():
        how = f"`farm data fetch --dir {folder}` downloads it" if entry["source"] == "hf" else "put it there by hand"
        return Result(entry, "missing", f"not found at {path}; it comes from {where_from(entry)}; {how}")
    got = facts(path)
    bad = [f"{k} is {got[k]}, the manifest says {entry[k]}" for k in ("bytes", "sha256", "records")
           if entry.get(k) is not None and got[k] != entry[k]]
    if bad:
        return Result(entry, "mismatch", "; ".join(bad))
    if entry.get("sha256") is None:
        return Result(entry, "unverified", f"no checksum in the manifest yet; this copy has sha256 {got['sha256']}, "
                                           f"{got['bytes']} bytes, {got['records']} records")
    return Result(entry, "ok")


def check(folder: str | Path, datasets: list[str] | None = None, manifest: dict | None = None) -> list[Result]:
    """Every selected file of the manifest, checked under ``folder``."""
    manifest = manifest or load_manifest()
    return [check_file(e, folder) for e in select(manifest, datasets)]


def _download(entry: dict) -> tuple[Path, str | None]:
    """Download an ``hf`` file into the hub cache: (its path, the resolved commit where the path shows it).
    The hub library's retry warnings are silenced: a failure is reported once, by :func:`fetch`."""
    import logging

    from huggingface_hub import hf_hub_download

    log = logging.getLogger("huggingface_hub")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        got = Path(hf_hub_download(entry["repo"], entry["path"], repo_type="dataset", revision=entry["revision"]))
    finally:
        log.setLevel(level)
    parts = got.parts
    commit = parts[parts.index("snapshots") + 1] if "snapshots" in parts else None
    return got, commit


def _answered(error: Exception) -> bool:
    """Whether the hub answered (a wrong revision or path: other files may still come) rather than
    being out of reach (then the next files are not tried)."""
    try:
        from huggingface_hub.errors import HfHubHTTPError
    except ImportError:  # older huggingface_hub
        from huggingface_hub.utils import HfHubHTTPError
    return isinstance(error, HfHubHTTPError)


def _reason(error: Exception) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else 'no message'}"


def fetch(folder: str | Path, datasets: list[str] | None = None, manifest: dict | None = None) -> list[Result]:
    """Download every ``hf`` file of ``datasets`` (default: the datasets that have such files) not already
    good in ``folder``, then check it.

    A file that cannot be downloaded (offline, a wrong revision) is ``missing`` with a detail saying
    what failed, where the file comes from and how to get it by hand; once the hub is out of reach the
    remaining files are not tried. Files from other sources are not downloaded: those missing get the
    same how-to. Each download is logged, with the commit it resolved to and the file's size, SHA-256
    and records (to pin in the manifest where it has none), in ``folder/fetched.json``.
    """
    manifest = manifest or load_manifest()
    folder = Path(folder)
    if datasets is None:  # those with files to download
        datasets = list(dict.fromkeys(f["dataset"] for f in manifest["files"] if f["source"] == "hf"))
    results, fetched, unreachable = [], [], None
    for entry in select(manifest, datasets):
        res = check_file(entry, folder)
        if res.status in ("ok", "unverified") or entry["source"] != "hf":
            if res.status == "missing":
                res.detail = _how_to(entry, folder, "it is not downloaded automatically")
            results.append(res)
            continue
        if unreachable:
            results.append(Result(entry, "missing", _how_to(entry, folder, f"not tried: the hub was out of reach "
                                                                          f"({unreachable})")))
            continue
        try:
            src, commit = _download(entry)
        except Exception as e:  # offline, refused, not found: say what, where from, and how to get it
            if not _answered(e):
                unreachable = _reason(e)
            results.append(Result(entry, "missing", _how_to(entry, folder, f"the download failed ({_reason(e)})")))
            continue
        dest = folder / entry["local"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        results.append(check_file(entry, folder))
        fetched.append({"local": entry["local"], "repo": entry["repo"], "path": entry["path"],
                        "revision": entry["revision"], "commit": commit, **facts(dest)})
    if fetched:
        log = folder / "fetched.json"
        old = json.loads(log.read_text()) if log.exists() else []
        done = {f["local"] for f in fetched}
        log.write_text(json.dumps([r for r in old if r["local"] not in done] + fetched, indent=1) + "\n")
    return results


def _how_to(entry: dict, folder: Path, why: str) -> str:
    return (f"{why}; it comes from {where_from(entry)}. To get it by hand, put the file at "
            f"{folder / entry['local']}, then run `farm data check --dir {folder}`")
