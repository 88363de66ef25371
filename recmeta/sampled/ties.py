"""Tie rules for one held-out item: which rank it gets when other candidates share its score.

The rules and their names are the metric engine's (``ties=`` in
:mod:`recmeta.metrics._options`, where they are defined for whole lists); this module applies
them to the sampled-metrics setting, where a list has one relevant item. That item, with score
s, has ``above`` candidates scored strictly higher and ``tied`` other candidates scored exactly s
(NaN ties with NaN and ranks below every number). Of the tied ones, ``id_above`` come first
under trec_eval's order (item id *as text* descending, :mod:`recmeta.metrics._runs`). A rule
turns these counts into the *span* ``[lo, hi]`` of ranks it gives the item, every rank of the
span equally likely:

* ``"pessimistic"``: the item goes after every tied candidate, ``lo = hi = above + tied + 1``;
* ``"trec_eval"``: the engine's default order, ``lo = hi = above + id_above + 1``;
* ``"optimistic"``: before every tied candidate, ``lo = hi = above + 1``;
* ``"expected"``: a uniformly random order within the tie block, ``[above + 1, above + tied + 1]``.
  Its mean rank is ``above + 1 + tied / 2`` (PyKEEN's "realistic" rank); a metric takes its
  mean over the span — the engine's mean over the block's orderings with one relevant item
  (McSherry & Najork 2008) — which for the linear AUC is the metric at the mean rank.

The default is ``"expected"``, on a principle fixed before any data: a score that does not
separate items carries no ranking information, so the held-out item is given the expectation
over every order of its tie block, favouring neither it nor the candidates. Krichene & Rendle
(2020) do not say how they break ties; the other rules are offered to show how much a result
depends on that choice.

The engine's ``"item_id"`` order is not offered here. The metric of a held-out item is a
function of its rank alone (:mod:`.rank_metrics`), a different computation from the engine's
pass over lists, so these formulas stay; only the rules' names and definitions are shared. The
same rule applies in a sampled list: counts of sampled items above, tied and id-above give the
span of the sampled rank, and an estimator's value vector is averaged over it
(:func:`span_mean`). :func:`tie_span` is the one place that turns the rules into ranks.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..metrics import TIES
from .rank_metrics import metric_value, parse_rank_metric

__all__ = [
    "TIE_RULES",
    "DEFAULT_TIES",
    "check_ties",
    "tie_span",
    "span_mean",
    "span_metric",
    "tie_blocks",
]

#: the engine's tie rules this module applies, in the order the chapter shows them
TIE_RULES = ("pessimistic", "trec_eval", "optimistic", "expected")
assert set(TIE_RULES) <= set(TIES)
#: the default rule: the expectation over the orders of the tie block (see the module's text)
DEFAULT_TIES = "expected"


def check_ties(ties: str) -> str:
    """Validate a tie rule name; returns it."""
    if ties not in TIE_RULES:
        hint = ""
        if ties == "id":
            hint = " ('id' is now 'trec_eval', the metric engine's name for this order)"
        elif ties in TIES:
            hint = (
                f" ({ties!r} is an engine rule for whole lists, not offered for one held-out item)"
            )
        raise ValueError(f"unknown tie rule {ties!r}: use one of {', '.join(TIE_RULES)}{hint}")
    return ties


def tie_span(
    above: np.ndarray, tied: np.ndarray, id_above: np.ndarray, ties: str = DEFAULT_TIES
) -> tuple[np.ndarray, np.ndarray]:
    """The span ``[lo, hi]`` (1-based, inclusive) of ranks that rule ``ties`` gives an item.

    ``above``: items scored strictly higher; ``tied``: other items with the same score;
    ``id_above``: how many of the tied come first by item id (0..tied). Arrays broadcast;
    returns int64 arrays with ``lo == hi`` for every rule but ``"expected"``.
    """
    check_ties(ties)
    a = np.asarray(above, dtype=np.int64)
    t = np.asarray(tied, dtype=np.int64)
    if ties == "pessimistic":
        lo = hi = a + t + 1
    elif ties == "optimistic":
        lo = hi = a + 1
    elif ties == "trec_eval":
        lo = hi = a + np.asarray(id_above, dtype=np.int64) + 1
    else:
        lo, hi = a + 1, a + t + 1
    lo, hi = np.broadcast_arrays(lo, hi)
    return lo.astype(np.int64), hi.astype(np.int64)


def span_mean(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Mean of ``values[i - 1]`` over the ranks ``i = lo..hi`` (prefix sums, vectorised).

    ``values`` is a vector over ranks 1..L (an estimator over sampled ranks, or a metric over
    true ranks); ``lo <= hi`` must lie in 1..L.
    """
    v = np.asarray(values, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    if lo.size and (lo.min() < 1 or hi.max() > v.size or np.any(hi < lo)):
        raise ValueError(f"rank spans must satisfy 1 <= lo <= hi <= {v.size}")
    if np.array_equal(lo, hi):
        return v[lo - 1]
    cs = np.concatenate([[0.0], np.cumsum(v)])
    return (cs[hi] - cs[lo - 1]) / (hi - lo + 1)


def span_metric(metric: str, lo: np.ndarray, hi: np.ndarray, n: np.ndarray) -> np.ndarray:
    """M_n averaged over the rank span ``[lo, hi]`` of each user (``n`` items per user).

    AUC is linear in the rank, so its mean is AUC at the mean rank, with each user's own n;
    the other metrics of :mod:`.rank_metrics` do not depend on n and are averaged by prefix sums.
    """
    spec = parse_rank_metric(metric)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    nn = np.broadcast_to(np.asarray(n, dtype=np.int64), lo.shape)
    if lo.size and (lo.min() < 1 or np.any(hi > nn) or np.any(hi < lo)):
        raise ValueError("rank spans must satisfy 1 <= lo <= hi <= n")
    if spec.family == "AUC":
        return (nn - (lo + hi) / 2.0) / (nn - 1.0)
    top = int(hi.max()) if hi.size else 1
    return span_mean(metric_value(spec, np.arange(1, top + 1), max(top, 2)), lo, hi)


def tie_blocks(tied: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Per system, how many held-out items share their score with other candidates.

    ``tied`` maps a system to its per-user counts of other candidates tied with the held-out
    item. Columns: system, users, tied users, share, median block, largest block (a block is
    the tied candidates plus the held-out item; medians over tied users only).
    """
    rows = []
    for system, t in tied.items():
        t = np.asarray(t)
        hit = t > 0
        rows.append(
            {
                "system": system,
                "users": int(t.size),
                "tied users": int(hit.sum()),
                "share": float(hit.mean()) if t.size else float("nan"),
                "median block": float(np.median(t[hit] + 1)) if hit.any() else 0.0,
                "largest block": int(t.max() + 1) if hit.any() else 0,
            }
        )
    return pd.DataFrame(rows)
