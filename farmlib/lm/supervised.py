"""Supervised fine-tuning (and the base model's pretraining): next-token loss, one loop.

``train_lm`` fits a causal LM to (prompt, completion) pairs, with the loss on completion
tokens only; pretraining is the same call with empty prompts. The loop is plain PyTorch so the
loss is in view; it checkpoints into its work folder and resumes from there if interrupted.

Launched with several processes (``accelerate launch --num_processes N``, or ``torchrun``), it is data
parallel through ``accelerate``: every process builds the same global batch and trains on its share, and
the loss is weighted so that the gradient is the one-process gradient of the whole batch. In a single
process nothing of this runs and the loop is as it always was.
"""

from __future__ import annotations

import atexit
import math
import os
import random
import time
from pathlib import Path

import torch

from farmlib.lm.model import adds_bos, logits_at
from farmlib.profiles import TrainConfig
from farmlib.progress import progress
from farmlib.seeding import rng_state, set_rng_state


def encode_pairs(tokenizer, pairs: list[tuple[str, str]], max_length: int) -> list[tuple[list[int], int]]:
    """Token ids of prompt+completion+EOS, and the number of prompt tokens (not trained on); the prompt starts
    with BOS where the tokenizer puts one before a text (:func:`~farmlib.lm.model.adds_bos`), as when sampling."""
    out = []
    bos = [tokenizer.bos_token_id] if adds_bos(tokenizer) else []
    for prompt, completion in pairs:
        p = bos + (tokenizer(prompt, add_special_tokens=False)["input_ids"] if prompt else [])
        c = tokenizer(completion, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids = (p + c)[:max_length]
        out.append((ids, min(len(p), len(ids))))
    return out


def collate(batch: list[tuple[list[int], int]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded ids, attention mask, and labels with prompt and padding set to -100."""
    L = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), L), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), L), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), L), dtype=torch.long)
    for i, (ids, n_prompt) in enumerate(batch):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, n_prompt: len(ids)] = torch.tensor(ids[n_prompt:])
        mask[i, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "labels": labels}


def length_grouped_batches(lengths: list[int], batch_size: int, seed: int, group: int = 16) -> list[list[int]]:
    """One epoch's batches of indices: shuffled, then sorted by length inside windows of ``group`` batches,
    and the batches shuffled again. Each batch holds examples of similar length, so little of it is padding
    (on tiny's SFT set, 54 % of the tokens of a random batch are real, about 95 % of a grouped one), while
    which examples meet in a batch and the batch order stay random. Same lengths and seed, same batches."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    window = batch_size * group
    batches = []
    for s in range(0, len(order), window):
        chunk = sorted(order[s:s + window], key=lambda j: lengths[j])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def lm_loss(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean next-token cross-entropy over the labelled tokens (logits computed only where a label follows)."""
    labels = batch["labels"][:, 1:]
    keep = torch.nn.functional.pad(labels != -100, (0, 1))  # position t predicts the label at t + 1
    logits = logits_at(model, keep, input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    return torch.nn.functional.cross_entropy(logits.float(), labels[labels != -100])


def _end_process_group() -> None:
    """Close the process group before the interpreter exits: left to the C++ destructors, gloo's threads can
    abort the process after its work is done (SIGABRT, "terminate called without an active exception")."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _distributed():
    """An ``accelerate.Accelerator`` when launched with several processes, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    from accelerate import Accelerator

    acc = Accelerator(cpu=not torch.cuda.is_available())  # on CPU: gloo
    atexit.unregister(_end_process_group)  # once, however many times this process trains
    atexit.register(_end_process_group)
    if acc.num_processes != int(os.environ["WORLD_SIZE"]):  # else each process would train on everything
        raise RuntimeError(f"launched with {os.environ['WORLD_SIZE']} processes, but accelerate sees {acc.num_processes}")
    return acc


def _shard_loss(acc, model, batch, has_data: bool) -> tuple[torch.Tensor, float]:
    """(what to backpropagate, the whole batch's loss): this process's summed token loss, scaled so that
    the gradient averaged over processes is that of the mean over every process's labelled tokens."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logits, labels = logits[:, :-1], batch["labels"][:, 1:]
    total = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1),
                                              ignore_index=-100, reduction="sum") * float(has_data)
    count = (labels != -100).sum() * int(has_data)
    n = acc.reduce(count.detach().clone(), reduction="sum")
    whole = acc.reduce(total.detach().clone(), reduction="sum") / n
    return total * acc.num_processes / n, whole.item()


def lr_at(step: int, total: int, cfg: TrainConfig) -> float:
    """Linear warm-up then cosine decay to 0."""
    warm = max(1, int(cfg.warmup_ratio * total))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def train_lm(model, tokenizer, pairs: list[tuple[str, str]], cfg: TrainConfig, workdir: Path | None = None,
             max_length: int = 256, device: str = "cpu", desc: str = "train") -> list[dict]:
    """Fit ``model`` to the pairs; return the history (step, epoch, loss, lr, tokens, seconds)."""
    data = encode_pairs(tokenizer, pairs, max_length)
    steps_per_epoch = math.ceil(len(data) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    total = int(total if cfg.max_steps < 0 else min(total, cfg.max_steps))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.95))
    acc = _distributed()
    if acc is not None:
        device = acc.device
    model.to(device).train()
    history: list[dict] = []
    start = 0
    ckpt = workdir / "checkpoint.pt" if workdir else None
    torch.manual_seed(cfg.seed)  # dropout (LoRA's); the data order has its own generator below
    if ckpt and ckpt.exists():  # resume an interrupted run where it stopped, generator state included
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        history, start = state["history"], state["step"]
        if "rng" in state:  # (checkpoints of older versions lack it)
            set_rng_state(state["rng"])
    if acc is not None:
        net, opt = acc.prepare(model, opt)
    batches: list[list[int]] = []
    lengths = [len(ids) if cfg.group_by_length else 0 for ids, _ in data]  # all 0: plain shuffled batches
    t0, tokens = time.time(), 0
    bar = progress(range(start, total), desc=desc, leave=False, mininterval=2)
    if acc is not None and not acc.is_main_process:
        bar = range(start, total)
    for step in bar:
        epoch = step // steps_per_epoch
        if not batches or step % steps_per_epoch == 0:
            batches = length_grouped_batches(lengths, cfg.batch_size, cfg.seed * 1000 + epoch)
        items = [data[j] for j in batches[step % steps_per_epoch]]
        if acc is not None:  # this process's share (a process left without one computes a zero loss)
            mine = items[acc.process_index::acc.num_processes]
            items, has_data = mine or items[:1], bool(mine)
        batch = collate(items, tokenizer.pad_token_id)
        batch = {k: v.to(device) for k, v in batch.items()}
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, cfg)
        if acc is None:
            loss = lm_loss(model, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            loss_value = loss.item()
        else:
            loss, loss_value = _shard_loss(acc, net, batch, has_data)
            opt.zero_grad(set_to_none=True)
            acc.backward(loss)
            acc.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        tokens += int(batch["attention_mask"].sum())
        history.append({"step": step, "epoch": step / steps_per_epoch, "loss": loss_value,
                        "lr": opt.param_groups[0]["lr"], "tokens": tokens, "seconds": time.time() - t0})
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{loss_value:.3f}")
        if ckpt and (step + 1) % cfg.save_every == 0 and step + 1 < total and (acc is None or acc.is_main_process):
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "history": history,
                        "step": step + 1, "rng": rng_state()}, ckpt)
    if ckpt and ckpt.exists():
        ckpt.unlink()
    model.eval()
    return history
