"""What a policy's reward-model score is made of, and how much true reward came with it.

The book's reward model (chapter 5) scores ``r(x, y) = a · (1/|y|) Σ_t log p_θ(y_t | x, y_<t) + λ · (1/|x|) log q(x | y)``:
its *reader*, how likely its own language model finds the answer (``θ`` starts as the SFT model and its labels move
it little), plus its *backward* term, how well the answer gives back its question, plus the repeat reader's charge
``ρ · g(y)`` for saying a thing twice (:mod:`farmlib.methods.repeat_reader`). (A reward model with the paper's head
has the head as its reader and neither term.) A method that raises the score may raise either part, and
may or may not raise R* with it. Best-of-n and expert iteration choose among the SFT model's own answers; PPO
follows the score's gradient wherever it leads, and can also raise the reader by saying what the SFT model says
most often. Split each answer's score into its parts, beside R*, and the gain in R* per unit of score tells a
method that follows the reward model where R* also rises from one that follows it where R* does not.
"""

from __future__ import annotations

PARTS = ("score", "reader", "backward", "repeats")


def parts(rm, tokenizer, records: list[dict], key: str = "output") -> dict[str, list[float]]:
    """Each record's reward-model ``score`` and its parts: ``backward`` (``λ · mean log q(x | y)``; 0 for a model
    without a backward reader), ``repeats`` (``ρ · g(y)``; 0 without a repeat reader) and ``reader`` (the rest:
    ``a · mean log p(y | x)`` for a model that reads its likelihood, its head otherwise).
    ``reader + backward + repeats == score``."""
    from farmlib.methods import backward_reader, repeat_reader
    from farmlib.methods.reward_model import rewards

    score = rewards(rm, tokenizer, records, key).tolist()
    zero = [0.0] * len(records)
    back, rep = (zero if t is None else t.tolist()
                 for t in (backward_reader.term(rm, records, key), repeat_reader.term(rm, records, key)))
    return {"score": score, "reader": [s - b - r for s, b, r in zip(score, back, rep)], "backward": back,
            "repeats": rep}


def reader_name(rm) -> str:
    """What a reward model's reader is, in words: its likelihood term, or the paper's head."""
    from farmlib.methods.common import reads_likelihood

    return "the likelihood term" if reads_likelihood(rm) else "the head"


def table(rm, tokenizer, answers: dict[str, list[dict]], true_rewards=None, base: str | None = None) -> list[dict]:
    """One row per set of answers (``answers``: name → records): the mean score, reader and backward term, the
    mean length in characters and, with ``true_rewards`` (records → R* of each), the mean R*. With ``base`` (one of
    ``answers``, answered on the same instructions in the same order), every other row also carries ``score_se``:
    the paired standard error of its mean score minus ``base``'s, the noise :func:`sentence` weighs the gain by."""
    from farmlib.evaluation.paired import paired_difference

    scores, rows = {}, []
    for name, records in answers.items():
        p = parts(rm, tokenizer, records)
        scores[name] = p["score"]
        row = {"answers": name, **{k: sum(v) / len(v) for k, v in p.items()},
               "length": sum(len(r["output"]) for r in records) / len(records)}
        if true_rewards is not None:
            row["true_reward"] = sum(true_rewards(records)) / len(records)
        rows.append(row)
    if base is not None:
        if base not in answers:
            raise KeyError(f"score_parts.table: base {base!r} is not one of the answers ({', '.join(answers)})")
        for row in rows:
            name = row["answers"]
            if name == base:
                continue
            if [r["instruction"] for r in answers[name]] != [r["instruction"] for r in answers[base]]:
                raise ValueError(f"score_parts.table: answers {name!r} are not on {base!r}'s instructions in its "
                                 "order, so their scores cannot be paired")
            row["score_se"] = paired_difference(scores[name], scores[base])[1] / 100
    return rows


def gain(rows: list[dict], base: str, method: str) -> dict:
    """What ``method``'s answers gained over ``base``'s (two rows of :func:`table`): the difference in each part and
    in R*, the reader's share of the score gained, and R* gained per unit of score. The shares divide by the score
    gained, so they are None where it did not rise beyond twice its paired standard error (``score_se``, where the
    table was paired) — a ratio of noise reads as a finding."""
    a, b = (next(r for r in rows if r["answers"] == name) for name in (base, method))
    d = {k: b[k] - a[k] for k in (*PARTS, "true_reward") if k in a and k in b}
    se = b.get("score_se")
    up = d["score"] > (2 * se if se is not None else 0)
    return {**d, **({"score_se": se} if se is not None else {}), "reader_share": d["reader"] / d["score"] if up else None,
            "true_per_score": d["true_reward"] / d["score"] if up and "true_reward" in d else None}


def curve_gain(mean_reward: list[float], mean_true_reward: list[float]) -> dict:
    """The same for best-of-n's picks along n (chapter 9's metrics): score and R* gained from the first n to the
    last, and R* per unit of score."""
    ds, dt = mean_reward[-1] - mean_reward[0], mean_true_reward[-1] - mean_true_reward[0]
    return {"score": ds, "true_reward": dt, "true_per_score": dt / ds if ds > 0 else None}


def sentence(g: dict, method: str, base: str, reader: str = "the likelihood term", picks: dict | None = None,
             picks_name: str = "best-of-n's picks") -> str:
    """What :func:`gain` ``g`` says, in words; ``picks`` (a :func:`curve_gain`) sets it beside a method that only
    chooses among the SFT model's answers."""
    if g["score"] <= 0:
        return (f"{method}'s answers score {g['score']:+.3f} against {base}'s on the reward model: it did not raise "
                f"the score on these answers, so there is no gain to split.")
    if g["reader_share"] is None:
        moved = f"; R* moved by {g['true_reward']:+.3f}" if "true_reward" in g else ""
        return (f"{method}'s answers score {g['score']:+.3f} ± {g['score_se']:.3f} (paired standard error) against "
                f"{base}'s on the reward model: within twice its noise, so {method} did not raise the score beyond "
                f"noise, and a split of that gain into parts, or R* per unit of it, would be a ratio of noise"
                f"{moved}.")
    noise = f" (± {g['score_se']:.3f}, paired standard error)" if "score_se" in g else ""
    others = [(g[k], name) for k, name in (("backward", "the backward term"), ("repeats", "the repeat reader's charge"))
              if g.get(k)]
    split = [f"{100 * g['reader_share']:.0f} % of it {reader}"] + [f"{100 * v / g['score']:.0f} % {n}" for v, n in others]
    text = (f"{method} raised the reward model's score of its answers by {g['score']:.3f}{noise} over {base}'s, "
            + (f"all of it {reader}" if not others else ", ".join(split[:-1]) + " and " + split[-1]))
    if g.get("true_per_score") is None:
        return text + "."
    text += (f"; R* moved by {g['true_reward']:+.3f}, {g['true_per_score']:.2f} of R* per unit of score")
    if picks and picks.get("true_per_score") is not None:
        ratio = picks["true_per_score"]
        text += (f", where {picks_name} gain {ratio:.2f} per unit ({picks['score']:+.3f} in score, "
                 f"{picks['true_reward']:+.3f} in R*)")
        text += (". The same reward model points to better answers when it chooses among the SFT model's; the "
                 f"direction {method} climbed raises its score where R* does not follow."
                 if g["true_per_score"] < ratio / 2 else
                 f". {method} turns score into R* at least half as well as choosing among the SFT model's answers.")
        return text
    return text + "."
