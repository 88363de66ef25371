"""The machinery every experiment of the statistical-biases chapter shares: the systems, the
protocols with the study's threshold, the trials on several splits and the reuse of their sets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...protocols import Candidates, NonRelevant, Protocol, Relevant
from .settings import Settings
from .trials import (
    Scorer,
    TrialCache,
    popularity_scorer,
    random_scorer,
    roster_scorer,
    trials,
)

__all__ = ["StudyBase"]


class StudyBase:
    """The data, settings, systems and results of one study (see :class:`~.study.Study`).

    ``ratings`` must be graded (a rating column); ``dataset`` names it (for the run cache of
    the roster systems, :func:`~recmeta.papers.bellogin2017.trials.roster_scorer`).
    """

    def __init__(self, ratings: pd.DataFrame, settings: Settings, *, dataset: str) -> None:
        self.ratings = ratings
        self.s = settings
        self.dataset = str(dataset)
        self.systems: dict[str, Scorer] = {
            "popularity": popularity_scorer,
            "random": random_scorer(settings.seed),
        }
        self.cf: dict[str, Scorer] = {
            role: roster_scorer(name, dataset=self.dataset)
            for role, name in settings.roster.items()
        }
        self.order = [*self.systems, *self.cf]
        self.items = np.unique(ratings["item"].to_numpy())
        self.positive = ratings.loc[ratings["rating"] >= settings.threshold, "item"].value_counts()
        self.results: dict[str, Any] = {"settings": settings, "dataset": self.dataset}
        self.cache = TrialCache(keep_sets=3)
        #: engine metrics added to every AR-AN run, so the runs of several figures are shared
        self.ar_metrics = (f"R@{settings.n}",)

    def analysis_key(self) -> tuple[object, ...]:
        """What determines every experiment of the study (the key of :mod:`recmeta.analyses`):
        the ratings, the settings and the dataset's name (which names its runs in the run
        cache)."""
        return (self.ratings, self.s, self.dataset)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its inputs: a worker process rebuilds the study (its results stay)."""
        return (_rebuild, (type(self), self.ratings, self.s, self.dataset))

    def release(self) -> None:
        """Drop the target sets kept for reuse (the per-set results stay)."""
        self.cache.sets.clear()

    # -- helpers ---------------------------------------------------------------------------------

    def protocol(
        self,
        candidates: Candidates,
        relevant: Relevant,
        nonrelevant: NonRelevant,
        size: int | None = None,
        **kw: Any,
    ) -> Protocol:
        """A :class:`Protocol` with the study's threshold; NN defaults to
        |N_u| = ``n_nonrelevant``."""
        if nonrelevant == "NN" and size is None:
            size = self.s.n_nonrelevant
        return Protocol(candidates, relevant, nonrelevant, size, threshold=self.s.threshold, **kw)

    def run(
        self,
        protocol: Protocol,
        *,
        seeds: Sequence[int] | None = None,
        roster_seeds: Sequence[int] | None = None,
        systems: Mapping[str, Scorer] | None = None,
        ratings: pd.DataFrame | None = None,
        **kw: Any,
    ) -> pd.DataFrame:
        """Per-set rows of the baselines on ``seeds``, of the roster systems on ``roster_seeds``."""
        seeds = self.s.seeds if seeds is None else seeds
        roster_seeds = self.s.roster_seeds if roster_seeds is None else roster_seeds
        data = self.ratings if ratings is None else ratings
        common = {
            "sigma": self.s.sigma,
            "n": self.s.n,
            "per_set": True,
            "cache": self.cache if ratings is None else None,
            **kw,
        }
        if protocol.relevant == "AR" and protocol.nonrelevant == "AN":
            common.setdefault("metrics", self.ar_metrics)
        roster = None
        if self.cf and roster_seeds and systems is None:
            # the roster's few seeds first: the baselines' trial then finds those splits' target
            # sets among the last the cache keeps, instead of building them again
            roster = trials(data, protocol, self.cf, seeds=roster_seeds, **common)
        frames = [trials(data, protocol, dict(systems or self.systems), seeds=seeds, **common)]
        return pd.concat(frames if roster is None else [*frames, roster], ignore_index=True)


def _rebuild(cls: type[StudyBase], ratings: pd.DataFrame, settings: Settings, dataset: str) -> Any:
    return cls(ratings, settings, dataset=dataset)
