"""Estimates of a ratio of per-turn counts from pre-labels and a random sample of gold turns (pure, numpy).

Every measure of the faithfulness report is a ratio of two sums over turns: for turn *i*, a numerator
count ``a_i`` and a denominator count ``b_i`` (e.g. hallucinated sentences / sentences). The measure of a
population of turns is ``R = E[a] / E[b]``. The pre-labeler gives counts ``f_i = (fa_i, fb_i)`` for all
``N`` turns of the job; human gold gives the true counts ``y_i = (ya_i, yb_i)`` on ``n`` of them, drawn at
random from the job's turns (the calibration turns, ``L``; the others are ``U``, ``N - n`` turns).

Three estimates, each a ratio of means, so a turn with more sentences weighs more:

* ``auto`` = Σ fa / Σ fb over all N turns. What the pre-labeler says; biased by its mistakes.
* ``gold_only`` = Σ ya / Σ yb over the n calibration turns. Unbiased, but from few turns. Its variance by the
  delta method with turns as clusters (the sums are per turn, so sentences of one turn stay together):
  ``Var = s²(ya - R·yb) / (n · ȳb²)``, ``s²`` the sample variance over the calibration turns.
* ``corrected``: prediction-powered inference (Angelopoulos et al., *Science* 2023) with the power tuning of
  PPI++ (Angelopoulos, Duchi, Zrnic, 2023). Each mean is estimated as ::

      μ̂ = mean_L(y - c·f) + c · mean_U(f)

  i.e. the pre-labels of the turns nobody checked, corrected by the mistakes measured where gold exists
  (the "rectifier" ``y - c·f``). With ``c = 1 - n/N`` this is plain PPI, ``mean_N(f) + mean_L(y - f)``
  (λ = 1); PPI++ writes ``c = λ·(1 - n/N)`` and chooses λ to make the variance smallest. The two parts are
  independent (different turns), so with ``r = y - c·f`` (a 2-vector per turn) ::

      Cov(μ̂a, μ̂b) = Cov_L(r) / n + c² · Cov_U(f) / (N - n)

  and ``R̂ = μ̂a / μ̂b`` has, by the delta method with gradient ``(1/μ̂b, -R̂/μ̂b)``, ::

      Var(R̂) = [ s²_L(ra - R̂·rb) / n + c² · s²_U(fa - R̂·fb) / (N - n) ] / μ̂b²

  (each part's numerator-denominator covariance is inside ``s²(a - R̂·b)``). The variance-minimising
  ``c`` for the linearised ratio ``u = a - R·b`` is ``c* = (1 - n/N) · Cov_L(u_y, u_f) / s²_L(u_f)``, that is
  λ* = Cov/Var, the regression slope of the gold on the pre-label; λ is clipped to [0, 1] as PPI++ does,
  with ``R`` taken from the gold-only estimate. λ = 0 means the pre-labels do not help: ``corrected`` is
  then ``gold_only``. An informative judge (pre-labels that move with the gold, biased or not) makes the
  corrected interval narrower than the gold-only one; a biased judge cannot bias it.

Intervals are ``estimate ± 1.96·sd`` (normal, 95 %), clipped to [0, 1] like the estimates (all measures
are proportions). They estimate the generator model's rate on turns like the job's (the turns as a sample
of what the model writes), which also covers the job's own turns (that variance is smaller).
They need at least ``MIN_CALIBRATION_TURNS`` calibration turns with a non-zero denominator (a turn whose
denominator is 0, e.g. no cognitive sentence for the cognitive hallucination rate, says nothing of the
ratio's spread): below that the estimate is still given but its interval is None, and the page says "too few
drawn turns" (one drawn sentence gave [1.0, 1.0] before). Below about 30 turns the normal approximation makes
them too narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
MIN_CALIBRATION_TURNS = 2


@dataclass(frozen=True)
class RatioEstimate:
    auto: float | None
    gold_only: float | None
    gold_only_ci95: tuple[float, float] | None
    corrected: float | None
    corrected_ci95: tuple[float, float] | None
    power: float | None  # PPI++'s λ (1 = plain PPI, 0 = the pre-labels are ignored)


def _clip(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _interval(estimate: float, variance: float) -> tuple[float, float]:
    half = Z95 * float(np.sqrt(max(variance, 0.0)))
    return _clip(estimate - half), _clip(estimate + half)


def _variance(values: np.ndarray) -> float:
    """Sample variance (n - 1); 0 for fewer than two values (nothing to estimate it from)."""
    return float(np.var(values, ddof=1)) if len(values) > 1 else 0.0


def _covariance(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.cov(x, y, ddof=1)[0, 1]) if len(x) > 1 else 0.0


def interval_turns(yb: np.ndarray) -> int:
    """The calibration turns an interval rests on: those with a non-zero denominator."""
    return int((np.asarray(yb) > 0).sum())


def has_interval(yb: np.ndarray) -> bool:
    """Whether the documented rule allows an interval: ``MIN_CALIBRATION_TURNS`` turns with a non-zero denominator."""
    return interval_turns(yb) >= MIN_CALIBRATION_TURNS


def gold_only(ya: np.ndarray, yb: np.ndarray) -> tuple[float | None, tuple[float, float] | None, float | None]:
    """(ratio, 95 % interval, variance) from the gold of the calibration turns, turns as clusters; the interval
    None below the rule of ``has_interval``."""
    n = len(ya)
    if n < MIN_CALIBRATION_TURNS or yb.sum() <= 0:
        return None, None, None
    ratio = float(ya.sum() / yb.sum())
    variance = _variance(ya - ratio * yb) / (n * float(yb.mean()) ** 2)
    return _clip(ratio), (_interval(ratio, variance) if has_interval(yb) else None), variance


def power_tuned_c(ya, yb, fa_l, fb_l, ratio: float, n: int, big_n: int) -> float:
    """PPI++'s c = λ·(1 - n/N), λ = Cov(u_y, u_f) / Var(u_f) on the calibration turns, clipped to [0, 1]."""
    u_f = fa_l - ratio * fb_l
    spread = _variance(u_f)
    if spread <= 0:
        return 0.0  # the pre-labels do not vary: they carry no information on these turns
    power = min(1.0, max(0.0, _covariance(ya - ratio * yb, u_f) / spread))
    return power * (1 - n / big_n)


def prediction_powered(fa, fb, calibrated, ya, yb, *, tune: bool = True):
    """(ratio, 95 % interval, λ) by PPI (``tune=False``: λ = 1) or PPI++ (λ tuned).

    ``fa``, ``fb``: the pre-labels' counts of all N turns; ``calibrated``: a boolean mask of the n calibration
    turns; ``ya``, ``yb``: the gold counts of the calibration turns, in the mask's order.
    """
    big_n, n = len(fa), int(calibrated.sum())
    if n < MIN_CALIBRATION_TURNS or yb.sum() <= 0:
        return None, None, None
    fa_l, fb_l = fa[calibrated], fb[calibrated]
    fa_u, fb_u = fa[~calibrated], fb[~calibrated]
    if tune:
        c = power_tuned_c(ya, yb, fa_l, fb_l, float(ya.sum() / yb.sum()), n, big_n)
    else:
        c = 1 - n / big_n
    unlabelled = big_n - n
    mean_a = float(np.mean(ya - c * fa_l)) + (c * float(fa_u.mean()) if unlabelled else 0.0)
    mean_b = float(np.mean(yb - c * fb_l)) + (c * float(fb_u.mean()) if unlabelled else 0.0)
    if mean_b <= 0:
        return None, None, None
    ratio = mean_a / mean_b
    rectifier = (ya - c * fa_l) - ratio * (yb - c * fb_l)
    variance = _variance(rectifier) / n
    if unlabelled:
        variance += c * c * _variance(fa_u - ratio * fb_u) / unlabelled
    variance /= mean_b ** 2
    power = c / (1 - n / big_n) if n < big_n else 0.0
    return _clip(ratio), (_interval(ratio, variance) if has_interval(yb) else None), power


def estimate_ratio(fa, fb, calibrated, ya, yb, *, tune: bool = True) -> RatioEstimate:
    """The three estimates of Σa/Σb. Arrays as in ``prediction_powered``; numpy arrays of counts."""
    fa, fb = np.asarray(fa, dtype=float), np.asarray(fb, dtype=float)
    calibrated = np.asarray(calibrated, dtype=bool)
    ya, yb = np.asarray(ya, dtype=float), np.asarray(yb, dtype=float)
    auto = _clip(fa.sum() / fb.sum()) if fb.sum() > 0 else None
    gold, gold_ci, _ = gold_only(ya, yb)
    corrected, corrected_ci, power = prediction_powered(fa, fb, calibrated, ya, yb, tune=tune)
    return RatioEstimate(auto, gold, gold_ci, corrected, corrected_ci, power)
