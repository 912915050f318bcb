"""PPO against the surrogate reward model, in one file (TRL 1.x has no PPO).

One step of the loop (:func:`ppo_loop`; steps 1-3 are :func:`experience`):

1. **Rollout.** Sample ``samples_per_prompt`` responses (the paper's: one) for each of ``rollout_batch`` prompts.
2. **Score.** The reward model scores each (prompt, response). Per token, the reward is
   ``-kl_coef * (log pi - log ref)`` (a fixed KL penalty to the SFT model), plus the reward
   model's score on the last token (the EOS, if the response stopped). Every log-probability, here
   and in the policy ratio, is of ``softmax(logits / temperature)``: the distribution sampled from.
3. **Advantages.** GAE with gamma = lambda = 1 (:func:`gae`): the return of a token is the sum of
   the rewards from it to the end. Advantages are whitened over the whole rollout batch
   (:func:`whiten`), not per minibatch. With ``advantage = "rloo"`` or ``"best"`` there is no value model: each
   answer is compared with the other answers to the same prompt (:func:`group_advantages`).
4. **Update.** ``ppo_epochs`` passes over minibatches of the rollout with the clipped policy loss
   (:func:`policy_loss`) and the clipped value loss (:func:`value_loss`); gradient norms clipped;
   the learning rate decays linearly to 0 over the run.

The values come from one of two places (``PPOConfig.value``). ``"model"`` (the paper's): a separate value model, a
copy of the reward model whose scalar head is read at every position, trained on the value loss alone. ``"policy"``:
a scalar head on the policy's own last hidden state (:class:`ValueHead`, TRL's classic value head), so one pass
through the policy gives both the log-probabilities and the values, and the trunk minimises
``policy loss + vf_coef * value loss``.

Layout: prompts are left-padded to ``Lq`` and responses right-padded to ``T``, so the logits at
positions ``Lq-1 .. Lq+T-2`` predict the response tokens and the value at position ``Lq-1+t`` is
the value of the state before response token ``t``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.lm.model import load_model
from farmlib.lm.sampling import positions
from farmlib.methods.common import TrueRewardScorer, head_values, masked_mean, response_logprobs, rollout, score
from farmlib.methods.reward_model import load_reward_model, new_reward_model
from farmlib.progress import progress
from farmlib.world import format_prompt


@dataclass
class PPOConfig:
    """PPO against the surrogate reward model with a fixed KL penalty to the SFT model."""

    steps: int = 40  # rollout + update rounds
    rollout_batch: int = 64  # prompts sampled per step
    minibatch: int = 32  # responses per gradient step
    ppo_epochs: int = 2  # passes over each rollout
    lr: float = 1e-4  # initial learning rate, decaying linearly to 0
    kl_coef: float = 0.02  # beta of the per-token KL penalty
    clip: float = 0.2  # policy ratio clip
    value_clip: float = 0.2  # value change clip
    max_grad_norm: float = 1.0  # gradient-norm clip (policy and value model each)
    temperature: float = 1.0  # rollout sampling temperature
    split: str = "unlabeled"  # where the training prompts come from
    n_eval_prompts: int = 128  # held-out (val) prompts for reward and KL along the way
    eval_every: int = 10  # steps between held-out evaluations
    seed: int = 0  # rollout sampling and minibatch order
    samples_per_prompt: int = 1  # answers sampled to each prompt in a rollout (rollout_batch counts prompts)
    advantage: str = "gae"  # "gae": the value model's (the paper's); "rloo", "best": within each prompt's answers
    value: str = "model"  # with "gae": "model", a separate copy of the reward model (the paper's); "policy", a head
    #   on the policy's own trunk (one pass per update instead of two)
    vf_coef: float = 0.1  # with value = "policy": the value loss's weight in what the shared trunk minimises
    value_lr: float | None = None  # initial learning rate of the value's own parameters (the head, or the separate
    #   value model), decaying as lr does; None: lr
    reward: str = "model"  # "model": the reward model; "true_reward": R* itself (the ceiling, FarmWorld only)
    reward_noise: float = 0.0  # with "true_reward": sigma of an error fixed per (prompt, response) added to R*


# --- the loss pieces (unit-tested on hand-computed tensors) ----------------------------------

def whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Normalise to mean 0, std 1 over the masked entries of the *whole* tensor."""
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) * torch.rsqrt(var + eps) * mask


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> float:
    """``1 - Var(G - V) / Var(G)`` over the masked tokens: the share of the returns' spread the value model accounts
    for. 1 is a perfect baseline, 0 one no better than the batch's mean return (which whitening subtracts anyway),
    below 0 a worse one."""
    var = masked_mean((returns - masked_mean(returns, mask)) ** 2, mask)
    err = returns - values
    return (1 - masked_mean((err - masked_mean(err, mask)) ** 2, mask) / var.clamp(min=1e-8)).item()


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


def group_advantages(returns: torch.Tensor, k: int, kind: str = "rloo") -> torch.Tensor:
    """Sequence-level advantages of ``[B]`` returns ``R = r_phi(x, y) - beta * KL(y)``, the rows grouped by prompt
    in runs of ``k`` answers, with no value model.

    - ``rloo``: ``A_i = R_i - (1 / (k - 1)) sum_{j != i} R_j``, each answer against the other answers to the same
      prompt (REINFORCE leave-one-out; Kool et al. 2019, Ahmadian et al. 2024).
    - ``best``: 1 for each prompt's best answer and 0 for the others: its tokens are pushed up and nothing is pushed
      down, online best-of-k imitation (expert iteration's update inside PPO's loop; RAFT, Dong et al. 2023)."""
    if k < 2 or returns.numel() % k:
        raise ValueError(f"group advantages need k >= 2 answers per prompt and a batch of whole groups "
                         f"(k = {k}, {returns.numel()} answers)")
    R = returns.view(-1, k)
    if kind == "rloo":
        return (R - (R.sum(1, keepdim=True) - R) / (k - 1)).view(-1)
    if kind == "best":
        return torch.nn.functional.one_hot(R.argmax(1), k).to(returns.dtype).view(-1)
    raise ValueError(f"group advantage {kind!r}; choose 'rloo' or 'best'")


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
class ValueHead(torch.nn.Module):
    """``V(s_t) = w . h_t + b`` on the policy's own last hidden state ``h_t`` (``PPOConfig.value = "policy"``). Its
    parameters are ``w`` and ``b``; the trunk is the policy's, which the value loss trains too. Zero at the start,
    as the copy of a reward model that reads its likelihood is, so the first advantages are the whitened returns."""

    def __init__(self, policy):
        super().__init__()
        self.head = torch.nn.Linear(policy.config.hidden_size, 1)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)


def response_values(value_model, seq: torch.Tensor, mask: torch.Tensor, n_query: int) -> torch.Tensor:
    """``[B, T]`` values of the states before each response token (the RM head at every position)."""
    return head_values(value_model, seq, mask)[:, n_query - 1:-1]


def logprobs_and_values(policy, value_model, seq: torch.Tensor, mask: torch.Tensor, n_query: int,
                        temperature: float) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``[B, T]`` log-probabilities of the response tokens under ``softmax(logits / temperature)`` and the values of
    the states before them: with a :class:`ValueHead`, from one pass through the policy (the hidden states that
    predict each token also give its state's value); with a separate value model, from a pass through each; with
    None, no values."""
    if isinstance(value_model, ValueHead):
        backbone = getattr(policy, policy.base_model_prefix)
        h = backbone(input_ids=seq, attention_mask=mask, position_ids=positions(mask)).last_hidden_state
        h = h[:, n_query - 1:-1]  # the states before each response token, which predict it
        logits = policy.get_output_embeddings()(h).float() / temperature
        logp = torch.log_softmax(logits, -1).gather(-1, seq[:, n_query:, None]).squeeze(-1)
        return logp, value_model.head(h).squeeze(-1).float()
    logp = response_logprobs(policy, seq, mask, n_query, temperature)
    return logp, None if value_model is None else response_values(value_model, seq, mask, n_query)


@torch.no_grad()
def held_out(policy, ref, rm, tok, prompts: list[str], temperature: float, max_new_tokens: int,
             batch: int = 64) -> dict:
    """Mean reward-model score, KL to the reference (summed over tokens, both at the sampling
    temperature) and length on held-out prompts."""
    scores, kls, lens = [], [], []
    for i in range(0, len(prompts), batch):
        seq, mask, response_mask, nq = rollout(policy, tok, prompts[i:i + batch], temperature, max_new_tokens)
        kl = (response_logprobs(policy, seq, mask, nq, temperature)
              - response_logprobs(ref, seq, mask, nq, temperature)) * response_mask
        scores += score(rm, seq, mask, nq).tolist()
        kls += kl.sum(1).tolist()
        lens += response_mask.sum(1).tolist()
    n = len(scores)
    return {"reward": sum(scores) / n, "kl": sum(kls) / n, "length_tokens": sum(lens) / n}


@torch.no_grad()
def experience(policy, ref, value_model, rm, tok, prompts: list[str], cfg: PPOConfig, max_new_tokens: int) -> dict:
    """Steps 1-3 on one batch of prompts: rollout, per-token rewards, whitened advantages and returns.

    Log-probabilities (policy and reference) are those of the sampling distribution
    ``softmax(logits / temperature)``, so the KL penalty and the policy ratio compare what was sampled.
    """
    seq, mask, response_mask, nq = rollout(policy, tok, prompts, cfg.temperature, max_new_tokens)
    gae_ = cfg.advantage == "gae"
    logp, values = logprobs_and_values(policy, value_model if gae_ else None, seq, mask, nq, cfg.temperature)
    ref_logp = response_logprobs(ref, seq, mask, nq, cfg.temperature)
    rm_score = score(rm, seq, mask, nq)
    kl = (logp - ref_logp) * response_mask
    rewards = -cfg.kl_coef * kl
    last = response_mask.sum(1).long() - 1  # index of each response's last token (its EOS, if it stopped)
    rewards[torch.arange(len(prompts)), last] += rm_score
    out = {"seq": seq, "mask": mask, "response_mask": response_mask, "n_query": nq, "logp": logp,
           "score": rm_score, "kl": kl, "rewards": rewards}
    if not gae_:  # every token of an answer shares its answer's advantage; "best" is not whitened
        adv = group_advantages(rewards.sum(1), cfg.samples_per_prompt, cfg.advantage)[:, None] * response_mask
        return {**out, "adv": whiten(adv, response_mask) if cfg.advantage == "rloo" else adv}
    values = values * response_mask
    adv, returns = gae(rewards, values, response_mask)
    return {**out, "values": values, "adv": whiten(adv, response_mask), "returns": returns,  # whitened over the batch
            "explained_variance": explained_variance(values, returns, response_mask)}


def trim(mask: torch.Tensor, response_mask: torch.Tensor, n_query: int) -> tuple[int, int]:
    """``(lo, t)``: the columns ``lo .. n_query + t`` of a minibatch hold all its real tokens (its prompts are
    left-padded from ``lo``, its longest response has ``t`` tokens). Positions come from the mask, so the
    trimmed minibatch gives the same log-probabilities and values on its real tokens."""
    lo = int((mask[:, :n_query].sum(0) > 0).nonzero()[0]) if n_query else 0
    return lo, max(1, int(response_mask.sum(1).max()))


# --- the loop -----------------------------------------------------------------------------------
def ppo_loop(policy, ref, value_model, rm, tok, prompts: list[str], eval_prompts: list[str], cfg: PPOConfig,
             max_new_tokens: int, on_eval=None) -> tuple[list[dict], list[dict], float]:
    """Train ``policy`` and ``value_model`` (a separate model, a :class:`ValueHead` on the policy, or None with group
    advantages) in place; return (per-step history, held-out
    evaluations, seconds spent in steps). ``ref`` and ``rm`` stay frozen. ``on_eval(step, policy)``, if given, is
    called after each held-out evaluation along the way (the last step's aside): a place to save the
    intermediate policy."""
    torch.manual_seed(cfg.seed)
    for m in (ref, rm):
        m.requires_grad_(False)
    trained = [policy] + ([value_model] if value_model is not None else [])
    # a separate value model's loss moves its own parameters only, so a weight on it would just rescale them
    vf_coef = cfg.vf_coef if isinstance(value_model, ValueHead) else 1.0
    for m in trained:
        m.train()
    # the value's own parameters may learn faster than the policy: a zero-initialised head moves about lr a step
    lrs = [cfg.lr] + ([cfg.lr if cfg.value_lr is None else cfg.value_lr] if value_model is not None else [])
    opt = torch.optim.AdamW([{"params": list(m.parameters()), "lr": lr} for m, lr in zip(trained, lrs)],
                            weight_decay=0.0)
    t0 = time.time()
    history = []
    evals = [{"step": 0, **held_out(policy, ref, rm, tok, eval_prompts, cfg.temperature, max_new_tokens)}]
    step_seconds = 0.0
    for step in progress(range(cfg.steps), desc="ppo", leave=False):
        t_step = time.time()
        batch = [prompts[(step * cfg.rollout_batch + i) % len(prompts)] for i in range(cfg.rollout_batch)
                 for _ in range(cfg.samples_per_prompt)]  # a prompt's answers side by side: group_advantages' runs
        # 1-3. rollout, rewards, advantages
        ex = experience(policy, ref, value_model, rm, tok, batch, cfg, max_new_tokens)
        seq, mask, response_mask, nq = ex["seq"], ex["mask"], ex["response_mask"], ex["n_query"]
        # 4. clipped updates, learning rate decaying linearly to 0
        for g, lr in zip(opt.param_groups, lrs):
            g["lr"] = lr * (1 - step / cfg.steps)
        stats = []
        for _ in range(cfg.ppo_epochs):
            for idx in torch.randperm(len(batch)).split(cfg.minibatch):
                lo, t = trim(mask[idx], response_mask[idx], nq)  # this minibatch's padding left out
                s, m, rm_ = seq[idx, lo:nq + t], mask[idx, lo:nq + t], response_mask[idx, :t]
                logp, v = logprobs_and_values(policy, value_model, s, m, nq - lo, cfg.temperature)
                pl, clipfrac = policy_loss(logp, ex["logp"][idx, :t], ex["adv"][idx, :t], rm_, cfg.clip)
                vl = torch.zeros(())
                if value_model is not None:
                    vl = value_loss(v, ex["values"][idx, :t], ex["returns"][idx, :t], rm_, cfg.value_clip)
                opt.zero_grad(set_to_none=True)
                (pl + vf_coef * vl).backward()
                for model in trained:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                opt.step()
                stats.append((pl.item(), vl.item(), clipfrac.item()))
        pl, vl, cf = (sum(s[i] for s in stats) / len(stats) for i in range(3))
        step_seconds += time.time() - t_step
        history.append({"step": step + 1, "reward": ex["score"].mean().item(), "kl": ex["kl"].sum(1).mean().item(),
                        "length_tokens": response_mask.sum(1).mean().item(), "policy_loss": pl, "value_loss": vl,
                        "clipfrac": cf, **{k: ex[k] for k in ("explained_variance",) if k in ex},
                        "lr": opt.param_groups[0]["lr"], "seconds": time.time() - t0})
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            policy.eval()
            evals.append({"step": step + 1, **held_out(policy, ref, rm, tok, eval_prompts, cfg.temperature,
                                                       max_new_tokens)})
            if on_eval is not None and step + 1 < cfg.steps:
                on_eval(step + 1, policy)
            policy.train()
    policy.eval()
    return history, evals, step_seconds


def train(farm, rm_path: str | None, cfg: PPOConfig | None = None) -> str:
    """PPO from the SFT model against the reward model at ``rm_path`` (with ``cfg.reward == "true_reward"``:
    against R*, a separate value model then a fresh head on the SFT model, ``rm_path`` unused); an artifact with the policy,
    ``history.json``, ``held_out.json``, and the policy at every held-out evaluation before the last
    in ``checkpoints/step_<n>`` (:func:`checkpoints`)."""
    cfg = cfg or farm.method_config("ppo")
    sft, tok, prof = farm.sft_model(), farm.tokenizer(), farm.profile
    if cfg.reward not in ("model", "true_reward"):
        raise ValueError(f"PPOConfig.reward is {cfg.reward!r}; choose 'model' or 'true_reward'")
    if cfg.reward_noise and cfg.reward != "true_reward":
        raise ValueError(f"PPOConfig.reward_noise is {cfg.reward_noise}: it is R*'s error, so it needs reward = "
                         f"'true_reward' (reward is {cfg.reward!r})")
    if cfg.reward == "true_reward":
        rm_path = None
    if cfg.advantage not in ("gae", "rloo", "best"):
        raise ValueError(f"PPOConfig.advantage is {cfg.advantage!r}; choose 'gae', 'rloo' or 'best'")
    if cfg.value not in ("model", "policy"):
        raise ValueError(f"PPOConfig.value is {cfg.value!r}; choose 'model' (a separate value model) or 'policy' "
                         f"(a head on the policy's trunk)")
    if cfg.advantage != "gae" and cfg.samples_per_prompt < 2:
        raise ValueError(f"PPOConfig.advantage = {cfg.advantage!r} compares answers to the same prompt: set "
                         f"samples_per_prompt >= 2 (it is {cfg.samples_per_prompt})")

    def build(work: Path) -> None:
        t0 = time.time()
        policy, ref = load_model(sft, prof.device), load_model(sft, prof.device)
        records, eval_records = farm.splits()[cfg.split], farm.splits()["val"][:cfg.n_eval_prompts]
        gae_ = cfg.advantage == "gae"  # group advantages need no value model
        separate = gae_ and cfg.value == "model"
        if cfg.reward == "true_reward":  # the ceiling: no learned reward anywhere
            value_model = new_reward_model(sft, tok, prof.device, cfg.seed) if separate else None
            rm = TrueRewardScorer(farm.world, tok, records + eval_records, noise=cfg.reward_noise)
        else:
            value_model = load_reward_model(rm_path, prof.device, backward=False) if separate else None
            rm = load_reward_model(rm_path, prof.device)
        if gae_ and cfg.value == "policy":
            value_model = ValueHead(policy).to(prof.device)
        prompts = [format_prompt(r["instruction"], r["input"]) for r in records]
        eval_prompts = [format_prompt(r["instruction"], r["input"]) for r in eval_records]
        def save(step: int, model) -> None:  # a few MB each on the tiny model
            model.save_pretrained(work / "checkpoints" / f"step_{step}")
            tok.save_pretrained(work / "checkpoints" / f"step_{step}")

        history, evals, step_seconds = ppo_loop(policy, ref, value_model, rm, tok, prompts, eval_prompts, cfg,
                                                prof.max_new_tokens, on_eval=save)
        policy.save_pretrained(work)
        tok.save_pretrained(work)
        write_json(work / "history.json", history)
        write_json(work / "held_out.json", evals)
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "steps_per_second": cfg.steps / step_seconds,
                                              "rollout_batch": cfg.rollout_batch})

    return farm.artifact("ppo", {"sft": sft, "rm": rm_path, **asdict(cfg)}, build)


def checkpoints(path: str) -> dict[int, str]:
    """``{step: model path}`` of a PPO artifact's policies along the way, the final one included
    (``{}`` for an artifact trained before checkpoints were saved, apart from its final policy)."""
    from farmlib.artifacts import read_json

    final = max(e["step"] for e in read_json(Path(path) / "held_out.json"))
    out = {int(p.name.split("_")[1]): str(p) for p in (Path(path) / "checkpoints").glob("step_*")}
    return {**dict(sorted(out.items())), final: str(path)}
