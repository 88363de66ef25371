"""Ranking metrics of a single relevant item at rank r in a list of n items.

With one relevant item per user the metrics of Krichene & Rendle (2020, §3.1) depend only on its
rank r (eqs. 7–13):

* ``AUC``          (n − r) / (n − 1)                               (eq. 7)
* ``Precision@k``  δ(r ≤ k) / k                                    (eq. 8)
* ``Recall@k``     δ(r ≤ k)                                        (eq. 9; = hit ratio)
* ``AP@k``         δ(r ≤ k) / r                                    (eq. 10)
* ``NDCG@k``       δ(r ≤ k) / log2(r + 1)                          (eq. 11)
* ``AP``           1 / r                                           (eq. 12; = reciprocal rank)
* ``NDCG``         1 / log2(r + 1)                                 (eq. 13)

Names are read by the metric engine's one measure registry (:func:`recmeta.metrics.parse_metric`),
so ``R@10``, ``Recall@10`` and ``recall_10`` are one measure; ``RR`` and ``HR@k`` are ``AP`` and
``Recall@k`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics import MetricNameError, parse_metric

__all__ = ["RankMetric", "parse_rank_metric", "metric_value", "METRIC_NAMES", "ENGINE_FAMILIES"]

METRIC_NAMES = ("AUC", "AP", "NDCG", "Recall@k", "Precision@k", "NDCG@k", "AP@k")

#: the metric engine's measures (:data:`recmeta.metrics.MEASURES`) that are functions of one
#: relevant item's rank, and their family here: with one relevant item, RR is AP (1/r) and
#: Success (hit ratio, ``HR@k``) is Recall
ENGINE_FAMILIES = {
    "AUC": "AUC",
    "AP": "AP",
    "RR": "AP",
    "nDCG": "NDCG",
    "R": "Recall",
    "Success": "Recall",
    "P": "Precision",
}


@dataclass(frozen=True)
class RankMetric:
    """A parsed metric name: ``family`` in AUC/AP/NDCG/Recall/Precision, cut-off ``k`` or None."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"


def parse_rank_metric(metric: str | RankMetric) -> RankMetric:
    """A metric of one relevant item, named as the metric engine names it.

    Any name of :func:`recmeta.metrics.parse_metric` (one measure registry) that is a function
    of the relevant item's rank: ``AUC``, ``AP[@k]`` / ``RR[@k]`` (the same with one relevant
    item), ``nDCG[@k]`` (``NDCG@10``, ``ndcg_cut_10``), ``R@k`` (``Recall@10``, ``recall_10``),
    ``Success@k`` (``HR@k``, ``Hit@k``: equal to Recall@k here) and ``P@k``. Recall and
    Precision need a cut-off, AUC takes none; parameters other than the defaults are refused.
    """
    if isinstance(metric, RankMetric):
        return metric
    text = str(metric).strip()
    try:
        spec = parse_metric(text)
    except MetricNameError:
        spec = None
    family = None if spec is None else ENGINE_FAMILIES.get(spec.name)
    if spec is None or family is None:
        raise ValueError(
            f"unknown metric {metric!r}: use one of {', '.join(METRIC_NAMES)} "
            "(k a positive integer, e.g. 'Recall@10'; the engine's names such as 'R@10', "
            "'nDCG@10' or 'recip_rank' are read too)"
        )
    if spec.params != parse_metric(spec.name).params:
        raise ValueError(
            f"metric {metric!r}: its parameters {dict(spec.params)} do not apply to a single "
            "relevant item's rank; drop them"
        )
    if family in ("Recall", "Precision") and spec.k is None:
        raise ValueError(f"metric {metric!r} needs a cut-off: write e.g. '{family}@10'")
    if family == "AUC" and spec.k is not None:
        raise ValueError(f"metric {metric!r}: AUC takes no cut-off, write 'AUC'")
    if spec.k is not None and spec.k < 1:
        raise ValueError(f"metric {metric!r}: the cut-off k must be at least 1")
    return RankMetric(family, spec.k)


def _check_ranks(rank: np.ndarray | int, n: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(rank)
    nn = np.asarray(n)
    for name, a in (("rank", r), ("n", nn)):
        if not np.issubdtype(a.dtype, np.integer):
            if a.size and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
                continue
            raise ValueError(
                f"{name} must hold integers, got dtype {a.dtype} with non-integer values"
            )
    r = r.astype(np.int64)
    nn = nn.astype(np.int64)
    if np.any(nn < 2):
        raise ValueError("n (the number of items ranked) must be at least 2")
    if np.any(r < 1) or np.any(r > nn):
        raise ValueError("every rank must lie in 1..n; check that ranks are 1-based")
    return r, nn


def metric_value(
    metric: str | RankMetric, rank: np.ndarray | int, n: np.ndarray | int
) -> np.ndarray:
    """M_n(r): the metric of one relevant item at rank ``rank`` among ``n`` items (eqs. 7–13).

    ``rank`` and ``n`` broadcast; ``n`` only matters for AUC. Returns float64.
    """
    spec = parse_rank_metric(metric)
    r, nn = _check_ranks(rank, n)
    rf = r.astype(np.float64)
    if spec.family == "AUC":
        return (nn - rf) / (nn - 1.0)
    hit = np.ones_like(rf, dtype=bool) if spec.k is None else (r <= spec.k)
    if spec.family == "Recall":
        return hit.astype(np.float64)
    if spec.family == "Precision":
        if spec.k is None:
            raise ValueError(f"{spec.name} needs a cut-off: write e.g. 'Precision@10'")
        return hit / float(spec.k)
    if spec.family == "AP":
        return np.where(hit, 1.0 / rf, 0.0)
    return np.where(hit, 1.0 / np.log2(rf + 1.0), 0.0)  # NDCG
