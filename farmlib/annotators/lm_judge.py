"""A local causal LM as judge: the preference is read from the log-probabilities of ``a`` and ``b``.

Works with any HF causal LM (a small local model, or a 7B instruction model on a GPU). The prompt
(:func:`farmlib.annotators.prompts.completion_prompt`) ends with ``Preferred:``; the judge compares the
next-token log-probabilities of `` a`` and `` b``. At temperature 0 it takes the larger, otherwise
it samples from the two-way softmax. Outputs are shown in a seeded random order, and cost is the
measured seconds (there is no bill).
"""

from __future__ import annotations

import random
import time

import torch

from farmlib.annotators.prompts import completion_prompt
from farmlib.lm.model import logits_at


class LMJudge:
    """``annotate_pairs`` with a local causal LM."""

    def __init__(self, model, tokenizer, name: str = "lm_judge", temperature: float = 0.0,
                 batch_size: int = 8, max_length: int | None = None, seed: int = 0,
                 reads: dict | None = None):
        if tokenizer.pad_token is None:  # GPT-NeoX/Pythia and Llama tokenizers ship without one
            tokenizer.pad_token = tokenizer.eos_token
        self.model, self.tok, self.name = model.eval(), tokenizer, name
        self.temperature, self.batch_size, self.seed = temperature, batch_size, seed
        self.max_length = max_length or getattr(model.config, "max_position_embeddings", 2048)
        self.labels = [self._label_id(" a"), self._label_id(" b")]
        if self.labels[0] == self.labels[1]:
            raise ValueError(f"judge {name!r}: the tokenizer maps ' a' and ' b' to the same first token")
        self.seconds, self.comparisons = 0.0, 0
        # prompt -> label log-probabilities. Judges on the same model and tokenizer read a prompt alike (they differ
        # in temperature and seed only), so a pool of them may share one dict (``reads``): 13 members, one read.
        self._read: dict[str, torch.Tensor] = {} if reads is None else reads

    def _label_id(self, text: str) -> int:
        return self.tok(text, add_special_tokens=False)["input_ids"][0]

    @torch.no_grad()
    def label_logprobs(self, records: list[dict]) -> torch.Tensor:
        """``[n, 2]`` log-probabilities of the labels a and b (renormalised over the two). Each distinct prompt
        is read once per judge (a pair shown in the same order again is not re-read), in batches of prompts of
        similar length, and the LM head runs at each prompt's last token only."""
        device = next(self.model.parameters()).device
        prompts = [completion_prompt(r) for r in records]
        todo = sorted({p for p in prompts if p not in self._read}, key=lambda p: (len(p), p))  # not by hash order
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i:i + self.batch_size]
            side, self.tok.truncation_side = self.tok.truncation_side, "left"  # keep the end of the prompt
            enc = self.tok(chunk, return_tensors="pt", padding=True, truncation=True, max_length=self.max_length)
            self.tok.truncation_side = side
            ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding does not shift positions
            end = mask.size(1) - 1 - mask.flip(1).argmax(1)  # each prompt's last token, whichever side pads
            keep = torch.zeros_like(mask, dtype=torch.bool)
            keep[torch.arange(len(chunk), device=device), end] = True
            logits = logits_at(self.model, keep, input_ids=ids, attention_mask=mask, position_ids=positions)
            self._read.update(zip(chunk, torch.log_softmax(logits[:, self.labels].float(), dim=-1).cpu()))
        return torch.stack([self._read[p] for p in prompts]) if prompts else torch.zeros(0, 2)

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        rng = random.Random(f"{self.name}-{self.seed}-{seed}")
        t0 = time.perf_counter()
        swaps = [rng.random() < 0.5 for _ in records]
        shown = [dict(r, output_1=r["output_2"], output_2=r["output_1"]) if s else r for r, s in zip(records, swaps)]
        lp = self.label_logprobs(shown)
        out = []
        for r, s, (la, lb) in zip(records, swaps, lp.tolist()):
            if self.temperature == 0:
                p = 2 if lb > la else 1
            else:
                p = 2 if rng.random() < torch.sigmoid(torch.tensor((lb - la) / self.temperature)).item() else 1
            out.append(dict(r, preference=3 - p if s else p, annotator=self.name))
        self.seconds += time.perf_counter() - t0
        self.comparisons += len(records)
        return out

    def seconds_per_1000(self) -> float:
        return 1000 * self.seconds / max(self.comparisons, 1)
