"""Evaluation protocols: target sets, candidate designs and the expected precision of random
rankings (Bellogín, Castells & Cantador 2017, §3–§4 and §6).

- :mod:`~recmeta.protocols.targets`: :class:`Protocol` (AI/TI candidates, AR/1R relevant items,
  AN/NN non-relevant items, P1R percentiles) and :func:`target_sets`;
- :mod:`~recmeta.protocols.uniform`: the uniform-test split of §6.2 (UAR, U1R);
- :mod:`~recmeta.protocols.scoring`: the pairs a recommender scores and the join of its scores;
- :mod:`~recmeta.protocols.ranks`: ranks within target sets (ties by item id);
- :mod:`~recmeta.protocols.set_metrics`: P@n, nDCG@n and any engine metric per target set, and
  the protocol's mean;
- :mod:`~recmeta.protocols.expectations`: the expected precision of random (σδ, eq. 4; 1/t,
  eq. 5) and non-personalised rankings (eq. 3), and the lemma's AR–1R bounds (eq. 2).

The modules import downwards in that order; nothing here imports a paper.
"""

from __future__ import annotations

from .expectations import (
    conditional_precision_ar,
    expected_precision_fixed_ranking,
    harmonic_target_size,
    lemma_bounds,
    lemma_ranks,
    nonpersonalised_precision_ar,
    nonpersonalised_precision_uniform,
    random_precision,
    random_precision_1r,
    random_precision_an,
    random_precision_ar,
    random_precision_terms,
    relevance_density,
    top_positive_counts,
)
from .ranks import rank_in_sets, rank_within, set_codes
from .scoring import attach_scores, candidate_pairs, item_scores, random_scores, shared_pairs
from .set_metrics import (
    engine_metrics,
    evaluate_systems,
    metric_cutoff,
    one_r_an_metrics,
    protocol_mean,
    target_metrics,
)
from .targets import (
    Candidates,
    NonRelevant,
    Protocol,
    Relevant,
    check_ratings,
    target_sets,
)
from .uniform import UniformSplit, uniform_test_size, uniform_test_split

__all__ = [
    "Candidates",
    "NonRelevant",
    "Protocol",
    "Relevant",
    "UniformSplit",
    "attach_scores",
    "candidate_pairs",
    "check_ratings",
    "conditional_precision_ar",
    "engine_metrics",
    "evaluate_systems",
    "expected_precision_fixed_ranking",
    "harmonic_target_size",
    "item_scores",
    "lemma_bounds",
    "lemma_ranks",
    "metric_cutoff",
    "nonpersonalised_precision_ar",
    "nonpersonalised_precision_uniform",
    "one_r_an_metrics",
    "protocol_mean",
    "random_precision",
    "random_precision_1r",
    "random_precision_an",
    "random_precision_ar",
    "random_precision_terms",
    "random_scores",
    "shared_pairs",
    "rank_in_sets",
    "rank_within",
    "relevance_density",
    "set_codes",
    "target_metrics",
    "target_sets",
    "top_positive_counts",
    "uniform_test_size",
    "uniform_test_split",
]
