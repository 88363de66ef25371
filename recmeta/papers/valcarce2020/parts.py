"""Claims on some of several parts ("some correlations fall below 0.8"), under Holm's control.

"Some part lies below the threshold" is a statement about the smallest part. A percentile
bootstrap of the minimum is biased low (the minimum of noisy parts lies below the smallest
true part), which favours "some part is below". :func:`some` tests the parts one by one
instead, with one-sided bootstrap p-values and Holm's family-wise control across them
(``statsmodels.stats.multitest.multipletests``), the counterpart of
:func:`recmeta.ledger.every` for "every part".
"""

from __future__ import annotations

from collections.abc import Mapping

from ...ledger import Estimate, Outcome, Verdict

__all__ = ["some"]


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
    from statsmodels.stats.multitest import multipletests

    if not parts:
        raise ValueError("some needs at least one part")
    keys = list(parts)
    missing = [k for k in keys if k not in p_expected or k not in p_opposite]
    if missing:
        raise ValueError(f"no p-value for part(s) {missing}")
    right = multipletests([p_expected[k] for k in keys], alpha=alpha, method="holm")[0]
    wrong = multipletests([p_opposite[k] for k in keys], alpha=alpha, method="holm")[0]
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
