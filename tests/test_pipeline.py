from pathlib import Path

from farmlib.profiles import get_profile
from farmlib.world import format_prompt


def test_sft_learns_the_response_format(micro_farm):
    tok = micro_farm.tokenizer()
    model = micro_farm.load(micro_farm.sft_model())
    base = micro_farm.load(micro_farm.base_model())
    import torch

    from farmlib.lm.supervised import collate, encode_pairs, lm_loss

    pairs = [(format_prompt(r["instruction"], r["input"]), r["output"]) for r in micro_farm.splits()["val"]]
    batch = collate(encode_pairs(tok, pairs, 192), tok.pad_token_id)
    with torch.no_grad():
        assert lm_loss(model, batch) < lm_loss(base, batch) - 0.5


def test_true_reward_evaluation_is_aligned_and_in_alpaca_eval_format(micro_farm):
    ref = micro_farm.reference_outputs()
    ann = micro_farm.annotate_true(ref, ref)  # the reference against itself: all ties
    assert {a["preference"] for a in ann} == {1.5}
    assert micro_farm.evaluate_true(ref, ref).win_rate == 50.0
    assert set(ann[0]) >= {"instruction", "output_1", "output_2", "generator_1", "generator_2", "preference"}


def test_annotators_are_reused_without_changing_a_label(micro_farm):
    """Farm.annotator keeps one instance per (name, seed); a fresh one gives the same labels."""
    from farmlib import Farm

    assert micro_farm.annotator("p_sim_eval") is micro_farm.annotator("p_sim_eval")
    assert micro_farm.annotator("p_sim_eval", seed=1) is not micro_farm.annotator("p_sim_eval")
    outs = micro_farm.writer_outputs(seed=3)
    first = micro_farm.evaluate(outs, "p_sim_eval")[1]
    again = micro_farm.evaluate(outs, "p_sim_eval")[1]
    fresh = Farm("micro", root=micro_farm.root).evaluate(outs, "p_sim_eval")[1]
    assert [a["preference"] for a in first] == [a["preference"] for a in again] == [a["preference"] for a in fresh]


def test_evaluate_on_a_subset_takes_the_reference_of_that_subset(micro_farm):
    ref = micro_farm.reference_outputs()
    wr, ann = micro_farm.evaluate(ref[:5], "human", reference=ref[:5])
    assert wr.n_total == len(ann) == 5


def test_scale_profiles_resolve_without_downloading():
    for name in ("small", "paper"):
        p = get_profile(name)
        assert p.data == "alpaca_farm" and p.model.pretrained and p.split_sizes()["sft"] == 10_000
    assert get_profile("tiny", scale=0.5).split_sizes()["sft"] == 5000


def test_artifact_keys_do_not_depend_on_the_working_directory(micro_farm, monkeypatch):
    from farmlib import Farm

    monkeypatch.chdir(micro_farm.root.parent)
    relative = Farm("micro", root=micro_farm.root.name)
    assert Path(relative.sft_model()).resolve() == Path(micro_farm.sft_model()).resolve()
    # also where an artifact's inputs name another artifact's path as such (a judge head names the base LM)
    from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

    fam = JUDGE_FAMILIES["davinci"]
    assert Path(train_judge(relative, fam)).resolve() == Path(train_judge(micro_farm, fam)).resolve()


def test_lora_finetuning_on_the_tiny_model(micro_farm):
    import dataclasses
    import json

    from farmlib import Farm
    from farmlib.lm.model import n_params

    prof = get_profile("micro")
    prof = dataclasses.replace(prof, model=dataclasses.replace(prof.model, lora_r=4))
    farm = Farm(prof, root=micro_farm.root)  # shares the base and tokenizer, not the SFT model
    path = farm.finetune("lora_test", {}, [(format_prompt("Say hi.", ""), "hi")] * 8, prof.sft)
    info = json.loads((Path(path) / "train_info.json").read_text())
    model = farm.load(path)  # merged back into a plain model
    assert 0 < info["trainable_params"] < n_params(model) / 2
    assert Path(farm.sft_model()) != Path(micro_farm.sft_model())


def test_scale_profiles_switch_on_lora_and_4bit(monkeypatch, tmp_path):
    """The profiles' flags, and Farm.load passing 4-bit on to model loading for the hub base model."""
    import farmlib.rooms.models as models
    from farmlib import Farm

    assert all(get_profile(n).model.lora_r > 0 for n in ("small", "paper"))
    assert not get_profile("tiny").model.lora_r
    calls = []
    monkeypatch.setattr(models, "load_model", lambda path, device, load_in_4bit=False: calls.append(
        (path, device, load_in_4bit)))
    paper = Farm("paper", root=tmp_path)
    paper.load("huggyllama/llama-7b")
    paper.load(str(tmp_path / "ppo" / "abc"))  # a trained artifact: saved merged, loaded as is
    Farm("micro", root=tmp_path).load("x")
    assert calls == [("huggyllama/llama-7b", "cuda", True), (str(tmp_path / "ppo" / "abc"), "cuda", False),
                     ("x", "cpu", False)]


def test_a_run_with_overrides_writes_its_own_metrics_file(tmp_path):
    from farmlib import Farm
    from farmlib.artifacts import read_json

    farm = Farm("micro", root=tmp_path / "micro")
    farm.write_metrics("dpo", {"run": "dpo", "win_rate": 1})
    farm.write_metrics("dpo", {"run": "dpo[lr=0.0005]", "win_rate": 2})  # an exercise's run
    farm.write_metrics("sft", {"win_rate": 3})
    assert read_json(tmp_path / "micro" / "metrics" / "dpo.json")["win_rate"] == 1, "the chapter's numbers stay"
    assert read_json(tmp_path / "micro" / "metrics" / "dpo[lr=0.0005].json")["win_rate"] == 2
    assert read_json(tmp_path / "micro" / "metrics" / "sft.json")["win_rate"] == 3
