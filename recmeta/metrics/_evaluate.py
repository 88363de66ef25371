"""Evaluate runs against judgments: per-user score matrices, aggregates and tidy frames.

Rules shared by every metric:

* a user with no relevant test item (no grade >= τ) is excluded: NaN in score matrices, absent
  from per-user frames, left out of averages;
* a user with an empty list scores 0 — the user-coverage penalty of Valcarce et al. (2020, sec. 3)
  (``NumRel`` and ``NumQ``, which do not read the list, keep their values);
* ``aggregate="gmean"`` is ``exp(mean(log(max(x, 1e-5))))``: zeros are floored at 1e-5, the
  floor trec_eval uses for ``gm_map`` (``MIN_GEO_MEAN``) and that ranx uses too. A ``gm_`` name
  is always averaged so, and the counts (``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``) are
  summed, as trec_eval's summary line does.

``users="all"`` scores every user with a judgment (trec_eval evaluates a topic without relevant
documents too): the metrics that divide by |R| give 0 for a user without a relevant item.

Options (``infap=``, ``gain=``, ``ties=``) are defined in :mod:`recmeta.metrics._options`; their
defaults are trec_eval's readings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ._judgments import Judgments
from ._names import SUMMED, MetricSpec, parse_metric
from ._options import options
from ._plan import run_plan
from ._runs import Runs

__all__ = ["evaluate", "score_matrix", "score_matrices", "aggregate", "pivot", "GMEAN_FLOOR"]

GMEAN_FLOOR = 1e-5


_KEEP_WHEN_EMPTY = frozenset({"NumRel", "NumQ"})  # not read from the list


def score_matrices(
    judgments: Judgments,
    runs: Runs,
    metrics: Sequence[str | MetricSpec],
    *,
    users: str = "relevant",
    infap: str = "trec_eval",
    gain: str | Mapping[float, float] = "linear",
    ties: str | None = None,
) -> dict[str, np.ndarray]:
    """Per-user scores, one systems × users array per metric (NaN = excluded user).

    ``users="relevant"`` (default) scores the users with a relevant item; ``"all"`` every user
    with at least one judgment, as trec_eval does (see the module docstring). ``infap``,
    ``gain`` and ``ties`` are the options of :mod:`recmeta.metrics._options` (``ties=None``:
    the runs' own rule, ``Runs.ties``, trec_eval's unless they were built with another). Every
    metric at every cut-off comes from one compiled pass over the lists
    (:mod:`recmeta.metrics._kernel`); the definitions are in :mod:`recmeta.metrics._plan`.
    """
    if users not in ("relevant", "all"):
        raise ValueError(f"users must be 'relevant' or 'all', got {users!r}")
    opts = options(infap, gain, runs.ties if ties is None else ties)
    specs = [parse_metric(m) for m in metrics]
    runs.check_aligned(judgments)
    if users == "relevant":
        excluded = ~judgments.evaluable()
    else:
        e = judgments._entries
        excluded = np.bincount(e.users[judgments.active()], minlength=len(judgments.users)) == 0
    empty = runs.ranks[:, :, 0] < 0
    out = {}
    for text, spec, values in zip(
        metrics,
        specs,
        run_plan(judgments, runs, specs, all_users=users == "all", opts=opts),
        strict=True,
    ):
        if spec.name not in _KEEP_WHEN_EMPTY:
            values[empty] = 0.0
        values[:, excluded] = np.nan
        out[str(text)] = values
    return out


def score_matrix(
    judgments: Judgments,
    runs: Runs,
    metric: str | MetricSpec,
    *,
    users: str = "relevant",
    infap: str = "trec_eval",
    gain: str | Mapping[float, float] = "linear",
    ties: str | None = None,
) -> np.ndarray:
    """Per-user scores of one metric: systems × users (in ``judgments.users`` order).

    Users without a relevant item are NaN (unless ``users="all"``); empty lists score 0. The
    options are those of :func:`score_matrices`.
    """
    return score_matrices(
        judgments, runs, [metric], users=users, infap=infap, gain=gain, ties=ties
    )[str(metric)]


def aggregate(matrix: np.ndarray, how: str = "mean") -> np.ndarray:
    """Average a systems × users matrix over the users that are not NaN.

    ``mean``: arithmetic mean. ``gmean``: geometric mean with zeros floored at
    :data:`GMEAN_FLOOR` = 1e-5 (trec_eval ``gm_map``; Robertson 2006; Valcarce et al. 2020, sec. 7).
    ``sum``: the total (trec_eval's summary of its counts).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if how == "mean":
        return np.nanmean(m, axis=-1)
    if how == "gmean":
        return np.exp(np.nanmean(np.log(np.maximum(m, GMEAN_FLOOR)), axis=-1))
    if how == "sum":
        return np.nansum(m, axis=-1)
    raise ValueError(f"aggregate must be 'mean', 'gmean' or 'sum', got {how!r}")


def evaluate(
    judgments: Judgments,
    runs: Runs,
    metrics: Sequence[str],
    aggregate: str = "mean",
    per_user: bool = False,
    *,
    infap: str = "trec_eval",
    gain: str | Mapping[float, float] = "linear",
    ties: str | None = None,
) -> pd.DataFrame:
    """Evaluate every system of ``runs`` on ``metrics`` (names such as ``"nDCG@10"``).

    Returns a tidy frame with columns system, metric, value — or, with ``per_user=True``,
    system, user, metric, value for the evaluated users (those with a relevant item). The
    ``metric`` column holds the names as given. ``aggregate`` applies to the plain names: a
    ``gm_`` name is a geometric mean and a count (``NumRet``, ...) a sum whatever it says.
    ``infap``, ``gain`` and ``ties`` are the options of :mod:`recmeta.metrics._options`. See
    :func:`pivot` for a wide table.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    if aggregate not in ("mean", "gmean"):
        raise ValueError(f"aggregate must be 'mean' or 'gmean', got {aggregate!r}")
    if len(set(map(str, metrics))) != len(metrics):
        raise ValueError("a metric is listed twice")
    mats = score_matrices(judgments, runs, metrics, infap=infap, gain=gain, ties=ties)
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
    how = []
    for m in metrics:
        spec = parse_metric(m)
        how.append("sum" if spec.name in SUMMED else spec.aggregate or aggregate)
    if len(set(how)) == 1:
        values = globals()["aggregate"](stack, how[0])  # metrics × systems
    else:
        values = np.stack([globals()["aggregate"](stack[i], h) for i, h in enumerate(how)])
    return pd.DataFrame(
        {
            "system": np.tile(systems, names.size),
            "metric": np.repeat(names, systems.size),
            "value": values.ravel(),
        }
    )


def pivot(results: pd.DataFrame) -> pd.DataFrame:
    """Wide table of :func:`evaluate` output: one row per system (or system, user), one column
    per metric, in the order the metrics were listed."""
    index = ["system", "user"] if "user" in results.columns else ["system"]
    order = list(pd.unique(results["metric"]))
    wide = results.pivot_table(
        index=index, columns="metric", values="value", sort=False, aggfunc="first"
    )
    wide = wide[order]
    wide.columns.name = None
    return wide
