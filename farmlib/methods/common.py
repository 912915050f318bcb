"""What several methods share: reading a preference pair, log-probabilities of responses, rollouts,
reward-model scores, and running a TRL trainer quietly.

Layout of a batch of responses: prompts left-padded to ``n_query`` tokens, responses right-padded,
so the logits at positions ``n_query-1 .. -2`` predict the response tokens.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.lm.model import load_model
from farmlib.lm.sampling import sample_batch
from farmlib.progress import progress


@dataclass
class PairsFinetuneConfig:
    """Supervised fine-tuning on examples made from preference pairs (FeedME, reward conditioning)."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs
    epochs: float = 2.0  # passes over the examples
    lr: float = 5e-4  # peak learning rate
    batch_size: int = 32  # examples per step
    seed: int = 0  # data order


# -- a preference pair ---------------------------------------------------------------------------
def winner(pair: dict) -> str:
    """The preferred output of an annotated pair (``preference`` 1 or 2)."""
    return pair[f"output_{pair['preference']}"]


def loser(pair: dict) -> str:
    """The other output."""
    return pair[f"output_{3 - pair['preference']}"]


# -- responses under a model -----------------------------------------------------------------------
def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids that skip left padding."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def last_index(mask: torch.Tensor) -> torch.Tensor:
    """Index of the last 1 in each row of ``mask`` (the last real token, whichever side is padded)."""
    return mask.size(1) - 1 - mask.flip(1).argmax(1)


def until_eos(resp: torch.Tensor, eos_id: int) -> torch.Tensor:
    """Mask of the generated tokens: 1 up to and including each row's first EOS, 0 after it.

    Read from the generated length, never from the pad id: when the pad token is the EOS token
    (Pythia, Llama), ``resp != pad`` would also mask the EOS itself.
    """
    is_eos = (resp == eos_id).long()
    return (is_eos.cumsum(1) - is_eos == 0).long()  # no EOS strictly before this token


def response_logits(model, seq: torch.Tensor, mask: torch.Tensor, n_query: int,
                    temperature: float = 1.0) -> torch.Tensor:
    """``[B, T, V]`` logits that predict the response tokens ``seq[:, n_query:]``, divided by the
    sampling ``temperature`` (so their softmax is the distribution the tokens were drawn from)."""
    keep = seq.size(1) - n_query + 1  # the LM head runs only at the last positions, which predict the response
    logits = model(input_ids=seq, attention_mask=mask, position_ids=positions(mask), logits_to_keep=keep).logits
    return logits[:, :-1].float() / temperature


def response_logprobs(model, seq: torch.Tensor, mask: torch.Tensor, n_query: int,
                      temperature: float = 1.0) -> torch.Tensor:
    """``[B, T]`` log-probabilities of the response tokens ``seq[:, n_query:]`` under
    ``softmax(logits / temperature)``."""
    logp = torch.log_softmax(response_logits(model, seq, mask, n_query, temperature), -1)
    return logp.gather(-1, seq[:, n_query:, None]).squeeze(-1)


def head_values(model, seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B, L]`` scalar head of a sequence classifier (reward or value model) at every position.

    The transformer is found through ``base_model_prefix`` (``model`` for Llama, ``gpt_neox`` for
    GPT-NeoX), so any ``AutoModelForSequenceClassification`` with a ``score`` head works.
    """
    backbone = getattr(model, model.base_model_prefix)
    hidden = backbone(input_ids=seq, attention_mask=mask, position_ids=positions(mask)).last_hidden_state
    return model.score(hidden).squeeze(-1).float()


def score(rm, seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The reward model's score of each sequence, read at its last real token (the last 1 of ``mask``,
    so an EOS counts even when it is also the pad token)."""
    return head_values(rm, seq, mask)[torch.arange(seq.size(0)), last_index(mask)]


@torch.no_grad()
def rollout(policy, tok, prompts: list[str], temperature: float, max_new_tokens: int):
    """Sample responses; return (seq, mask, response mask, n_query). The response mask covers each
    response up to and including its first EOS."""
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    device = next(policy.parameters()).device
    q, qm = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    resp = sample_batch(policy, q, qm, tok.eos_token_id, tok.pad_token_id, temperature, max_new_tokens)
    if resp.size(1) == 0:  # nothing generated at all: one EOS each
        resp = torch.full((q.size(0), 1), tok.eos_token_id, device=device)
    response_mask = until_eos(resp, tok.eos_token_id)
    return torch.cat([q, resp], 1), torch.cat([qm, response_mask], 1), response_mask.float(), q.size(1)


# -- TRL trainers (DPO, KTO) -----------------------------------------------------------------------
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


def run_trl(farm, sft: str, work: Path, config_cls, trainer_cls, cfg, data, desc: str) -> None:
    """Train a TRL preference trainer (DPO, KTO) from ``sft`` against a frozen SFT reference; save the
    model, tokenizer and TRL's log (``history.json``) into ``work``."""
    import datasets

    datasets.disable_progress_bars()  # TRL tokenizes with datasets.map: its bars are noise in the book
    tok, prof = farm.tokenizer(), farm.profile
    # TRL still calls transformers' deprecated gradient_checkpointing names: FutureWarnings on the page
    warnings.filterwarnings("ignore", message=".*gradient_checkpointing.* is deprecated", category=FutureWarning)
    args = config_cls(
        output_dir=str(work / "trl"), beta=cfg.beta, num_train_epochs=cfg.epochs, learning_rate=cfg.lr,
        per_device_train_batch_size=cfg.batch_size, lr_scheduler_type="cosine", warmup_steps=0.05,
        logging_steps=1, save_strategy="no", report_to=[], seed=cfg.seed, data_seed=cfg.seed, use_cpu=prof.device == "cpu",
        max_length=prof.model.max_length, disable_tqdm=True, bf16=False,
    )
    model = load_model(sft, prof.device).train()
    trainer = quiet(trainer_cls(model=model, ref_model=load_model(sft, prof.device), args=args,
                                train_dataset=data, processing_class=tok), desc)
    trainer.train()
    model.save_pretrained(work)
    tok.save_pretrained(work)
    write_json(work / "history.json", [h for h in trainer.state.log_history if "loss" in h])
