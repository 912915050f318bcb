"""The real-data path (``farmlib.real``, ``farmlib.real_judges``, a Farm on a real profile): loaders, clear
errors where something does not exist in the real world, and the 13-member pool behind the loopback server."""

import json

import pytest

from farmlib import Farm
from farmlib.data import DataFormatError
from farmlib.profiles import PROFILES, RealData, get_profile
from farmlib.real import REFERENCE_FILE, NotInRealWorld, ReleasedPeople, load_real_splits, split_805
from farmlib.real_judges import RealJudges, pool_key, style_table


def _records(n: int) -> list[dict]:
    return [{"instruction": f"Question {i}?", "output": f"Answer {i}.", "generator": "m", "dataset": f"d{i % 3}"}
            for i in range(n)]


def test_split_805_is_disjoint_deterministic_and_keeps_the_source_dataset():
    sizes = {"sft": 5, "preference": 4, "unlabeled": 3, "val": 2, "eval": 6}
    a, b = split_805(_records(30), sizes, seed=0), split_805(_records(30), sizes, seed=0)
    assert a == b and {s: len(v) for s, v in a.items()} == sizes
    seen = [r["instruction"] for recs in a.values() for r in recs]
    assert len(seen) == len(set(seen))
    assert all(r["dataset"].startswith("d") and r["datasplit"] == s for s, recs in a.items() for r in recs)
    assert split_805(_records(30), sizes, seed=1) != a


def test_split_805_names_the_file_when_it_is_too_small():
    with pytest.raises(ValueError, match="some.json: the splits need 20 instructions"):
        split_805(_records(5), {"sft": 4, "preference": 4, "unlabeled": 4, "val": 4, "eval": 4}, source="some.json")


def test_real_splits_from_shared_files(shared):
    real = RealData(splits="alpaca_eval_805", data_dir=str(shared))
    sp = load_real_splits(real, get_profile("real-micro").split_sizes())
    assert {r["dataset"] for r in sp["eval"]} <= {"selfinstruct", "oasst", "koala", "helpful_base", "vicuna"}
    assert all(r["output"] for r in sp["sft"])  # text-davinci-003's released answers are the demonstrations


def test_bad_reference_file_names_file_and_field(tmp_path):
    (tmp_path / "alpaca_eval/results/text_davinci_003").mkdir(parents=True)
    (tmp_path / REFERENCE_FILE).write_text(json.dumps([{"instruction": "x", "output": "y"}]))
    real = RealData(splits="alpaca_eval_805", data_dir=str(tmp_path))
    with pytest.raises(DataFormatError, match=r"model_outputs.json: record 0: missing field 'generator'"):
        load_real_splits(real, {"sft": 1, "preference": 0, "unlabeled": 0, "val": 0, "eval": 0})


def test_missing_data_folder_is_one_clear_error(tmp_path):
    real = RealData(splits="alpaca_eval_805", data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(NotInRealWorld, match="nowhere does not exist"):
        load_real_splits(real, {"sft": 1, "preference": 0, "unlabeled": 0, "val": 0, "eval": 0})


def test_real_micro_reads_shared_by_a_relative_path():
    real = PROFILES["real-micro"].real
    assert real is not None and real.data_dir == "../shared/data" and real.judges == "loopback"
    assert PROFILES["micro"].real is None and PROFILES["tiny"].real is None


def test_real_farm_has_no_farmworld(tmp_path, shared):
    farm = Farm("real-micro", root=tmp_path)
    assert not farm.is_farmworld
    for ask in (lambda: farm.world, lambda: farm.true_rewards([]), lambda: farm.annotate_true([]),
                lambda: farm.writer_outputs(), lambda: farm.annotator("human")):
        with pytest.raises(NotInRealWorld, match="does not exist on real data"):
            ask()
    assert farm.evaluation_annotators() == ("p_sim_eval",)
    assert farm.real_data_note("x").data.startswith("> **Real data (real-micro).**")
    ref = farm.reference_outputs()
    assert [r["instruction"] for r in ref] == [r["instruction"] for r in farm.splits()["eval"]]
    assert {r["generator"] for r in ref} == {"text_davinci_003"}


def test_farmworld_farm_is_unchanged(tmp_path):
    farm = Farm("micro", root=tmp_path)
    assert farm.is_farmworld and farm.real_data_note("x") is None
    assert farm.evaluation_annotators() == ("p_sim_eval", "human")
    from farmlib.annotators.learned import judges_key

    assert farm.judges_key() == judges_key()


def test_pool_key_ignores_the_loopback_port_and_covers_the_members():
    key = pool_key(RealData(judges="loopback"))
    assert len(key["real_pool"]) == 13 and key["where"] == "loopback"
    assert pool_key(RealData(judges="chat", base_url="http://a/v1")) != key
    with pytest.raises(ValueError, match="unknown real.judges 'nope'"):
        pool_key(RealData(judges="nope"))


def test_the_13_member_pool_behind_the_loopback_server(tmp_path):
    judges = RealJudges(RealData(judges="loopback"), tmp_path / "cache.sqlite")
    try:
        assert len(judges.members()) == 13
        pairs = [{"instruction": f"Say something {i}.", "input": "", "output_1": "short",
                  "output_2": "a much longer answer " * (1 + i % 3)} for i in range(12)]
        ann = judges.pool("p_sim_eval").annotate_pairs(pairs)
        assert all(a["preference"] == 2 and a["annotator"].startswith("p_sim_eval:") for a in ann)  # loopback: longer
        single = judges.pool("p_sim_single")
        assert single.config.temperature == 0.0 and single.config.model == "gpt-4-0613"
        table = style_table({"single": single}, pairs)
        assert table.loc["single", "p_longer"] == 1.0 and table.loc["single", "order_consistency"] == 1.0
        with pytest.raises(ValueError, match="unknown annotator 'x'"):
            judges.pool("x")
    finally:
        judges.close()


def test_released_people_look_up_pairs_either_way(tmp_path):
    f = tmp_path / "people.json"
    f.write_text(json.dumps([{"instruction": "q", "output_1": "a", "output_2": "b", "preference": 2}]))
    people = ReleasedPeople(f)
    got = people.annotate_pairs([{"instruction": "q", "output_1": "a", "output_2": "b"},
                                 {"instruction": "q", "output_1": "b", "output_2": "a"},
                                 {"instruction": "q", "output_1": "a", "output_2": "c"}])
    assert [g["preference"] for g in got] == [2, 1, None]
    f.write_text(json.dumps([{"instruction": "q", "output_1": "a"}]))
    with pytest.raises(DataFormatError, match="people.json: record 0: missing field 'output_2'"):
        ReleasedPeople(f)


def test_the_pool_behind_a_local_hf_model(tmp_path):
    """``judges="lm"``: every member reads the label log-probabilities of one local causal LM (LMJudge)."""
    from farmlib.lm.model import new_model, train_tokenizer
    from farmlib.profiles import ModelConfig

    tok = train_tokenizer(["Preferred: a", "Preferred: b", "Which output is better? a b"] * 20, vocab_size=300)
    model = new_model(ModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32, max_length=512),
                      tok, arch="gpt_neox")
    model.save_pretrained(tmp_path / "judge")
    tok.save_pretrained(tmp_path / "judge")
    judges = RealJudges(RealData(judges="lm", judge_model=str(tmp_path / "judge")), tmp_path / "cache.sqlite")
    pairs = [{"instruction": "Pick one.", "input": "", "output_1": "a", "output_2": "b b"}] * 6
    ann = judges.pool("p_sim_eval").annotate_pairs(pairs)
    assert len(judges.members()) == 13 and all(a["preference"] in (1, 2) for a in ann)
    assert judges.pool("p_sim_single").temperature == 0.0
    with pytest.raises(ValueError, match="needs real.judge_model"):
        RealJudges(RealData(judges="lm"), tmp_path / "c.sqlite").members()
