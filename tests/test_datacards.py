"""The data manifest and `farm data fetch/check`: offline and fast, on the real files beside the project."""

import json
import shutil

import huggingface_hub
import pytest
from conftest import ROOT

from farmlib import cli, data, datacards

MANIFEST = datacards.load_manifest()


def test_the_manifest_matches_the_loaders_and_the_cards():
    hub = [f for f in MANIFEST["files"] if f["dataset"] == "alpaca_farm"]
    assert {f["path"] for f in hub} == set(data.SPLIT_FILES.values())
    assert all(f["repo"] == data.HF_DATASET and f["revision"] == data.HF_REVISION and f["source"] == "hf"
               and f["local"] == f"alpaca_farm/{f['path']}" for f in hub)
    for name, d in MANIFEST["datasets"].items():
        assert (ROOT / d["card"]).exists(), name
        assert d["licence"]
    assert {f["dataset"] for f in MANIFEST["files"]} <= set(MANIFEST["datasets"])
    for f in MANIFEST["files"]:  # a checksum is either known with its size, or both unknown
        assert (f["sha256"] is None) == (f["bytes"] is None), f["local"]
        assert f["sha256"] is None or len(f["sha256"]) == 64


def _local_copy(shared, folder, datasets):
    """``folder`` laid out as the manifest says, its files links to the real files (one copied: the smallest)."""
    entries = [f for f in MANIFEST["files"] if f["dataset"] in datasets]
    for f in entries:
        dest = folder / f["local"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(shared / f["local"])
    return entries


def test_check_a_folder_built_from_the_real_files(shared, tmp_path, capsys):
    entries = _local_copy(shared, tmp_path, ["alpaca_eval", "alpaca_farm_examples"])
    results = datacards.check(tmp_path, ["alpaca_eval", "alpaca_farm_examples"])
    assert len(results) == len(entries) > 30 and {r.status for r in results} == {"ok"}
    rc = cli.main(["data", "check", "--dir", str(tmp_path), "--dataset", "alpaca_eval",
                   "--dataset", "alpaca_farm_examples"])
    out = capsys.readouterr()
    assert rc == 0 and out.err == "" and f"{len(entries)} ok" in out.out


def test_a_corrupted_file_is_a_mismatch_naming_the_file_and_the_field(shared, tmp_path, capsys):
    _local_copy(shared, tmp_path, ["alpaca_farm_examples"])
    bad = tmp_path / "alpaca_farm" / "outputs_pairs.json"
    recs = json.loads(bad.read_text())
    bad.unlink()
    bad.write_text(json.dumps(recs[:-1], indent=2))  # a record lost
    rc = cli.main(["data", "check", "--dir", str(tmp_path), "--dataset", "alpaca_farm_examples"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1
    assert err[0].startswith("mismatch   alpaca_farm/outputs_pairs.json: bytes is ")
    assert "sha256 is " in err[0] and f"records is {len(recs) - 1}, the manifest says {len(recs)}" in err[0]

    shutil.copyfile(shared / "alpaca_farm" / "outputs_pairs.json", bad.with_name("x"))
    bad.unlink()
    bad.with_name("x").rename(bad)
    with bad.open("r+b") as fh:  # same size, one byte changed
        fh.seek(10)
        byte = fh.read(1)
        fh.seek(10)
        fh.write(b"X" if byte != b"X" else b"Y")
    (r,) = [r for r in datacards.check(tmp_path, ["alpaca_farm_examples"]) if r.status != "ok"]
    assert r.entry["local"] == "alpaca_farm/outputs_pairs.json" and r.detail.startswith("sha256 is ")


def test_fetch_without_network_says_what_is_missing_and_how_to_get_it(tmp_path, monkeypatch, capsys):
    calls = []

    def offline(*args, **kw):
        calls.append(args)
        raise huggingface_hub.errors.LocalEntryNotFoundError("cannot reach the hub; check your connection")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    rc = cli.main(["data", "fetch", "--dir", str(tmp_path)])
    out = capsys.readouterr()
    assert rc == 1 and "Traceback" not in out.err + out.out
    lines = out.err.strip().splitlines()
    assert len(lines) == len(data.SPLIT_FILES) and len(calls) == 1  # out of reach: tried once
    for line, path in zip(lines, data.SPLIT_FILES.values()):
        assert line.startswith(f"missing    alpaca_farm/{path}: ")
        assert f"tatsu-lab/alpaca_farm at revision {data.HF_REVISION}, file {path}" in line
        assert f"put the file at {tmp_path / 'alpaca_farm' / path}, then run `farm data check --dir {tmp_path}`" in line
    assert "LocalEntryNotFoundError: cannot reach the hub" in lines[0] and "not tried" in lines[1]
    assert f"farm data fetch {tmp_path}: {len(lines)} missing" in out.out


def test_fetch_copies_verifies_and_logs_what_it_downloaded(shared, tmp_path, monkeypatch):
    """With a stand-in hub (the real AlpacaFarm evaluation outputs as every split's file), fetch puts the
    files in the hub's layout, logs their commit and checksums, and ``load_alpaca_farm(folder=)`` reads them."""
    commit = "0" * 40
    snap = tmp_path / "hub" / "snapshots" / commit

    def download(repo_id, filename, repo_type=None, revision=None, **kw):
        assert (repo_id, repo_type, revision) == (data.HF_DATASET, "dataset", data.HF_REVISION)
        (snap / filename).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / "alpaca_farm" / "outputs_sft.json", snap / filename)
        return str(snap / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    folder = tmp_path / "data"
    results = datacards.fetch(folder)
    assert [r.status for r in results] == ["unverified"] * 5  # the manifest has no checksum for them yet
    log = json.loads((folder / "fetched.json").read_text())
    assert [r["commit"] for r in log] == [commit] * 5
    assert log[0]["sha256"] == MANIFEST["files"][5]["sha256"] and log[0]["records"] == 252  # outputs_sft.json
    assert len(data.load_alpaca_farm("sft", folder=folder / "alpaca_farm")) == 252
    # a second fetch finds them in place and downloads nothing
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", None)
    assert [r.status for r in datacards.fetch(folder)] == ["unverified"] * 5


def test_unknown_dataset_is_one_line_and_exit_2(capsys):
    assert cli.main(["data", "check", "--dataset", "nosuch"]) == 2
    assert capsys.readouterr().err.strip() == ("farm data: unknown dataset 'nosuch'; choose from "
                                               "alpaca_farm, alpaca_farm_examples, alpaca_eval, farmworld")


def test_the_cards_show_the_manifests_checksums():
    for f in MANIFEST["files"]:
        card = (ROOT / MANIFEST["datasets"][f["dataset"]]["card"]).read_text()
        assert (f["sha256"] or "checksum unknown until first fetch") in card, f["local"]
    card = (ROOT / "data" / "farmworld.md").read_text()
    for splits in MANIFEST["datasets"]["farmworld"]["fingerprints"].values():
        assert all(v["sha256"] in card for v in splits.values())


@pytest.mark.parametrize("profile", ["micro", "tiny"])
def test_farmworld_regenerates_to_its_fingerprints(profile):
    """FarmWorld is generated, not downloaded: its splits, made again from the seed, are the same records."""
    assert datacards.farmworld_fingerprints(profile) == MANIFEST["datasets"]["farmworld"]["fingerprints"][profile]
