"""Area under the ROC curve of a ranking (Krichene & Rendle 2020, eq. 2)."""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments
from ._names import MetricSpec


def auc(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """AUC = (n − (|R| − 1)/2 − mean rank of R) / (n − |R|).

    The fraction of (relevant, non-relevant) pairs ranked in the right order, over a ranking of n
    items (Krichene & Rendle 2020, eq. 2). Here the ranking is the user's list (cut at k if given)
    followed by the relevant items it misses, placed last; every other listed item — judged or
    not — counts as non-relevant. It equals eq. 2 when the list ranks the whole catalogue (or
    the sampled candidates). A non-empty list with no non-relevant item scores 1.
    """
    K = ctx.cut(spec.k)
    rel = ctx.rel[:K]
    n_list = np.minimum(ctx.list_length, K).astype(np.float64)
    R = ctx.num_rel
    found = ctx.at(ctx.cum_rel, K)
    missing = R - found
    rank_sum = (rel * ctx.ranks1[:K]).sum(axis=0)
    rank_sum = rank_sum + missing * n_list + missing * (missing + 1) / 2
    n = n_list + missing
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (n - (R - 1) / 2 - rank_sum / R) / (n - R)
    return np.where(n > R, value, 1.0)
