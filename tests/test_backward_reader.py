import json
import random
from pathlib import Path

import pytest
import torch

from farmlib.methods import backward_reader as B


def test_the_backward_model_reads_the_answer_and_writes_the_question():
    p, q = B.prompt("The camel eats grass."), B.question("What does the camel eat?", "")
    assert p.index("The camel eats grass.") < p.index("### Instruction:")
    assert q == "What does the camel eat?"
    assert B.question("Add these.", "3 and 4").endswith("### Input:\n3 and 4")


def test_loglik_is_the_mean_log_probability_of_the_question_whatever_the_batch(micro_farm):
    from farmlib.lm.model import load_model

    path = B.train(micro_farm)
    assert path == B.train(micro_farm)  # an artifact: built once
    model, tok = load_model(path, "cpu"), micro_farm.tokenizer()
    recs = [dict(r) for r in micro_farm.splits()["sft"][:3]]
    recs[1]["output"] = recs[1]["output"] + " " + recs[2]["output"]  # another length in the same batch
    max_len = micro_farm.profile.model.max_length
    together = B.loglik(model, tok, recs, max_len, batch_size=3)
    alone = [B.loglik(model, tok, [r], max_len)[0] for r in recs]
    assert together == pytest.approx(alone, abs=1e-5)
    r = recs[0]  # by hand: the question's tokens and the EOS after it, given the answer
    ids = tok(B.prompt(r["output"]), add_special_tokens=True)["input_ids"]
    target = tok(B.question(r["instruction"], r["input"]), add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids + target])).logits[0].float(), -1)
    by_hand = sum(logp[len(ids) - 1 + j, t].item() for j, t in enumerate(target)) / len(target)
    assert alone[0] == pytest.approx(by_hand, abs=1e-4)


def test_the_backward_model_trains_the_passes_it_is_given_and_by_default_the_sft_models(micro_farm):
    import json
    from pathlib import Path

    sft_epochs = micro_farm.profile.sft.epochs
    assert B.train(micro_farm, sft_epochs) == B.train(micro_farm)  # 0: the SFT model's passes, the same model
    fewer = B.train(micro_farm, 1)
    steps = [len(json.loads((Path(p) / "history.json").read_text())) for p in (fewer, B.train(micro_farm))]
    assert steps[0] * sft_epochs == pytest.approx(steps[1], abs=sft_epochs)


def test_fit_weights_recovers_the_mix_the_labels_were_drawn_from():
    rng = random.Random(0)
    f = [rng.gauss(0, 1) for _ in range(20_000)]
    b = [rng.gauss(0, 1) for _ in range(20_000)]
    won = [rng.random() < 1 / (1 + 2.718281828 ** -(1.0 * x + 3.0 * y)) for x, y in zip(f, b)]
    # each pair as the winner minus the loser: a lost pair's differences change sign
    df = [x if w else -x for x, w in zip(f, won)]
    db = [y if w else -y for y, w in zip(b, won)]
    wf, wb = B.fit_weights(df, db)
    assert wf == pytest.approx(1.0, abs=0.1) and wb == pytest.approx(3.0, abs=0.2)
    with pytest.raises(ValueError, match="as many forward as backward"):
        B.fit_weights([1.0], [])


def test_question_of_prompt_inverts_the_prompt_format_after_any_prefix():
    from farmlib.world import format_prompt

    assert B.question_of_prompt(format_prompt("Add these.", "3 and 4")) == B.question("Add these.", "3 and 4")
    assert B.question_of_prompt("<|good|>" + format_prompt("Name an animal.")) == "Name an animal."
    with pytest.raises(ValueError, match="not a prompt of ours"):
        B.question_of_prompt("Name an animal.")


@pytest.fixture(scope="module")
def backward_rm(micro_farm):
    """The micro profile's reward model: the likelihood reader with the backward reader beside it."""
    from farmlib.methods import reward_model

    cfg = micro_farm.method_config("reward_model")
    assert cfg.backward
    return reward_model.train(micro_farm, cfg)


def test_the_reward_model_adds_lambda_times_the_backward_loglik_and_saves_it(micro_farm, backward_rm):
    from farmlib.lm.model import load_model
    from farmlib.methods import reward_model

    rm = reward_model.load_reward_model(backward_rm)
    lam = B.weight(rm)
    assert isinstance(lam, float) and lam != 1.0  # learned from its start
    hist = json.loads((Path(backward_rm) / "history.json").read_text())
    assert hist[-1]["backward_weight"] == pytest.approx(lam)
    assert json.loads((Path(backward_rm) / "metrics.json").read_text())["backward_weight"] == pytest.approx(lam)
    plain = reward_model.load_reward_model(backward_rm, backward=False)
    assert B.attached(plain) is None
    recs = [dict(r) for r in micro_farm.splits()["val"][:4]]
    tok, max_len = micro_farm.tokenizer(), micro_farm.profile.model.max_length
    back = B.loglik(load_model(B.train(micro_farm)), tok, recs, max_len)  # the backward artifact, read apart
    got, base = reward_model.rewards(rm, tok, recs), reward_model.rewards(plain, tok, recs)
    assert torch.allclose(got, base + lam * torch.tensor(back), atol=1e-4)


def test_sampled_sequences_get_the_reward_their_records_get(micro_farm, backward_rm):
    """PPO and Quark score token ids: decoded and re-read backwards, they get the backward term the decoded
    records get (whatever padding comes before the prompt)."""
    from farmlib.methods import repeat_reader, reward_model
    from farmlib.methods.common import rollout, score
    from farmlib.world import format_prompt

    rm, tok = reward_model.load_reward_model(backward_rm), micro_farm.tokenizer()
    recs = micro_farm.splits()["val"][:4]
    policy = micro_farm.load(micro_farm.sft_model())
    torch.manual_seed(0)
    seq, mask, response_mask, nq = rollout(policy, tok, [format_prompt(r["instruction"], r["input"]) for r in recs],
                                           1.0, 16)
    outs = [tok.decode(seq[i, nq:][response_mask[i].bool()], skip_special_tokens=True).strip()
            for i in range(len(recs))]
    with torch.no_grad():
        by_ids = score(rm, seq, mask, nq) - score(rm, seq, mask, nq, backward=False)
    decoded = [dict(r, output=o) for r, o in zip(recs, outs)]
    repeats = repeat_reader.term(rm, decoded)  # the repeat reader rides on the same sampled sequences
    by_records = B.term(rm, decoded) + (0 if repeats is None else repeats)
    assert by_ids.abs().min() > 0
    assert torch.allclose(by_ids, by_records, atol=1e-4), (by_ids, by_records)
    tagged = torch.cat([torch.full((len(recs), 2), tok.eos_token_id), seq], 1)  # padding before the prompt
    assert torch.allclose(B.term_of_ids(rm, tagged, torch.cat([torch.zeros(len(recs), 2, dtype=mask.dtype), mask], 1),
                                        nq + 2), B.term(rm, decoded), atol=1e-4)


def test_reward_models_on_one_backward_reader_read_a_set_of_texts_once(micro_farm, backward_rm, monkeypatch):
    """Two loads of the reward model carry two copies of the backward model: the second reads nothing new, and what
    it remembers is what a fresh read gives, bit for bit. Other weights or other texts are read anew."""
    from farmlib.methods import reward_model

    reads = []
    loglik = B._loglik
    monkeypatch.setattr(B, "_loglik", lambda *a, **k: reads.append(len(a[2])) or loglik(*a, **k))
    monkeypatch.setattr(B, "_READS", type(B._READS)())
    recs = [dict(r) for r in micro_farm.splits()["val"][:5]]
    first = B.scores(reward_model.load_reward_model(backward_rm), recs)
    again = B.scores(reward_model.load_reward_model(backward_rm), list(reversed(recs)))
    assert reads == [5] and again == list(reversed(first))
    B._READS.clear()
    assert B.scores(reward_model.load_reward_model(backward_rm), recs) == first and reads == [5, 5]
    B.scores(reward_model.load_reward_model(backward_rm), recs[:4])
    assert reads == [5, 5, 4]
    other = reward_model.load_reward_model(backward_rm)
    with torch.no_grad():
        next(B.attached(other).model.parameters()).add_(1e-3)
    assert B.scores(other, recs) != first and reads == [5, 5, 4, 5]
