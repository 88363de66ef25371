"""The figures of the assessing-ranking-metrics chapter (Valcarce et al. 2020, Figs. 1–14).

Each function draws on the axes it is given, from a :class:`~.study.Results`. Imported by the
chapter only (seaborn and matplotlib are not needed to evaluate the ledger).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from .folds import SCHEMES, label
from .study import Results

__all__ = [
    "plot_absolute",
    "plot_curves",
    "plot_precision_line",
    "plot_pvalue_curves",
    "plot_schemes",
    "plot_tau",
]

_AGGREGATES = (("mean", "arithmetic mean"), ("gmean", "geometric mean"))


def plot_curves(
    curves: pd.DataFrame,
    names: Sequence[str],
    labels: Sequence[str],
    xlabel: str,
    title: str,
    ax: Axes,
) -> None:
    """Robustness curves of several measures on one axis: mean τ per share with its 95 % band.

    The style of the robustness chapter: x is the percentage kept (decreasing to the right),
    y is Kendall's τ with the full test set, one colour per measure.
    """
    palette = sns.color_palette("viridis" if len(names) > 7 else "tab10", len(names))
    for colour, m, lab in zip(palette, names, labels, strict=True):
        c = curves[curves["metric"] == m]
        ax.plot(100 * c["share"], c["tau"], color=colour, label=lab, marker=".")
        ax.fill_between(100 * c["share"], c["low"], c["high"], color=colour, alpha=0.2)
    ax.invert_xaxis()
    ax.set(xlabel=xlabel, ylabel="Kendall's τ with the full test set", title=title)


def plot_schemes(results: Results, aggregate: str, axes: np.ndarray) -> None:
    """One panel per scheme of :data:`SCHEMES`: the nine robustness curves of one aggregate."""
    units = {
        "ratings": "test ratings",
        "items": "test items",
        "popular": "test items",
        "users": "test users",
        "large-users": "test users",
    }
    names = results.measures
    labels = [label(n, aggregate) for n in names]
    c = results.curves[results.curves["aggregate"] == aggregate]
    # the grid may hold a spare axis (six for five schemes): zip stops at the last scheme
    for ax, (scheme, title) in zip(np.ravel(axes), SCHEMES.items(), strict=False):
        plot_curves(
            c[c["scheme"] == scheme], names, labels, f"% of {units[scheme]} kept", title, ax
        )
    np.ravel(axes)[0].legend(fontsize=8, ncol=2)


def plot_tau(results: Results, axes: Sequence[Axes]) -> None:
    """Kendall's τ among the metrics' system orderings as heatmaps, arithmetic means on the
    first axis (the paper's Fig. 1) and geometric means on the second (Fig. 9)."""
    cutoff = results.cutoff
    for ax, (agg, title) in zip(axes, _AGGREGATES, strict=True):
        tau = results.tau(agg)
        tau.index = tau.columns = [label(m, agg) for m in tau.columns]
        sns.heatmap(
            tau,
            annot=True,
            fmt=".2f",
            cmap="viridis",
            vmin=min(0.5, tau.min().min()),
            vmax=1,
            ax=ax,
            annot_kws={"size": 7},
            cbar_kws={"label": "Kendall's τ"},
        )
        ax.set(
            xlabel=f"metric @{cutoff}",
            ylabel=f"metric @{cutoff}",
            title=f"{title}: τ among metrics",
        )


def plot_pvalue_curves(results: Results, ax: Axes) -> None:
    """p-value curves of the metrics (the paper's Fig. 2): every system pair's p-value on users,
    sorted by decreasing p-value, the first 40 pairs at most."""
    n = results.n_systems
    n_pairs = n * (n - 1) // 2
    names = results.measures
    palette = sns.color_palette("viridis", len(names))
    for colour, m in zip(palette, names, strict=True):
        p = results.pvalues
        curve = np.sort(p.loc[p.metric == m, "p"].to_numpy())[::-1]
        ax.plot(np.arange(1, curve.size + 1), curve, color=colour, label=label(m))
    ax.set(
        xlabel="system pair (sorted by p-value)",
        ylabel="p-value (permutation test on users)",
        title="p-value curves",
        xlim=(0, min(n_pairs, 40)),
    )
    ax.legend(fontsize=8, ncol=2)


def plot_absolute(results: Results, axes: Sequence[Axes]) -> None:
    """Mean value of each metric over the systems as random test ratings are removed,
    arithmetic (the paper's Fig. 4) and geometric means, one axis each."""
    absolute = results.absolute[results.absolute.scheme == "ratings"]
    for ax, (agg, title) in zip(axes, _AGGREGATES, strict=True):
        a = absolute[absolute["aggregate"] == agg].assign(
            percent=lambda d: 100 * d["share"],
            metric=lambda d, agg=agg: [label(m, agg) for m in d["metric"]],
        )
        sns.lineplot(a, x="percent", y="value", hue="metric", marker=".", ax=ax, palette="viridis")
        ax.invert_xaxis()
        ax.set(
            xlabel="% of test ratings kept",
            ylabel="metric value (mean over systems)",
            title=title,
            yscale="log" if agg == "gmean" else "linear",
        )
        ax.legend(fontsize=8, ncol=2)


def plot_precision_line(ep: pd.DataFrame, ax: Axes) -> None:
    """Observed mean P@n over its full value against the share of ratings kept
    (:meth:`~.study.Results.expected_precision`), with the naive line and the expectation."""
    x = 100 * ep["share"]
    ax.fill_between(x, ep["low"], ep["high"], alpha=0.25, label="observed, 95 % band")
    ax.plot(x, ep["observed"], marker="o", label="observed")
    ax.plot(x, ep["share"], ls="--", color="grey", label="naive: p")
    ax.plot(x, ep["expected"], marker="x", color="black", label="expected, topics drop out")
    ax.invert_xaxis()
    ax.set(
        xlabel="% of test ratings kept",
        ylabel="mean P@n / full mean P@n",
        title="Precision under random rating removal",
    )
    ax.legend(fontsize=8)
