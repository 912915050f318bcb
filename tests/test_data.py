import json

import pytest

from farmlib.data import DataFormatError, load_alpaca_farm, load_model_outputs, load_records, paired
from farmlib.profiles import PAPER_SPLITS, get_profile
from farmlib.world import FarmWorld, make_splits


def test_split_sizes_follow_the_paper_at_scale():
    sizes = get_profile("tiny").split_sizes()
    for s in ("sft", "preference", "unlabeled", "val"):
        assert sizes[s] == round(PAPER_SPLITS[s] * 0.2)
    assert get_profile("paper").split_sizes() == PAPER_SPLITS


def test_splits_hold_out_eval_are_deterministic_and_sized():
    sizes = {"sft": 300, "preference": 300, "unlabeled": 500, "val": 60, "eval": 80}
    a = make_splits(FarmWorld(0), sizes)
    assert {k: len(v) for k, v in a.items()} == sizes
    held = {(r["instruction"], r["input"]) for r in a["eval"]}
    assert len(held) == sizes["eval"]  # eval's instructions are distinct...
    assert not held & {(r["instruction"], r["input"]) for s in a if s != "eval" for r in a[s]}  # ...and its own
    assert a == make_splits(FarmWorld(0), sizes)
    assert all(r["output"] for s in ("sft", "preference", "unlabeled", "val") for r in a[s])
    assert all("output" not in r for r in a["eval"])
    # eval is drawn first: it does not change when the training splits grow
    bigger = make_splits(FarmWorld(0), {**sizes, "sft": 600})
    assert bigger["eval"] == a["eval"]


def test_every_split_has_evals_mix_of_task_families():
    """The splits are samples of one distribution: even the small families (30 how-to instructions in all)
    keep their share in the later splits, where drawing distinct instructions used to starve them."""
    from collections import Counter

    sizes = {"sft": 2000, "preference": 2000, "unlabeled": 4000, "val": 400, "eval": 400}
    a = make_splits(FarmWorld(0), sizes)
    share = {s: Counter(r["dataset"] for r in recs) for s, recs in a.items()}
    for s in ("sft", "preference", "unlabeled", "val"):
        for fam, n in share["eval"].items():
            p = n / sizes["eval"]
            # two samples of one distribution differ by less than four standard errors of their difference
            se = (p * (1 - p) * (1 / sizes[s] + 1 / sizes["eval"])) ** 0.5
            assert abs(share[s][fam] / sizes[s] - p) < 4 * se, (s, fam)
    assert share["val"]["how_to"] > 0 and share["unlabeled"]["list_tools"] > 150


def test_splits_without_an_eval_split_draw_every_family():
    a = make_splits(FarmWorld(0), {"sft": 240, "preference": 0, "unlabeled": 0, "val": 0, "eval": 0})
    assert not a["eval"] and len({r["dataset"] for r in a["sft"]}) == 12


def test_an_eval_split_that_takes_a_whole_family_is_refused():
    with pytest.raises(ValueError, match="eval holds every"):
        make_splits(FarmWorld(0), {"sft": 2000, "preference": 0, "unlabeled": 0, "val": 0, "eval": 1500})


def test_real_alpaca_farm_files_load_in_our_schema(shared):
    for name in ("outputs_sft.json", "outputs_rlhf.json", "eval_gpt-3.5-turbo-0301.json"):
        recs = load_alpaca_farm("eval", shared / "alpaca_farm" / name)
        assert recs and all(isinstance(r["instruction"], str) and isinstance(r["input"], str) for r in recs)
        assert all("output" in r for r in recs)
    ev = load_alpaca_farm("eval", shared / "alpaca_farm" / "eval_gpt-3.5-turbo-0301.json")
    assert len(ev) == 805
    multi = load_records(shared / "alpaca_farm" / "multisamples_sft.json")
    assert isinstance(multi[0]["output"], list)


def test_real_alpaca_eval_outputs_are_the_805_set(shared):
    recs = load_model_outputs(shared / "alpaca_eval" / "results" / "text_davinci_003" / "model_outputs.json")
    assert len(recs) == 805
    counts = {}
    for r in recs:
        counts[r["dataset"]] = counts.get(r["dataset"], 0) + 1
    assert counts == {"selfinstruct": 252, "oasst": 188, "koala": 156, "helpful_base": 129, "vicuna": 80}


def test_bad_files_get_one_clear_error(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps([{"instruction": "a"}, {"input": "x"}]))
    with pytest.raises(DataFormatError, match=r"bad\.json: record 1: missing field 'instruction'"):
        load_records(p)
    p.write_text("{not json")
    with pytest.raises(DataFormatError, match=r"bad\.json: not valid JSON"):
        load_records(p)
    p.write_text(json.dumps({"instruction": "a"}))
    with pytest.raises(DataFormatError, match="expected a JSON list"):
        load_records(p)
    with pytest.raises(ValueError, match="unknown split"):
        load_alpaca_farm("train", p)


def _hub_layout(shared, folder):
    """A folder with the hub repository's layout whose files are links to the real files (not copies)."""
    (folder / "alpaca_instructions").mkdir(parents=True)
    (folder / "alpaca_farm_evaluation.json").symlink_to(shared / "alpaca_farm" / "eval_gpt-3.5-turbo-0301.json")
    (folder / "alpaca_instructions" / "sft.json").symlink_to(shared / "alpaca_farm" / "outputs_sft.json")
    return folder


def test_alpaca_farm_reads_the_hub_files_not_a_loading_script(shared, tmp_path, monkeypatch):
    """``datasets`` >= 4 refuses the hub repository's loading script; we download the released JSON file
    itself (at a revision) and parse it."""
    import datasets
    import huggingface_hub

    from farmlib import data

    def no_scripts(*args, **kw):
        raise RuntimeError("Dataset scripts are no longer supported, but found alpaca_farm.py")

    folder, asked = _hub_layout(shared, tmp_path / "hub"), []

    def download(repo_id, filename, repo_type=None, revision=None, **kw):
        asked.append((repo_id, filename, repo_type, revision))
        return str(folder / filename)

    monkeypatch.setattr(datasets, "load_dataset", no_scripts)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    ev = load_alpaca_farm("eval")
    assert len(ev) == 805 and all(r["datasplit"] == "eval" and isinstance(r["input"], str) for r in ev)
    sft = load_alpaca_farm("sft", revision="0123abc")
    assert sft and all(r["output"] and r["datasplit"] == "sft" for r in sft)
    assert asked == [("tatsu-lab/alpaca_farm", "alpaca_farm_evaluation.json", "dataset", data.HF_REVISION),
                     ("tatsu-lab/alpaca_farm", "alpaca_instructions/sft.json", "dataset", "0123abc")]


def test_alpaca_farm_from_a_local_folder(shared, tmp_path):
    folder = _hub_layout(shared, tmp_path / "copy")
    assert len(load_alpaca_farm("eval", folder=folder)) == 805
    assert len(load_alpaca_farm("sft", folder=folder)) == 252
    with pytest.raises(DataFormatError, match=r"alpaca_instructions/val\.json: no such file"):
        load_alpaca_farm("val", folder=folder)


def test_a_split_file_missing_a_field_gets_one_line_naming_it(tmp_path):
    from farmlib.data import load_split_file

    p = tmp_path / "sft.json"
    p.write_text(json.dumps([{"instruction": "a", "input": "", "output": "b"}, {"instruction": "c", "input": ""}]))
    with pytest.raises(DataFormatError, match=r"^\S*sft\.json: record 1: missing field 'output'$"):
        load_split_file(p, "sft")
    assert load_split_file(p, "unlabeled")[1] == {"instruction": "c", "input": "", "datasplit": "unlabeled"}


def test_paired_drops_the_pairs_that_are_the_same_under_its_key():
    a = [{"instruction": "i", "input": "", "dataset": "d", "output": o} for o in ("x", "a b", "A b", "y")]
    b = [{"instruction": "i", "input": "", "output": o} for o in ("x ", "a b", "a b", "z")]
    assert [r["output_1"] for r in paired(a, b)] == ["A b", "y"]  # "x" vs "x ": the same but for whitespace
    assert [r["output_1"] for r in paired(a, b, same=str)] == ["x", "A b", "y"]
    assert [r["output_1"] for r in paired(a, b, same=str.lower)] == ["x", "y"]
    assert paired(a, b, fields=("dataset",))[-1] == {"instruction": "i", "input": "", "dataset": "d",
                                                     "output_1": "y", "output_2": "z"}
    assert "dataset" not in paired(a, b)[0]
    with pytest.raises(ValueError):
        paired(a, b[:2])  # two answer sets of different lengths are not pairs
