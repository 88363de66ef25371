"""Rating scales, Scheel, Lommatzsch & Albayrak (2011), sec. 3.2, Table 2, on MovieLens.

Ratings become grades whose irrelevant level is 0, on the native scale and stretched
(:func:`to_grades`); the same runs are evaluated on every version of the judgments
(:func:`scale_study`), and the systems' values and orders compared across the versions
(:func:`relative_changes`, :func:`order_agreement`, :func:`closest_pair_gap`).
:func:`scale_experiment` runs the chapter's recommenders on a holdout and evaluates them so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from ... import analyses, recommenders
from ...data import splits
from ...metrics import Judgments, Runs, evaluate
from ...recommenders import roster
from .candidates import virtual_candidates
from .measures import PAPER_METRICS
from .settings import Settings

__all__ = [
    "REAL_LABELS",
    "REAL_METRICS",
    "SCALE_VERSIONS",
    "closest_pair_gap",
    "holdout",
    "largest_changes",
    "ledger_inputs",
    "order_agreement",
    "order_table",
    "rating_scale",
    "relative_changes",
    "scale_experiment",
    "scale_means",
    "scale_study",
    "scale_table",
    "to_grades",
]

#: the measures of the real-data sections: the paper's three and NDCG with linear gain
REAL_METRICS = [*PAPER_METRICS, "nDCG"]
#: their labels in the chapter's tables
REAL_LABELS = {**PAPER_METRICS, "nDCG": "NDCG (linear)"}


def rating_scale(ratings: pd.DataFrame, column: str = "rating") -> dict[str, float]:
    """The rating scale of a frame: lowest and highest rating, the step between successive
    values, the number of distinct values, and ``lowest_relevant``, the lowest rating above the
    minimum.

    :func:`to_grades` maps the lowest rating to grade 0, so every higher rating has a positive
    grade. µAP's lowest threshold is a user's lowest positive grade (Scheel et al., eq. 4), so at
    that threshold every rating from ``lowest_relevant`` up counts as relevant (2 stars on a
    1–5 scale).
    """
    if column not in ratings.columns:
        raise KeyError(f"ratings frame has no column {column!r}; it has {list(ratings.columns)}")
    values = np.unique(ratings[column].to_numpy(np.float64))
    if values.size < 2:
        raise ValueError("the ratings hold fewer than two distinct values: no graded relevance")
    return {
        "lowest": float(values[0]),
        "highest": float(values[-1]),
        "step": float(np.diff(values).min()),
        "levels": int(values.size),
        "lowest_relevant": float(values[1]),
    }


def to_grades(
    ratings: pd.DataFrame,
    *,
    irrelevant: float | None = None,
    factor: float = 1.0,
    column: str = "rating",
) -> pd.DataFrame:
    """Ratings as grades whose irrelevant level is 0:
    ``grade = factor · max(r − irrelevant, 0)``.

    µAP and NDCG-type gains need the irrelevant level at 0 (Scheel et al., sec. 3.2: "the
    relevance scores must be shifted"). ``irrelevant`` defaults to the lowest rating of the frame
    (ML-100K's 1 star becomes grade 0 and 5 stars grade 4, the 0–4 scale of the paper's sec. 2);
    ratings at or below it all become 0. ``factor`` stretches the scale without changing any
    preference: ``factor=2`` is the doubled scale of the paper's Table 2.
    """
    if column not in ratings.columns:
        raise KeyError(f"ratings frame has no column {column!r}; it has {list(ratings.columns)}")
    r = ratings[column]
    if not pd.api.types.is_numeric_dtype(r) or not np.isfinite(r.to_numpy(np.float64)).all():
        raise ValueError(f"column {column!r} must hold finite numbers; clean the ratings first")
    if not (np.isfinite(factor) and factor > 0):
        raise ValueError(
            f"factor must be a positive number (a rescaling keeps the order), got {factor}"
        )
    if irrelevant is None:
        if len(r) == 0:
            raise ValueError("empty ratings frame: give irrelevant= explicitly")
        irrelevant = float(r.min())
    grades = factor * np.maximum(r.to_numpy(np.float64) - float(irrelevant), 0.0)
    return ratings.assign(**{column: grades})


def scale_study(
    test: pd.DataFrame,
    runs: pd.DataFrame,
    scales: Mapping[str, Callable[[pd.DataFrame], pd.DataFrame]],
    metrics: Sequence[str],
    *,
    threshold: float | str = "lowest",
    per_user: bool = False,
) -> pd.DataFrame:
    """Evaluate the same runs against several versions of the same test ratings.

    ``scales`` maps a name to a function ratings -> grades (e.g. ``lambda df: to_grades(df,
    factor=2)``). ``runs`` is a tidy frame (system, user, item, score or rank) as
    :meth:`recmeta.metrics.Runs.from_frame` reads it. ``threshold="lowest"`` sets τ to the lowest
    positive grade of each version, so the same users enter every average. Returns a tidy frame:
    scale, system, metric, value (mean over users) — with ``per_user``, scale, system, user,
    metric, value for every evaluated user.
    """
    parts = []
    first, r = None, None  # every version judges the same pairs: one index, one set of runs
    for name, transform in scales.items():
        grades = transform(test)
        g = grades["rating"].to_numpy(np.float64)
        if (g < 0).any():
            raise ValueError(f"scale {name!r} gives negative grades; map the irrelevant level to 0")
        tau = float(g[g > 0].min()) if threshold == "lowest" else float(threshold)
        if first is None:
            j = first = Judgments.from_frame(grades, threshold=tau)
            r = Runs.from_frame(runs, j)
        else:
            j = Judgments.from_frame(grades, threshold=tau, users=first.users, items=first.items)
        assert r is not None  # built with ``first``, in the first pass
        parts.append(evaluate(j, r, list(metrics), per_user=per_user).assign(scale=name))
    cols = ["scale", "system", *(["user"] if per_user else []), "metric", "value"]
    return pd.concat(parts, ignore_index=True)[cols]


def relative_changes(results: pd.DataFrame, reference: str = "native") -> pd.DataFrame:
    """Each system's value on every other scale against its value on the ``reference`` scale.

    ``results``: a :func:`scale_study` frame of means (an optional ``dataset`` column is kept).
    Returns the rows of the other scales with columns ``reference_value`` and
    ``relative_change = value / reference_value - 1``.
    """
    keys = [c for c in ("dataset", "system", "metric") if c in results.columns]
    base = results[results["scale"] == reference].set_index(keys)["value"].rename("reference_value")
    if base.empty:
        raise ValueError(f"no rows of the reference scale {reference!r}")
    other = results[results["scale"] != reference].join(base, on=keys)
    return other.assign(relative_change=other["value"] / other["reference_value"] - 1)


def order_agreement(results: pd.DataFrame, reference: str = "native") -> pd.DataFrame:
    """Kendall's τ-b between the systems' order on the ``reference`` scale and on every other
    scale, per metric (and dataset, if the frame has that column); τ = 1: the same order."""
    keys = [c for c in ("dataset", "metric") if c in results.columns]
    rows = []
    for key, part in results.groupby(keys, sort=False):
        wide = part.pivot_table(index="system", columns="scale", values="value")
        for scale in (c for c in wide.columns if c != reference):
            tau = kendalltau(wide[reference], wide[scale]).statistic
            key_values = key if isinstance(key, tuple) else (key,)
            rows.append(
                {**dict(zip(keys, key_values, strict=True)), "scale": scale, "tau": float(tau)}
            )
    return pd.DataFrame(rows, columns=[*keys, "scale", "tau"])


def closest_pair_gap(values: pd.Series) -> tuple[float, str, str]:
    """The smallest relative gap between two systems' values, ``(b - a) / a`` for the adjacent
    pair ``a <= b``, with the two systems (lower first).

    A change of scale that moves every value by less than half this gap cannot reorder the
    systems; a larger one may.
    """
    v = values.dropna().sort_values()
    if v.size < 2:
        raise ValueError("need at least two systems")
    gaps = v.to_numpy()[1:] / v.to_numpy()[:-1] - 1
    k = int(np.argmin(gaps))
    return float(gaps[k]), str(v.index[k]), str(v.index[k + 1])


def _doubled(ratings: pd.DataFrame) -> pd.DataFrame:
    return to_grades(ratings, factor=2)


def _squared(ratings: pd.DataFrame) -> pd.DataFrame:
    return to_grades(ratings).assign(rating=lambda d: d["rating"] ** 2)


#: the versions of the judgments: native grades, the doubled scale of the paper's Table 2, and
#: grades squared (the same order of the levels, other distances)
SCALE_VERSIONS: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "native": to_grades,
    "doubled": _doubled,
    "squared": _squared,
}


def holdout(ratings: pd.DataFrame, settings: Settings) -> splits.Split:
    """The per-user holdout of the real-data sections (``test_fraction`` of each user's
    ratings, drawn with the chapter's seed)."""
    return splits.holdout_per_user(ratings, settings.test_fraction, seed=settings.seed)


def ledger_inputs(settings: Settings) -> dict[str, Any]:
    """The settings the ledger's real-data claims read (bootstrap size and seed, the virtual
    user's system and ordinal level count)."""
    return {
        "n_boot": settings.n_boot,
        "seed": settings.seed,
        "virtual_reference": settings.reference_system,
        "ordinal_levels": settings.ordinal_levels,
    }


@analyses.analysis
def scale_experiment(split: splits.Split, dataset: str, settings: Settings) -> dict[str, Any]:
    """The chapter's recommenders (``depth`` items each, from the run cache) evaluated per user
    on every version of the test ratings (:data:`SCALE_VERSIONS`, :data:`REAL_METRICS`): the
    ledger's ``scale_per_user``, with the settings it reads (:func:`ledger_inputs`)."""
    s = settings
    top = recommenders.make(
        roster.systems(list(s.systems)),
        split.train,
        dataset=dataset,
        split=f"holdout-{s.test_fraction}",
        seed=s.seed,
        depth=s.depth,
        also_pairs=virtual_candidates(split, s),  # the virtual users' (trained once)
    )
    per_user = scale_study(split.test, top, SCALE_VERSIONS, REAL_METRICS, per_user=True)
    return {**ledger_inputs(settings), "scale_per_user": per_user}


def scale_means(real: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Each dataset's ``scale_per_user`` averaged over users: scale, system, metric, value,
    dataset and the measure's label (:data:`REAL_LABELS`)."""
    parts = [
        r["scale_per_user"]
        .groupby(["scale", "system", "metric"], sort=False)["value"]
        .mean()
        .reset_index()
        .assign(dataset=name)
        for name, r in real.items()
    ]
    out = pd.concat(parts, ignore_index=True)
    out["measure"] = out["metric"].map(REAL_LABELS)
    return out


def largest_changes(means: pd.DataFrame) -> pd.DataFrame:
    """The largest relative change over the systems against the native scale, per dataset and
    scale (rows) and measure (columns), from :func:`scale_means`."""
    change = relative_changes(means)
    return change.pivot_table(
        index=["dataset", "scale"],
        columns="measure",
        values="relative_change",
        aggfunc=lambda x: np.abs(x).max(),
    )


def order_table(means: pd.DataFrame) -> pd.DataFrame:
    """Kendall's τ between the systems' order on the native scale and on each other scale,
    per dataset and measure (rows) and scale (columns), from :func:`scale_means`."""
    taus = order_agreement(means).assign(measure=lambda d: d["metric"].map(REAL_LABELS))
    return taus.pivot_table(index=["dataset", "measure"], columns="scale", values="tau")


def scale_table(means: pd.DataFrame) -> pd.DataFrame:
    """Each system's mean per measure and scale (columns), per dataset (rows), from
    :func:`scale_means`."""
    return means.pivot_table(
        index=["dataset", "system"], columns=["measure", "scale"], values="value"
    )
