"""The lighter study on the chapter's second dataset, whole: folds, scores, ledger inputs.

The chapter starts it in a worker process at the top of the page (:func:`second_later`) and
reads it where the second dataset's cells are, so its runs and analysis use the core the main
study leaves idle (:mod:`recmeta.book.background`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...book import background
from ...recommenders import roster
from .folds import Study, kfold_study
from .study import Results, Settings, run

__all__ = ["second_dataset", "second_later"]


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


def second_later(cfg: Settings, ratings: pd.DataFrame, dataset: str, **kw: Any) -> background.Later:
    """:func:`second_dataset` started in a worker process beside the chapter's (one job: here,
    when asked); its ``result()`` is the (study, results, ledger inputs) triple."""
    return background.call(second_dataset, cfg, ratings, dataset, **kw)
