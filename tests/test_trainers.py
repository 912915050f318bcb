"""Each trainer improves its own objective on the micro profile, and our DPO loss is TRL's."""

import json
from pathlib import Path

import pytest
import torch

from farmlib.lm.likelihood import sequence_logprobs
from farmlib.methods import dpo, ppo, reward_model
from farmlib.methods.common import response_logprobs
from farmlib.progress import progress
from farmlib.world import format_prompt


def _first_last(values: list[float], frac: float = 0.25) -> tuple[float, float]:
    k = max(1, int(len(values) * frac))
    return sum(values[:k]) / k, sum(values[-k:]) / k


def _history(path: str) -> list[dict]:
    return json.loads((Path(path) / "history.json").read_text())


def test_sft_loss_goes_down(micro_farm):
    first, last = _first_last([h["loss"] for h in _history(micro_farm.sft_model())])
    assert last < first - 0.5, (first, last)


@pytest.fixture(scope="module")
def micro_rm(micro_farm):
    return reward_model.train(micro_farm, micro_farm.method_config("reward_model", {"epochs": 4}))


def test_reward_model_loss_goes_down(micro_rm):
    first, last = _first_last([h["loss"] for h in _history(micro_rm)])
    assert last < first, (first, last)


def test_dpo_margin_goes_up(micro_farm):
    # at DPO's small lr (SFT's / 20) the micro margin rises about 0.01 an epoch: 8 epochs clear the bar with room
    path = dpo.train(micro_farm, micro_farm.method_config("dpo", {"epochs": 8}))
    first, last = _first_last([h["rewards/margins"] for h in _history(path)])
    assert last > first + 0.05, (first, last)


def test_dpo_makes_one_pass_over_large_pair_sets(micro_farm):
    """Below ``one_pass_from`` pairs DPO makes ``epochs`` passes, from it on at most one (0: always ``epochs``); a run's
    steps follow (the micro profile's pairs are fewer than 2,000, so a threshold of 10 gives one pass)."""
    cfg = dpo.DPOConfig(epochs=2.0, one_pass_from=2000)
    assert [dpo.passes(cfg, n) for n in (973, 1999, 2000, 6668)] == [2.0, 2.0, 1.0, 1.0]
    assert dpo.passes(dpo.DPOConfig(epochs=2.0, one_pass_from=0), 10_000) == 2.0
    assert dpo.passes(dpo.DPOConfig(epochs=0.5, one_pass_from=10), 100) == 0.5  # never more than `epochs`
    two = _history(dpo.train(micro_farm, micro_farm.method_config("dpo", {"epochs": 2.0})))
    one = _history(dpo.train(micro_farm, micro_farm.method_config("dpo", {"epochs": 2.0, "one_pass_from": 10})))
    assert len(two) == 2 * len(one) and one[-1]["epoch"] < 1 <= two[-1]["epoch"], (len(two), len(one))


@pytest.fixture(scope="module")
def length_rm(micro_farm):
    """A reward model fitted (with ``reward_model.fit``) to prefer the longer of two SFT samples."""
    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    a = micro_farm.samples(sft, "preference", temperature=1.0, seed=11)
    b = micro_farm.samples(sft, "preference", temperature=1.0, seed=12)
    pairs = [{"instruction": x["instruction"], "input": x["input"], "output_1": x["output"], "output_2": y["output"],
              "preference": 1 if len(x["output"]) > len(y["output"]) else 2}
             for x, y in zip(a, b) if len(x["output"]) != len(y["output"])]
    rm = reward_model.new_reward_model(sft, tok)
    history = reward_model.fit(rm, tok, pairs, reward_model.RewardModelConfig(epochs=6, lr=2e-3, batch_size=16), 192)
    return rm, pairs, history


def test_reward_model_fit_learns_a_preference(micro_farm, length_rm):
    rm, pairs, history = length_rm
    first, last = _first_last([h["loss"] for h in history])
    acc, se = reward_model.pairwise_accuracy(rm, micro_farm.tokenizer(), pairs, 192)
    assert last < first - 0.2 and acc > 0.5 + 3 * se, (first, last, acc, se)


def test_pairwise_accuracies_score_pairs_labelled_twice_once(micro_farm, length_rm, monkeypatch):
    """The same pairs under two labellings (here: the labels, and the labels flipped) are scored in one ``rewards``
    call of their distinct texts, and each labelling gets the accuracy it gets alone."""
    rm, pairs, _ = length_rm
    tok = micro_farm.tokenizer()
    flipped = [dict(p, preference=3 - p["preference"]) for p in pairs]
    alone = [reward_model.pairwise_accuracy(rm, tok, ps, 192) for ps in (pairs, flipped)]
    calls = []
    rewards = reward_model.rewards
    monkeypatch.setattr(reward_model, "rewards", lambda *a, **k: calls.append(a[2]) or rewards(*a, **k))
    both = reward_model.pairwise_accuracies(rm, tok, [pairs, flipped], 192)
    assert len(calls) == 1 and both == alone and both[0][0] + both[1][0] == pytest.approx(1.0), (both, alone)


def test_reward_model_fit_by_prompt_learns_from_all_pairs_of_an_instruction(micro_farm):
    """With ``group_by_prompt`` a step takes whole prompts (all pairs among three samples of each instruction):
    an epoch is one step per ``batch_size`` prompts, and the model learns the preference."""
    import itertools

    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    samples = [micro_farm.samples(sft, "preference", temperature=1.0, seed=s) for s in (11, 12, 13)]
    pairs = [{"instruction": x["instruction"], "input": x["input"], "output_1": x["output"], "output_2": y["output"],
              "preference": 1 if len(x["output"]) > len(y["output"]) else 2}
             for outs in zip(*samples) for x, y in itertools.combinations(outs, 2) if len(x["output"]) != len(y["output"])]
    prompts = {(p["instruction"], p["input"]) for p in pairs}
    rm = reward_model.new_reward_model(sft, tok)
    cfg = reward_model.RewardModelConfig(epochs=6, lr=2e-3, batch_size=8, group_by_prompt=True)
    history = reward_model.fit(rm, tok, pairs, cfg, 192)
    assert len(history) == 6 * -(-len(prompts) // 8) and len(pairs) > len(prompts)
    first, last = _first_last([h["loss"] for h in history])
    acc, se = reward_model.pairwise_accuracy(rm, tok, pairs, 192)
    assert last < first - 0.2 and acc > 0.5 + 3 * se, (first, last, acc, se)


@pytest.mark.parametrize("value", ["model", "policy"])
def test_ppo_loop_raises_the_reward(micro_farm, length_rm, value):
    """The PPO loop, called on its own against a reward model that likes length, raises the reward of
    its rollouts and, with it, their length: with a separate value model and with a value head on the policy."""
    import copy

    rm = length_rm[0]
    cfg = micro_farm.method_config("ppo", {"steps": 30, "rollout_batch": 16, "minibatch": 8, "lr": 1e-3,
                                           "kl_coef": 0.0, "eval_every": 100, "n_eval_prompts": 4, "value": value})
    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    policy, ref = micro_farm.load(sft), micro_farm.load(sft)
    prompts = [format_prompt(r["instruction"], r["input"]) for r in micro_farm.splits()["unlabeled"]]
    value_model = copy.deepcopy(rm) if value == "model" else ppo.ValueHead(policy)
    history, evals, _ = ppo.ppo_loop(policy, ref, value_model, copy.deepcopy(rm), tok, prompts, prompts[:4],
                                     cfg, max_new_tokens=24)
    if value == "policy":  # the head learned something, and the value loss reached the policy's trunk
        assert value_model.head.weight.abs().sum() > 0 and history[-1]["explained_variance"] != 0
    first, last = _first_last([h["reward"] for h in history], frac=1 / 3)
    assert last > first + 0.15, [round(h["reward"], 2) for h in history]
    len_first, len_last = _first_last([h["length_tokens"] for h in history], frac=1 / 3)
    assert len_last > len_first, [round(h["length_tokens"], 1) for h in history]
    assert [e["step"] for e in evals] == [0, 30]
    assert all(not p.requires_grad for p in ref.parameters())  # the reference stays frozen


def test_the_value_learns_at_its_own_rate(micro_farm, length_rm):
    """``value_lr`` is the learning rate of the value's own parameters only: at 0 the value head stays where it
    started (zero) while the policy trains, and at the default (the policy's lr) it moves."""
    import copy

    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    prompts = [format_prompt(r["instruction"], r["input"]) for r in micro_farm.splits()["unlabeled"]]
    moved = {}
    for value_lr in (0.0, None):
        cfg = micro_farm.method_config("ppo", {"steps": 2, "rollout_batch": 8, "minibatch": 4, "lr": 1e-3,
                                               "eval_every": 100, "n_eval_prompts": 2, "value": "policy",
                                               "value_lr": value_lr})
        policy, ref = micro_farm.load(sft), micro_farm.load(sft)
        head, start = ppo.ValueHead(policy), [p.detach().clone() for p in policy.parameters()]
        ppo.ppo_loop(policy, ref, head, copy.deepcopy(length_rm[0]), tok, prompts, prompts[:2], cfg, max_new_tokens=12)
        assert any(not torch.equal(a, b) for a, b in zip(start, policy.parameters()))  # the policy trained
        moved[value_lr] = head.head.weight.abs().sum().item() + head.head.bias.abs().item()
    assert moved[0.0] == 0 and moved[None] > 0, moved


def quiet(trainer, desc: str):
    """A TRL/transformers trainer that shows one progress bar instead of printing every log line."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

    class Bar(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            self.bar = progress(total=state.max_steps, desc=desc, leave=False)

        def on_step_end(self, args, state, control, **kw):
            self.bar.update(1)

        def on_train_end(self, args, state, control, **kw):
            self.bar.close()

    for cb in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(cb)
    trainer.add_callback(Bar())
    return trainer


def test_our_dpo_loss_equals_trls_on_the_same_batch(micro_farm):
    """TRL's DPOTrainer and :func:`farmlib.methods.dpo.dpo_loss` give the same loss on one batch, with a
    policy that differs from the reference (else both are log 2 and the test would prove nothing)."""
    import trl

    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    prefs = micro_farm.preference_data("p_sim_ann")[:4]
    policy, ref = micro_farm.load(sft), micro_farm.load(sft)
    torch.manual_seed(0)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    args = trl.DPOConfig(output_dir=str(micro_farm.root / "dpo_test"), beta=0.1, per_device_train_batch_size=4,
                         report_to=[], use_cpu=True, max_length=micro_farm.profile.model.max_length, bf16=False)
    trainer = quiet(trl.DPOTrainer(model=policy, ref_model=ref, args=args, train_dataset=dpo.dataset(prefs, tok.eos_token),
                                   processing_class=tok), "dpo")
    batch = next(iter(trainer.get_train_dataloader()))
    policy.eval()
    with torch.no_grad():
        trl_loss = trainer.compute_loss(policy, batch).item()
        # our training loop's path: our tokenization, our batch, our log-probabilities, our loss
        pairs = dpo.encode(tok, prefs, micro_farm.profile.model.max_length)
        ours_batch = dpo.pair_batch(tok, pairs, list(range(len(prefs))), "cpu")
        pi, rf = sequence_logprobs(policy, ours_batch), sequence_logprobs(ref, ours_batch)
        n = len(prefs)
        ours, margin = dpo.dpo_loss(pi[:n], pi[n:], rf[:n], rf[n:], beta=0.1)
    assert abs(margin).max() > 0.01  # the policy really differs from the reference
    assert ours.item() == pytest.approx(trl_loss, rel=1e-4, abs=1e-5)


def test_our_kto_loss_equals_trls_on_the_same_batch(micro_farm):
    """TRL's KTOTrainer and :func:`farmlib.methods.kto.kto_loss` give the same loss on one batch (its KL
    reference point from the same mismatched pairs), with a policy that differs from the reference."""
    import trl

    from farmlib.lm.supervised import collate, encode_pairs
    from farmlib.methods import kto
    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    prefs = micro_farm.preference_data("p_sim_ann")[:3]
    policy, ref = micro_farm.load(sft), micro_farm.load(sft)
    torch.manual_seed(0)
    with torch.no_grad():  # the reference moved away from the policy: a KL estimate above 0, not clamped
        for p in ref.parameters():
            p.add_(0.05 * torch.randn_like(p))
    max_length = micro_farm.profile.model.max_length
    args = trl.KTOConfig(output_dir=str(micro_farm.root / "kto_test"), beta=0.1, per_device_train_batch_size=6,
                         report_to=[], use_cpu=True, max_length=max_length, bf16=False)
    data = kto.dataset(prefs, tok.eos_token)
    trainer = quiet(trl.KTOTrainer(model=policy, ref_model=ref, args=args, train_dataset=data, processing_class=tok),
                    "kto")
    batch = next(iter(trainer.get_train_dataloader()))
    policy.eval()
    with torch.no_grad():
        trl_loss = trainer.compute_loss(policy, batch).item()
        # our loop's path: our tokenization (EOS appended), batches, KL pairs, log-probabilities and loss
        rows = kto.examples(prefs)
        assert [r["completion"] + tok.eos_token for r in rows] == data["completion"]  # the same order
        encoded = encode_pairs(tok, [(r["prompt"], r["completion"]) for r in rows], max_length)
        idx = list(range(len(rows)))
        main, kl = (collate(b, tok.pad_token_id) for b in ([encoded[j] for j in idx], kto.mismatched(idx, encoded, max_length)))
        z0 = (sequence_logprobs(policy, kl) - sequence_logprobs(ref, kl)).mean().clamp(min=0)
        ours, reward = kto.kto_loss(sequence_logprobs(policy, main), sequence_logprobs(ref, main),
                                    torch.tensor([r["label"] for r in rows]), z0, beta=0.1)
    assert abs(reward).max() > 0.01 and z0 > 0  # the policy really differs from the reference
    assert ours.item() == pytest.approx(trl_loss, rel=1e-4, abs=1e-5)


def test_kto_kl_pairs_rarely_share_a_prompt():
    """The KL reference point needs mismatched pairs: in our loop's batches (consecutive examples of the seeded
    shuffle), few examples get a completion written for their own prompt (the pair's other output)."""
    from farmlib.methods import kto

    prefs = [{"instruction": f"Task number {i}.", "input": "", "output_1": f"good {i}", "output_2": f"bad {i}",
              "preference": 1} for i in range(200)]
    rows = kto.examples(prefs)
    assert sorted((r["completion"], r["label"]) for r in rows) == sorted(
        [(f"good {i}", True) for i in range(200)] + [(f"bad {i}", False) for i in range(200)])
    shared = 0
    for s in range(0, len(rows), 32):
        batch = list(range(s, min(s + 32, len(rows))))
        shared += sum(rows[j]["prompt"] == rows[k]["prompt"] for j, k in zip(batch, batch[-1:] + batch[:-1]))
    assert shared / len(rows) < 0.05, shared


def test_response_logprobs_match_a_plain_forward(micro_farm):
    """The shared log-prob helper (left-padded prompts) agrees with an unpadded forward pass."""
    tok, model = micro_farm.tokenizer(), micro_farm.load(micro_farm.sft_model())
    prompts = ["Name an animal.", "Count the words in this long sentence please."]
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    resp = torch.tensor([[5, 6, 7], [8, 9, 10]])
    seq = torch.cat([enc["input_ids"], resp], 1)
    mask = torch.cat([enc["attention_mask"], torch.ones_like(resp)], 1)
    lp = response_logprobs(model, seq, mask, enc["input_ids"].size(1))
    for i, p in enumerate(prompts):
        ids = torch.tensor([tok(p, add_special_tokens=False)["input_ids"] + resp[i].tolist()])
        logp = torch.log_softmax(model(input_ids=ids).logits[0, -4:-1].float(), -1)
        expected = logp.gather(-1, resp[i][:, None]).squeeze(-1)
        assert torch.allclose(lp[i], expected, atol=1e-4)


def test_length_grouped_batches_cover_each_example_once_and_cut_padding():
    """One epoch's batches: every index exactly once, ceil(n / batch) batches, the same for the same seed, a
    new order for another; and far less padding than random batches of the same examples."""
    import random

    from farmlib.lm.supervised import length_grouped_batches

    rng = random.Random(0)
    lengths = [rng.randint(5, 120) for _ in range(1000)]
    batches = length_grouped_batches(lengths, 32, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert len(batches) == -(-1000 // 32)
    assert batches == length_grouped_batches(lengths, 32, seed=3)
    assert batches != length_grouped_batches(lengths, 32, seed=4)

    def real_share(bs):
        return sum(lengths[i] for b in bs for i in b) / sum(max(lengths[i] for i in b) * len(b) for b in bs)

    order = list(range(1000))
    random.Random(3).shuffle(order)
    plain = [order[i:i + 32] for i in range(0, 1000, 32)]
    assert real_share(batches) > 0.9 > real_share(plain) + 0.2, (real_share(batches), real_share(plain))
    flat = length_grouped_batches([0] * 1000, 32, seed=3)  # all lengths equal: plain shuffled batches
    assert sorted(i for b in flat for i in b) == list(range(1000))


def test_a_trimmed_ppo_minibatch_gives_the_same_logprobs_and_values(micro_farm, length_rm):
    """PPO's minibatches leave out the columns that are padding in every row (:func:`ppo.trim`): the
    log-probabilities and values of the real response tokens are those of the untrimmed batch."""
    from farmlib.methods.common import rollout

    tok, policy = micro_farm.tokenizer(), micro_farm.load(micro_farm.sft_model())
    prompts = ["Name an animal.", "Count the words in this long sentence please.", "Sort 3 1 2."]
    torch.manual_seed(0)
    seq, mask, response_mask, nq = rollout(policy, tok, prompts, 1.0, 12)
    idx = torch.tensor([0, 2])  # the two shorter prompts: their left padding is common to both
    lo, t = ppo.trim(mask[idx], response_mask[idx], nq)
    assert lo > 0 and t == int(response_mask[idx].sum(1).max())
    s, m = seq[idx, lo:nq + t], mask[idx, lo:nq + t]
    full_lp, lp = response_logprobs(policy, seq[idx], mask[idx], nq), response_logprobs(policy, s, m, nq - lo)
    rm = length_rm[0]
    full_v = ppo.response_values(rm, seq[idx], mask[idx], nq)
    v = ppo.response_values(rm, s, m, nq - lo)
    real = response_mask[idx, :t].bool()
    assert torch.allclose(lp[real], full_lp[:, :t][real], atol=1e-5)
    assert torch.allclose(v[real], full_v[:, :t][real], atol=1e-5)


def test_a_value_head_on_the_policy_reads_the_states_that_predict_each_token(micro_farm):
    """``logprobs_and_values`` with a :class:`ppo.ValueHead`: one pass through the policy gives the log-probabilities
    ``response_logprobs`` gives, and each value is the head applied to the hidden state at the position that predicts
    that response token; the value loss alone moves the policy's trunk (the head's inputs are not detached)."""
    from farmlib.lm.sampling import positions
    from farmlib.methods.common import rollout

    tok, policy = micro_farm.tokenizer(), micro_farm.load(micro_farm.sft_model())
    head = ppo.ValueHead(policy)
    assert [p.shape for p in head.parameters()] == [torch.Size([1, policy.config.hidden_size]), torch.Size([1])]
    torch.nn.init.normal_(head.head.weight, std=0.1)
    torch.manual_seed(0)
    seq, mask, response_mask, nq = rollout(policy, tok, ["Name an animal.", "Sort 3 1 2."], 0.7, 10)
    logp, v = ppo.logprobs_and_values(policy, head, seq, mask, nq, 0.7)
    assert torch.allclose(logp, response_logprobs(policy, seq, mask, nq, 0.7), atol=1e-5)
    with torch.no_grad():
        hidden = policy.model(input_ids=seq, attention_mask=mask, position_ids=positions(mask)).last_hidden_state
    for t in range(seq.size(1) - nq):
        assert torch.allclose(v[:, t], head.head(hidden[:, nq - 1 + t]).squeeze(-1), atol=1e-5)
    (v * response_mask).sum().backward()
    assert policy.model.layers[0].mlp.down_proj.weight.grad.abs().sum() > 0
    lp, none = ppo.logprobs_and_values(policy, None, seq, mask, nq, 0.7)
    assert none is None and torch.allclose(lp, logp, atol=1e-5)


def test_rewards_read_a_shared_prompt_once_and_score_as_a_whole_reading(micro_farm, length_rm, monkeypatch):
    """Best-of-n's candidates share their prompt: ``rewards`` reads it once and reuses its keys and values,
    and every text gets the score a whole reading of it gives (a prompt with few outputs is read whole)."""
    rm, tok = length_rm[0], micro_farm.tokenizer()
    outs = ["A cow.", "The cow eats grass in the field.", "Cows.", "A cow is an animal that gives milk.",
            "Moo.", "The cow eats grass in the field."]
    recs = [{"instruction": "Name an animal.", "input": "", "output": o} for o in outs]
    recs.append({"instruction": "Sort 3 1 2.", "input": "", "output": "1 2 3"})
    recs += [{"instruction": "Count the words in this sentence.", "input": "one two three", "output": o}
             for o in ("3", "Three.", "There are three words.", "three")]  # a second prompt, a longer one
    calls, reads = [], []
    shared, cache = reward_model._shared_prompt_scores, reward_model._prompt_cache
    monkeypatch.setattr(reward_model, "_shared_prompt_scores", lambda *a: calls.append(a) or shared(*a))
    monkeypatch.setattr(reward_model, "_prompt_cache", lambda m, p: reads.append(len(p)) or cache(m, p))
    got = reward_model.rewards(rm, tok, recs, batch_size=3)
    assert len(calls) == 1 and [len(r) for r in calls[0][2]] == [5, 4]  # two prompts, their distinct outputs
    assert reads == [1, 2, 1]  # batches of 3 responses: a batch reads the prompts it answers, each once
    with torch.no_grad():
        whole = [reward_model._forward(rm, tok, [t], 192).item() for t in reward_model._texts(tok, recs)]
    assert torch.allclose(got, torch.tensor(whole), atol=1e-4), (got, whole)


def test_pair_rewards_read_each_prompt_once_and_match_a_whole_reading(micro_farm, length_rm):
    """Reward-model training reads a pair's prompt once for both outputs (prompts of different lengths,
    left-padded together): the rewards, and their gradients, are those of reading each text whole."""
    rm, tok = length_rm[0], micro_farm.tokenizer()
    batch = [{"instruction": "Name an animal.", "input": "", "output_1": "A cow.", "output_2": "The cow eats grass.",
              "preference": 2},
             {"instruction": "Count the words in this sentence.", "input": "one two three", "output_1": "3",
              "output_2": "There are three words in it.", "preference": 1}]
    r_w, r_l = reward_model.pair_rewards(rm, tok, batch, 192)
    texts = reward_model._texts(tok, [dict(r, output=r[f"output_{r['preference']}"]) for r in batch]) + \
        reward_model._texts(tok, [dict(r, output=r[f"output_{3 - r['preference']}"]) for r in batch])
    whole = torch.stack([reward_model._forward(rm, tok, [t], 192)[0] for t in texts])
    assert torch.allclose(torch.cat([r_w, r_l]), whole, atol=1e-4), (r_w, r_l, whole)
    g_shared = torch.autograd.grad(reward_model.bt_loss(r_w, r_l), rm.score.weight)[0]
    g_whole = torch.autograd.grad(reward_model.bt_loss(whole[:2], whole[2:]), rm.score.weight)[0]
    assert torch.allclose(g_shared, g_whole, atol=1e-5)


def test_prompt_groups_read_each_output_once_and_keep_every_pair():
    """All pairs among k outputs of one instruction become one group of k outputs; each pair's winner and loser
    are found again at its indices. Without ``by_prompt`` every pair is its own group, winner first."""
    ab = {"instruction": "Name an animal.", "input": ""}
    pairs = [dict(ab, output_1="A cow.", output_2="Moo.", preference=1),
             dict(ab, output_1="Moo.", output_2="The cow eats grass.", preference=2),
             dict(ab, output_1="A cow.", output_2="The cow eats grass.", preference=2),
             {"instruction": "Sort 3 1 2.", "input": "", "output_1": "1 2 3", "output_2": "3 2 1", "preference": 1}]
    groups = reward_model.prompt_groups(pairs)
    assert [len(g["outputs"]) for g in groups] == [3, 2] and [len(g["wins"]) for g in groups] == [3, 1]
    for g, prs in ((groups[0], pairs[:3]), (groups[1], pairs[3:])):
        assert [(g["outputs"][w], g["outputs"][lo]) for w, lo in g["wins"]] == \
            [(p[f"output_{p['preference']}"], p[f"output_{3 - p['preference']}"]) for p in prs]
    single = reward_model.prompt_groups(pairs, by_prompt=False)
    assert len(single) == 4 and all(g["wins"] == [(0, 1)] for g in single)
    assert single[1]["outputs"] == ["The cow eats grass.", "Moo."]


def test_group_rewards_score_shared_outputs_as_their_pairs_do(micro_farm, length_rm):
    """Grouped by prompt, the rewards of every pair's winner and loser, and the Bradley–Terry loss and its
    gradient, are those of reading the pairs one by one (:func:`pair_rewards`), for fewer texts read."""
    rm, tok = length_rm[0], micro_farm.tokenizer()
    ab = {"instruction": "Name an animal.", "input": ""}
    pairs = [dict(ab, output_1="A cow.", output_2="Moo.", preference=1),
             dict(ab, output_1="Moo.", output_2="The cow eats grass.", preference=2),
             dict(ab, output_1="A cow.", output_2="The cow eats grass.", preference=2),
             {"instruction": "Count the words in this sentence.", "input": "one two three", "output_1": "3",
              "output_2": "There are three words in it.", "preference": 1}]
    groups = reward_model.prompt_groups(pairs)
    r = reward_model.group_rewards(rm, tok, groups, 192)
    assert len(r) == 5  # 3 + 2 distinct outputs, not 8
    won, lost = reward_model._win_indices(groups)
    p_w, p_l = reward_model.pair_rewards(rm, tok, pairs, 192)
    assert torch.allclose(r[won], p_w, atol=1e-4) and torch.allclose(r[lost], p_l, atol=1e-4)
    g_group = torch.autograd.grad(reward_model.bt_loss(r[won], r[lost]), rm.score.weight)[0]
    g_pairs = torch.autograd.grad(reward_model.bt_loss(*reward_model.pair_rewards(rm, tok, pairs, 192)),
                                  rm.score.weight)[0]
    assert torch.allclose(g_group, g_pairs, atol=1e-5)


# -- a reward model that reads its own likelihood -------------------------------------------------------------
@pytest.fixture(scope="module")
def likelihood_rm(micro_farm):
    return reward_model.new_reward_model(micro_farm.sft_model(), micro_farm.tokenizer(), reads="likelihood")


def _mean_sft_loglik(farm, recs: list[dict]) -> torch.Tensor:
    """The SFT model's mean log-probability of each response (its EOS included), read by the causal LM itself."""
    from farmlib.lm.model import load_model

    lm, tok = load_model(farm.sft_model()), farm.tokenizer()
    out = []
    for r in recs:
        q = tok(format_prompt(r["instruction"], r["input"]), return_tensors="pt")["input_ids"]
        y = tok(r["output"] + tok.eos_token, add_special_tokens=False, return_tensors="pt")["input_ids"]
        seq = torch.cat([q, y], 1)
        with torch.no_grad():
            out.append(response_logprobs(lm, seq, torch.ones_like(seq), q.size(1)).mean())
    return torch.stack(out)


def test_likelihood_rm_starts_as_the_sft_models_mean_log_likelihood(micro_farm, likelihood_rm):
    """Before training (a = 1, head 0) the reward is the SFT model's mean log-probability of the response, whether
    best-of-n's shared-prompt reading, a whole reading, or PPO's rollout layout (left-padded prompts) reads it."""
    from farmlib.methods.common import score

    tok = micro_farm.tokenizer()
    outs = ["A cow.", "The cow eats grass in the field.", "Cows.", "A cow is an animal that gives milk.", "Moo."]
    recs = [{"instruction": "Name an animal.", "input": "", "output": o} for o in outs]
    recs.append({"instruction": "Sort these numbers: 3 1 2.", "input": "", "output": "1 2 3"})
    want = _mean_sft_loglik(micro_farm, recs)
    with torch.no_grad():
        got = reward_model.rewards(likelihood_rm, tok, recs, batch_size=2)  # 5 share a prompt, 1 read whole
        prompts = [tok(format_prompt(r["instruction"], r["input"]))["input_ids"] for r in recs]
        resp = [tok(r["output"] + tok.eos_token, add_special_tokens=False)["input_ids"] for r in recs]
        nq, nr = max(map(len, prompts)), max(map(len, resp))
        seq = torch.full((len(recs), nq + nr), tok.pad_token_id)
        mask = torch.zeros_like(seq)
        for i, (p, y) in enumerate(zip(prompts, resp)):
            seq[i, nq - len(p):nq], seq[i, nq:nq + len(y)] = torch.tensor(p), torch.tensor(y)
            mask[i, nq - len(p):nq + len(y)] = 1
        rollout = score(likelihood_rm, seq, mask, nq)
    assert torch.allclose(got, want, atol=1e-4), (got, want)
    assert torch.allclose(rollout, want, atol=1e-4), (rollout, want)


def test_likelihood_rm_learns_its_weight_and_keeps_it_when_saved(micro_farm, tmp_path):
    """Training moves ``a`` (the head stays 0); saved, the weight lives in the config and scores come back the same."""
    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    rm = reward_model.new_reward_model(sft, tok, reads="likelihood")
    pairs = micro_farm.preference_data("p_sim_ann")
    history = reward_model.fit(rm, tok, pairs, reward_model.RewardModelConfig(epochs=2, lr=1e-4, batch_size=8), 192)
    assert history[-1]["likelihood_weight"] != 1.0 and not rm.score.weight.any()
    recs = [dict(r, output=r["output_1"]) for r in pairs[:6]]
    before = reward_model.rewards(rm, tok, recs)
    reward_model.settle(rm).save_pretrained(tmp_path)
    loaded = reward_model.load_reward_model(str(tmp_path))
    assert loaded.config.likelihood_weight == pytest.approx(history[-1]["likelihood_weight"])
    assert torch.allclose(reward_model.rewards(loaded, tok, recs), before, atol=1e-5)


def test_likelihood_rm_refuses_an_untied_lm_head_and_an_unknown_read(micro_farm, tmp_path):
    from transformers import AutoModelForCausalLM

    sft, tok = micro_farm.sft_model(), micro_farm.tokenizer()
    with pytest.raises(ValueError, match="reward_model.reads is 'middle'"):
        reward_model.new_reward_model(sft, tok, reads="middle")
    lm = AutoModelForCausalLM.from_pretrained(sft)
    lm.config.tie_word_embeddings = False
    lm.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="needs an LM head tied"):
        reward_model.new_reward_model(str(tmp_path), tok, reads="likelihood")
