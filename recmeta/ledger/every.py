"""Statements over several directional parts under Holm's family-wise control (Holm 1979,
``statsmodels.stats.multitest.multipletests``): :func:`every` part ("every metric ...") and
:func:`some` part ("some correlations fall below 0.8").

"Some part lies below the threshold" is a statement about the smallest part; a percentile
bootstrap of the minimum is biased low (the minimum of noisy parts lies below the smallest true
part), which favours agreement. :func:`some` tests the parts one by one instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .estimate import Estimate, format_estimate
from .rules import Outcome, Verdict

__all__ = ["every", "holm_reject", "some"]


def holm_reject(p_values: Sequence[float] | np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections at family-wise level ``alpha`` (Holm 1979): with the p-values
    sorted, ``p_(i) ≤ alpha / (m − i + 1)`` rejects ``i`` and every smaller one, up to the first
    that fails. The same decisions as ``statsmodels.stats.multitest.multipletests(p, alpha,
    "holm")[0]`` (which the tests check), without its ``gc.collect()`` on every call (half a
    second in a large process; the ledgers call it dozens of times)."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"holm_reject needs a non-empty list of p-values, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    order = np.argsort(p)  # statsmodels' order, so that ties split the same way
    passed = p[order] <= alpha / np.arange(p.size, 0, -1)
    reject = np.zeros(p.size, dtype=bool)
    reject[order] = np.logical_and.accumulate(passed)
    return reject


def _holm(
    name: str,
    parts: Mapping[str, object],
    p_expected: Mapping[str, float],
    p_opposite: Mapping[str, float],
    alpha: float,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The parts' keys and Holm's rejections at ``alpha`` on each side."""
    if not parts:
        raise ValueError(f"{name} needs at least one part")
    keys = list(parts)
    missing = [k for k in keys if k not in p_expected or k not in p_opposite]
    if missing:
        raise ValueError(f"no p-value for part(s) {missing}")
    right = holm_reject([p_expected[k] for k in keys], alpha)
    wrong = holm_reject([p_opposite[k] for k in keys], alpha)
    return keys, right, wrong


def every(
    parts: Mapping[str, Outcome],
    p_expected: Mapping[str, float],
    p_opposite: Mapping[str, float],
    *,
    alpha: float = 0.05,
) -> Outcome:
    """ "Every part shows the direction": a conjunction of directional parts with Holm's control
    of the family-wise error (Holm 1979, ``statsmodels.stats.multitest.multipletests``).

    ``p_expected[k]`` is part ``k``'s one-sided p-value against "no effect in the expected
    direction", ``p_opposite[k]`` the one-sided p-value for the other direction.

    - Holm at ``alpha`` rejects the null of every part in the expected direction → **agrees**;
    - Holm at ``alpha`` rejects some part's null in the opposite direction → **differs**;
    - otherwise → **inconclusive**.
    """
    keys, right, wrong = _holm("every", parts, p_expected, p_opposite, alpha)
    detail = "; ".join(f"{k}: {parts[k].detail or format_estimate(parts[k].ours)}" for k in keys)
    rules = {o.rule for o in parts.values()}
    rule = f"every {rules.pop()}" if len(rules) == 1 else "every"
    n = len(keys)
    if wrong.any():
        k = keys[int(np.flatnonzero(wrong)[0])]
        return Outcome(
            Verdict.DIFFERS,
            None,
            f"{k} goes the other way (Holm over {n} parts, α = {alpha:g}): {parts[k].reason}",
            detail,
            rule=rule,
        )
    if right.all():
        return Outcome(
            Verdict.AGREES,
            None,
            f"all {n} parts show the direction after Holm's correction (α = {alpha:g})",
            detail,
            rule=rule,
        )
    open_ = [k for k, r in zip(keys, right, strict=True) if not r]
    return Outcome(
        Verdict.INCONCLUSIVE,
        None,
        f"{len(open_)} of {n} parts are not established after Holm's correction "
        f"(α = {alpha:g}), e.g. {open_[0]}",
        detail,
        rule=rule,
    )


def some(
    parts: Mapping[str, Estimate],
    p_expected: Mapping[str, float],
    p_opposite: Mapping[str, float],
    *,
    what: str,
    alpha: float = 0.05,
) -> Outcome:
    """ "Some part shows the direction": ``p_expected[k]`` is part ``k``'s one-sided p-value
    against "no effect in the expected direction", ``p_opposite[k]`` the other side's.

    - Holm at ``alpha`` rejects some part's null in the expected direction (so at least one
      part shows it, with family-wise error ``alpha``) → **agrees**;
    - Holm at ``alpha`` rejects every part's null in the opposite direction (no part can show
      it) → **differs**;
    - otherwise → **inconclusive**.

    ``ours`` is the estimate of the part with the smallest ``p_expected`` (of those, the
    largest value); ``what`` names the
    parts in the reason (e.g. ``"pairs of metrics with τ below 0.8"``).
    """
    keys, right, wrong = _holm("some", parts, p_expected, p_opposite, alpha)
    # the part nearest to showing the direction: smallest p, then largest value
    best = min(keys, key=lambda k: (p_expected[k], -parts[k].value))
    n = len(keys)
    holm = f"Holm over {n} parts, α = {alpha:g}"
    if right.any():
        shown = [k for k, r in zip(keys, right, strict=True) if r]
        return Outcome(
            Verdict.AGREES,
            parts[best],
            f"{len(shown)} of {n} {what} after Holm's correction (α = {alpha:g}), e.g. {best}",
            f"{best}: {parts[best]}",
            rule="some sign",
        )
    if wrong.all():
        return Outcome(
            Verdict.DIFFERS,
            parts[best],
            f"none of the {n} parts can be among the {what}: every one lies on the other "
            f"side ({holm}); the closest is {best}",
            f"{best}: {parts[best]}",
            rule="some sign",
        )
    return Outcome(
        Verdict.INCONCLUSIVE,
        parts[best],
        f"no part is established among the {what} and not every part is excluded ({holm}); "
        f"the closest is {best}",
        f"{best}: {parts[best]}",
        rule="some sign",
    )
