"""Evaluate runs against judgments: per-user score matrices, aggregates and tidy frames.

Rules shared by every metric:

* a user with no relevant test item (no grade >= τ) is excluded: NaN in score matrices, absent
  from per-user frames, left out of averages;
* a user with an empty list scores 0 — the user-coverage penalty of Valcarce et al. (2020, sec. 3);
* ``aggregate="gmean"`` is ``exp(mean(log(max(x, 1e-5))))``: zeros are floored at 1e-5, the
  floor trec_eval uses for ``gm_map`` (``MIN_GEO_MEAN``) and that ranx uses too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._judgments import Judgments
from ._names import MetricSpec, parse_metric
from ._plan import run_plan
from ._runs import Runs

__all__ = ["evaluate", "score_matrix", "score_matrices", "aggregate", "pivot", "GMEAN_FLOOR"]

GMEAN_FLOOR = 1e-5


def score_matrices(
    judgments: Judgments, runs: Runs, metrics: Sequence[str | MetricSpec]
) -> dict[str, np.ndarray]:
    """Per-user scores, one systems × users array per metric (NaN = excluded user).

    Every metric at every cut-off comes from one compiled pass over the lists
    (:mod:`recmeta.metrics._kernel`); the definitions are in :mod:`recmeta.metrics._plan`.
    """
    specs = [parse_metric(m) for m in metrics]
    runs.check_aligned(judgments)
    excluded = ~judgments.evaluable()
    empty = runs.ranks[:, :, 0] < 0
    out = {}
    for text, values in zip(metrics, run_plan(judgments, runs, specs)):
        values[empty] = 0.0
        values[:, excluded] = np.nan
        out[str(text)] = values
    return out


def score_matrix(judgments: Judgments, runs: Runs, metric: str | MetricSpec) -> np.ndarray:
    """Per-user scores of one metric: systems × users (in ``judgments.users`` order).

    Users without a relevant item are NaN; users with an empty list score 0.
    """
    return score_matrices(judgments, runs, [metric])[str(metric)]


def aggregate(matrix: np.ndarray, how: str = "mean") -> np.ndarray:
    """Average a systems × users matrix over the users that are not NaN.

    ``mean``: arithmetic mean. ``gmean``: geometric mean with zeros floored at
    :data:`GMEAN_FLOOR` = 1e-5 (trec_eval ``gm_map``; Robertson 2006; Valcarce et al. 2020, sec. 7).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if how == "mean":
        return np.nanmean(m, axis=-1)
    if how == "gmean":
        return np.exp(np.nanmean(np.log(np.maximum(m, GMEAN_FLOOR)), axis=-1))
    raise ValueError(f"aggregate must be 'mean' or 'gmean', got {how!r}")


def evaluate(
    judgments: Judgments,
    runs: Runs,
    metrics: Sequence[str],
    aggregate: str = "mean",
    per_user: bool = False,
) -> pd.DataFrame:
    """Evaluate every system of ``runs`` on ``metrics`` (names such as ``"nDCG@10"``).

    Returns a tidy frame with columns system, metric, value — or, with ``per_user=True``,
    system, user, metric, value for the evaluated users (those with a relevant item). The
    ``metric`` column holds the names as given. See :func:`pivot` for a wide table.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    if aggregate not in ("mean", "gmean"):
        raise ValueError(f"aggregate must be 'mean' or 'gmean', got {aggregate!r}")
    if len(set(map(str, metrics))) != len(metrics):
        raise ValueError("a metric is listed twice")
    mats = score_matrices(judgments, runs, metrics)
    names = np.asarray(list(mats), dtype=object)
    stack = np.stack([mats[n] for n in mats])  # metrics × systems × users
    systems = runs.systems.to_numpy()
    if per_user:
        keep = judgments.evaluable()
        users = judgments.users[keep].to_numpy()
        return pd.DataFrame(
            {
                "system": np.tile(np.repeat(systems, users.size), names.size),
                "user": np.tile(users, names.size * systems.size),
                "metric": np.repeat(names, systems.size * users.size),
                "value": stack[:, :, keep].ravel(),
            }
        )
    values = globals()["aggregate"](stack, aggregate)  # metrics × systems
    return pd.DataFrame({"system": np.tile(systems, names.size),
                         "metric": np.repeat(names, systems.size), "value": values.ravel()})


def pivot(results: pd.DataFrame) -> pd.DataFrame:
    """Wide table of :func:`evaluate` output: one row per system (or system, user), one column
    per metric, in the order the metrics were listed."""
    index = ["system", "user"] if "user" in results.columns else ["system"]
    order = list(pd.unique(results["metric"]))
    wide = results.pivot_table(index=index, columns="metric", values="value", sort=False,
                               aggfunc="first")
    wide = wide[order]
    wide.columns.name = None
    return wide
