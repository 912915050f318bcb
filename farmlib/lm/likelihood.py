"""How likely a model finds the responses of a batch: ``log pi(y | x)``, summed over the response's tokens.

The preference methods (DPO, KTO) and the reward model's backward reader all read it; it lives beside the model
rather than in any of them, so that editing one method's loss leaves the others' artifacts where they are.
"""

from __future__ import annotations

import torch

from farmlib.lm.model import logits_at


def sequence_logprobs(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``log pi(y|x)`` of each row of a :func:`~farmlib.lm.supervised.collate` batch: the sum over the
    labelled (response) tokens."""
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    keep = torch.nn.functional.pad(mask, (0, 1))  # the LM head runs only where a response token is predicted
    logits = logits_at(model, keep, input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).float()
    logp = torch.log_softmax(logits, -1).gather(-1, labels[mask][:, None]).squeeze(-1)
    per_token = torch.zeros(labels.shape, dtype=logp.dtype, device=logp.device).masked_scatter(mask, logp)
    return per_token.sum(1)
