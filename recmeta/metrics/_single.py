"""Scoring synthetic rankings directly, e.g. permutations of a graded reference ranking.

Scheel et al. score test rankings made by swapping items of a reference ranking of 100 graded
items. :func:`score_rankings` takes the grades of the items *in test-ranking order*, one row per
ranking; every item of a row is judged, and the ideal ranking is the same grades sorted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._evaluate import score_matrices
from ._judgments import Judgments
from ._runs import Runs


def score_rankings(
    ranked_grades: np.ndarray, metrics: Sequence[str], threshold: float | None = None
) -> dict[str, np.ndarray]:
    """Score each row of ``ranked_grades`` (rankings × length, grades in ranked order).

    ``threshold`` (τ) defaults to the smallest positive grade, so that every row with a
    positive grade is evaluated. Returns one array of length n_rankings per metric (NaN for a
    row without a grade >= τ).
    """
    g = np.asarray(ranked_grades, dtype=np.float64)
    if g.ndim == 1:
        g = g[None, :]
    if threshold is None:
        positive = g[g > 0]
        threshold = float(positive.min()) if positive.size else 1.0
    judgments = Judgments.from_grades(g, threshold=threshold)
    order = np.broadcast_to(np.arange(g.shape[1]), g.shape)
    runs = Runs.from_orders(np.ascontiguousarray(order), judgments)
    return {name: m[0] for name, m in score_matrices(judgments, runs, metrics).items()}
