"""Krichene & Rendle (2020), *On Sampled Metrics for Item Recommendation*: the sampled-metrics
chapter's study, claims and sentences.

- :mod:`.paper`: the numbers the paper prints (Tables 1–4, the counts and thresholds of its
  figures) and how an order of systems reads;
- :mod:`.settings`: :class:`Settings`, the chapter's parameters resolved against the profile,
  and the cost plan;
- :mod:`.example`: the running example and the formula checks (§3–5);
- :mod:`.movielens`: the real-data study on one dataset (§6, §8);
- :mod:`.movielens_tables`: what the chapter and the claims read of it, and its tables beside
  the paper's;
- :mod:`.claims` (the ledger, registered on import, and its helpers), :mod:`.claims_example`,
  :mod:`.claims_movielens`, :mod:`.claims_corrections`: the claims;
- :mod:`.text` and :mod:`.text_ledger`: the sentences the chapter prints, built from computed
  values.
"""

from __future__ import annotations

# the claims join the ledger on import: claims_analysis imports claims_corrections, which imports
# claims_movielens, which imports claims_example: the order is the paper's (§3–5, §6.1–6.2,
# §6.3–8), then the equations, Figs. 1 and 3 and §5.5, whatever comes first
from . import claims_analysis, claims_corrections  # noqa: F401
from .claims import (
    LEDGER,
    PREFIX,
    TIED_RESULTS,
    by_tie_rule,
    evaluate,
    evaluate_under,
    exact_diff,
    rep_diff,
    report,
    tie_dependence,
    tie_variants,
    under_ties,
)
from .example import (
    ToyInputs,
    bias_variance,
    closed_form_checks,
    collapse_table,
    corrections_table,
    fig4_frames,
    fig4_summary,
    law_check,
    laws_apart,
    laws_table,
    least_squares_at_paper_size,
    m_grid,
    multi_approximation,
    orders_by_m,
    recall_consistent_from,
    table1_frame,
    table2_frame,
)
from .movielens import (
    PAPER_LABELS,
    MultiStudy,
    RealStudy,
    real_study,
    study_from_standing,
)
from .movielens_tables import (
    exact_by_rule,
    fig5_frame,
    independent_change,
    multi_table,
    rank_frame,
    reliable_counts,
    sampled_means,
    table3_frame,
    table4_frame,
    worst_bucket,
)
from .paper import (
    PAPER,
    TABLE1,
    TABLE2,
    TABLE3,
    TABLE3_ESTIMATORS,
    TABLE4,
    TABLE4_ESTIMATORS,
    TOP_HEAVY,
    TOY_M,
    TOY_METRICS,
    TOY_N,
    TOY_RANKS,
    TOY_REPETITIONS,
    order_key,
    order_text,
    paper_order,
)
from .settings import DEFAULT_TIES, TIES_PRINCIPLE, Settings, cost_plan

__all__ = [
    "DEFAULT_TIES",
    "TIES_PRINCIPLE",
    "TIED_RESULTS",
    "LEDGER",
    "PAPER",
    "PAPER_LABELS",
    "PREFIX",
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
    "MultiStudy",
    "RealStudy",
    "Settings",
    "ToyInputs",
    "bias_variance",
    "by_tie_rule",
    "closed_form_checks",
    "collapse_table",
    "corrections_table",
    "cost_plan",
    "evaluate",
    "evaluate_under",
    "exact_by_rule",
    "exact_diff",
    "fig4_frames",
    "fig4_summary",
    "fig5_frame",
    "independent_change",
    "law_check",
    "laws_apart",
    "laws_table",
    "least_squares_at_paper_size",
    "m_grid",
    "multi_approximation",
    "multi_table",
    "order_key",
    "order_text",
    "orders_by_m",
    "paper_order",
    "rank_frame",
    "real_study",
    "recall_consistent_from",
    "reliable_counts",
    "report",
    "rep_diff",
    "sampled_means",
    "study_from_standing",
    "table1_frame",
    "table2_frame",
    "table3_frame",
    "table4_frame",
    "tie_dependence",
    "tie_variants",
    "under_ties",
    "worst_bucket",
]
