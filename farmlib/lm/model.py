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


def load_tokenizer(path_or_name: str | Path) -> PreTrainedTokenizerFast:
    tok = AutoTokenizer.from_pretrained(str(path_or_name))
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
    model = AutoModelForCausalLM.from_pretrained(str(path_or_name), dtype=dtype or torch.float32)
    return model.to(device).eval()


@functools.cache
def _cache_name(model_class: type) -> str:
    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


def cache_kwargs(model, cache) -> dict:
    """``{name: cache}`` for ``model``'s forward: transformers 5.24 renamed ``past_key_values`` to ``cache``
    (the old name warns), earlier 5.x releases take ``past_key_values``. Looked up once per model class (the
    sampler calls this at every token)."""
    return {_cache_name(type(model)): cache}


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
