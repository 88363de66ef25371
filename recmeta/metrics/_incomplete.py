"""Metrics for incomplete judgments: bpref and infAP, exactly as trec_eval computes them.

Both read only judged items: unjudged items are skipped (their rank still counts for infAP).
A cut-off ``@k`` evaluates the list truncated at k; |R| and the number of judged non-relevant
items always come from the judgments.
"""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments, cumsum_ranks
from ._names import MetricSpec

INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


def bpref(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """bpref = (1/|R|) sum_{r in R retrieved} (1 − min(n_r, |R|) / min(|N|, |R|)).

    ``n_r`` is the number of judged non-relevant items ranked above r, ``N`` the judged
    non-relevant items. Buckley & Voorhees (2004); trec_eval ``bpref`` (``m_bpref.c``), which
    counts a term of 1 when ``n_r = 0``.
    """

    def cumulative():
        above = ctx.cum_nonrel - ctx.nonrel
        # with no judged non-relevant item, above = 0 and the term is 1 (denominator kept >= 1)
        denominator = np.maximum(np.minimum(ctx.num_nonrel, ctx.num_rel), 1.0)
        term = 1.0 - np.minimum(above, ctx.num_rel) / denominator
        return cumsum_ranks(ctx.rel * term)

    with np.errstate(divide="ignore", invalid="ignore"):
        return ctx.at(ctx.cumulative("bpref", cumulative), spec.k) / ctx.num_rel


def inf_ap(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """infAP = (1/|R|) sum_{relevant r retrieved at rank j+1} E[P@(j+1)] (Yilmaz & Aslam 2006).

    As trec_eval ``infAP`` (``m_infap.c``): E[P@1] = 1 and, for j >= 1,
    ``E[P@(j+1)] = 1/(j+1) + j/(j+1) · (a/j) · (ra + ε)/(a + 2ε)`` with ``ra``/``na`` the
    relevant / judged non-relevant items above, ``a = ra + na`` and ε = 1e-5. The factor ``a/j``
    (the judged fraction of the items above) is missing from the formula printed by Valcarce et
    al. (2020, eq. 11); we follow trec_eval. There is no "pooled but unjudged" class here.
    """

    def cumulative():
        ra = ctx.cum_rel - ctx.rel
        a = ra + ctx.cum_nonrel - ctx.nonrel
        j = ctx.ranks1 - 1.0
        eps = INFAP_EPSILON
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (a / j) * ((ra + eps) / (a + 2 * eps))
        expected[0] = 1.0
        return cumsum_ranks(ctx.rel * expected)

    with np.errstate(divide="ignore", invalid="ignore"):
        return ctx.at(ctx.cumulative("infap", cumulative), spec.k) / ctx.num_rel
