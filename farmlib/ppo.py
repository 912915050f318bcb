"""PPO against the surrogate reward model, in one file (TRL 1.x has no PPO).

One step of the loop (:func:`train`):

1. **Rollout.** Sample a response for each of ``rollout_batch`` prompts from the policy.
2. **Score.** The reward model scores each (prompt, response). Per token, the reward is
   ``-kl_coef * (log pi - log ref)`` (a fixed KL penalty to the SFT model), plus the reward
   model's score on the last token.
3. **Advantages.** GAE with gamma = lambda = 1 (:func:`gae`): the return of a token is the sum of
   the rewards from it to the end. Advantages are whitened over the whole rollout batch
   (:func:`whiten`), not per minibatch.
4. **Update.** ``ppo_epochs`` passes over minibatches of the rollout with the clipped policy loss
   (:func:`policy_loss`) and the clipped value loss (:func:`value_loss`); gradient norms clipped;
   the learning rate decays linearly to 0 over the run.

Layout: prompts are left-padded to ``Lq`` and responses right-padded to ``T``, so the logits at
positions ``Lq-1 .. Lq+T-2`` predict the response tokens and the value at position ``Lq-1+t`` is
the value of the state before response token ``t``. The value model is a copy of the reward model
whose scalar head is read at every position.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.model import load_model
from farmlib.progress import progress
from farmlib.reward_model import load_reward_model
from farmlib.sampling import sample_batch
from farmlib.world import format_prompt


@dataclass
class PPOConfig:
    steps: int = 40
    rollout_batch: int = 64
    minibatch: int = 32
    ppo_epochs: int = 2
    lr: float = 1e-4
    kl_coef: float = 0.02
    clip: float = 0.2
    value_clip: float = 0.2
    max_grad_norm: float = 1.0
    temperature: float = 1.0
    split: str = "unlabeled"
    n_eval_prompts: int = 128  # held-out (val) prompts for reward and KL before/after
    eval_every: int = 10
    seed: int = 0


# --- the loss pieces (unit-tested on hand-computed tensors) ----------------------------------
def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Normalise to mean 0, std 1 over the masked entries of the *whole* tensor."""
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) * torch.rsqrt(var + eps) * mask


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0,
        lam: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over ``[B, T]`` tensors; returns (advantages, returns)."""
    values, rewards = values * mask, rewards * mask
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.size(1))):
        next_v = values[:, t + 1] if t + 1 < rewards.size(1) else torch.zeros_like(last)
        delta = rewards[:, t] + gamma * next_v - values[:, t]
        last = delta + gamma * lam * last  # padding has zero reward and value, so it adds nothing
        adv[:, t] = last
    adv = adv * mask
    return adv, (adv + values) * mask


def policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, mask: torch.Tensor,
                clip: float = 0.2) -> tuple[torch.Tensor, torch.Tensor]:
    """Clipped surrogate ``mean(max(-A r, -A clip(r, 1-e, 1+e)))`` and the clipped fraction."""
    ratio = torch.exp(logp - old_logp)
    loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip))
    clipped = ((ratio - 1).abs() > clip).float()
    return masked_mean(loss, mask), masked_mean(clipped, mask)


def value_loss(v: torch.Tensor, old_v: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor,
               clip: float = 0.2) -> torch.Tensor:
    """Clipped value loss ``0.5 * mean(max((v - R)^2, (old_v + clip(v - old_v) - R)^2))``."""
    v_clipped = old_v + (v - old_v).clamp(-clip, clip)
    return 0.5 * masked_mean(torch.max((v - returns) ** 2, (v_clipped - returns) ** 2), mask)


# --- model calls ------------------------------------------------------------------------------
def _positions(mask: torch.Tensor) -> torch.Tensor:
    return (mask.cumsum(-1) - 1).clamp(min=0)


def response_logprobs(model, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> torch.Tensor:
    """``[B, T]`` log-probabilities of the response tokens ``seq[:, n_query:]``."""
    logits = model(input_ids=seq, attention_mask=mask, position_ids=_positions(mask)).logits
    logits = logits[:, n_query - 1:-1].float()
    return torch.log_softmax(logits, -1).gather(-1, seq[:, n_query:, None]).squeeze(-1)


def response_values(value_model, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> torch.Tensor:
    """``[B, T]`` values of the states before each response token (the RM head at every position)."""
    hidden = value_model.model(input_ids=seq, attention_mask=mask, position_ids=_positions(mask)).last_hidden_state
    return value_model.score(hidden).squeeze(-1)[:, n_query - 1:-1].float()


def score(rm, seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The reward model's score of each full sequence (read at its last non-pad token)."""
    return rm(input_ids=seq, attention_mask=mask, position_ids=_positions(mask)).logits.squeeze(-1).float()


@torch.no_grad()
def rollout(policy, tok, prompts: list[str], temperature: float, max_new_tokens: int):
    """Sample responses; return (seq, mask, response mask, n_query)."""
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    device = next(policy.parameters()).device
    q, qm = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    resp = sample_batch(policy, q, qm, tok.eos_token_id, tok.pad_token_id, temperature, max_new_tokens)
    if resp.size(1) == 0:  # nothing generated at all: one EOS each
        resp = torch.full((q.size(0), 1), tok.eos_token_id, device=device)
    rmask = (resp != tok.pad_token_id).long()
    return torch.cat([q, resp], 1), torch.cat([qm, rmask], 1), rmask.float(), q.size(1)


@torch.no_grad()
def held_out(policy, ref, rm, tok, prompts: list[str], temperature: float, max_new_tokens: int,
             batch: int = 64) -> dict:
    """Mean reward-model score, KL to the reference (summed over tokens) and length on held-out prompts."""
    scores, kls, lens = [], [], []
    for i in range(0, len(prompts), batch):
        seq, mask, rmask, nq = rollout(policy, tok, prompts[i:i + batch], temperature, max_new_tokens)
        kl = (response_logprobs(policy, seq, mask, nq) - response_logprobs(ref, seq, mask, nq)) * rmask
        scores += score(rm, seq, mask).tolist()
        kls += kl.sum(1).tolist()
        lens += rmask.sum(1).tolist()
    n = len(scores)
    return {"reward": sum(scores) / n, "kl": sum(kls) / n, "length_tokens": sum(lens) / n}


# --- the loop -----------------------------------------------------------------------------------
def train(farm, rm_path: str, cfg: PPOConfig | None = None) -> str:
    cfg = cfg or PPOConfig(**farm.profile.methods.get("ppo", {}))
    sft, tok, prof = farm.sft_model(), farm.tokenizer(), farm.profile

    def build(work: Path) -> None:
        torch.manual_seed(cfg.seed)
        t0 = time.time()
        policy, ref = load_model(sft, prof.device).train(), load_model(sft, prof.device)
        value_model = load_reward_model(rm_path, prof.device).train()
        rm = load_reward_model(rm_path, prof.device)
        for m in (ref, rm):
            m.requires_grad_(False)
        params = list(policy.parameters()) + list(value_model.parameters())
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
        records = farm.splits()[cfg.split]
        prompts = [format_prompt(r["instruction"], r["input"]) for r in records]
        eval_prompts = [format_prompt(r["instruction"], r["input"]) for r in farm.splits()["val"][:cfg.n_eval_prompts]]
        history, evals = [], [{"step": 0, **held_out(policy, ref, rm, tok, eval_prompts, cfg.temperature,
                                                    prof.max_new_tokens)}]
        step_seconds = 0.0
        for step in progress(range(cfg.steps), desc="ppo", leave=False):
            t_step = time.time()
            batch = [prompts[(step * cfg.rollout_batch + i) % len(prompts)] for i in range(cfg.rollout_batch)]
            # 1-2. rollout and rewards
            seq, mask, rmask, nq = rollout(policy, tok, batch, cfg.temperature, prof.max_new_tokens)
            with torch.no_grad():
                old_logp = response_logprobs(policy, seq, mask, nq)
                ref_logp = response_logprobs(ref, seq, mask, nq)
                old_v = response_values(value_model, seq, mask, nq) * rmask
                rm_score = score(rm, seq, mask)
                kl = (old_logp - ref_logp) * rmask
                rewards = -cfg.kl_coef * kl
                last = rmask.sum(1).long() - 1  # index of each response's last token
                rewards[torch.arange(len(batch)), last] += rm_score
                # 3. advantages, whitened over the whole rollout batch
                adv, returns = gae(rewards, old_v, rmask)
                adv = whiten(adv, rmask)
            # 4. clipped updates, learning rate decaying linearly to 0
            for g in opt.param_groups:
                g["lr"] = cfg.lr * (1 - step / cfg.steps)
            stats = []
            for _ in range(cfg.ppo_epochs):
                for idx in torch.randperm(len(batch)).split(cfg.minibatch):
                    logp = response_logprobs(policy, seq[idx], mask[idx], nq)
                    v = response_values(value_model, seq[idx], mask[idx], nq)
                    pl, clipfrac = policy_loss(logp, old_logp[idx], adv[idx], rmask[idx], cfg.clip)
                    vl = value_loss(v, old_v[idx], returns[idx], rmask[idx], cfg.value_clip)
                    opt.zero_grad(set_to_none=True)
                    (pl + vl).backward()
                    torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                    torch.nn.utils.clip_grad_norm_(value_model.parameters(), cfg.max_grad_norm)
                    opt.step()
                    stats.append((pl.item(), vl.item(), clipfrac.item()))
            pl, vl, cf = (sum(s[i] for s in stats) / len(stats) for i in range(3))
            step_seconds += time.time() - t_step
            history.append({"step": step + 1, "reward": rm_score.mean().item(), "kl": kl.sum(1).mean().item(),
                            "length_tokens": rmask.sum(1).mean().item(), "policy_loss": pl, "value_loss": vl,
                            "clipfrac": cf, "lr": opt.param_groups[0]["lr"], "seconds": time.time() - t0})
            if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
                policy.eval()
                evals.append({"step": step + 1, **held_out(policy, ref, rm, tok, eval_prompts, cfg.temperature,
                                                           prof.max_new_tokens)})
                policy.train()
        policy.eval()
        policy.save_pretrained(work)
        tok.save_pretrained(work)
        write_json(work / "history.json", history)
        write_json(work / "held_out.json", evals)
        seconds = time.time() - t0
        write_json(work / "train_info.json", {"seconds": seconds, "steps_per_second": cfg.steps / step_seconds,
                                              "rollout_batch": cfg.rollout_batch})

    key = {"sft": farm.key(sft), "rm": farm.key(rm_path), **asdict(cfg)}
    return str(farm.store.get_or_build("ppo", key, build))
