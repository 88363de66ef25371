"""Valcarce et al. (2018): the verdict rules its claims need beyond the ledger's own.

A threshold the paper states ("at least 0.9"), "every metric above a threshold", "these k are
the k best", "the same holds for the other metrics" (a majority of per-metric verdicts), and the
ledger's order rule worded for the claim ("least robust").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...ledger import Estimate, Outcome, Verdict, order_rule, rank_rule, sign_rule

__all__ = [
    "all_rule",
    "group_rule",
    "majority_rule",
    "short_order",
    "threshold_rule",
    "with_note",
    "worded_order",
]


def threshold_rule(est: Estimate, threshold: float, direction: str, label: str) -> Outcome:
    """Our estimate lies above (``direction="above"``) or below a threshold the paper states."""
    shifted = Estimate(
        est.value - threshold,
        None if est.low is None else est.low - threshold,
        None if est.high is None else est.high - threshold,
        est.method,
    )
    out = sign_rule(
        shifted,
        "positive" if direction == "above" else "negative",
        label=f"{label} minus {threshold:g}",
    )
    return Outcome(out.verdict, est, out.reason, out.detail)


def all_rule(estimates: Mapping[str, Estimate], threshold: float, label: str) -> Outcome:
    """Every item lies above ``threshold``: all intervals above → agrees; one wholly below →
    differs; otherwise inconclusive. ``ours`` is the lowest item's estimate."""
    worst = min(estimates, key=lambda k: estimates[k].value)
    est = estimates[worst]
    below = [k for k, e in estimates.items() if e.high is not None and e.high < threshold]
    unsure = [
        k for k, e in estimates.items() if k not in below and (e.low is None or e.low <= threshold)
    ]
    detail = None
    if below:
        return Outcome(
            Verdict.DIFFERS,
            est,
            f"{label} of {', '.join(below)} lies wholly below {threshold:g} (lowest: {worst})",
            detail,
        )
    if unsure:
        return Outcome(
            Verdict.INCONCLUSIVE,
            est,
            f"the interval of {label} of {', '.join(unsure)} "
            f"reaches {threshold:g} (lowest: {worst})",
            detail,
        )
    return Outcome(
        Verdict.AGREES,
        est,
        f"{label} of every metric lies wholly above {threshold:g} (lowest: {worst})",
        detail,
    )


def group_rule(
    estimates: Mapping[str, Estimate], expected: Sequence[str], higher_is_better: bool = True
) -> Outcome:
    """ "The k expected items are the k best": the ledger's :func:`rank_rule` over ranks 1..k,
    with the best item's estimate as ours."""
    best = max(
        estimates, key=lambda n: estimates[n].value if higher_is_better else -estimates[n].value
    )
    return rank_rule(estimates, expected, 1, len(expected), higher_is_better, value=estimates[best])


def majority_rule(outcomes: Mapping[str, Outcome], label: str) -> Outcome:
    """ "The same holds for the other metrics": the per-item verdicts, counted.

    A majority of agreeing items → **agrees**; a majority of differing items → **differs**;
    otherwise **inconclusive**. ``ours`` is the share of items that agree (exact).
    """
    n = len(outcomes)
    agree = [k for k, o in outcomes.items() if o.verdict is Verdict.AGREES]
    differ = [k for k, o in outcomes.items() if o.verdict is Verdict.DIFFERS]
    marks = {Verdict.AGREES: "✓", Verdict.DIFFERS: "✗", Verdict.INCONCLUSIVE: "?"}
    detail = ", ".join(f"{k} {marks.get(o.verdict, '–')}" for k, o in outcomes.items())
    text = (
        f"{label}: {len(agree)} of {n} agree, {len(differ)} differ, "
        f"{n - len(agree) - len(differ)} inconclusive"
    )
    est = Estimate.exact(len(agree) / n, "share of the metrics whose own verdict agrees")
    if len(agree) * 2 > n:
        return Outcome(Verdict.AGREES, est, text, detail)
    if len(differ) * 2 > n:
        return Outcome(Verdict.DIFFERS, est, text, detail)
    return Outcome(Verdict.INCONCLUSIVE, est, text, detail)


def worded_order(
    estimates: Mapping[str, Estimate],
    expected: str,
    *,
    higher_is_better: bool = True,
    best: str = "best",
) -> Outcome:
    """:func:`order_rule` worded for the claim: ``best`` names the end of the order that is
    claimed ("least robust"), and an order read from the lowest value up uses ``<``."""
    out = order_rule(estimates, expected, higher_is_better=higher_is_better)
    reason = out.reason.replace(" is best (", f" is {best} (").replace(
        " tie at the top ", f" tie as {best} "
    )
    detail = out.detail if higher_is_better else (out.detail or "").replace(" > ", " < ")
    return Outcome(out.verdict, out.ours, reason, detail)


def short_order(out: Outcome, keep: int = 6) -> Outcome:
    """The outcome with a long order in ``detail`` cut after ``keep`` places."""
    detail = out.detail or ""
    sep = " < " if " < " in detail else " > "
    parts = detail.split(sep)
    if len(parts) <= keep:
        return out
    return Outcome(out.verdict, out.ours, out.reason, sep.join(parts[:keep]) + sep + "…")


def with_note(out: Outcome, note: str) -> Outcome:
    """The outcome with ``note`` appended to its reason (nothing when the note is empty)."""
    return Outcome(
        out.verdict, out.ours, f"{out.reason}; {note}" if note else out.reason, out.detail
    )
