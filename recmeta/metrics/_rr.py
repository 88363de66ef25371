"""Cascade metrics: reciprocal rank and expected reciprocal rank."""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments, cumsum_ranks
from ._names import MetricSpec


def reciprocal_rank(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant item within k, 0 if none (trec_eval ``recip_rank``).

    Valcarce et al. (2020), eq. 6.
    """
    first = ctx.first_rel
    return np.where(first < ctx.cut(spec.k), 1.0 / (first + 1.0), 0.0)


def err(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """ERR@k = sum_{i<=k} (1/i) G_i prod_{p<i} (1 − G_p), G = (2^r − 1) / 2^rmax.

    Chapelle et al. (2009); gain as Valcarce et al. (2020), eqs. 7–8. ``rmax`` (``ERR(rmax=5)``)
    defaults to ``Judgments.max_grade``. Unjudged items have r = 0, so G = 0; judged items below τ
    still give their (small) gain, as in the formula.
    """
    rmax = spec.param("rmax")
    if rmax is None:
        rmax = ctx.judgments.max_grade
    if np.nanmax(ctx.grade0, initial=0.0) > rmax:
        raise ValueError(f"ERR: a grade exceeds rmax={rmax}; pass ERR(rmax=...) >= the top grade")

    def cumulative():
        g = (np.exp2(ctx.grade0) - 1.0) / np.exp2(rmax)
        stop = np.cumprod(1.0 - g, axis=0)
        reach = np.concatenate([np.ones((1,) + g.shape[1:]), stop[:-1]], axis=0)
        return cumsum_ranks(reach * g / ctx.ranks1)

    return ctx.at(ctx.cumulative(f"err:{rmax}", cumulative), spec.k)
