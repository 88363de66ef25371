r"""The measures of Scheel, Lommatzsch & Albayrak (2011) as this chapter uses them.

µAP (their eq. 4) and NDCNG (eq. 5) are computed by the metric engine, :mod:`recmeta.metrics`,
under the names ``muAP`` and ``NDCNG``; the paper's NDCG (eq. 3, exponential gain) is
``nDCG(gain=exp)`` there. This module holds what the engine does not: the weights eq. 4 gives
each threshold, and the share of NDCG's gain that the top grade holds.

.. math::

    \mu\mathrm{AP} = \frac{\sum_{t \in L} d_t\, \mathrm{AP}^t}{\sum_{t \in L} d_t},
    \qquad d_{t_i} = t_i - t_{i-1}, \qquad
    \mathrm{NDCNG@}n = \frac{1}{Z_n} \sum_{i=1}^{n} \frac{2^{g(i)/m} - 1}{\log_2(i + 1)}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["PAPER_METRICS", "level_weights", "top_level_share"]

PAPER_METRICS = {"muAP": "µAP", "nDCG(gain=exp)": "NDCG", "NDCNG": "NDCNG"}
"""The paper's three measures as metric-engine names, with the label the chapter shows.

The paper's NDCG (eq. 3) uses the exponential gain 2^r − 1; :mod:`recmeta.metrics` calls it
``nDCG(gain=exp)``. None of the three takes a cut-off here: the rankings are scored whole.
"""


def level_weights(grades: Sequence[float] | np.ndarray) -> pd.Series:
    """The weights µAP gives each threshold: ``d_t / sum_{t in L} d_t`` (Scheel et al., eq. 4).

    ``L`` is the set of positive grades present, ``d_t = t - t_prev`` the distance to the next
    lower level of ``L`` (to 0 for the lowest), so the weights sum to 1 and ``sum d_t = max L``.
    For the paper's levels 0.0, 0.3, 1.0 the weights are 0.3 and 0.7.
    """
    g = np.asarray(grades, dtype=np.float64)
    if g.size == 0 or not np.isfinite(g).all() or (g < 0).any():
        raise ValueError(
            "grades must be a non-empty array of finite values >= 0 "
            "(shift the scale so that its irrelevant level is 0; see to_grades)"
        )
    levels = np.unique(g[g > 0])
    if levels.size == 0:
        raise ValueError("no positive grade: µAP is undefined without a relevant level")
    d = np.diff(levels, prepend=0.0)
    return pd.Series(d / levels[-1], index=pd.Index(levels, name="threshold"), name="weight")


def top_level_share(reference: Sequence[float] | np.ndarray) -> float:
    """Share of the exponential gain ``sum 2^g - 1`` that the items of the top grade hold.

    With integer levels this is where NDCG's weight goes: for 50 uniform levels (2 items each)
    the top level holds about half of all the gain (Scheel et al., eq. 3).
    """
    g = np.asarray(reference, dtype=np.float64)
    gains = np.exp2(g) - 1.0
    total = gains.sum()
    if total <= 0:
        raise ValueError("the reference has no positive grade")
    return float(gains[g == g.max()].sum() / total)
