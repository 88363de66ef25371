"""Orders of measures or systems written as groups, so that every ">" printed is established.

A *group* is a run of items, by value, that the intervals cannot tell apart; two consecutive
groups are separated by ">" only where every member of the upper group lies clearly above
(:func:`~recmeta.ledger.rules.clearly_above`) every member of the lower one. The ledger's order
rules and the chapters' sentences both print orders with :func:`format_order`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .estimate import Estimate

__all__ = ["order_groups", "format_order"]


def order_groups(estimates: Mapping[str, Estimate], descending: bool = True) -> list[list[str]]:
    """The items sorted by value (largest first when ``descending``; equal values keep the
    mapping's order), cut into groups.

    A cut falls between positions ``i`` and ``i + 1`` exactly when every item up to ``i`` lies
    clearly beyond every item after it: ``min(low[:i+1]) > max(high[i+1:])`` when descending,
    ``max(high[:i+1]) < min(low[i+1:])`` when ascending. An item without interval is never
    clearly apart from anything, so no cut passes it; nor does a cut pass an open end
    (:attr:`~recmeta.ledger.estimate.Estimate.reach`).
    """
    if not estimates:
        raise ValueError("an order needs at least one item")
    names = list(estimates)
    values = np.array([estimates[n].value for n in names])
    idx = np.argsort(-values if descending else values, kind="stable")
    ranked = [names[i] for i in idx]
    est = [estimates[n] for n in ranked]
    lows = np.array([e.reach[0] for e in est])
    highs = np.array([e.reach[1] for e in est])
    if not descending:  # mirror the scale, so "beyond" is again "above"
        lows, highs = -highs, -lows
    prefix_low = np.minimum.accumulate(lows)
    suffix_high = np.maximum.accumulate(highs[::-1])[::-1]
    groups: list[list[str]] = [[ranked[0]]]
    for i in range(1, len(ranked)):
        if prefix_low[i - 1] > suffix_high[i]:
            groups.append([ranked[i]])
        else:
            groups[-1].append(ranked[i])
    return groups


def format_order(estimates: Mapping[str, Estimate], descending: bool = True) -> str:
    """The order as text, groups joined by ``>`` (descending) or ``<`` (ascending) and the members
    of a group by ``≈``: ``"P ≈ MAP > nDCG > MRR"``. Every ``>`` printed is established by the
    intervals (:func:`order_groups`)."""
    sep = " > " if descending else " < "
    return sep.join(" ≈ ".join(g) for g in order_groups(estimates, descending))
