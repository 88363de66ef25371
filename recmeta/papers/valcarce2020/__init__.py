"""Valcarce, Bellogín, Parapar & Castells (2020), *Assessing ranking metrics in top-N
recommendation*: the study, the ledger and the sentences of the assessing-ranking-metrics
chapter.

- :mod:`.folds`: the k folds pooled over (fold, user) topics, the nine metrics, the masks;
- :mod:`.curves`: areas and points of the robustness curves, expected precision;
- :mod:`.replicates`: τ among metrics and DP with bootstraps over users;
- :mod:`.uncertainty`: the robustness curves' two-level bootstrap (users and masks);
- :mod:`.study`: :class:`Settings`, :func:`run` and its :class:`Results`, :func:`cost_plan`;
- :mod:`.second`: the lighter study on the second dataset, whole;
- :mod:`.tables`: the chapter's tables built from the results;
- :mod:`.equations`: eqs. 1–11 written out (the 2018 chapter's transcriptions reused);
- :mod:`.hard_users`: §6.2's graded metrics on hard and easy users; :mod:`.datasets`:
  Table 2's quantities;
- :mod:`.estimates`, :mod:`.claims`, :mod:`.claims_incompleteness`, :mod:`.claims_means`
  and :mod:`.claims_definitions`: the ledger (registered on import);
- :mod:`.text`: the sentences the chapter prints;
- :mod:`.figures`: the chapter's figures (imported by the chapter, not here: it needs seaborn).
"""

from __future__ import annotations

# the claims in the paper's order: §1–§6.2, then §6.3, then §7–§8 (all on claims.LEDGER)
from . import claims  # noqa: F401

# isort: split
from . import claims_incompleteness  # noqa: F401

# isort: split
from . import claims_means  # noqa: F401

# isort: split
from . import claims_definitions  # noqa: F401

# isort: split
from . import text
from .claims import (
    CHAPTER,
    CUTOFF,
    JUDGED_SHARE,
    LEDGER,
    MC_ERROR,
    N_FOLDS,
    N_PAIRS,
    N_PERMUTATIONS,
    N_SAMPLES,
    N_SYSTEMS,
    PAPER,
    TAU_ARITH_GEO,
    TAU_HALF_RATINGS,
    TAU_LIBRARYTHING,
    TAU_SOME_BELOW,
    THRESHOLD,
)
from .curves import (
    area_estimate,
    curve_point,
    expected_precision_ratio,
    robustness_summary,
    tau_resolution,
    trapezoid_weights,
)
from .estimates import judged_estimate
from .folds import (
    AGGREGATES,
    LABELS,
    METRICS,
    SCHEMES,
    Study,
    incompleteness_masks,
    judged_share,
    kfold_study,
    label,
    measures,
    overall_judged_share,
    per_user,
    pool_folds,
    scorer,
)
from .replicates import (
    TauReplicates,
    cluster_means,
    dp_estimate,
    dp_mc_halfwidth,
    dp_replicates,
    tau_replicates,
)
from .second import second_dataset
from .study import Results, Settings, cost_plan, robustness, run
from .tables import (
    area_table,
    change_table,
    dataset_table,
    dp_estimates,
    dp_table,
    scorer_check,
    verdicts_side_by_side,
)
from .uncertainty import CurveReplicates, curve_replicates

__all__ = [
    "AGGREGATES",
    "CHAPTER",
    "CUTOFF",
    "JUDGED_SHARE",
    "LABELS",
    "LEDGER",
    "MC_ERROR",
    "METRICS",
    "N_FOLDS",
    "N_PAIRS",
    "N_PERMUTATIONS",
    "N_SAMPLES",
    "N_SYSTEMS",
    "PAPER",
    "SCHEMES",
    "TAU_ARITH_GEO",
    "TAU_HALF_RATINGS",
    "TAU_LIBRARYTHING",
    "TAU_SOME_BELOW",
    "THRESHOLD",
    "Results",
    "Settings",
    "Study",
    "CurveReplicates",
    "curve_replicates",
    "TauReplicates",
    "area_estimate",
    "area_table",
    "change_table",
    "cluster_means",
    "cost_plan",
    "curve_point",
    "dataset_table",
    "dp_replicates",
    "dp_estimate",
    "dp_estimates",
    "dp_mc_halfwidth",
    "dp_table",
    "expected_precision_ratio",
    "incompleteness_masks",
    "judged_estimate",
    "judged_share",
    "kfold_study",
    "label",
    "measures",
    "overall_judged_share",
    "per_user",
    "pool_folds",
    "robustness",
    "robustness_summary",
    "run",
    "scorer",
    "scorer_check",
    "second_dataset",
    "tau_replicates",
    "tau_resolution",
    "text",
    "trapezoid_weights",
    "verdicts_side_by_side",
]
