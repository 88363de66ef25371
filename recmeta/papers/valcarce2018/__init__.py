"""Valcarce, Parapar, Bellogín & Castells (2018): robustness and discriminative power of ranking
metrics, the study behind the chapter ``robustness``.

- :mod:`.values`: the seven metrics, the cut-offs and the paper's printed values;
- :mod:`.settings`: :class:`Settings`, the chapter's parameters with each profile's defaults;
- :mod:`.study`: :func:`study` (split, runs, :func:`analyse`) and :func:`cost_plan`;
- :mod:`.estimates`: robustness curves, τ and DP estimates with their intervals, :func:`summary`;
- :mod:`.rules`, :mod:`.claims`, :mod:`.claims_cutoffs` and :mod:`.claims_metrics`: the verdict
  rules and :data:`LEDGER` with its claims (registered on import);
- :mod:`.tables` and :mod:`.text`: the tables and the sentences the chapter shows;
- :mod:`.plots`: the figures (imported by the chapter only: it needs matplotlib and seaborn).
"""

from __future__ import annotations

from . import claims_cutoffs, claims_definitions, claims_metrics, estimates, rules, tables, text  # noqa: F401
from .claims import LEDGER  # the claims of both modules above, registered on import
from .estimates import (
    dp_estimate,
    popularity_curves,
    robustness_estimate,
    sparsity_curves,
    summary,
)
from .settings import QUICK_SECOND_SKIPS, QUICK_SYSTEMS, Settings
from .study import analyse, cost_plan, study
from .values import (
    CHAPTER,
    CUTOFFS,
    DP_MARGIN,
    LABELS,
    METRICS,
    PAPER,
    PAPER_CUTOFF_DEEP,
    PAPER_CUTOFF_LOWEST,
    PAPER_CUTOFF_MOST,
    PAPER_DATASETS,
    PAPER_DEEP_DP,
    PAPER_EPSILON,
    PAPER_FIG1,
    PAPER_FIG5,
    PAPER_FIG5_LOW,
    PAPER_HALF_SPARSITY,
    PAPER_MC_ERROR,
    PAPER_NDCG_CUTOFF_MIN,
    PAPER_PAIRS,
    PAPER_PERMUTATIONS,
    PAPER_POPULARITY_SHARES,
    PAPER_SAMPLES,
    PAPER_SPARSITY_SHARES,
    PAPER_SYSTEMS,
    PAPER_TABLE2,
    PAPER_TABLE3,
    TAU_MARGIN,
    TAU_ROUNDING,
    label,
)

__all__ = [
    "CHAPTER",
    "CUTOFFS",
    "DP_MARGIN",
    "LABELS",
    "LEDGER",
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
    "PAPER_TABLE3",
    "QUICK_SECOND_SKIPS",
    "QUICK_SYSTEMS",
    "TAU_MARGIN",
    "TAU_ROUNDING",
    "Settings",
    "analyse",
    "cost_plan",
    "dp_estimate",
    "estimates",
    "label",
    "popularity_curves",
    "robustness_estimate",
    "rules",
    "sparsity_curves",
    "study",
    "summary",
    "tables",
    "text",
]
