"""The chapter "Your own experiment": its settings and the steps that feed :func:`compare`.

The chapter compares roster systems (trained through the run cache of
:mod:`recmeta.recommenders`) with the reader's own LensKit pipelines, then rebuilds a sampled
evaluation from the same split (one held-out relevant item per user against sampled negatives,
Krichene & Rendle 2020) and sets its sampled and corrected metrics beside the exact ones.
:class:`Settings` turns the parameters cell into the options of :func:`compare`; the other
functions hold the steps the chapter would otherwise spell out in its cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import pandas as pd
from lenskit import batch
from lenskit.data import ItemListCollection
from lenskit.pipeline import Pipeline
from lenskit.training import TrainingOptions

from recmeta import data, recommenders
from recmeta.metaeval import agreement
from recmeta.metrics import parse_metric
from recmeta.recommenders import roster

from .inputs import item_lists
from .report import Comparison

__all__ = [
    "LIGHT",
    "PROFILE_DEFAULTS",
    "Settings",
    "check_cutoffs",
    "closest_pair",
    "held_out_items",
    "interval_width_gap",
    "order_agreement",
    "pair_tests",
    "roster_lists",
    "score_pipelines",
    "side_by_side",
    "train_pipelines",
]

#: the resampling sizes each profile takes when the parameters cell leaves them at None
PROFILE_DEFAULTS: dict[str, dict[str, int]] = {
    "quick": {"n_permutations": 10_000, "n_bootstrap": 1_000, "n_tukey": 2_000},
    "full": {"n_permutations": 100_000, "n_bootstrap": 9_999, "n_tukey": 20_000},
}

#: the lighter resampling of the sampled-candidates step, where only the means are read
LIGHT: dict[str, int] = {"n_permutations": 2_000, "n_bootstrap": 200, "n_tukey": 0, "n_random": 5}


@dataclass(frozen=True)
class Settings:
    """The options of :func:`compare` the chapter's parameters cell sets.

    :meth:`resolve` fills the resampling sizes the cell leaves at ``None`` from the profile
    (:data:`PROFILE_DEFAULTS`); :meth:`options` gives them to :func:`compare` as keywords.
    """

    alpha: float = 0.05
    confidence: float = 0.95
    correction: str = "holm"
    difference: float | None = 0.01
    power: float = 0.8
    n_permutations: int = 100_000
    n_bootstrap: int = 9_999
    n_tukey: int = 20_000
    seed: int = 0

    @classmethod
    def resolve(cls, profile: str, **given: Any) -> Settings:
        """The settings of ``profile`` (``"quick"`` or ``"full"``) with the given values.

        A resampling size given as ``None`` takes the profile's default; an unknown name or
        profile is refused.
        """
        if profile not in PROFILE_DEFAULTS:
            raise ValueError(f"profile must be one of {sorted(PROFILE_DEFAULTS)}, got {profile!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown settings {unknown}; the settings are {sorted(known)}")
        values = {k: v for k, v in given.items() if v is not None or k == "difference"}
        for name, default in PROFILE_DEFAULTS[profile].items():
            if values.get(name) is None:
                values[name] = default
        return cls(**values)

    def options(self) -> dict[str, Any]:
        """The keywords of :func:`compare` these settings set."""
        return asdict(self)

    def light(self) -> dict[str, Any]:
        """:meth:`options` with the lighter resampling of the sampled step (:data:`LIGHT`)."""
        return self.options() | LIGHT


def pair_tests(n_systems: int, metrics: Sequence[str]) -> int:
    """The paired tests of a comparison: ``k(k − 1)/2`` pairs of ``k`` systems per metric."""
    return n_systems * (n_systems - 1) // 2 * len(metrics)


def roster_lists(
    systems: Sequence[str],
    train: pd.DataFrame,
    *,
    dataset: str,
    test_fraction: float,
    seed: int,
    depth: int = 100,
    pairs: pd.DataFrame | None = None,
) -> dict[str, ItemListCollection]:
    """Each roster system's lists from the run cache (:func:`recmeta.recommenders.make`).

    Top ``depth`` lists of the split's training data, or with ``pairs`` (user, item) the
    scores of those candidates, where a pair a model cannot score is not ranked.
    """
    frame = recommenders.make(
        roster.systems(list(systems)),
        train,
        dataset=str(dataset),
        split=f"holdout-{test_fraction:g}",
        seed=seed,
        depth=depth,
        pairs=pairs,
    )
    if pairs is not None:
        frame = frame.dropna(subset=["score"])
    return {name: item_lists(frame[frame["system"] == name]) for name in systems}


def train_pipelines(
    pipelines: Mapping[str, Mapping[str, Any]], train: pd.DataFrame, *, depth: int, seed: int
) -> dict[str, Pipeline]:
    """LensKit's top-N pipeline around each ``{"component": ..., "config": ...}``, trained.

    The candidates of the pipeline are the training items the user has not rated, the
    protocol of the roster runs.
    """
    training_data = data.to_lenskit(train)
    pipes = {}
    for name, spec in pipelines.items():
        missing = {"component", "config"} - set(spec)
        if missing:
            raise ValueError(f"pipeline {name!r} needs the keys {sorted(missing)}")
        pipes[name] = roster.System(name, spec["component"], spec["config"]).pipeline(depth)
        pipes[name].train(training_data, TrainingOptions(rng=seed))
    return pipes


def score_pipelines(
    pipes: Mapping[str, Pipeline], candidates: pd.DataFrame
) -> dict[str, ItemListCollection]:
    """Each pipeline's scores of the (user, item) ``candidates`` (``lenskit.batch.score``)."""
    lists = item_lists(candidates)
    return {name: batch.score(pipe, lists, n_jobs=1) for name, pipe in pipes.items()}


def check_cutoffs(metrics: Sequence[str], depth: int) -> None:
    """Refuse a metric whose cut-off lies beyond the top lists (its exact value is unknown)."""
    deep = [m for m in metrics if (k := parse_metric(m).k) is not None and k > depth]
    if deep:
        raise ValueError(
            f"the cut-offs of {deep} exceed the depth {depth} of the lists: raise depth or "
            "lower the cut-offs"
        )


def held_out_items(
    test: pd.DataFrame, train: pd.DataFrame, threshold: float | None, *, seed: int
) -> pd.DataFrame:
    """One relevant test item per user, among the items the models know, drawn at random.

    Relevant: a rating of at least ``threshold`` (every test item when it is None).
    """
    relevant = test[test["item"].isin(train["item"].unique())]
    if threshold is not None:
        relevant = relevant[relevant["rating"] >= threshold]
    return relevant.groupby("user").sample(1, random_state=seed)


def side_by_side(exact: Comparison, sampled: Comparison) -> pd.DataFrame:
    """Per metric and system: the exact mean, the sampled one and the corrected one."""
    if sampled.sampled is None:
        raise ValueError("the second comparison was not made on sampled candidates")
    means = exact.summary[["metric", "system", "mean"]].rename(columns={"mean": "exact"})
    return sampled.sampled.merge(means, on=["metric", "system"])


def order_agreement(side: pd.DataFrame) -> pd.DataFrame:
    """Per metric: the pairs of systems, and how many the sampled and the corrected means order
    as the exact means do (:func:`recmeta.metaeval.agreement.pairs_ordered_alike`)."""
    rows = []
    for metric, f in side.groupby("metric", sort=False):
        raw, pairs = agreement.pairs_ordered_alike(f["exact"], f["sampled"])
        fixed, _ = agreement.pairs_ordered_alike(f["exact"], f["corrected"])
        rows.append(
            {"metric": metric, "pairs": pairs, "sampled": int(raw), "corrected": int(fixed)}
        )
    return pd.DataFrame(rows).set_index("metric")


def closest_pair(report: Comparison, metric: str) -> pd.Series:
    """The pair with the smallest standardised difference on ``metric``, the system ahead first.

    The differences and their intervals are turned to the system ahead (``a``), so that they
    read as "a is ahead by"; interval ends stay in increasing order.
    """
    p = report.pairs[report.pairs["metric"] == metric]
    if p.empty:
        raise ValueError(f"no pair of systems on {metric!r}: compare at least two systems")
    close = p.loc[p["smd"].abs().idxmin()].copy()
    sign = 1 if close["mean_diff"] >= 0 else -1
    if sign < 0:
        close["a"], close["b"] = close["b"], close["a"]
    close["mean_diff"] = sign * close["mean_diff"]
    close["smd"] = sign * close["smd"]
    for low, high in (("boot_low", "boot_high"), ("smd_low", "smd_high")):
        close[low], close[high] = sorted((sign * close[low], sign * close[high]))
    return close


def interval_width_gap(report: Comparison, metric: str) -> float:
    """The largest relative difference in width between a pair's bootstrap and t intervals."""
    p = report.pairs[report.pairs["metric"] == metric]
    ratio = (p["boot_high"] - p["boot_low"]) / (p["t_high"] - p["t_low"])
    return float((ratio - 1).abs().max())
