"""Krichene & Rendle (2020): the numbers the paper prints, and how an order of systems reads.

The running example (§3.2, §4.2: Tables 1–2), the MovieLens tables (Tables 3–4, on ML-1M) and
the counts and thresholds read in the text (§6.1 Fig. 5, §6.3 Fig. 6, §4.2 Fig. 2). The paper's
text is known here through a text extraction; where a printed value could not be read reliably
it is not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...ledger import Estimate, format_order

__all__ = [
    "PAPER",
    "TABLE1",
    "TABLE2",
    "TABLE3",
    "TABLE3_ESTIMATORS",
    "TABLE4",
    "TABLE4_ESTIMATORS",
    "TOP_HEAVY",
    "TOY_M",
    "TOY_METRICS",
    "TOY_N",
    "TOY_RANKS",
    "TOY_REPETITIONS",
    "order_key",
    "order_text",
    "paper_order",
]

#: §3.2: n = 10,000 items; the true ranks of the relevant item of five users for A, B and C
TOY_N = 10_000
TOY_RANKS = {
    "A": (100, 100, 100, 100, 100),
    "B": (40, 40, 8437, 9266, 4482),
    "C": (212, 2, 743, 5342, 1548),
}
#: §4.2: negatives per user in Table 2, and the repetitions behind its mean ± sd
TOY_M = 99
TOY_REPETITIONS = 1000
TOY_METRICS = ("AUC", "AP", "NDCG", "Recall@10")
#: Table 1 (exact metrics), three printed decimals
TABLE1 = {
    "A": (0.990, 0.010, 0.150, 0.000),
    "B": (0.555, 0.010, 0.122, 0.000),
    "C": (0.843, 0.101, 0.208, 0.200),
}
#: Table 2 (m = 99, 1,000 repetitions): mean and standard deviation
TABLE2 = {
    "A": ((0.990, 0.004), (0.630, 0.129), (0.724, 0.097), (1.000, 0.000)),
    "B": ((0.555, 0.014), (0.336, 0.073), (0.444, 0.054), (0.400, 0.000)),
    "C": ((0.843, 0.014), (0.325, 0.050), (0.460, 0.039), (0.567, 0.092)),
}
#: Table 3's columns (after "Exact") and Table 4's
TABLE3_ESTIMATORS = ("sampled", "rank-estimate", "cls", "BV 1", "BV 0.1", "BV 0.01", "BV 0.001")
TABLE4_ESTIMATORS = TABLE3_ESTIMATORS
#: Table 3 (ML-1M, percent): per metric and system, exact, then (mean, sd) per estimator
TABLE3: dict[str, dict[str, tuple]] = {
    "Recall@10": {
        "X": (
            7.60,
            (66.19, 0.25),
            (17.46, 0.32),
            (8.52, 0.16),
            (4.71, 0.07),
            (6.49, 0.25),
            (7.18, 0.59),
            (7.32, 1.17),
        ),
        "Y": (
            8.84,
            (56.51, 0.22),
            (17.26, 0.28),
            (8.42, 0.14),
            (4.60, 0.07),
            (6.95, 0.21),
            (8.18, 0.51),
            (8.54, 1.07),
        ),
        "Z": (
            9.42,
            (54.20, 0.22),
            (18.67, 0.32),
            (9.10, 0.15),
            (4.97, 0.07),
            (7.44, 0.24),
            (8.63, 0.59),
            (9.08, 1.20),
        ),
    },
    "NDCG@10": {
        "X": (
            3.76,
            (39.21, 0.20),
            (17.46, 0.32),
            (3.99, 0.07),
            (2.16, 0.04),
            (3.00, 0.12),
            (3.34, 0.32),
            (3.41, 0.71),
        ),
        "Y": (
            4.59,
            (34.82, 0.16),
            (17.26, 0.28),
            (3.94, 0.06),
            (2.12, 0.03),
            (3.24, 0.10),
            (3.85, 0.28),
            (4.03, 0.66),
        ),
        "Z": (
            4.79,
            (35.34, 0.16),
            (18.67, 0.32),
            (4.27, 0.07),
            (2.29, 0.04),
            (3.46, 0.12),
            (4.05, 0.32),
            (4.31, 0.74),
        ),
    },
    "AP": {
        "X": (
            3.75,
            (32.55, 0.21),
            (18.12, 0.31),
            (3.58, 0.06),
            (2.44, 0.03),
            (3.13, 0.09),
            (3.37, 0.21),
            (3.42, 0.49),
        ),
        "Y": (
            4.32,
            (30.01, 0.20),
            (17.81, 0.28),
            (3.54, 0.06),
            (2.32, 0.03),
            (3.19, 0.07),
            (3.62, 0.18),
            (3.73, 0.45),
        ),
        "Z": (
            4.44,
            (30.71, 0.21),
            (19.20, 0.31),
            (3.82, 0.06),
            (2.45, 0.03),
            (3.38, 0.08),
            (3.79, 0.21),
            (3.97, 0.51),
        ),
    },
    "AUC": {
        "X": (
            89.13,
            (89.12, 0.04),
            (89.24, 0.04),
            (89.12, 0.04),
            (88.36, 0.04),
            (89.04, 0.04),
            (89.11, 0.04),
            (89.12, 0.04),
        ),
        "Y": (
            85.33,
            (85.33, 0.04),
            (85.48, 0.04),
            (85.32, 0.04),
            (84.63, 0.04),
            (85.26, 0.04),
            (85.32, 0.04),
            (85.32, 0.04),
        ),
        "Z": (
            74.73,
            (75.04, 0.23),
            (75.24, 0.20),
            (75.04, 0.21),
            (74.51, 0.23),
            (75.02, 0.20),
            (75.02, 0.24),
            (75.02, 0.23),
        ),
    },
}
#: Table 4: of 100 repetitions, how many order the pair as the exact metric does, per estimator
TABLE4: dict[str, dict[str, tuple[int, ...]]] = {
    "X vs Y": {
        "Recall@10": (0, 31, 31, 11, 93, 91, 78),
        "NDCG@10": (0, 31, 31, 15, 93, 88, 76),
        "AP": (0, 24, 31, 0, 68, 79, 66),
        "AUC": (100,) * 7,
    },
    "X vs Z": {
        "Recall@10": (0, 100, 100, 100, 100, 95, 86),
        "NDCG@10": (0, 100, 100, 100, 100, 95, 82),
        "AP": (0, 100, 100, 61, 99, 92, 81),
        "AUC": (100,) * 7,
    },
    "Y vs Z": {
        "Recall@10": (0, 100, 100, 100, 95, 72, 68),
        "NDCG@10": (100, 100, 100, 100, 94, 70, 67),
        "AP": (100, 100, 100, 100, 98, 75, 68),
        "AUC": (100,) * 7,
    },
}
#: other printed numbers: §6 (ML-1M, 6,040 users, 3,706 items, m = 100, 100 repetitions),
#: §6.1 (Fig. 5's counts), §6.3 (Fig. 6's thresholds), §4.2 (Fig. 2's)
PAPER: dict[str, Any] = {
    "users": 6040,
    "n": 3706,
    "m": 100,
    "repetitions": 100,
    "z_worst_bucket": 1600,
    "x_top100": 2310,
    "x_bottom_half": 300,
    "fig6_uncorrected": 1000,
    "fig6_bv": 60,
    "fig6_bv_gamma": 0.1,
    "fig2_ap_small": 50,
    "fig2_ap_mid": 200,
    "fig2_ap_late": 500,
    "fig2_recall": 5000,
    "table4_bv_level": 0.9,
    "table4_bv_misses": 1,
    "fig4_m": 100,
}

#: the top-heavy metrics of Table 3 (AUC aside)
TOP_HEAVY = ("Recall@10", "NDCG@10", "AP")


def order_text(values: Mapping[str, float], tol: float = 0.0) -> str:
    """Systems from best to worst as :func:`recmeta.ledger.format_order` writes an order
    (``"C > A ≈ B"``): each value stands for ``[v − tol/2, v + tol/2]``, so consecutive values
    more than ``tol`` apart are separated by ``>`` and the others joined by ``≈``."""
    return format_order({k: Estimate(v, v - tol / 2, v + tol / 2) for k, v in values.items()})


def order_key(text: str) -> tuple[frozenset[str], ...]:
    """An order as :func:`order_text` writes it, as its groups (sets of names), best first: two
    orders are the same when their keys are equal, whatever the order inside a group."""
    return tuple(frozenset(g.split(" ≈ ")) for g in text.split(" > "))


def paper_order(metric: str, column: int = 0) -> str:
    """The order of X, Y, Z in a column of Table 3 (0 = exact, 1 = uncorrected sampled, …)."""
    values = {s: (v[column] if column == 0 else v[column][0]) for s, v in TABLE3[metric].items()}
    return order_text(values)
