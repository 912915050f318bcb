import json
import random
from pathlib import Path

import pytest
import torch

from farmlib.methods import repeat_reader as R


def test_fit_weight_recovers_the_charge_the_labels_were_drawn_from():
    rng = random.Random(0)
    dr = [rng.gauss(0, 1) for _ in range(20_000)]
    dg = [rng.choice([0.0, 0.0, 0.0, 1.0, -1.0, 0.5]) for _ in range(20_000)]
    won = [rng.random() < 1 / (1 + 2.718281828 ** -(0.5 * x - 2.0 * y)) for x, y in zip(dr, dg)]
    # each pair as the winner minus the loser: a lost pair's differences change sign
    dr = torch.tensor([x if w else -x for x, w in zip(dr, won)])
    dg = torch.tensor([y if w else -y for y, w in zip(dg, won)])
    rho, s = R.fit_weight(dr, dg)
    assert s == pytest.approx(0.5, abs=0.05) and rho == pytest.approx(-4.0, abs=0.4)  # ρ = c / s, in r's units
    assert R.fit_weight(torch.zeros(0), torch.zeros(0)) == (0.0, 1.0)  # no label: nothing learned
    assert R.fit_weight(torch.ones(5), torch.zeros(5)) == (0.0, 1.0)  # no pair whose repeats differ


def test_the_feature_charges_an_answer_that_says_a_thing_twice():
    rec = {"instruction": "What does the camel eat?", "input": ""}
    g = R.feature([dict(rec, output="The camel eats grass."), dict(rec, output="The camel eats grass. The camel eats grass.")])
    assert g.tolist() == [0.0, 1.0]


@pytest.fixture(scope="module")
def repeat_rm(micro_farm):
    """The micro profile's reward model, with the repeat reader beside its likelihood and backward readers."""
    from farmlib.methods import reward_model

    cfg = micro_farm.method_config("reward_model")
    assert cfg.repeats
    return reward_model.train(micro_farm, cfg)


def said_twice_by(pairs: list[dict], share: float, seed: int = 0) -> list[dict]:
    """``pairs`` with one output of each said twice: the loser's in ``share`` of them, else the winner's."""
    from farmlib.methods.common import loser, winner

    rng, out = random.Random(seed), []
    for p in pairs:
        k = p["preference"] if rng.random() >= share else 3 - p["preference"]
        text = winner(p) if k == p["preference"] else loser(p)
        out.append(dict(p, **{f"output_{k}": text + " " + text}))
    return out


def test_fit_repeats_learns_the_charge_from_the_labels_and_sets_it(micro_farm, repeat_rm):
    from farmlib.methods import reward_model

    rm, tok = reward_model.load_reward_model(repeat_rm), micro_farm.tokenizer()
    pairs = [p for p in micro_farm.preference_data("p_sim_ann") if p["preference"] in (1, 2)]
    max_len = micro_farm.profile.model.max_length
    charged = reward_model.fit_repeats(rm, tok, said_twice_by(pairs, 0.8), max_len)
    assert charged["repeat_weight"] < 0 and R.weight(rm) == charged["repeat_weight"]
    again = reward_model.fit_repeats(rm, tok, said_twice_by(pairs, 0.8), max_len)
    assert again == charged  # the fit reads the score without the reader's own term
    assert reward_model.fit_repeats(rm, tok, said_twice_by(pairs, 0.2), max_len)["repeat_weight"] > 0  # labels rule
    assert reward_model.fit_repeats(rm, tok, [], max_len) == {"repeat_weight": 0.0, "repeat_scale": 1.0}


def test_the_reward_model_adds_rho_times_the_repeats_and_saves_rho(micro_farm, repeat_rm):
    from farmlib.methods import reward_model

    metrics = json.loads((Path(repeat_rm) / "metrics.json").read_text())
    rm = reward_model.load_reward_model(repeat_rm)
    assert metrics["repeat_weight"] == R.weight(rm)  # saved in its config (micro's garbled answers never repeat: 0)
    recs = [dict(r) for r in micro_farm.splits()["val"][:4]]
    recs[0]["output"] = recs[0]["output"] + " " + recs[0]["output"]  # said twice
    tok = micro_farm.tokenizer()
    rm.config.repeat_weight = 0.0
    without = reward_model.rewards(rm, tok, recs)
    rm.config.repeat_weight = -2.0
    got = reward_model.rewards(rm, tok, recs)
    assert torch.allclose(got - without, -2.0 * R.feature(recs), atol=1e-5)
    assert (got - without)[0].item() == pytest.approx(-2.0)


def test_sampled_sequences_get_the_charge_their_records_get(micro_farm, repeat_rm, tmp_path):
    """PPO and Quark score token ids: the reward model saved with a ρ decodes them (its tokenizer comes with it at
    load) and charges what the decoded records are charged; PPO's value model (``backward=False``) does not."""
    from farmlib.methods import reward_model
    from farmlib.methods.common import rollout, score
    from farmlib.world import format_prompt

    tok = micro_farm.tokenizer()
    rm = reward_model.load_reward_model(repeat_rm)
    rm.config.repeat_weight = -2.0
    reward_model.save(rm, tok, tmp_path)
    rm, plain = reward_model.load_reward_model(str(tmp_path)), reward_model.load_reward_model(str(tmp_path), backward=False)
    assert R.weight(rm) == -2.0 and hasattr(rm, "repeat_tokenizer") and not hasattr(plain, "repeat_tokenizer")
    recs = micro_farm.splits()["val"][:4]
    policy = micro_farm.load(micro_farm.sft_model())
    prompts = [format_prompt(r["instruction"], r["input"]) for r in recs]
    torch.manual_seed(0)
    seq, mask, response_mask, nq = rollout(policy, tok, prompts, 1.0, 16)
    seq[0, nq + 8:nq + 16] = seq[0, nq:nq + 8].clone()  # the first answer says its first tokens again
    outs = [tok.decode(seq[i, nq:][response_mask[i].bool()], skip_special_tokens=True).strip() for i in range(len(recs))]
    decoded = [dict(r, output=o) for r, o in zip(recs, outs)]
    by_ids = R.term_of_ids(rm, seq, mask, nq)
    assert by_ids[0] < 0, outs[0]  # charged
    assert torch.allclose(by_ids, R.term(rm, decoded)) and R.term_of_ids(plain, seq, mask, nq) is None
    with torch.no_grad():
        rm.config.repeat_weight = 0.0
        before = score(rm, seq, mask, nq)
        rm.config.repeat_weight = -2.0
        assert torch.allclose(score(rm, seq, mask, nq) - before, by_ids, atol=1e-5)
