"""A conjunction of directional parts ("every metric ...") under Holm's family-wise control."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .estimate import format_estimate
from .rules import Outcome, Verdict

__all__ = ["every"]


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
    from statsmodels.stats.multitest import multipletests

    if not parts:
        raise ValueError("every needs at least one part")
    keys = list(parts)
    missing = [k for k in keys if k not in p_expected or k not in p_opposite]
    if missing:
        raise ValueError(f"no p-value for part(s) {missing}")
    right = multipletests([p_expected[k] for k in keys], alpha=alpha, method="holm")[0]
    wrong = multipletests([p_opposite[k] for k in keys], alpha=alpha, method="holm")[0]
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
