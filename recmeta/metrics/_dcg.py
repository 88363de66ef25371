"""Discounted cumulative gain: nDCG (trec_eval ``ndcg_cut``) and NDCNG (Scheel et al.)."""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments, cumsum_ranks, discount
from ._names import MetricSpec


def _gain(grades: np.ndarray, kind: str, threshold: float) -> np.ndarray:
    """Gain of grades (unjudged = grade 0): linear, exponential (2^r − 1) or binary."""
    if kind == "linear":
        return grades
    if kind == "exp":
        return np.exp2(grades) - 1.0
    return ((grades >= threshold) & (grades > 0)).astype(np.float64)


def _ndcg(ctx: RankedJudgments, key: str, list_gain, entry_gain, k: int | None) -> np.ndarray:
    disc = discount(ctx.depth)[:, None, None]
    cum = ctx.cumulative("dcg:" + key, lambda: cumsum_ranks(list_gain() * disc))
    dcg = ctx.at(cum, k)
    ideal = ctx.per_user_top(entry_gain(), ctx.depth if k is None else k, key="idcg:" + key)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal > 0, dcg / ideal, 0.0)


def ndcg(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = sum_{i<=k} g(r_i) / log2(i + 1).

    Gain ``g`` (``gain=``): ``linear`` — the grade itself, as trec_eval ``ndcg_cut`` (which
    uses the qrels value) and Valcarce et al. (2020, eq. 5) do; ``exp`` — 2^r − 1 (Burges et al.
    2005); ``binary`` — 1 for relevant (r >= τ). Unjudged items gain 0. The ideal DCG ranks *all*
    the user's judged items by gain (not just the retrieved ones) and cuts at k. Järvelin &
    Kekäläinen (2002).
    """
    kind = spec.param("gain")
    grades = ctx.active_entries[2]
    return _ndcg(ctx, kind, lambda: _gain(ctx.grade0, kind, ctx.threshold),
                 lambda: _gain(grades, kind, ctx.threshold), spec.k)


def ndcng(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """NDCNG@k: nDCG of the normalised gain 2^(r/m) − 1 (Scheel et al., eq. 5).

    ``m`` is the user's highest grade (the highest reachable gain); with ``m = 0`` every gain is
    0 and NDCNG is 0. Discount and ideal ranking as in :func:`ndcg`.
    """
    users, _, grades = ctx.active_entries
    m = ctx.per_user_max(grades)
    safe = np.where(m > 0, m, 1.0)

    def list_gain():
        return (np.exp2(ctx.grade0 / safe) - 1.0) * (m > 0)

    def entry_gain():
        return (np.exp2(grades / safe[users]) - 1.0) * (m[users] > 0)

    return _ndcg(ctx, "normalised", list_gain, entry_gain, spec.k)
