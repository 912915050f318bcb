"""Length-controlled win-rate (the idea of AlpacaEval 2): the win-rate a model would have if its
outputs were as long as the reference's.

Judges and people both like longer answers, so a method can buy win-rate with length alone. Fit a
logistic model of "the model's output is preferred" on the length difference,

    logit P(output_2 preferred) = a + b * tanh((len(output_2) - len(output_1)) / scale),

and read it at equal length: the length-controlled win-rate is ``sigmoid(a)`` (with one intercept
for every instruction, the average over instructions is this one number). ``scale`` standardises
the difference (default: the standard deviation of the differences in the annotations); ``tanh``
keeps a few very long outputs from steering the fit. Ties count as half a win (a fractional
outcome in the likelihood); unannotated records are left out.

The fit is a few Newton steps on the log-likelihood with a weak Gaussian prior on the slope (so that
preferences explained perfectly by length still give a finite fit). The standard error is the delta
method on a robust (sandwich) variance of ``a``, or a bootstrap over annotations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from farmlib.evaluation.win_rate import preference_score, win_rate


@dataclass
class LengthControlled:
    lc_win_rate: float  # percent: the win-rate at equal length
    standard_error: float  # percent, of lc_win_rate
    win_rate: float  # percent: the raw win-rate of the same annotations
    raw_standard_error: float  # percent
    intercept: float  # a (logit of the win-rate at equal length)
    slope: float  # b (logit per unit of tanh-scaled length difference)
    scale: float  # the length difference that counts as one unit before tanh
    n: int  # annotations used

    def __str__(self) -> str:
        return (f"LC {self.lc_win_rate:.1f} ± {self.standard_error:.1f} % "
                f"(raw {self.win_rate:.1f} ± {self.raw_standard_error:.1f} %, n={self.n})")

    def to_dict(self) -> dict:
        return asdict(self)


def length(text: str, unit: str = "chars") -> int:
    """Length of an output in characters (the paper's unit) or in whitespace-separated words."""
    if unit == "chars":
        return len(text)
    if unit == "words":
        return len(text.split())
    raise ValueError(f"unit must be 'chars' or 'words', got {unit!r}")


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def fit_logistic(x: np.ndarray, y: np.ndarray, prior_var: float = 100.0, steps: int = 50,
                 tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method for ``logit P(y=1) = a + b x`` with outcomes ``y`` in [0, 1] and a N(0, prior_var)
    prior on ``b`` (none on ``a``); returns ((a, b), the 2x2 robust covariance of (a, b))."""
    X = np.column_stack([np.ones_like(x), x])
    penalty = np.diag([0.0, 1.0 / prior_var])
    beta = np.zeros(2)
    m = np.clip(y.mean(), 1e-3, 1 - 1e-3)
    beta[0] = math.log(m / (1 - m))
    for _ in range(steps):
        p = _sigmoid(X @ beta)
        grad = X.T @ (y - p) - penalty @ beta
        hess = (X * (p * (1 - p))[:, None]).T @ X + penalty
        delta = np.linalg.solve(hess, grad)
        beta = beta + delta
        if np.abs(delta).max() < tol:
            break
    p = _sigmoid(X @ beta)
    hess = (X * (p * (1 - p))[:, None]).T @ X + penalty
    bread = np.linalg.inv(hess)
    meat = (X * ((y - p) ** 2)[:, None]).T @ X  # sandwich: right even when y is not Bernoulli (ties)
    n = len(y)
    cov = bread @ meat @ bread * (n / max(n - 2, 1))  # HC1 small-sample correction
    return beta, cov


def _data(annotations: Sequence[dict], unit: str) -> tuple[np.ndarray, np.ndarray]:
    ys, ds = [], []
    for a in annotations:
        s = preference_score(a["preference"])
        if s is None:
            continue
        ys.append(s)
        ds.append(length(a["output_2"], unit) - length(a["output_1"], unit))
    return np.asarray(ds, dtype=float), np.asarray(ys, dtype=float)


def length_controlled_win_rate(annotations: Sequence[dict], scale: float | None = None, unit: str = "chars",
                               se: str = "delta", n_boot: int = 200, seed: int = 0,
                               prior_var: float = 100.0) -> LengthControlled:
    """The length-controlled win-rate of ``output_2`` (the model) against ``output_1`` (the reference) in
    AlpacaEval-format annotations. ``scale``: the length difference (in ``unit``) that counts as one
    standard unit (default: the standard deviation of the differences); ``se``: ``"delta"`` or
    ``"bootstrap"`` (``n_boot`` resamples of the annotations, drawn with ``seed``)."""
    if se not in ("delta", "bootstrap"):
        raise ValueError(f"se must be 'delta' or 'bootstrap', got {se!r}")
    d, y = _data(annotations, unit)
    raw = win_rate(a["preference"] for a in annotations)
    n = len(y)
    if n < 3:
        return LengthControlled(float("nan"), float("nan"), raw.win_rate, raw.standard_error, float("nan"),
                                float("nan"), float("nan"), n)
    if scale is None:
        scale = float(d.std()) or 1.0
    if y.min() == y.max():  # every comparison won (or lost, or tied): length cannot explain anything
        return LengthControlled(raw.win_rate, raw.standard_error, raw.win_rate, raw.standard_error,
                                float("inf") if y[0] == 1 else float("-inf") if y[0] == 0 else 0.0, 0.0, scale, n)
    x = np.tanh(d / scale)
    beta, cov = fit_logistic(x, y, prior_var)
    lc = _sigmoid(beta[0])
    if se == "delta":
        err = lc * (1 - lc) * math.sqrt(max(cov[0, 0], 0.0))
    else:  # bootstrap
        rng = np.random.default_rng(seed)
        boots = [_sigmoid(fit_logistic(x[i], y[i], prior_var)[0][0]) for i in
                 (rng.integers(0, n, n) for _ in range(n_boot))]
        err = float(np.std(boots, ddof=1))
    return LengthControlled(100 * float(lc), 100 * float(err), raw.win_rate, raw.standard_error, float(beta[0]),
                            float(beta[1]), float(scale), n)
