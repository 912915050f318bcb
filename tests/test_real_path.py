"""The real-model path on CPU: tiny GPT-NeoX models built from configs (Pythia's architecture), with
tokenizers like Pythia's and Llama's (the pad token is the EOS token, or there is none and padding is
on the right)."""

from types import SimpleNamespace

import pytest
import torch
from tokenizers import Tokenizer
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, GPTNeoXForSequenceClassification, PreTrainedTokenizerFast

from farmlib.lm.model import EOS, train_tokenizer
from farmlib.methods.common import rollout, score, until_eos

CORPUS = ["Give three tips for staying healthy. Eat well, sleep well and walk every day.",
          "Name a fruit that is yellow. A banana is yellow when it is ripe.",
          "Preferred: a", "Preferred: b", " a b a b"] * 20


@pytest.fixture(scope="module")
def tok():
    """A left-padding tokenizer whose pad token is its EOS token (as ``load_tokenizer`` makes Pythia's)."""
    t = train_tokenizer(CORPUS, vocab_size=300)
    t.pad_token = t.eos_token
    return t


def neox_config(tok, **kw) -> GPTNeoXConfig:
    return GPTNeoXConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=1024, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, **kw)


def neox_lm(tok, seed: int = 0) -> GPTNeoXForCausalLM:
    torch.manual_seed(seed)
    return GPTNeoXForCausalLM(neox_config(tok)).eval()


def neox_classifier(tok, seed: int = 0) -> GPTNeoXForSequenceClassification:
    """A GPT-NeoX reward/value model (its transformer is ``.gpt_neox``, not ``.model``)."""
    torch.manual_seed(seed)
    return GPTNeoXForSequenceClassification(neox_config(tok, num_labels=1)).eval()


def always_eos(tok) -> GPTNeoXForCausalLM:
    """A policy whose every next token is EOS: the final layer norm outputs a constant and only the
    EOS row of the output layer reads it."""
    model = neox_lm(tok)
    with torch.no_grad():
        model.gpt_neox.final_layer_norm.weight.zero_()
        model.gpt_neox.final_layer_norm.bias.fill_(1.0)
        model.get_output_embeddings().weight.zero_()
        model.get_output_embeddings().weight[tok.eos_token_id] = 1.0
    return model


def head(classifier, seq, mask) -> torch.Tensor:
    """``[B, L]``: a GPT-NeoX classifier's scalar head at every position, computed by hand."""
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    hidden = classifier.gpt_neox(input_ids=seq, attention_mask=mask, position_ids=pos).last_hidden_state
    return classifier.score(hidden).squeeze(-1)


def batch_of(tok, prompts: list[str], responses: list[list[int]]):
    """Left-padded prompts, responses right-padded with the pad token (= EOS): (seq, mask, n_query)."""
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    T = max(map(len, responses))
    resp = torch.tensor([r + [tok.pad_token_id] * (T - len(r)) for r in responses])
    resp_mask = torch.tensor([[1] * len(r) + [0] * (T - len(r)) for r in responses])
    return (torch.cat([enc["input_ids"], resp], 1), torch.cat([enc["attention_mask"], resp_mask], 1),
            enc["input_ids"].size(1))


# -- the response mask comes from the generated length, not from the pad id ------------------------
def test_until_eos_keeps_the_first_eos_and_drops_what_follows():
    eos = 0
    resp = torch.tensor([[5, 6, eos, eos, eos], [eos, eos, eos, eos, eos], [5, 6, 7, 8, 9], [5, eos, 6, eos, 7]])
    assert until_eos(resp, eos).tolist() == [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]]


def test_an_eos_only_response_is_one_real_token_when_pad_is_eos(tok):
    """Pythia/Llama: the pad token is EOS. A response that is just EOS is still one token (it gets the
    gradient for stopping and PPO puts the reward on it), and the sequence mask attends to it."""
    assert tok.pad_token_id == tok.eos_token_id
    seq, mask, response_mask, nq = rollout(always_eos(tok), tok, ["Name a fruit.", "Give three tips."], 1.0, 8)
    assert seq[:, nq:].tolist() == [[tok.eos_token_id]] * 2
    assert response_mask.tolist() == [[1.0], [1.0]]
    assert mask[:, -1].tolist() == [1, 1]


def test_reward_model_reads_the_eos_when_pad_is_eos(tok):
    """The reward model's score of a rollout is its head at the response's EOS (the last real token),
    not at the token before it, and training (``reward_model.rewards``) reads the same place."""
    from farmlib.methods import reward_model
    from farmlib.world import format_prompt

    rm = neox_classifier(tok)
    rec = {"instruction": "Name a fruit.", "input": "", "output": "A banana"}
    prompt = format_prompt(rec["instruction"], rec["input"])
    out_ids = tok(rec["output"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    long = tok("Give three tips for staying healthy, please.", add_special_tokens=False)["input_ids"]
    seq, mask, nq = batch_of(tok, [prompt, "Give three tips."], [out_ids, long])
    with torch.no_grad():
        r = score(rm, seq, mask)
        at_eos, before_eos = head(rm, seq, mask)[0, nq + len(out_ids) - 1], head(rm, seq, mask)[0, nq + len(out_ids) - 2]
        trained = reward_model.rewards(rm, tok, [rec])
    assert r[0].item() == pytest.approx(at_eos.item(), abs=1e-5)
    assert abs(at_eos - before_eos).item() > 1e-3  # the two places really differ
    assert trained[0].item() == pytest.approx(r[0].item(), abs=1e-4)



# -- the value model's transformer is found through base_model_prefix ------------------------------
def test_ppo_values_from_a_gpt_neox_value_model(tok):
    """``response_values`` works on a GPT-NeoX classifier (``.gpt_neox``, no ``.model``): the value before
    response token t is the classifier's own score of the sequence cut just before t."""
    from farmlib.methods.ppo import response_values

    vm = neox_classifier(tok)
    ids = tok("Give three tips for staying healthy.", add_special_tokens=False)["input_ids"]
    nq = 4
    seq, mask = torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)
    with torch.no_grad():
        v = response_values(vm, seq, mask, nq)
        prefix_scores = [vm(input_ids=seq[:, :nq + t]).logits[0, 0].item() for t in range(len(ids) - nq)]
    assert v.shape == (1, len(ids) - nq)
    assert v[0].tolist() == pytest.approx(prefix_scores, abs=1e-5)


# -- log-probabilities at the sampling temperature -------------------------------------------------
def sampled_logprobs(model, seq, mask, nq, temperature: float) -> torch.Tensor:
    """By hand: ``log_softmax(logits / T)`` of each response token."""
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=seq, attention_mask=mask, position_ids=pos).logits[:, nq - 1:-1] / temperature
    return torch.log_softmax(logits, -1).gather(-1, seq[:, nq:, None]).squeeze(-1)


PROMPTS = ["Name a fruit.", "Give three tips for staying healthy."]


def test_held_out_kl_is_at_the_sampling_temperature(tok):
    """PPO's held-out KL: sampled at T = 0.5, the KL is between the policy and the reference both at T."""
    from farmlib.methods.ppo import held_out

    policy, ref, rm = neox_lm(tok, seed=1), neox_lm(tok, seed=2), neox_classifier(tok)
    T = 0.5
    torch.manual_seed(0)
    got = held_out(policy, ref, rm, tok, PROMPTS, T, max_new_tokens=6)
    torch.manual_seed(0)  # the same samples again
    with torch.no_grad():
        seq, mask, response_mask, nq = rollout(policy, tok, PROMPTS, T, 6)
        kl = (sampled_logprobs(policy, seq, mask, nq, T) - sampled_logprobs(ref, seq, mask, nq, T)) * response_mask
        kl_at_1 = (sampled_logprobs(policy, seq, mask, nq, 1.0) - sampled_logprobs(ref, seq, mask, nq, 1.0)) * response_mask
    assert abs(kl.sum(1).mean() - kl_at_1.sum(1).mean()).item() > 0.01  # T matters here
    assert got["kl"] == pytest.approx(kl.sum(1).mean().item(), abs=1e-4)


def test_ppo_experience_at_the_sampling_temperature(tok):
    """The log-probabilities PPO keeps for the ratio, and its KL penalty, are ``log_softmax(logits / T)``;
    and with pad = EOS an EOS-only response still carries the reward-model score."""
    from farmlib.methods.ppo import PPOConfig, experience

    policy, ref, vm, rm = neox_lm(tok, seed=1), neox_lm(tok, seed=2), neox_classifier(tok, 3), neox_classifier(tok, 4)
    cfg = PPOConfig(temperature=0.5, kl_coef=0.1)
    ex = experience(policy, ref, vm, rm, tok, PROMPTS, cfg, max_new_tokens=6)
    seq, mask, m, nq = ex["seq"], ex["mask"], ex["response_mask"], ex["n_query"]
    with torch.no_grad():
        logp, ref_logp = sampled_logprobs(policy, seq, mask, nq, 0.5), sampled_logprobs(ref, seq, mask, nq, 0.5)
    assert torch.allclose(ex["logp"] * m, logp * m, atol=1e-5)
    assert torch.allclose(ex["kl"], (logp - ref_logp) * m, atol=1e-5)
    assert torch.allclose(ex["rewards"].sum(1), ex["score"] - 0.1 * ex["kl"].sum(1), atol=1e-5)

    ex = experience(always_eos(tok), ref, vm, rm, tok, PROMPTS, cfg, max_new_tokens=6)
    assert ex["response_mask"].tolist() == [[1.0], [1.0]]
    assert torch.allclose((ex["rewards"] * ex["response_mask"]).sum(1), ex["score"] - 0.1 * ex["kl"].sum(1), atol=1e-5)


def test_quark_loss_at_the_sampling_temperature(tok):
    """Quark's NLL and KL read both models' logits divided by T (the reference without the tag)."""
    from farmlib.methods.quark import TAG, QuarkConfig, _batch, batch_loss, quark_loss

    policy, ref = neox_lm(tok, seed=1), neox_lm(tok, seed=2)
    responses = [tok(" a banana", add_special_tokens=False)["input_ids"] + [tok.eos_token_id], [tok.eos_token_id]]
    loss, nll, kl = batch_loss(policy, ref, tok, PROMPTS, responses, QuarkConfig(temperature=0.5, kl_coef=0.3))
    seq, mask, resp_mask, nq = _batch(tok, [TAG + p for p in PROMPTS], responses)
    ref_seq, ref_mask, _, ref_nq = _batch(tok, PROMPTS, responses)
    pos = lambda m: (m.cumsum(-1) - 1).clamp(min=0)  # noqa: E731
    with torch.no_grad():
        logits = policy(input_ids=seq, attention_mask=mask, position_ids=pos(mask)).logits[:, nq - 1:-1] / 0.5
        ref_logits = ref(input_ids=ref_seq, attention_mask=ref_mask, position_ids=pos(ref_mask)).logits[:, ref_nq - 1:-1]
        expected = quark_loss(logits, ref_logits / 0.5, seq[:, nq:], resp_mask, 0.3)
        at_1 = quark_loss(logits * 0.5, ref_logits, seq[:, nq:], resp_mask, 0.3)
    assert abs(at_1[0] - expected[0]).item() > 1e-3  # T matters here
    assert [loss.item(), nll.item(), kl.item()] == pytest.approx([e.item() for e in expected], abs=1e-5)


# -- Quark's batches live on the policy's device ---------------------------------------------------
class WhereAmI(torch.nn.Module):
    """A stand-in causal LM on ``device`` that records the devices of the tensors it is given."""

    def __init__(self, device: str, vocab: int):
        super().__init__()
        self.w, self.vocab, self.seen = torch.nn.Parameter(torch.zeros(1, device=device)), vocab, set()

    def forward(self, input_ids, attention_mask, position_ids, logits_to_keep=0):
        self.seen |= {t.device.type for t in (input_ids, attention_mask, position_ids)}
        logits = self.w + torch.zeros(*input_ids.shape, self.vocab, device=self.w.device)
        return SimpleNamespace(logits=logits[:, -logits_to_keep:])  # as HF: the last positions (0: all)


def test_quark_batches_are_built_on_the_policys_device(tok):
    """``batch_loss`` builds its tensors where the policy is (here the ``meta`` device, standing in for a
    GPU): a batch left on the CPU would not run there."""
    from farmlib.methods.quark import QuarkConfig, _batch, batch_loss

    responses = [[5, 6, tok.eos_token_id], [tok.eos_token_id]]
    assert {t.device.type for t in _batch(tok, PROMPTS, responses, "meta")[:3]} == {"meta"}
    policy, ref = WhereAmI("meta", len(tok)), WhereAmI("meta", len(tok))
    loss, _, _ = batch_loss(policy, ref, tok, PROMPTS, responses, QuarkConfig())
    assert policy.seen == ref.seen == {"meta"} and loss.device.type == "meta"


# -- the local LM judge reads each prompt's own last token -----------------------------------------
@pytest.mark.parametrize("pad", [None, EOS])
def test_lm_judge_answer_does_not_depend_on_the_batch(tok, pad):
    """With a tokenizer like GPT-NeoX/Pythia's (pads on the right, no pad token as shipped), the judge's
    label log-probabilities for a comparison are the same alone and beside a longer one."""
    from farmlib.annotators.lm_judge import LMJudge

    right = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(tok.backend_tokenizer.to_str()),
                                    eos_token=EOS, pad_token=pad, padding_side="right")
    model = neox_lm(right, seed=5)
    short = {"instruction": "Name a fruit.", "input": "", "output_1": "A banana.", "output_2": "A carrot."}
    long = {"instruction": "Give three tips for staying healthy.", "input": "Be brief, please.",
            "output_1": "Eat well, sleep well and walk every day.", "output_2": "Name a fruit that is yellow."}
    # a fresh judge per call: a judge reads each distinct prompt once and would answer the second time from memory
    alone = LMJudge(model, right, batch_size=2).label_logprobs([short])
    beside = LMJudge(model, right, batch_size=2).label_logprobs([short, long])
    assert torch.allclose(beside[:1], alone, atol=1e-5)
    assert torch.allclose(beside[1:], LMJudge(model, right, batch_size=2).label_logprobs([long]), atol=1e-5)
