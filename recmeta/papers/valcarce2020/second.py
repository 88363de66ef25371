"""The lighter study on the chapter's second dataset, whole: folds, scores, ledger inputs.

The chapter computes it in its own process: the main study's analysis already computes on both
cores (matrix products), so a worker process beside it did not shorten the page
(``benchmarks/README.md``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...recommenders import roster
from .folds import Study, kfold_study
from .study import Results, Settings, run

__all__ = ["second_dataset"]


def second_dataset(
    cfg: Settings,
    ratings: pd.DataFrame,
    dataset: str,
    *,
    k: int,
    split_seed: int,
    threshold: float,
    cutoff: int,
    seed: int,
) -> tuple[Study, Results, dict[str, Any]]:
    """The second dataset's folds (``cfg.second_systems`` on ``cfg.second_folds``), the study
    run on them (``cfg.second_samples`` masks per share) and its ledger inputs."""
    study = kfold_study(
        ratings,
        roster.systems(cfg.second_systems),
        dataset=str(dataset),
        k=k,
        folds=cfg.second_folds,
        seed=split_seed,
        threshold=threshold,
        depth=cutoff,
    )
    results = run(
        study,
        shares=cfg.scheme_shares,
        n_samples=cfg.second_samples,
        seed=seed,
        n_permutations=cfg.n_permutations,
        cutoff=cutoff,
        n_boot=cfg.n_boot,
        boot_masks=cfg.boot_masks,
    )
    inputs = results.ledger_inputs(n_boot=cfg.n_boot, seed=seed, ratings=ratings)
    return study, results, inputs
