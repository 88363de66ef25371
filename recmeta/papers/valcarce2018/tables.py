"""Valcarce et al. (2018): the tables the chapter shows, built from the study's results.

Each function takes the results of :func:`~recmeta.papers.valcarce2018.study.study` (and, where
it says so, :func:`~recmeta.papers.valcarce2018.estimates.summary`) and returns a frame labelled
with the paper's metric names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from .equations import EQUATIONS, hand_gaps
from .estimates import dp_estimate
from .values import (
    LABELS,
    PAPER_DATASETS,
    PAPER_PAIRS,
    PAPER_TABLE2,
    PAPER_TABLE2_TAIL,
    PAPER_TABLE3,
)

__all__ = [
    "both_datasets",
    "deep_measures",
    "dp_by_cutoff",
    "dp_by_test",
    "equation_check",
    "labelled",
    "lowest_cutoff_taus",
    "robustness_table",
    "styled",
    "system_scores",
    "table2",
    "table3",
    "tau_metrics",
]


def deep_measures(results: Mapping[str, Any]) -> list[str]:
    """The engine names of every metric at the deepest cut-off: ``["P@100", "R@100", ...]``."""
    return [f"{m}@{results['deep']}" for m in results["metrics"]]


def system_scores(results: Mapping[str, Any]) -> pd.DataFrame:
    """Each system's mean of every metric at the deepest cut-off on the full test set, best
    nDCG first (the paper's names: ``MAP@100``, ``MRR@100``)."""
    deep = results["deep"]
    table = results["system_means"][deep_measures(results)]
    table = table.rename(columns=lambda c: LABELS[c.split("@")[0]] + f"@{deep}")
    return table.sort_values(f"nDCG@{deep}", ascending=False)


def lowest_cutoff_taus(results: Mapping[str, Any]) -> pd.DataFrame:
    """Per metric: its lowest τ between two cut-offs, which two, and τ of the shallowest with
    the deepest cut-off."""
    cutoffs = list(results["cutoffs"])
    upper = np.triu_indices(len(cutoffs), 1)
    lowest = {}
    for m in results["metrics"]:
        t = results["tau_cutoffs"][m].to_numpy()
        pos = np.argmin(t[upper])
        i, j = upper[0][pos], upper[1][pos]
        lowest[LABELS[m]] = {
            "lowest τ": t[i, j],
            "between": f"@{cutoffs[i]} and @{cutoffs[j]}",
            f"τ(@{cutoffs[0]}, @{results['deep']})": t[0, -1],
        }
    return pd.DataFrame(lowest).T


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """A metrics × metrics frame with the paper's names (``AP`` → ``MAP``, ``RR`` → ``MRR``)."""
    return frame.rename(index=LABELS, columns=LABELS)


def tau_metrics(results: Mapping[str, Any]) -> pd.DataFrame:
    """τ among the metrics at the deepest cut-off, labelled with the paper's names."""
    return labelled(results["tau_metrics"])


def robustness_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Mean τ over the shares for both biases (and τ at half of the ratings when the grid has
    it), most robust to sparsity first; ``summary`` from :func:`.estimates.summary`."""
    columns = ["sparsity", "popularity"] + (["tau_half"] if "tau_half" in summary else [])
    return (
        summary[columns]
        .sort_values("sparsity", ascending=False)
        .rename(
            columns={
                "sparsity": "mean τ, sparsity",
                "popularity": "mean τ, popularity",
                "tau_half": "τ at 50 % of the ratings",
            }
        )
    )


def dp_by_cutoff(results: Mapping[str, Any]) -> pd.DataFrame:
    """DP of every metric at every cut-off with its bootstrap interval (long: metric, cut-off,
    DP, low, high)."""
    rows = []
    for m in results["metrics"]:
        for k in results["cutoffs"]:
            e = dp_estimate(results, f"{m}@{k}", floor=0.0)
            rows.append(
                {"metric": LABELS[m], "cut-off": k, "DP": e.value, "low": e.low, "high": e.high}
            )
    return pd.DataFrame(rows)


def dp_by_test(results: Mapping[str, Any]) -> pd.DataFrame:
    """DP (the sum of the p-values over the system pairs) at the deepest cut-off by test:
    measures × (permutation, t, wilcoxon). Undefined p-values (identical pairs) are skipped."""
    at_deep = deep_measures(results)
    pvals = results["pvalues"]
    at = pvals[pvals["metric"].isin(at_deep)]
    return at.groupby(["metric", "test"], sort=False)["p"].sum().unstack("test").loc[at_deep]


def table3(results: Mapping[str, Any], summary: pd.DataFrame) -> pd.DataFrame:
    """Our Table 3: per metric at the deepest cut-off, DP with its interval, DP rescaled to the
    paper's 210 pairs, DP of the t-test and of the Wilcoxon test, the pairs significant after
    Holm's correction, and the paper's three rows."""
    by_test = dp_by_test(results)
    metrics = list(results["metrics"])
    table = pd.DataFrame(
        {
            "DP": summary["dp"].to_numpy(),
            "DP low": summary["dp_low"].to_numpy(),
            "DP high": summary["dp_high"].to_numpy(),
            f"DP × {PAPER_PAIRS}/{results['n_pairs']}": summary["dp_210"].to_numpy(),
            "DP (t-test)": by_test["t"].to_numpy(),
            "DP (Wilcoxon)": by_test["wilcoxon"].to_numpy(),
            "significant (Holm)": summary["significant"].astype(int).to_numpy(),
        },
        index=[LABELS[m] for m in metrics],
    )
    for ds in PAPER_DATASETS:
        table[f"paper: {ds}"] = [PAPER_TABLE3.at[ds, m] for m in metrics]
    return table


def styled(table: pd.DataFrame) -> Styler:
    """:func:`table3` for display: counts as integers, the rest with three significant digits."""
    return table.style.format(
        {c: ("{:d}" if c.startswith("significant") else "{:.3g}") for c in table.columns}
    )


def both_datasets(
    first: tuple[str, pd.DataFrame], second: tuple[str, pd.DataFrame]
) -> pd.DataFrame:
    """Two datasets' summaries side by side (mean τ for both biases and DP on 210 pairs); each
    argument is ``(dataset, summary)``."""
    both = pd.concat(dict([first, second]), axis=1)
    return both.loc[:, (slice(None), ["sparsity", "popularity", "dp_210"])]


def table2(results: Mapping[str, Any]) -> pd.DataFrame:
    """Table 2 beside ours: users, items, ratings, density (per cent of user-item pairs rated)
    and the Gini coefficient of the ratings across items, the paper's three rows and ours."""
    rows = {
        f"paper: {ds}": {
            **PAPER_TABLE2[ds],
            "density %": float(PAPER_TABLE2_TAIL[ds]["density"]),
            "Gini": float(PAPER_TABLE2_TAIL[ds]["gini"]),
        }
        for ds in PAPER_DATASETS
    }
    d = results["data"]
    rows[f"ours: {results['dataset']}"] = {
        "users": d["users"],
        "items": d["items"],
        "ratings": d["ratings"],
        "density %": 100 * d["density"],
        "Gini": d["gini"],
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def equation_check(results: Mapping[str, Any]) -> pd.DataFrame:
    """Eqs. 1–8 against the engine: per metric, the paper's equation and the largest
    |engine − equation written out| on the hand-made case and on the sample of the chapter's
    runs (users × every system, at the shallowest and the deepest cut-off)."""
    check = results["metric_check"]
    metrics = list(results["metrics"])
    hand = hand_gaps(metrics)
    return pd.DataFrame(
        {
            "equation": [EQUATIONS[m][0] for m in metrics],
            "largest gap, hand-made case": [
                max(v for k, v in hand.items() if k.split("@")[0] == m) for m in metrics
            ],
            f"largest gap, {check['users']} users × {check['systems']} systems": [
                max(v for k, v in check["gaps"].items() if k.split("@")[0] == m) for m in metrics
            ],
        },
        index=[LABELS[m] for m in metrics],
    )
