"""Direct preference optimisation (Rafailov et al., 2023) with TRL's ``DPOTrainer``, beta = 0.1.

DPO skips the reward model: with ``pi`` the policy and ``ref`` the frozen SFT model, each pair's
implicit rewards are ``beta * log(pi(y|x) / ref(y|x))`` and the loss is Bradley–Terry on them
(:func:`dpo_loss`, the same formula TRL minimises, written out here so it can be read and tested).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from farmlib.artifacts import write_json
from farmlib.model import load_model
from farmlib.world import format_prompt


@dataclass
class DPOMethodConfig:
    annotator: str = "p_sim_ann"
    beta: float = 0.1
    epochs: float = 2.0
    lr: float = 5e-4
    batch_size: int = 32
    seed: int = 0


def dpo_loss(pi_chosen: torch.Tensor, pi_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean DPO loss and the per-pair implicit reward margin, from sequence log-probabilities."""
    margin = beta * ((pi_chosen - ref_chosen) - (pi_rejected - ref_rejected))
    return -F.logsigmoid(margin).mean(), margin


def quiet(trainer, desc: str):
    """A TRL/transformers trainer that shows one tqdm bar instead of printing every log line."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

    from farmlib.progress import progress

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
    args = config_cls(
        output_dir=str(work / "trl"), beta=cfg.beta, num_train_epochs=cfg.epochs, learning_rate=cfg.lr,
        per_device_train_batch_size=cfg.batch_size, lr_scheduler_type="cosine", warmup_steps=0.05,
        logging_steps=1, save_strategy="no", report_to=[], seed=cfg.seed, use_cpu=prof.device == "cpu",
        max_length=prof.model.max_length, disable_tqdm=True, bf16=False,
    )
    model = load_model(sft, prof.device).train()
    trainer = quiet(trainer_cls(model=model, ref_model=load_model(sft, prof.device), args=args,
                                train_dataset=data, processing_class=tok), desc)
    trainer.train()
    model.save_pretrained(work)
    tok.save_pretrained(work)
    write_json(work / "history.json", [h for h in trainer.state.log_history if "loss" in h])


def train(farm, cfg: DPOMethodConfig | None = None) -> str:
    """DPO from the SFT model on the annotator's pairs; the artifact keeps TRL's log as ``history.json``."""
    cfg = cfg or DPOMethodConfig(**farm.profile.methods.get("dpo", {}))
    prefs, sft, tok = farm.preference_data(cfg.annotator), farm.sft_model(), farm.tokenizer()

    def build(work: Path) -> None:
        from datasets import Dataset
        from trl import DPOConfig, DPOTrainer

        t0 = time.time()
        data = Dataset.from_list([{
            "prompt": format_prompt(r["instruction"], r["input"]),
            "chosen": r[f"output_{r['preference']}"] + tok.eos_token,
            "rejected": r[f"output_{3 - r['preference']}"] + tok.eos_token} for r in prefs])
        run_trl(farm, sft, work, DPOConfig, DPOTrainer, cfg, data, "dpo")
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "pairs": len(prefs)})

    return str(farm.store.get_or_build("dpo", {"sft": farm.key(sft), "n": len(prefs), **asdict(cfg)}, build))
