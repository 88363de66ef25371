"""Sampled metrics and their corrections (Krichene & Rendle, KDD 2020).

>>> from recmeta.sampled import rank_pmf, expected_metric, correction
>>> expected_metric("Recall@10", [100, 2, 5342], n=10_000, m=99)          # doctest: +SKIP
>>> bv = correction("NDCG@10", n=1682, m=100, method="bv", gamma=0.1)     # doctest: +SKIP

Modules: :mod:`.rank_metrics` (metrics of one relevant item at rank r, eqs. 7–13),
:mod:`.rank_distribution` (the law of the sampled rank, §4.3), :mod:`.expected` (expected sampled
metrics and their closed forms, §4.4), :mod:`.corrections` (§5), :mod:`.evaluation` (repeated
sampled evaluations of runs, Tables 3–4), :mod:`.curves` (frames for the figures, order
probabilities), :mod:`.held_out` (how real candidates stand to a held-out item), :mod:`.ties`
(tie rules), :mod:`.shared` (sampled evaluation on real candidates, negatives shared by all
systems) and :mod:`.multi_shared` (the same with several held-out items per user). The
chapter's real-data study lives with its paper, in :mod:`recmeta.papers.krichene2020`.
"""

from .corrections import (
    COND_WARN,
    CORRECTION_METHODS,
    IllConditionedWarning,
    apply_correction,
    condition_number,
    correction,
    correction_for_target,
    correction_system,
)
from .curves import (
    estimator_moments,
    m_curves,
    order_probabilities,
    order_probability,
    rank_curves,
    reliable_m,
    smallest_reliable_m,
)
from .evaluation import (
    PAPER_ESTIMATORS,
    Estimator,
    exact_metrics,
    expected_evaluation,
    fit_n,
    pairwise_agreement,
    parse_estimator,
    sampled_evaluation,
    summarise,
)
from .expected import expected_metric, expected_value, sampled_metric_values
from .held_out import Standing, candidate_pairs, standing, true_ranks
from .multi import (
    MULTI_METRIC_NAMES,
    expected_multi_metric,
    item_corrections,
    item_targets,
    multi_metric_moments,
    multi_metric_values,
    multi_rank_pmf,
    simulate_multi_ranks,
)
from .multi_shared import (
    MULTI_TIES,
    MultiStanding,
    multi_exact,
    multi_shared_evaluation,
    multi_standing,
)
from .rank_distribution import rank_pmf, sample_ranks, simulate_item_sampling
from .rank_metrics import METRIC_NAMES, RankMetric, metric_value, parse_rank_metric
from .shared import (
    draw_counts,
    estimator_values,
    exact_from_standing,
    exact_per_user,
    order_study,
    reliable_from_study,
    shared_evaluation,
)
from .ties import DEFAULT_TIES, TIE_RULES, check_ties, span_mean, span_metric, tie_blocks, tie_span

__all__ = [
    "COND_WARN",
    "IllConditionedWarning",
    "condition_number",
    "correction_for_target",
    "fit_n",
    "Standing",
    "standing",
    "item_corrections",
    "item_targets",
    "MULTI_TIES",
    "MultiStanding",
    "multi_exact",
    "multi_shared_evaluation",
    "multi_standing",
    "draw_counts",
    "estimator_values",
    "exact_from_standing",
    "exact_per_user",
    "order_study",
    "reliable_from_study",
    "shared_evaluation",
    "DEFAULT_TIES",
    "TIE_RULES",
    "check_ties",
    "span_mean",
    "span_metric",
    "tie_blocks",
    "tie_span",
    "MULTI_METRIC_NAMES",
    "expected_multi_metric",
    "multi_metric_moments",
    "multi_metric_values",
    "multi_rank_pmf",
    "simulate_multi_ranks",
    "rank_pmf",
    "sample_ranks",
    "simulate_item_sampling",
    "expected_metric",
    "expected_value",
    "sampled_metric_values",
    "correction",
    "correction_system",
    "apply_correction",
    "CORRECTION_METHODS",
    "metric_value",
    "parse_rank_metric",
    "RankMetric",
    "METRIC_NAMES",
    "Estimator",
    "parse_estimator",
    "PAPER_ESTIMATORS",
    "exact_metrics",
    "sampled_evaluation",
    "expected_evaluation",
    "summarise",
    "pairwise_agreement",
    "rank_curves",
    "m_curves",
    "estimator_moments",
    "order_probability",
    "order_probabilities",
    "smallest_reliable_m",
    "reliable_m",
    "true_ranks",
    "candidate_pairs",
]
