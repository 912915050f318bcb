"""Best-of-n from one large draw: every n is a prefix of the same candidates (hand-made rewards)."""

import math

import pytest

from farmlib.methods.best_of_n import best_of, kl_bound, n_at_kl, powers_of_two, prefix_choices

REWARDS = [  # prompt i -> rewards of candidates 0..7
    [0.1, 0.5, 0.2, 0.9, 0.0, 0.3, 1.5, 0.2],
    [2.0, 0.1, 0.1, 0.1, 3.0, 0.1, 0.1, 0.1],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # all tied: the first candidate
    [-1., -2., -0.5, -3., -0.5, -0.1, -4., -9.],
]


def test_prefix_choices_pick_the_best_of_the_first_n():
    got = prefix_choices(REWARDS, [1, 2, 4, 8])
    assert got[1] == [0, 0, 0, 0]  # best-of-1 is the first sample
    assert got[2] == [1, 0, 0, 0]
    assert got[4] == [3, 0, 0, 2]  # prompt 3: -0.5 at k=2 beats -1; ties stay with the earlier one
    assert got[8] == [6, 4, 0, 5]


def test_the_chosen_reward_never_falls_as_n_grows():
    ns = [1, 2, 3, 4, 5, 6, 7, 8]
    got = prefix_choices(REWARDS, ns)
    for i, r in enumerate(REWARDS):
        chosen = [r[got[n][i]] for n in ns]
        assert chosen == sorted(chosen)
        assert all(got[n][i] < n for n in ns)  # only the first n candidates compete


def test_n_outside_the_draw_is_an_error():
    with pytest.raises(ValueError, match="outside"):
        prefix_choices(REWARDS, [16])
    with pytest.raises(ValueError):
        prefix_choices(REWARDS, [0])


def test_best_of_returns_the_chosen_records():
    cands = [[{"instruction": f"q{i}", "input": "", "output": f"o{i}-{k}", "generator": f"sample{k}"}
              for k in range(8)] for i in range(len(REWARDS))]
    outs = best_of({"candidates": cands, "rewards": REWARDS}, 4)
    assert [o["output"] for o in outs] == ["o0-3", "o1-0", "o2-0", "o3-2"]
    assert {o["generator"] for o in outs} == {"best_of_4"}
    assert cands[0][3]["generator"] == "sample3"  # the draw itself is not modified


def test_n_at_kl_inverts_the_bound():
    for n in (2, 3, 64, 256, 10**6):
        assert n_at_kl(kl_bound(n)) == pytest.approx(n, rel=1e-9)
    assert n_at_kl(0.0) == 1.0 and n_at_kl(-1.0) == 1.0
    assert n_at_kl(9.0) == pytest.approx(math.exp(10), rel=1e-3)  # log n - 1 for large n


def test_kl_bound_and_the_grid_of_n():
    assert kl_bound(1) == 0
    assert kl_bound(2) == pytest.approx(math.log(2) - 0.5)
    assert kl_bound(256) == pytest.approx(math.log(256) - 255 / 256)
    assert powers_of_two(256) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert powers_of_two(12) == [1, 2, 4, 8, 12]
    assert powers_of_two(1) == [1]


def test_ppo_checkpoints_are_listed_by_step_with_the_final_policy_last(tmp_path):
    import json

    from farmlib.methods.ppo import checkpoints

    (tmp_path / "held_out.json").write_text(json.dumps([{"step": s} for s in (0, 2, 10, 20)]))
    assert checkpoints(str(tmp_path)) == {20: str(tmp_path)}  # an artifact from before checkpoints were saved
    for s in (10, 2):
        (tmp_path / "checkpoints" / f"step_{s}").mkdir(parents=True)
    got = checkpoints(str(tmp_path))
    assert list(got) == [2, 10, 20] and got[2].endswith("step_2") and got[20] == str(tmp_path)
