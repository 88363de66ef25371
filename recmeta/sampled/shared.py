"""Sampled evaluation of real runs: m negatives drawn from each user's real candidates.

The protocol of Krichene & Rendle (2020, §6): for each user, draw m of the user's other
candidates (with replacement by default, as their analysis assumes) and rank the held-out item
among them; every system is scored on the *same* sampled items (``shared=True``). With
``shared=False`` each system draws its own items, which leaves each system's law unchanged but
makes the systems' errors independent.

Only the class of a sampled item matters — for each system: above the held-out item, tied
before it by id, tied after it, below (:data:`~recmeta.sampled.held_out.CODES`) — so a draw of m
items is a draw of the counts of the user's candidates in each joint class (the cells of
:class:`~recmeta.sampled.held_out.Standing`): multinomial with replacement, multivariate
hypergeometric without. We draw them class by class from the conditional binomial (or
hypergeometric) laws, vectorised over users and repetitions; the law is exactly that of
drawing the items themselves (the tests compare with item-level draws), and the cost does not
grow with m.

From the counts of sampled items above, tied and tied-before-by-id, the tie rule gives the span of
the sampled rank (:func:`~recmeta.sampled.ties.tie_span`); an estimator (a vector over sampled
ranks 1..m+1, :func:`estimator_values`) scores the user by its mean over the span.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal, overload

import numpy as np
import pandas as pd
from scipy import stats

from .corrections import correction
from .evaluation import Estimator, fit_n as _fit_n, parse_estimator
from .held_out import Standing
from .rank_metrics import metric_value, parse_rank_metric
from .ties import DEFAULT_TIES, check_ties, span_mean, span_metric, tie_span

__all__ = [
    "estimator_values",
    "draw_counts",
    "shared_evaluation",
    "exact_per_user",
    "exact_from_standing",
    "order_study",
    "reliable_from_study",
]


def estimator_values(
    metric: str, est: str | Estimator, n_fit: int, m: int, replace: bool = True
) -> np.ndarray:
    """The value an estimator gives each sampled rank 1..m+1 (one n, ``n_fit``, for every
    estimator).

    ``"sampled"`` is the uncorrected M_{m+1}(r̃); the others are :func:`~recmeta.sampled.correction`
    fitted for ``n_fit`` items and a uniform prior (Krichene & Rendle 2020, §5, §6.3).
    """
    e = parse_estimator(est)
    if e.method is None:
        return metric_value(metric, np.arange(1, m + 2), m + 1)
    return correction(metric, int(n_fit), m, e.method, gamma=e.gamma, replace=replace)


def _sequential(
    cells: np.ndarray,
    m: int,
    repetitions: int,
    replace: bool,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
) -> np.ndarray:
    """Counts of m draws in each class: (repetitions, users, classes), classes given by ``cells``;
    with ``groups`` (classes × G, boolean) the counts summed over each group's classes instead:
    (repetitions, users, G).

    Class k gets X_k ~ Binomial(m − Σ_{j<k} X_j, c_k / Σ_{j≥k} c_j) with replacement and
    Hypergeometric(c_k, Σ_{j>k} c_j, m − Σ_{j<k} X_j) without: the chain rule of the multinomial
    and the multivariate hypergeometric laws. A binomial with no trials or p = 0 is 0 and
    takes nothing from the generator's stream, so only the others are drawn (in the same order:
    the draws are those of the whole array).
    """
    U, K = cells.shape
    left = np.broadcast_to(np.asarray(m, dtype=np.int64), (repetitions, U)).copy()
    rest = cells[:, ::-1].cumsum(axis=1)[:, ::-1]  # Σ_{j≥k} c_j
    out = np.zeros((repetitions, U, K if groups is None else groups.shape[1]), dtype=np.int64)
    for k in range(K):
        c = cells[:, k]
        if not c.any():
            continue
        if replace:
            with np.errstate(invalid="ignore", divide="ignore"):
                p = np.where(rest[:, k] > 0, c / np.maximum(rest[:, k], 1), 0.0)
            live = (left > 0) & (p > 0)[None, :]
            x = np.zeros_like(left)
            x[live] = rng.binomial(left[live], np.broadcast_to(p, left.shape)[live])
        else:
            bad = rest[:, k] - c
            x = rng.hypergeometric(
                np.broadcast_to(c, left.shape), np.broadcast_to(bad, left.shape), left
            )
        if groups is None:
            out[:, :, k] = x
        else:
            for g in np.flatnonzero(groups[k]):
                out[:, :, g] += x
        left -= x
    return out


def draw_counts(
    standing: Standing,
    m: int,
    repetitions: int,
    *,
    seed: int | Sequence[int] = 0,
    replace: bool = True,
    shared: bool = True,
) -> dict[str, np.ndarray]:
    """Per system, counts of sampled items above, tied and tied-before-by-id the held-out item.

    Returns ``{"above", "tied", "id_above"}``, each (systems, repetitions, users). With
    ``shared`` one draw of m items per user and repetition serves every system; otherwise
    system s draws its own, from the stream ``(seed, s)``.
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive int, got {m!r}")
    if (
        isinstance(repetitions, bool)
        or not isinstance(repetitions, (int, np.integer))
        or repetitions < 1
    ):
        raise ValueError(f"repetitions must be a positive int, got {repetitions!r}")
    pool = standing.n - 1
    if not replace and np.any(m > pool):
        raise ValueError(
            f"cannot sample m={m} negatives without replacement: a user has only {int(pool.min())} "
            "other candidates; lower m or pass replace=True"
        )
    if np.any(pool < 1):
        raise ValueError("every user needs at least one other candidate to sample")
    S = len(standing.systems)
    base = list(np.atleast_1d(seed).astype(np.int64))
    out = {
        k: np.zeros((S, repetitions, standing.n.size), dtype=np.int64)
        for k in ("above", "tied", "id_above")
    }
    if shared:
        # per system, the classes above, tied before by id and tied after the held-out item
        codes = standing.patterns[:, :, None] == np.array([3, 2, 1])[None, None, :]
        x = _sequential(
            standing.cells,
            int(m),
            int(repetitions),
            replace,
            np.random.default_rng(base),
            groups=codes.reshape(len(standing.patterns), 3 * S),
        )
        for s in range(S):
            out["above"][s] = x[:, :, 3 * s]
            out["id_above"][s] = x[:, :, 3 * s + 1]
            out["tied"][s] = out["id_above"][s] + x[:, :, 3 * s + 2]
        return out
    for s in range(S):
        a, t2 = standing.above[s], standing.id_above[s]
        t1 = standing.tied[s] - t2
        cells = np.stack([a, t2, t1, pool - a - t2 - t1], axis=1)
        x = _sequential(cells, int(m), int(repetitions), replace, np.random.default_rng([*base, s]))
        out["above"][s], out["id_above"][s] = x[:, :, 0], x[:, :, 1]
        out["tied"][s] = x[:, :, 1] + x[:, :, 2]
    return out


def _ties_list(ties: str | Sequence[str]) -> list[str]:
    rules = [ties] if isinstance(ties, str) else list(ties)
    return [check_ties(t) for t in rules]


#: the users' scores of :func:`shared_evaluation` with ``per_user``, keyed by
#: (ties, system, metric, estimator): arrays (repetitions × users)
type UserScores = dict[tuple[str, str, str, str], np.ndarray]


@overload
def shared_evaluation(
    standing: Standing,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int | Sequence[int] = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str | Sequence[str] = DEFAULT_TIES,
    fit_n: int | None = None,
    per_user: Literal[False] = False,
) -> pd.DataFrame: ...
@overload
def shared_evaluation(
    standing: Standing,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int | Sequence[int] = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str | Sequence[str] = DEFAULT_TIES,
    fit_n: int | None = None,
    per_user: Literal[True],
) -> tuple[pd.DataFrame, UserScores]: ...
def shared_evaluation(
    standing: Standing,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int | Sequence[int] = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str | Sequence[str] = DEFAULT_TIES,
    fit_n: int | None = None,
    per_user: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, UserScores]:
    """Repeat a sampled evaluation on real candidates: columns ties, system, metric, estimator,
    repetition, value (the mean over users of one repetition).

    Every estimator uses one n, ``fit_n`` (default: the rounded mean number of candidates).
    Several tie rules are evaluated on the same draws. With ``per_user`` also returns a dict
    {(ties, system, metric, estimator): array (repetitions, users)} of the users' scores.
    """
    names = [parse_rank_metric(x).name for x in metrics]
    ests = [parse_estimator(e) for e in estimators]
    rules = _ties_list(ties)
    nf = _fit_n(standing.n, fit_n)
    counts = draw_counts(
        standing, int(m), int(repetitions), seed=seed, replace=replace, shared=shared
    )
    tables = {
        (x, e.label): estimator_values(x, e, nf, int(m), replace) for x in names for e in ests
    }
    rows: list[pd.DataFrame] = []
    users: UserScores = {}
    for rule in rules:
        lo, hi = tie_span(counts["above"], counts["tied"], counts["id_above"], rule)
        for s, system in enumerate(standing.systems):
            for x in names:
                for e in ests:
                    scores = span_mean(tables[(x, e.label)], lo[s], hi[s])
                    if per_user:
                        users[(rule, system, x, e.label)] = scores
                    rows.append(
                        pd.DataFrame(
                            {
                                "ties": rule,
                                "system": system,
                                "metric": x,
                                "estimator": e.label,
                                "repetition": np.arange(repetitions),
                                "value": scores.mean(axis=1),
                            }
                        )
                    )
    frame = pd.concat(rows, ignore_index=True)
    return (frame, users) if per_user else frame


def exact_per_user(
    standing: Standing, metrics: Sequence[str], ties: str = DEFAULT_TIES
) -> dict[tuple[str, str], np.ndarray]:
    """Exact metric per user: {(system, metric): array (users,)}, averaged over the tie span."""
    lo, hi = standing.spans(check_ties(ties))
    out = {}
    for s, system in enumerate(standing.systems):
        for x in metrics:
            name = parse_rank_metric(x).name
            out[(system, name)] = span_metric(name, lo[s], hi[s], standing.n)
    return out


def exact_from_standing(
    standing: Standing, metrics: Sequence[str], ties: str | Sequence[str] = DEFAULT_TIES
) -> pd.DataFrame:
    """Mean exact metric per tie rule and system: columns ties, system, metric, value."""
    rows = []
    for rule in _ties_list(ties):
        for (system, metric), v in exact_per_user(standing, metrics, rule).items():
            rows.append((rule, system, metric, float(v.mean())))
    return pd.DataFrame(rows, columns=["ties", "system", "metric", "value"])


@overload
def order_study(
    standing: Standing,
    ms: Sequence[int],
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str = DEFAULT_TIES,
    fit_n: int | None = None,
    level: float = 0.95,
    with_means: Literal[False] = False,
) -> pd.DataFrame: ...
@overload
def order_study(
    standing: Standing,
    ms: Sequence[int],
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str = DEFAULT_TIES,
    fit_n: int | None = None,
    level: float = 0.95,
    with_means: Literal[True],
) -> tuple[pd.DataFrame, pd.DataFrame]: ...
def order_study(
    standing: Standing,
    ms: Sequence[int],
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int = 0,
    replace: bool = True,
    shared: bool = True,
    ties: str = DEFAULT_TIES,
    fit_n: int | None = None,
    level: float = 0.95,
    with_means: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """How well one sampled evaluation orders each pair of systems, for each m (beyond the paper).

    For each m, pair (a, b), metric and estimator, over the repetitions of
    :func:`shared_evaluation`: the difference D = mean_a − mean_b per repetition, signed so
    that it is positive when the order agrees with the exact metric. Columns m, pair, metric,
    estimator, exact (the exact difference a − b), mean, se (Monte-Carlo standard error of the
    mean of D), share (repetitions with D > 0), probability Φ(mean/sd) (normal approximation of
    P(D > 0) with moments estimated over the repetitions), low, high (that probability at the
    ends of a ``level`` interval of mean/sd, standard error √((1 + z²/2)/R)).
    With ``with_means`` also returns the systems' means per m (columns m, system, metric,
    estimator, mean, se): the expected sampled metric against m, as in the paper's Fig. 6.
    """
    exact = exact_from_standing(standing, metrics, ties).set_index(["system", "metric"])["value"]
    z = stats.norm.ppf(0.5 + level / 2)
    rows, means = [], []
    for m in ms:
        frame = shared_evaluation(
            standing,
            int(m),
            metrics,
            estimators,
            repetitions=repetitions,
            seed=[seed, int(m)],
            replace=replace,
            shared=shared,
            ties=ties,
            fit_n=fit_n,
        )
        wide = frame.pivot_table(
            index=["metric", "estimator", "repetition"],
            columns="system",
            values="value",
            sort=False,
        )
        if with_means:
            g = frame.groupby(["system", "metric", "estimator"], sort=False)["value"]
            part = g.agg(mean="mean", sd="std", count="size").reset_index()
            part["se"] = part["sd"] / np.sqrt(part["count"])
            means.append(part.drop(columns=["sd", "count"]).assign(m=int(m)))
        for a, b in combinations(standing.systems, 2):
            diff = wide[a] - wide[b]
            for (metric, estimator), d in diff.groupby(level=["metric", "estimator"], sort=False):
                truth = exact[(a, metric)] - exact[(b, metric)]
                sign = np.sign(truth)
                v = sign * d.to_numpy() if sign != 0 else d.to_numpy()
                mean, sd = float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0
                R = v.size
                if sign == 0:
                    prob = low = high = float("nan")
                elif sd == 0:
                    prob = low = high = float(mean > 0)
                else:
                    zz = mean / sd
                    half = z * np.sqrt((1 + zz**2 / 2) / R)
                    prob, low, high = (float(stats.norm.cdf(q)) for q in (zz, zz - half, zz + half))
                rows.append(
                    {
                        "m": int(m),
                        "pair": f"{a} vs {b}",
                        "metric": metric,
                        "estimator": estimator,
                        "exact": float(truth),
                        "mean": mean,
                        "se": sd / np.sqrt(R) if R > 1 else float("nan"),
                        "share": float((v > 0).mean()) if sign != 0 else float("nan"),
                        "probability": prob,
                        "low": low,
                        "high": high,
                    }
                )
    out = pd.DataFrame(rows)
    if with_means:
        cols = ["m", "system", "metric", "estimator", "mean", "se"]
        return out, pd.concat(means, ignore_index=True)[cols]
    return out


def reliable_from_study(study: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The smallest m of the grid from which a pair is ordered reliably (beyond the paper).

    Criterion: at a given m the order is *reliable* when the lower end of the interval of
    P(correct order) is at least ``level``, *unreliable* when the upper end is below it, and
    *unclear* otherwise. Per (pair, metric, estimator): ``from`` is the smallest m from which
    every larger m of the grid is reliable (NaN if the largest is not), ``not before`` the
    smallest m from which none is unreliable (NaN if the largest is unreliable), and
    ``verdict``: "reliable from m" when both agree, "never on the grid" when even the largest m is
    unreliable, "unclear between" otherwise.
    """

    def one(g: pd.DataFrame) -> pd.Series:
        g = g.sort_values("m")
        ms = g["m"].to_numpy()
        ok = (g["low"] >= level).to_numpy()
        bad = (g["high"] < level).to_numpy()
        if np.isnan(g["probability"].to_numpy()).all():
            return pd.Series({"from": np.nan, "not before": np.nan, "verdict": "exact tie"})

        def first(flags: np.ndarray) -> float:
            if not flags[-1]:
                return float("nan")
            fails = np.flatnonzero(~flags)
            return float(ms[0] if fails.size == 0 else ms[fails[-1] + 1])

        start, floor = first(ok), first(~bad)
        if np.isnan(floor):
            verdict = "never on the grid"
        elif start == floor:
            verdict = f"reliable from m = {int(start)}"
        else:
            upper = "beyond the grid" if np.isnan(start) else f"m = {int(start)}"
            verdict = f"unclear between m = {int(floor)} and {upper}"
        return pd.Series({"from": start, "not before": floor, "verdict": verdict})

    keys = ["pair", "metric", "estimator"]
    return (
        study.groupby(keys, sort=False)[["m", "low", "high", "probability"]]
        .apply(one)
        .reset_index()
    )
