"""Statements over several directional parts under Holm's family-wise control (Holm 1979,
``statsmodels.stats.multitest.multipletests``): :func:`every` part ("every metric ..."),
:func:`every_sign` (every part's estimate on one side of its threshold, from
:class:`SignPart`) and :func:`some` part ("some correlations fall below 0.8").

"Some part lies below the threshold" is a statement about the smallest part, and "every part
lies above it" one about the smallest too. A bootstrap of the minimum is not a valid interval
for it: the minimum of noisy parts lies below the smallest true part (biased low, towards
"some part below"), and when several parts lie near the minimum it is a non-smooth function
of them, whose bootstrap is inconsistent (Andrews 2000): no percentile or basic interval of the
resampled minimum has its nominal coverage there. :func:`some` and :func:`every_sign` test the
parts one by one instead, with Holm's correction across them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..metaeval.bootstrap import sign_pvalues
from .estimate import Estimate, format_estimate
from .rules import Outcome, Verdict, sign_rule

__all__ = ["SignPart", "every", "every_sign", "holm_reject", "some"]


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


@dataclass(frozen=True)
class SignPart:
    """One part of "every part lies on the expected side of its ``shift``": our ``estimate`` of
    the part; ``p_positive``, the one-sided p-value against "value ≤ shift", and
    ``p_negative``, against "value ≥ shift"; ``p_floor``, the smallest p-value the part's
    method can give (``1/(B + 1)`` for ``B`` bootstrap replicates, 0 for a closed form)."""

    estimate: Estimate
    p_positive: float
    p_negative: float
    shift: float = 0.0
    p_floor: float = 0.0

    def __post_init__(self) -> None:
        for name in ("p_positive", "p_negative", "p_floor"):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}")

    @classmethod
    def from_replicates(
        cls, estimate: Estimate, replicates: ArrayLike, shift: float = 0.0
    ) -> SignPart:
        """The part with p-values read from its bootstrap replicates:
        :func:`recmeta.metaeval.bootstrap.sign_pvalues` of ``replicates − shift`` about the
        point ``estimate.value − shift`` (the tests that invert the bias-corrected interval),
        over the finite replicates (a resample may leave the quantity undefined: NaN);
        ``p_floor`` = ``1/(B + 1)`` for ``B`` of them."""
        reps = np.asarray(replicates, dtype=float).ravel()
        reps = reps[np.isfinite(reps)]
        if reps.size == 0:
            raise ValueError(
                f"no finite bootstrap replicate to test the sign of {estimate.method or 'a part'}"
            )
        point = estimate.value - shift
        up, down = sign_pvalues(reps - shift, point=point)
        return cls(estimate, up, down, float(shift), 1.0 / (reps.size + 1))


def every_sign(
    parts: Mapping[str, SignPart],
    expected: Literal["positive", "negative"],
    *,
    label: str = "the difference",
    alpha: float = 0.05,
) -> Outcome:
    """ "Every part lies on the ``expected`` side of its shift": :func:`every` over each part's
    :func:`~recmeta.ledger.rules.sign_rule` on ``estimate − shift`` (worded with ``label``),
    with the parts' one-sided p-values and Holm's correction across the parts.

    Agrees only when Holm establishes every part; differs when it establishes one part on the
    other side; otherwise inconclusive. ``ours`` is the estimate of the part nearest to the
    other side (the smallest ``value − shift`` when ``expected`` is positive, the largest when
    negative). The reason says when no part can pass Holm's first step (α/n) because every
    part's ``p_floor`` lies above it (too few bootstrap replicates).
    """
    if expected not in ("positive", "negative"):
        raise ValueError(f"expected must be 'positive' or 'negative', got {expected!r}")
    if not parts:
        raise ValueError("every_sign needs at least one part")
    outs: dict[str, Outcome] = {}
    for name, part in parts.items():
        e, t = part.estimate, part.shift
        outs[name] = replace(sign_rule(e.shifted(t), expected, label=label), ours=e)
    pos = {k: p.p_positive for k, p in parts.items()}
    neg = {k: p.p_negative for k, p in parts.items()}
    right, wrong = (pos, neg) if expected == "positive" else (neg, pos)
    out = every(outs, right, wrong, alpha=alpha)
    sign = 1.0 if expected == "positive" else -1.0
    weakest = min(parts, key=lambda k: sign * (parts[k].estimate.value - parts[k].shift))
    out = replace(out, ours=parts[weakest].estimate)
    n = len(parts)
    floor = min(p.p_floor for p in parts.values())
    if floor > alpha / n:
        out = replace(
            out,
            reason=f"{out.reason}; no p-value of these parts can fall below {floor:.2g} "
            f"(1/(B + 1) with B = {round(1 / floor) - 1} bootstrap resamples), above Holm's "
            f"first threshold {alpha:g}/{n}: more resamples are needed to establish all {n} parts",
        )
    return out
