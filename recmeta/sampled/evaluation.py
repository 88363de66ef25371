"""Evaluate systems under sampled negatives, given the true rank of each user's held-out item.

A run here is a vector of true ranks (1-based, one held-out relevant item per user) among the n
items ranked for that user. Sampling m negatives turns each true rank r into a sampled rank r̃
(:func:`~recmeta.sampled.sample_ranks`); an *estimator* then scores r̃:

* ``"sampled"``: the uncorrected metric of the m + 1 items, M_{m+1}(r̃);
* ``"rank-estimate"``: M_n(⌊1 + (n − 1)(r̃ − 1)/m⌋) (eq. 20);
* ``"least-squares"``, ``"ridge λ"``, ``"cls"``, ``"BV γ"`` (e.g. ``"BV 0.1"``): the fitted
  corrections of :func:`~recmeta.sampled.correction`, with a uniform prior as in Krichene &
  Rendle (2020, §6.3).

**One n.** Users rank different numbers of candidates, but every estimator here, the rank
estimate included, is built for one n: ``fit_n``, by default the rounded mean of the users' n
(:func:`fit_n`). So the rank estimate scores a sampled rank the same way for every user, as the
fitted corrections do, and the paper's observation that rank-estimate Recall@10 equals
NDCG@10 holds exactly whenever (n − 1)/m ≥ 10 (a sampled rank of 2 already estimates a rank
beyond 10). The law of r̃ given r still uses each user's own n: that is the sampling itself.

Sampled ranks are drawn independently per system, user and repetition from the exact law of r̃
given r; system s in repetition j uses the stream ``(seed, j, s)`` so that adding a system
leaves the others' draws unchanged. To score several systems on the *same* sampled items, as
Krichene & Rendle do, start from the candidates' scores: :mod:`recmeta.sampled.shared`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from tqdm import tqdm

from .corrections import correction
from .expected import expected_value
from .rank_distribution import check_sampling
from .rank_metrics import metric_value, parse_rank_metric

__all__ = [
    "fit_n",
    "Estimator",
    "parse_estimator",
    "PAPER_ESTIMATORS",
    "exact_metrics",
    "sampled_evaluation",
    "expected_evaluation",
    "summarise",
    "pairwise_agreement",
]

PAPER_ESTIMATORS = ("sampled", "rank-estimate", "cls", "BV 1", "BV 0.1", "BV 0.01", "BV 0.001")


@dataclass(frozen=True)
class Estimator:
    """How a sampled rank is scored: ``method`` None (uncorrected) or a correction method."""

    label: str
    method: str | None
    gamma: float | None = None


def parse_estimator(spec: str | Estimator) -> Estimator:
    """Parse ``"sampled"``, ``"rank-estimate"``, ``"least-squares"``, ``"cls"``, ``"BV γ"`` or
    ``"ridge λ"``."""
    if isinstance(spec, Estimator):
        return spec
    text = str(spec).strip()
    low = text.lower()
    if low == "sampled":
        return Estimator(text, None)
    if low in ("rank-estimate", "least-squares", "cls"):
        return Estimator(text, low)
    for prefix, method, example in (("bv", "bv", "'BV 0.1'"), ("ridge", "ridge", "'ridge 1e-6'")):
        if low.startswith(prefix):
            try:
                gamma = float(low[len(prefix) :].strip(" =:"))
            except ValueError:
                gamma = None
            if gamma is None or not gamma > 0:
                name = "bias-variance" if method == "bv" else "ridge"
                raise ValueError(
                    f"estimator {spec!r}: write the {name} correction as '{text[: len(prefix)]} "
                    f"<weight>', weight > 0, e.g. {example} (the bias-variance one as 'BV <gamma>')"
                )
            return Estimator(text, method, gamma)
    raise ValueError(
        f"unknown estimator {spec!r}: use 'sampled', 'rank-estimate', 'least-squares', 'cls', "
        "'BV <gamma>' or 'ridge <lambda>'"
    )


def _as_runs(ranks: Mapping[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
    if isinstance(ranks, Mapping):
        runs = {str(k): np.asarray(v) for k, v in ranks.items()}
    else:
        runs = {"system": np.asarray(ranks)}
    if not runs:
        raise ValueError("no systems given: pass a mapping {system name: true ranks}")
    for name, r in runs.items():
        if r.ndim != 1 or r.size == 0:
            raise ValueError(
                f"system {name!r}: true ranks must be a non-empty 1-d array (one per user)"
            )
    return runs


def fit_n(n: np.ndarray | int, fit_n: int | None = None) -> int:
    """The one n every estimator is built for: ``fit_n`` if given, else the rounded mean of
    ``n``."""
    if fit_n is not None:
        if isinstance(fit_n, bool) or not isinstance(fit_n, (int, np.integer)) or fit_n < 2:
            raise ValueError(f"fit_n must be an int of at least 2, got {fit_n!r}")
        return int(fit_n)
    return int(np.rint(np.mean(n)))


_fit_n = fit_n


def _score_table(
    metric: str,
    est: Estimator,
    n: np.ndarray,
    m: int,
    fit_n: int,
    replace: bool,
    prior: np.ndarray | None,
) -> np.ndarray:
    """The estimator's value for each sampled rank 1..m+1, built for ``fit_n`` items."""
    if est.method is None:
        return metric_value(metric, np.arange(1, m + 2), m + 1)
    if est.method == "rank-estimate":
        return correction(metric, fit_n, m, "rank-estimate", replace=replace)
    return correction(metric, fit_n, m, est.method, gamma=est.gamma, prior=prior, replace=replace)


def exact_metrics(
    ranks: Mapping[str, np.ndarray] | np.ndarray, n: np.ndarray | int, metrics: Sequence[str]
) -> pd.DataFrame:
    """Mean exact metric M_n(r) over users per system: columns system, metric, value."""
    runs = _as_runs(ranks)
    rows = []
    for system, r in runs.items():
        rr, nn, _ = check_sampling(r, n, 1, True)
        for metric in metrics:
            rows.append(
                (system, parse_rank_metric(metric).name, float(metric_value(metric, rr, nn).mean()))
            )
    return pd.DataFrame(rows, columns=["system", "metric", "value"])


def sampled_evaluation(
    ranks: Mapping[str, np.ndarray] | np.ndarray,
    n: np.ndarray | int,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator] = PAPER_ESTIMATORS,
    *,
    repetitions: int = 100,
    seed: int = 0,
    replace: bool = True,
    fit_n: int | None = None,
    prior: np.ndarray | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Repeat a sampled evaluation: columns system, metric, estimator, repetition, value.

    ``value`` is the mean over users of the estimator's score of the sampled rank, for one
    repetition (one draw of m negatives per user). ``n`` is the number of items ranked per user
    (scalar or one per user); every estimator is built for one n (:func:`fit_n`).
    """
    runs = _as_runs(ranks)
    ests = [parse_estimator(e) for e in estimators]
    names = [parse_rank_metric(metric).name for metric in metrics]
    first = next(iter(runs.values()))
    _, n_users, m = check_sampling(first, n, m, replace)
    fn = _fit_n(n_users, fit_n)
    tables = {
        (metric, est.label): _score_table(metric, est, n_users, m, fn, replace, prior)
        for metric in names
        for est in tqdm(ests, desc=f"corrections {metric}", disable=not progress, leave=False)
    }
    frames = []
    for s_index, (system, r) in enumerate(runs.items()):
        rr, nn, _ = check_sampling(r, n, m, replace)
        sampled = np.stack(
            [
                _draw(rr, nn, m, replace, np.random.default_rng([seed, j, s_index]))
                for j in tqdm(
                    range(repetitions), desc=f"sampling {system}", disable=not progress, leave=False
                )
            ]
        )
        for metric in names:
            for est in ests:
                scores = tables[(metric, est.label)][sampled - 1]
                frames.append(
                    pd.DataFrame(
                        {
                            "system": system,
                            "metric": metric,
                            "estimator": est.label,
                            "repetition": np.arange(repetitions),
                            "value": scores.mean(axis=1),
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def _draw(
    r: np.ndarray, n: np.ndarray, m: int, replace: bool, rng: np.random.Generator
) -> np.ndarray:
    if replace:
        return rng.binomial(m, (r - 1) / (n - 1.0)) + 1
    return rng.hypergeometric(r - 1, n - r, m) + 1


def expected_evaluation(
    ranks: Mapping[str, np.ndarray] | np.ndarray,
    n: np.ndarray | int,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator] = PAPER_ESTIMATORS,
    *,
    replace: bool = True,
    fit_n: int | None = None,
    prior: np.ndarray | None = None,
) -> pd.DataFrame:
    """The expectation (over sampling) of each estimator's mean: columns system, metric,
    estimator, value.

    Exact, no simulation: E[mean_u M̂(r̃_u)] = mean_u Σ_i p(r̃ = i | r_u) M̂(i) (eq. 16).
    """
    runs = _as_runs(ranks)
    ests = [parse_estimator(e) for e in estimators]
    names = [parse_rank_metric(metric).name for metric in metrics]
    first = next(iter(runs.values()))
    _, n_users, m = check_sampling(first, n, m, replace)
    fn = _fit_n(n_users, fit_n)
    rows = []
    for metric in names:
        for est in ests:
            table = _score_table(metric, est, n_users, m, fn, replace, prior)
            for system, r in runs.items():
                rr, nn, _ = check_sampling(r, n, m, replace)
                value = expected_value(table, rr, nn, m, replace)
                rows.append((system, metric, est.label, float(value.mean())))
    return pd.DataFrame(rows, columns=["system", "metric", "estimator", "value"])


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample standard deviation over repetitions: columns system, metric, estimator,
    mean, sd."""
    g = frame.groupby(["system", "metric", "estimator"], sort=False)["value"]
    return g.agg(mean="mean", sd="std").reset_index()


def pairwise_agreement(frame: pd.DataFrame, exact: pd.DataFrame) -> pd.DataFrame:
    """Share of repetitions that order each pair of systems as the exact metric does (Table 4).

    For systems a, b (in the order they appear) a repetition agrees when sign(v_a − v_b) equals
    sign(e_a − e_b) ≠ 0 for the exact values e; ties count as disagreement. Pairs tied on the
    exact metric get NaN. Columns pair, metric, estimator, agreement (in [0, 1]).
    """
    systems = list(dict.fromkeys(frame["system"]))
    ex = exact.set_index(["system", "metric"])["value"]
    wide = frame.pivot_table(
        index=["metric", "estimator", "repetition"], columns="system", values="value", sort=False
    )
    rows = []
    for a, b in combinations(systems, 2):
        diff = np.sign(wide[a] - wide[b])
        for (metric, estimator), d in diff.groupby(level=["metric", "estimator"], sort=False):
            truth = np.sign(ex[(a, metric)] - ex[(b, metric)])
            share = np.nan if truth == 0 else float((d.to_numpy() == truth).mean())
            rows.append((f"{a} vs {b}", metric, estimator, share))
    return pd.DataFrame(rows, columns=["pair", "metric", "estimator", "agreement"])
