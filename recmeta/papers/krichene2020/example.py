"""Krichene & Rendle (2020), §3–5: the running example and the formula checks of the chapter.

:class:`ToyInputs` holds the example as the chapter samples it (true ranks of three systems
A, B, C for five users, n, m, the law, the γ of BV). The functions compute what the chapter
shows and the ledger reads: exact and expected sampled metrics of the example (Tables 1–2,
Figs. 2–3), the law of the sampled rank against a simulation of the protocol, the closed forms
against summation (§4.4), the collapse to AUC at m = 1 (§4.4.4), and the corrected AP vectors
with their bias and variance (§5, Fig. 4). Exact expectations need no simulation; the pure
functions of the example are memoised (the ledger evaluates them per dataset and tie rule).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ... import analyses, sampled
from .paper import PAPER, TABLE1, TABLE2, TOY_METRICS, order_key, order_text

__all__ = [
    "ToyInputs",
    "auc_gap",
    "bias_variance",
    "closed_form_checks",
    "collapse_table",
    "corrections_table",
    "eq19_gap",
    "fig4_bias_variance",
    "fig4_frames",
    "fig4_summary",
    "fig4_vectors",
    "gamma_one_gap",
    "law_check",
    "laws_apart",
    "laws_table",
    "least_squares_at_paper_size",
    "ls_bv_variance",
    "m_grid",
    "multi_approximation",
    "orders_by_m",
    "recall_consistent_from",
    "table1_frame",
    "table2_frame",
    "toy_exact",
    "toy_expected",
]


@dataclass(frozen=True)
class ToyInputs:
    """The running example as the chapter samples it (true ranks, n, m, law, the γ of BV)."""

    ranks: Mapping[str, Sequence[int]]
    n: int
    m: int
    replace: bool
    gammas: tuple[float, ...] = (1.0, 0.1, 0.01, 0.001)

    def __post_init__(self) -> None:
        frozen = tuple((str(k), tuple(int(x) for x in v)) for k, v in dict(self.ranks).items())
        object.__setattr__(self, "ranks", _FrozenRanks(frozen))
        object.__setattr__(self, "gammas", tuple(float(g) for g in self.gammas))

    def arrays(self) -> dict[str, np.ndarray]:
        """The true ranks per system as arrays (the form :mod:`recmeta.sampled` takes)."""
        return {k: np.asarray(v) for k, v in self.ranks.items()}


class _FrozenRanks(Mapping[str, tuple[int, ...]]):
    """A hashable mapping of system to true ranks (so toy computations can be memoised)."""

    def __init__(self, pairs: tuple[tuple[str, tuple[int, ...]], ...]) -> None:
        self._pairs = pairs
        self._d = dict(pairs)

    def __getitem__(self, key: str) -> tuple[int, ...]:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(self._pairs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FrozenRanks) and self._pairs == other._pairs


F = TypeVar("F", bound=Callable[..., Any])


def _memo[F: Callable[..., Any]](fn: F) -> F:
    """Cache a pure function of hashable arguments (the toy claims are evaluated once per
    dataset and tie rule; their inputs do not change)."""
    cached = functools.lru_cache(maxsize=64)(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        return cached(*(tuple(a) if isinstance(a, list) else a for a in args))

    # the wrapper takes and returns what ``fn`` does, but its own signature is (*Any) -> Any
    return wrapper  # type: ignore[return-value]


@_memo
def toy_expected(toy: ToyInputs, m: int, metrics: Sequence[str]) -> pd.DataFrame:
    """Expected sampled metrics of the example with ``m`` negatives: rows metric, columns system."""
    frame = sampled.expected_evaluation(
        toy.arrays(), toy.n, int(m), list(metrics), ["sampled"], replace=toy.replace
    )
    return frame.pivot(index="metric", columns="system", values="value")


@_memo
def toy_exact(toy: ToyInputs, metrics: Sequence[str]) -> pd.DataFrame:
    """Exact metrics of the example: rows metric, columns system."""
    frame = sampled.exact_metrics(toy.arrays(), toy.n, list(metrics))
    return frame.pivot(index="metric", columns="system", values="value")


@_memo
def recall_consistent_from(toy: ToyInputs, step: int = 100, tol: float = 0.0005) -> int | None:
    """Smallest m (multiple of ``step``) from which expected sampled Recall@10 of the example
    orders the systems as the exact metric does, exact ties read as equal within ``tol``, up to
    m = n − 1."""
    ex = toy_exact(toy, ["Recall@10"]).loc["Recall@10"].to_dict()
    want = order_key(order_text(ex, tol))
    ms = list(range(step, toy.n, step))
    frame = sampled.m_curves(
        toy.arrays(), toy.n, ms, ["Recall@10"], ["sampled"], replace=toy.replace
    ).pivot(index="m", columns="system", values="value")
    ok = np.array([order_key(order_text(frame.loc[m].to_dict(), tol)) == want for m in ms])
    if not ok[-1]:
        return None
    fails = np.flatnonzero(~ok)
    return int(ms[0] if fails.size == 0 else ms[fails[-1] + 1])


@_memo
def auc_gap(toy: ToyInputs) -> float:
    """Largest |E[AUC_{m+1}(r̃)] − AUC_n(r)| over every true rank, summed law, both laws."""
    ranks = np.arange(1, toy.n + 1)
    return max(
        float(
            np.abs(
                sampled.expected_metric("AUC", ranks, toy.n, toy.m, rep, closed_form=False)
                - sampled.metric_value("AUC", ranks, toy.n)
            ).max()
        )
        for rep in (True, False)
    )


@_memo
def eq19_gap(toy: ToyInputs) -> float:
    """Largest |closed form of eq. 19 − summation of eq. 16| over every true rank."""
    ranks = np.arange(1, toy.n + 1)
    return float(
        np.abs(
            sampled.expected_metric("AP", ranks, toy.n, toy.m, True)
            - sampled.expected_metric("AP", ranks, toy.n, toy.m, True, closed_form=False)
        ).max()
    )


@_memo
def fig4_vectors(toy: ToyInputs, n: int, m: int) -> dict[str, np.ndarray]:
    """The value of each sampled rank under every AP estimator of Fig. 4."""
    out = {
        "sampled": sampled.sampled_metric_values("AP", m),
        "rank-estimate": sampled.correction("AP", n, m, "rank-estimate"),
        "cls": sampled.correction("AP", n, m, "cls", replace=toy.replace),
    }
    for g in toy.gammas:
        out[f"BV {g:g}"] = sampled.correction("AP", n, m, "bv", gamma=g, replace=toy.replace)
    return out


def bias_variance(vec: np.ndarray, n: int, m: int, replace: bool = True) -> tuple[float, float]:
    """Prior-weighted (uniform) squared bias and variance of a corrected AP vector (eq. 24's
    terms)."""
    P, w, M = sampled.correction_system("AP", n, m, replace=replace)
    mean = P @ vec
    return float(w @ (mean - M) ** 2), float(w @ (P @ vec**2 - mean**2))


@_memo
def fig4_bias_variance(toy: ToyInputs) -> dict[str, tuple[float, float]]:
    """Weighted squared bias and variance of each corrected AP of Fig. 4."""
    return {
        k: bias_variance(v, toy.n, PAPER["fig4_m"], toy.replace)
        for k, v in fig4_vectors(toy, toy.n, PAPER["fig4_m"]).items()
    }


@_memo
def gamma_one_gap(toy: ToyInputs) -> float:
    """Largest |BV 1 − Σ_r p(r | r̃) M(r)|: BV with γ = 1 against the posterior mean (eq. 26)."""
    P, w, M = sampled.correction_system("AP", toy.n, PAPER["fig4_m"], replace=toy.replace)
    post = (P * w[:, None]) / (P * w[:, None]).sum(axis=0)
    return float(
        np.abs(
            sampled.correction("AP", toy.n, PAPER["fig4_m"], "bv", gamma=1.0, replace=toy.replace)
            - post.T @ M
        ).max()
    )


@_memo
def ls_bv_variance(toy: ToyInputs) -> tuple[float, float]:
    """Weighted variance of least-squares AP at the paper's ML-1M size, and the largest of BV's."""
    n, m = PAPER["n"], PAPER["m"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sampled.IllConditionedWarning)
        ls = sampled.correction("AP", n, m, "least-squares", replace=toy.replace)
    v_ls = bias_variance(ls, n, m, toy.replace)[1]
    v_bv = max(
        bias_variance(
            sampled.correction("AP", n, m, "bv", gamma=g, replace=toy.replace), n, m, toy.replace
        )[1]
        for g in toy.gammas
    )
    return v_ls, v_bv


# --------------------------------------------------------------------------------------------
# What the chapter shows of the example


@analyses.analysis
def table1_frame(toy: ToyInputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1: our exact metrics (rows system, columns metric) and ours beside the paper's."""
    metrics = list(TOY_METRICS)
    ours = toy_exact(toy, TOY_METRICS).T.rename_axis("system")[metrics]
    ours.columns.name = "metric"
    paper = pd.DataFrame(TABLE1, index=metrics).T.rename_axis("system")
    return ours, pd.concat({"ours": ours, "paper (Table 1)": paper}, axis=1)


@analyses.analysis
def law_check(
    ranks: Sequence[int], n: int, m: int, draws: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The law of the sampled rank against a simulation of the protocol, both laws.

    Returns the frequencies beside the probabilities (law, true rank, sampled rank, simulated,
    formula) and, per law and true rank, the total-variation distance beside the size noise
    alone gives: E|freq − p| ≈ sqrt(2 p (1 − p) / (π draws)) per cell (normal approximation).
    The simulations draw in turn from one stream seeded by ``seed``."""
    rows, tv = [], []
    rng = np.random.default_rng(seed)
    for rep in (True, False):
        for r in ranks:
            sim = sampled.simulate_item_sampling(r, n, m, draws, seed=rng, replace=rep)
            freq = np.bincount(sim - 1, minlength=m + 1) / draws
            pmf = sampled.rank_pmf(r, n, m, replace=rep)
            law = "with replacement" if rep else "without replacement"
            tv.append(
                {
                    "law": law,
                    "true rank": r,
                    "total variation": 0.5 * np.abs(freq - pmf).sum(),
                    "expected from noise": 0.5
                    * np.sqrt(2 * pmf * (1 - pmf) / (np.pi * draws)).sum(),
                }
            )
            rows.append(
                pd.DataFrame(
                    {
                        "law": law,
                        "true rank": r,
                        "sampled rank": np.arange(1, m + 2),
                        "simulated": freq,
                        "formula": pmf,
                    }
                )
            )
    return pd.concat(rows), pd.DataFrame(tv)


def laws_apart(ranks: Sequence[int], n: int, m: int) -> float:
    """Largest total-variation distance between the two laws of r̃ over ``ranks``."""
    return max(
        0.5 * np.abs(sampled.rank_pmf(r, n, m, True) - sampled.rank_pmf(r, n, m, False)).sum()
        for r in ranks
    )


@analyses.analysis
def closed_form_checks(n: int, ms: Sequence[int]) -> pd.DataFrame:
    """Largest |closed form − summation| over every true rank 1..n, per law, metric and m."""
    ranks = np.arange(1, n + 1)
    checks = []
    for rep in (True, False):
        for metric in ["AUC", "AP", "Recall@10", "Precision@10"]:
            for m in ms:
                closed = sampled.expected_metric(metric, ranks, n, m, rep)
                summed = sampled.expected_metric(metric, ranks, n, m, rep, closed_form=False)
                checks.append(
                    {
                        "law": "with" if rep else "without",
                        "metric": metric,
                        "m": m,
                        "max |closed form − sum|": np.abs(closed - summed).max(),
                    }
                )
    return pd.DataFrame(checks)


def table2_frame(toy: ToyInputs, runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: our simulated mean ± sd and exact expectation beside the paper's, and the
    summary of the repetitions (:func:`recmeta.sampled.summarise`)."""
    metrics = list(TOY_METRICS)
    paper = pd.DataFrame(
        {s: [f"{mu:.3f} ± {sd:.3f}" for mu, sd in row] for s, row in TABLE2.items()}, index=metrics
    ).T.rename_axis("system")
    ours = sampled.summarise(runs)
    ours["ours (simulated)"] = (
        ours["mean"].map("{:.3f}".format) + " ± " + ours["sd"].map("{:.3f}".format)
    )
    expect = sampled.expected_evaluation(
        toy.arrays(), toy.n, toy.m, metrics, ["sampled"], replace=toy.replace
    )
    table = ours.merge(
        expect.rename(columns={"value": "ours (expected)"}), on=["system", "metric", "estimator"]
    ).set_index(["metric", "system"])[["ours (simulated)", "ours (expected)"]]
    table["paper (Table 2)"] = paper.stack().swaplevel().reindex(table.index)
    table["ours (expected)"] = table["ours (expected)"].round(4)
    return table.loc[metrics], ours


def m_grid(toy: ToyInputs, shown: Sequence[int], points: int) -> np.ndarray:
    """Figure 2's grid of m: ``points`` log-spaced values up to n − 1 and the m ``shown``."""
    return np.unique(np.r_[np.geomspace(1, toy.n - 1, points).astype(int), list(shown)])


def orders_by_m(curves: pd.DataFrame, tol: float = 0.0005) -> pd.DataFrame:
    """Systems from best to worst in expectation (:func:`order_text`), rows m, columns metric."""
    wide = curves.pivot_table(index=["m", "metric"], columns="system", values="value")
    return wide.apply(lambda row: order_text(row.to_dict(), tol), axis=1).unstack("metric")


@analyses.analysis
def collapse_table(toy: ToyInputs, metrics: Sequence[str], exact_auc: pd.Series) -> pd.DataFrame:
    """Expected sampled metrics at m = 1 (rows system) beside exact AUC; each column checked to
    be the affine function M(2) + (M(1) − M(2)) AUC_n(r) of exact AUC (§4.4.4) to 1e-14."""
    frame = sampled.expected_evaluation(
        toy.arrays(), toy.n, 1, list(metrics), ["sampled"], replace=toy.replace
    )
    frame = frame.pivot(index="system", columns="metric", values="value")[list(metrics)]
    frame["exact AUC"] = exact_auc
    for metric in metrics:
        m1, m2 = sampled.metric_value(metric, np.array([1, 2]), 2)
        gap = np.abs(frame[metric] - (m2 + (m1 - m2) * exact_auc)).max()
        if not gap <= 1e-14:
            raise RuntimeError(f"{metric} at m = 1 is not affine in exact AUC (gap {gap:.1e})")
    return frame


@analyses.analysis
def least_squares_at_paper_size(replace: bool, gamma: float, ridge: float = 1e-6) -> dict[str, Any]:
    """Least squares, ridge and BV for AP at the paper's ML-1M size (n = 3,706, m = 100): the
    condition number, the warning, bias and variance, and BV against the rescaled ridge."""
    n, m = PAPER["n"], PAPER["m"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sampled.IllConditionedWarning)
        ls = sampled.correction("AP", n, m, "least-squares", replace=replace)
    ridge_vec = sampled.correction("AP", n, m, "ridge", gamma=ridge, replace=replace)
    bv = sampled.correction("AP", n, m, "bv", gamma=gamma, replace=replace)
    rescaled = sampled.correction("AP", n, m, "ridge", gamma=gamma / (1 - gamma), replace=replace)
    return {
        "n": n,
        "m": m,
        "condition": sampled.condition_number(n, m, replace),
        "cond_warn": sampled.COND_WARN,
        "warning": str(caught[0].message) if caught else "no warning",
        "ls_max": float(np.abs(ls).max()),
        "ls": bias_variance(ls, n, m, replace),
        "ridge_lambda": ridge,
        "ridge": bias_variance(ridge_vec, n, m, replace),
        "ridge_max": float(np.abs(ridge_vec).max()),
        "gamma": gamma,
        "bv_gap": float(np.abs(bv - rescaled / (1 - gamma)).max()),
    }


@analyses.analysis
def fig4_frames(
    n: int, m: int, estimators: Sequence[str], replace: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 4: the value of each sampled rank per estimator (estimator, sampled rank, value)
    and its expectation against ~300 log-spaced true ranks, beside the exact AP."""
    true_ranks = np.unique(np.geomspace(1, n, 300).astype(int))
    vectors, curves = [], []
    for label in estimators:
        vec = sampled.estimator_values("AP", label, n, m, replace)
        vectors.append(
            pd.DataFrame({"estimator": label, "sampled rank": np.arange(1, m + 2), "value": vec})
        )
        curves.append(
            pd.DataFrame(
                {
                    "estimator": label,
                    "true rank": true_ranks,
                    "value": sampled.expected_value(vec, true_ranks, n, m, replace),
                }
            )
        )
    curves.append(
        pd.DataFrame(
            {
                "estimator": "exact",
                "true rank": true_ranks,
                "value": sampled.metric_value("AP", true_ranks, n),
            }
        )
    )
    return pd.concat(vectors), pd.concat(curves)


def fig4_summary(
    vectors: pd.DataFrame, curves: pd.DataFrame, n: int, m: int, replace: bool
) -> tuple[pd.DataFrame, dict[str, int], dict[str, int | None]]:
    """Per estimator of Fig. 4: eq. 24's two terms, the number of steps at which the vector
    rises, and the first true rank from which its expectation is within 25 % of exact AP."""
    ests = list(dict.fromkeys(vectors["estimator"]))
    by = {e: vectors.loc[vectors["estimator"] == e, "value"].to_numpy() for e in ests}
    terms = pd.DataFrame(
        {
            e: dict(
                zip(
                    ["weighted squared bias", "weighted variance"],
                    bias_variance(v, n, m, replace),
                    strict=True,
                )
            )
            for e, v in by.items()
        }
    ).T
    rises = {e: int((np.diff(v) > 1e-12).sum()) for e, v in by.items()}
    curve = curves.pivot(index="true rank", columns="estimator", values="value")
    rel = (curve.drop(columns="exact").div(curve["exact"], axis=0) - 1).abs()
    close_from = {
        e: int(rel.index[rel[e] <= 0.25].min()) if (rel[e] <= 0.25).any() else None for e in ests
    }
    return terms, rises, close_from


@analyses.analysis
def corrections_table(
    toy: ToyInputs, estimators: Sequence[str], metrics: Sequence[str] = ("AP", "NDCG", "Recall@10")
) -> pd.DataFrame:
    """Expected corrected metrics of the example (rows metric, system; columns exact and each
    estimator)."""
    frame = sampled.expected_evaluation(
        toy.arrays(), toy.n, toy.m, list(metrics), list(estimators), replace=toy.replace
    )
    frame = frame.pivot_table(
        index=["metric", "system"], columns="estimator", values="value", sort=False
    )[list(estimators)]
    exact = sampled.exact_metrics(toy.arrays(), toy.n, list(metrics)).set_index(
        ["metric", "system"]
    )
    frame.insert(0, "exact", exact["value"].reindex(frame.index))
    return frame


@analyses.analysis
def laws_table(toy: ToyInputs) -> pd.DataFrame:
    """Expected sampled metrics of the example with and without replacement, and the difference."""
    both = pd.concat(
        {
            "with": sampled.expected_evaluation(
                toy.arrays(), toy.n, toy.m, list(TOY_METRICS), ["sampled"], replace=True
            ),
            "without": sampled.expected_evaluation(
                toy.arrays(), toy.n, toy.m, list(TOY_METRICS), ["sampled"], replace=False
            ),
        },
        names=["law"],
    ).reset_index("law")
    both = both.pivot_table(index=["metric", "system"], columns="law", values="value")
    both["difference"] = both["without"] - both["with"]
    return both


@analyses.analysis
def multi_approximation(
    users: Mapping[str, np.ndarray],
    n: int,
    m: int,
    repetitions: int,
    seed: int,
    replace: bool,
    metrics: Sequence[str] = ("Recall@10", "NDCG@10", "AP", "AP@10", "AUC", "Hit@10"),
) -> pd.DataFrame:
    """Several relevant items (§8): per user and metric, the simulated sampled metric's mean and
    sd beside the independence approximation's (rows user, metric)."""
    rows = []
    for user, ranks in users.items():
        draws = sampled.simulate_multi_ranks(
            ranks, n, m, repetitions=repetitions, seed=seed, replace=replace
        )
        label = f"{user}: {', '.join(map(str, ranks[:4]))}{'…' if len(ranks) > 4 else ''}"
        for metric in metrics:
            values = sampled.multi_metric_values(metric, draws, m)
            mean, var = sampled.multi_metric_moments(metric, ranks, n, m, replace)
            rows.append(
                {
                    "user": label,
                    "metric": metric,
                    "simulated mean": values.mean(),
                    "independent mean": mean,
                    "simulated sd": values.std(),
                    "independent sd": np.sqrt(var),
                }
            )
    return pd.DataFrame(rows).set_index(["user", "metric"])
