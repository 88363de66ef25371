"""Valcarce et al. (2018): the verdict rules its claims need beyond the ledger's own.

A threshold the paper states ("at least 0.9"), "these k are the k best", and the ledger's order
rule worded for the claim ("least robust"); "every metric shows the direction" is the ledger's
:func:`recmeta.ledger.every_sign` (a conjunction under Holm's correction), its parts from
:func:`.estimates.sign_part`. Every order these rules print is
written by :func:`recmeta.ledger.format_order`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ...ledger import Estimate, Outcome, order_groups, order_rule, rank_rule, sign_rule

__all__ = [
    "group_rule",
    "short_order",
    "threshold_rule",
    "with_note",
    "worded_order",
]


def threshold_rule(est: Estimate, threshold: float, direction: str, label: str) -> Outcome:
    """Our estimate lies above (``direction="above"``) or below a threshold the paper states:
    the sign rule on ``est − threshold``."""
    out = sign_rule(
        est.shifted(threshold),
        "positive" if direction == "above" else "negative",
        label=f"{label} minus {threshold:g}",
    )
    return Outcome(out.verdict, est, out.reason, out.detail, rule="threshold")


def group_rule(
    estimates: Mapping[str, Estimate], expected: Sequence[str], higher_is_better: bool = True
) -> Outcome:
    """ "The k expected items are the k best": the ledger's :func:`rank_rule` over ranks 1..k,
    with the best item's estimate as ours."""
    best = max(
        estimates, key=lambda n: estimates[n].value if higher_is_better else -estimates[n].value
    )
    return rank_rule(estimates, expected, 1, len(expected), higher_is_better, value=estimates[best])


def worded_order(
    estimates: Mapping[str, Estimate],
    expected: str,
    *,
    higher_is_better: bool = True,
    best: str = "best",
) -> Outcome:
    """:func:`order_rule` worded for the claim: ``best`` names the end of the order that is
    claimed ("least robust"). The order in ``detail`` is the ledger's
    (:func:`recmeta.ledger.format_order`), read from the lowest value up (``<``) when
    ``higher_is_better`` is false."""
    out = order_rule(estimates, expected, higher_is_better=higher_is_better)
    reason = out.reason.replace(" is best (", f" is {best} (").replace(
        " tie at the top ", f" tie as {best} "
    )
    return replace(out, reason=reason)


def short_order(
    out: Outcome, estimates: Mapping[str, Estimate], keep: int = 6, *, descending: bool = True
) -> Outcome:
    """The outcome with its order cut after ``keep`` groups of
    :func:`recmeta.ledger.order_groups` (the groups of the order in ``detail``)."""
    groups = order_groups(estimates, descending)
    if len(groups) <= keep:
        return out
    sep = " > " if descending else " < "
    return replace(out, detail=sep.join(" ≈ ".join(g) for g in groups[:keep]) + sep + "…")


def with_note(out: Outcome, note: str) -> Outcome:
    """The outcome with ``note`` appended to its reason (nothing when the note is empty)."""
    return replace(out, reason=f"{out.reason}; {note}") if note else out
