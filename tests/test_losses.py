"""Each method's loss on tiny tensors, against numbers computed by hand."""

import math

import pytest
import torch

from farmlib.methods.dpo import dpo_loss
from farmlib.methods.ppo import gae, policy_loss, value_loss, whiten
from farmlib.methods.quark import quantile_bins, quark_loss
from farmlib.methods.reward_model import bt_loss


def test_bradley_terry_loss():
    # -log sigmoid(1) = 0.31326, -log sigmoid(0) = log 2
    loss = bt_loss(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]))
    assert loss.item() == pytest.approx((0.313262 + math.log(2)) / 2, abs=1e-5)


def test_dpo_loss_and_margin():
    # margin = 0.1 * ((-1 - -2) - (-3 - -2)) = 0.1 * (1 + 1) = 0.2
    loss, margin = dpo_loss(torch.tensor([-1.0]), torch.tensor([-3.0]), torch.tensor([-2.0]), torch.tensor([-2.0]), beta=0.1)
    assert margin.item() == pytest.approx(0.2)
    assert loss.item() == pytest.approx(-math.log(1 / (1 + math.exp(-0.2))), abs=1e-6)


def test_gae_with_lambda_gamma_one_is_reward_to_go_minus_value():
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.5, 2.0, 0.0]])
    values = torch.tensor([[0.2, 0.4, 0.6], [1.0, 1.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # row 2 ends after 2 tokens
    adv, ret = gae(rewards, values, mask)
    assert ret.flatten().tolist() == pytest.approx([1.0, 1.0, 1.0, 2.5, 2.0, 0.0])
    assert adv.flatten().tolist() == pytest.approx([0.8, 0.6, 0.4, 1.5, 1.0, 0.0])


def test_advantages_are_whitened_over_the_whole_batch():
    adv = torch.tensor([[1.0, 2.0], [3.0, 10.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])  # 10 is padding
    w = whiten(adv, mask)
    vals = torch.tensor([1.0, 2.0, 3.0])
    expect = (vals - vals.mean()) / vals.var(unbiased=False).sqrt()
    assert [w[0, 0].item(), w[0, 1].item(), w[1, 0].item()] == pytest.approx(expect.tolist(), abs=1e-5)
    assert w[1, 1].item() == 0
    # per-minibatch normalisation would give a different answer for the first row
    assert whiten(adv[:1], mask[:1])[0].tolist() != pytest.approx(w[0].tolist())


def test_ppo_clipped_policy_objective():
    old = torch.zeros(1, 3)
    logp = torch.log(torch.tensor([[1.5, 0.5, 1.1]]))  # ratios 1.5, 0.5, 1.1
    adv = torch.tensor([[1.0, 1.0, -1.0]])
    loss, clipfrac = policy_loss(logp, old, adv, torch.ones(1, 3), clip=0.2)
    # token 1: max(-1.5, -1.2) = -1.2; token 2: max(-0.5, -0.8) = -0.5; token 3: max(1.1, 1.1) = 1.1
    assert loss.item() == pytest.approx((-1.2 - 0.5 + 1.1) / 3, abs=1e-6)
    assert clipfrac.item() == pytest.approx(2 / 3)


def test_clipped_value_loss():
    v, old, ret = torch.tensor([[1.0]]), torch.tensor([[0.0]]), torch.tensor([[0.5]])
    # unclipped (1 - 0.5)^2 = 0.25; clipped v = 0.2 -> (0.2 - 0.5)^2 = 0.09; max = 0.25; times 0.5
    assert value_loss(v, old, ret, torch.ones(1, 1), clip=0.2).item() == pytest.approx(0.125)
    v = torch.tensor([[0.4]])  # unclipped 0.01, clipped (0.2 - 0.5)^2 = 0.09 -> 0.045
    assert value_loss(v, old, ret, torch.ones(1, 1), clip=0.2).item() == pytest.approx(0.045)


def test_quark_quantile_bins():
    assert quantile_bins([5.0, 1.0, 3.0, 2.0, 4.0], 5) == [4, 0, 2, 1, 3]
    assert quantile_bins([0.1, 0.9, 0.5, 0.7], 2) == [0, 1, 0, 1]
    assert quantile_bins([3.0, 1.0, 2.0], 5) == [3, 0, 1]  # fewer items than bins: still ordered, top is best


def test_quark_loss_by_hand():
    """Two response tokens over a 2-word vocabulary, the second masked out."""
    logits = torch.tensor([[[0.0, 0.0], [5.0, -5.0]]])  # policy: uniform at t=0
    ref = torch.tensor([[[math.log(3.0), 0.0], [0.0, 0.0]]])  # reference: (3/4, 1/4) at t=0
    response, mask = torch.tensor([[1, 0]]), torch.tensor([[1.0, 0.0]])
    loss, nll, kl = quark_loss(logits, ref, response, mask, kl_coef=0.5)
    expected_kl = 0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)
    assert nll.item() == pytest.approx(math.log(2))
    assert kl.item() == pytest.approx(expected_kl)
    assert loss.item() == pytest.approx(math.log(2) + 0.5 * expected_kl)


def test_group_advantages_leave_one_out_and_best_of_each_prompt():
    from farmlib.methods.ppo import group_advantages

    R = torch.tensor([1.0, 2.0, 6.0, 0.0, 0.0, 3.0])  # two prompts, three answers each
    # 1 - (2 + 6) / 2 = -3; 2 - (1 + 6) / 2 = -1.5; 6 - 1.5 = 4.5; 0 - 1.5; 0 - 1.5; 3 - 0
    assert torch.allclose(group_advantages(R, 3), torch.tensor([-3.0, -1.5, 4.5, -1.5, -1.5, 3.0]))
    assert torch.equal(group_advantages(R, 3, "best"), torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0, 1.0]))
    # TRL's RLOOTrainer computes it inline (trl/trainer/rloo_trainer.py, 1.16), with the same grouping of rows:
    grouped = R.view(-1, 3)
    trl = R - ((grouped.sum(1, keepdim=True) - grouped) / (3 - 1)).view(-1)
    assert torch.allclose(group_advantages(R, 3), trl)
    with pytest.raises(ValueError, match="k >= 2"):
        group_advantages(R, 1)
    with pytest.raises(ValueError, match="whole groups"):
        group_advantages(R, 4)
    with pytest.raises(ValueError, match="choose 'rloo' or 'best'"):
        group_advantages(R, 3, "mean")
