import random

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
