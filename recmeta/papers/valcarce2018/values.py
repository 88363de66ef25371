"""Valcarce et al. (2018): the study's vocabulary and the paper's printed values.

The seven metrics (engine names and the paper's), the cut-offs of §6, and every number the paper
prints that the chapter or the ledger sets beside ours, each with its source.
"""

from __future__ import annotations

import pandas as pd

from ...ledger import Margin

__all__ = [
    "CHAPTER",
    "CUTOFFS",
    "DP_MARGIN",
    "LABELS",
    "METRICS",
    "PAPER",
    "PAPER_CUTOFF_DEEP",
    "PAPER_CUTOFF_LOWEST",
    "PAPER_CUTOFF_MOST",
    "PAPER_DATASETS",
    "PAPER_DEEP_DP",
    "PAPER_EPSILON",
    "PAPER_FIG1",
    "PAPER_FIG5",
    "PAPER_FIG5_LOW",
    "PAPER_HALF_SPARSITY",
    "PAPER_MC_ERROR",
    "PAPER_NDCG_CUTOFF_MIN",
    "PAPER_PAIRS",
    "PAPER_PERMUTATIONS",
    "PAPER_POPULARITY_SHARES",
    "PAPER_SAMPLES",
    "PAPER_SPARSITY_SHARES",
    "PAPER_SYSTEMS",
    "PAPER_TABLE2",
    "PAPER_TABLE2_TAIL",
    "PAPER_TABLE3",
    "TAU_MARGIN",
    "TAU_ROUNDING",
    "label",
]

CHAPTER = "robustness"
PAPER = "valcarce2018robustness"

#: the seven metrics of the paper (engine names) and the paper's names for them
METRICS: tuple[str, ...] = ("P", "R", "AP", "nDCG", "RR", "bpref", "infAP")
LABELS: dict[str, str] = {
    "P": "P",
    "R": "Recall",
    "AP": "MAP",
    "nDCG": "nDCG",
    "RR": "MRR",
    "bpref": "bpref",
    "infAP": "infAP",
}
#: the cut-offs of §6
CUTOFFS: tuple[int, ...] = (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)

# ---------------------------------------------------------------------------- the paper's values
#: the datasets of the paper (§5)
PAPER_DATASETS: tuple[str, ...] = ("ML-1M", "LibraryThing", "BeerAdvocate")
#: Table 2: users, items, ratings of each dataset
PAPER_TABLE2: dict[str, dict[str, int]] = {
    "ML-1M": {"users": 6040, "items": 3706, "ratings": 1_000_209},
    "LibraryThing": {"users": 7279, "items": 37_232, "ratings": 749_401},
    "BeerAdvocate": {"users": 33_388, "items": 66_055, "ratings": 1_571_808},
}
#: Table 2: density (per cent of user-item pairs rated) and Gini of the ratings across items,
#: as printed (strings: the printed digits set each claim's rounding)
PAPER_TABLE2_TAIL: dict[str, dict[str, str]] = {
    "ML-1M": {"density": "4.468", "gini": "0.634"},
    "LibraryThing": {"density": "0.277", "gini": "0.581"},
    "BeerAdvocate": {"density": "0.071", "gini": "0.865"},
}
#: §5: 21 recommenders, hence 210 pairs of systems behind every DP of Table 3
PAPER_SYSTEMS = 21
PAPER_PAIRS = PAPER_SYSTEMS * (PAPER_SYSTEMS - 1) // 2
#: §4: Monte-Carlo permutations of the permutation test, and the error it quotes at two p-values
PAPER_PERMUTATIONS = 100_000
PAPER_MC_ERROR: dict[float, float] = {0.05: 0.001, 0.01: 0.00045}
#: §5: random samples per test-set size (sparsity), and the share grids of both biases
PAPER_SAMPLES = 50
PAPER_SPARSITY_SHARES = (1.0, 0.05, 0.05)  # from, to, step
PAPER_POPULARITY_SHARES = (1.0, 0.80, 0.01)
#: §3, eq. 8: ε of infAP
PAPER_EPSILON = 1e-5

_CUT = [f"@{k}" for k in CUTOFFS]
#: Fig. 1: Kendall's τ between the cut-offs of nDCG on ML-1M (the text prints the whole matrix)
PAPER_FIG1 = pd.DataFrame(
    [
        [1.00, 0.95, 0.93, 0.92, 0.92, 0.92, 0.92, 0.91, 0.90, 0.90, 0.90],
        [0.95, 1.00, 0.98, 0.97, 0.97, 0.97, 0.97, 0.96, 0.95, 0.95, 0.95],
        [0.93, 0.98, 1.00, 0.99, 0.99, 0.99, 0.99, 0.98, 0.97, 0.97, 0.97],
        [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
        [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
        [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
        [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
        [0.91, 0.96, 0.98, 0.99, 0.99, 0.99, 0.99, 1.00, 0.99, 0.99, 0.99],
        [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00],
        [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00],
        [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00],
    ],
    index=_CUT,
    columns=_CUT,
)

_M = list(METRICS)
#: Fig. 5a–c: Kendall's τ between the metrics at @100 on each dataset
PAPER_FIG5: dict[str, pd.DataFrame] = {
    "ML-1M": pd.DataFrame(
        [
            [1.00, 0.89, 0.87, 0.89, 0.71, 0.89, 0.91],
            [0.89, 1.00, 0.87, 0.90, 0.72, 0.90, 0.92],
            [0.87, 0.87, 1.00, 0.96, 0.84, 0.92, 0.92],
            [0.89, 0.90, 0.96, 1.00, 0.82, 0.94, 0.96],
            [0.71, 0.72, 0.84, 0.82, 1.00, 0.80, 0.80],
            [0.89, 0.90, 0.92, 0.94, 0.80, 1.00, 0.96],
            [0.91, 0.92, 0.92, 0.96, 0.80, 0.96, 1.00],
        ],
        index=_M,
        columns=_M,
    ),
    "LibraryThing": pd.DataFrame(
        [
            [1.00, 0.99, 0.96, 0.97, 0.91, 0.95, 0.96],
            [0.99, 1.00, 0.95, 0.96, 0.90, 0.96, 0.97],
            [0.96, 0.95, 1.00, 0.99, 0.95, 0.95, 0.96],
            [0.97, 0.96, 0.99, 1.00, 0.94, 0.96, 0.97],
            [0.91, 0.90, 0.95, 0.94, 1.00, 0.90, 0.90],
            [0.95, 0.96, 0.95, 0.96, 0.90, 1.00, 0.99],
            [0.96, 0.97, 0.96, 0.97, 0.90, 0.99, 1.00],
        ],
        index=_M,
        columns=_M,
    ),
    "BeerAdvocate": pd.DataFrame(
        [
            [1.00, 0.85, 0.89, 0.90, 0.83, 0.76, 0.84],
            [0.85, 1.00, 0.85, 0.88, 0.83, 0.91, 0.95],
            [0.89, 0.85, 1.00, 0.97, 0.94, 0.78, 0.90],
            [0.90, 0.88, 0.97, 1.00, 0.90, 0.80, 0.93],
            [0.83, 0.83, 0.94, 0.90, 1.00, 0.80, 0.88],
            [0.76, 0.91, 0.78, 0.80, 0.80, 1.00, 0.87],
            [0.84, 0.95, 0.90, 0.93, 0.88, 0.87, 1.00],
        ],
        index=_M,
        columns=_M,
    ),
}
#: Table 3: DP (sum of the permutation-test p-values over the 210 pairs) of each metric at @100
PAPER_TABLE3 = pd.DataFrame(
    [
        [2.6, 7.0, 2.8, 1.4, 15.5, 9.9, 8.4],
        [1.5, 5.9, 3.6, 0.2, 2.9, 5.4, 3.8],
        [1.9, 8.3, 10.7, 4.4, 5.8, 12.7, 4.8],
    ],
    index=list(PAPER_DATASETS),
    columns=_M,
)
#: §6: the lowest τ among cut-offs on ML-1M, between P@5 and P@100 and between R@5 and R@100
PAPER_CUTOFF_LOWEST = 0.76
#: §6: on ML-1M "most of the correlations [among cut-offs] are above 0.85"
PAPER_CUTOFF_MOST = 0.85
#: §6: among cut-offs above 20, τ is "almost always higher than 0.9" (LibraryThing, BeerAdvocate)
PAPER_CUTOFF_DEEP = 0.9
#: §6 and Fig. 1: every τ among the cut-offs of nDCG on ML-1M is at least 0.9
PAPER_NDCG_CUTOFF_MIN = 0.90
#: §7 and Fig. 6: every metric keeps τ above 0.9 with half of the test set removed
PAPER_HALF_SPARSITY = 0.9
#: §7 and Fig. 5: on ML-1M and BeerAdvocate "some correlations below 0.8"
PAPER_FIG5_LOW = 0.8
#: §6 and Fig. 4: cut-offs above 50 discriminate better than shallower ones
PAPER_DEEP_DP = 50

#: half a unit of the last digit the paper prints for τ (two decimals: 0.90 may be 0.895)
TAU_ROUNDING = 0.005
#: the margin of a τ value claim (Figs. 1 and 5a, §6), in units of τ
TAU_MARGIN = Margin(
    TAU_ROUNDING,
    0.025,
    "half the 0.05 spacing of the lines the paper reads τ against (0.8, 0.85, 0.9): a smaller "
    "difference is finer than any distinction the paper draws",
)
#: the margin of a DP value claim of Table 3 (printed with one decimal), in units of DP
DP_MARGIN = Margin(
    0.05,
    0.1,
    "half the smallest DP gap Table 3 reads as an order (P 2.6 before MAP 2.8 on ML-1M): "
    "within it a DP keeps its place among the paper's",
)


def label(measure: str) -> str:
    """The paper's name of an engine measure: ``"AP@100"`` → ``"MAP@100"``, ``"RR"`` → ``"MRR"``."""
    m, _, k = measure.partition("@")
    return f"{LABELS.get(m, m)}@{k}" if k else LABELS.get(m, m)
