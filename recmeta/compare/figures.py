"""The report's figures: means with intervals and letters beside the p-values, and effects.

:meth:`Comparison.plot <recmeta.compare.Comparison.plot>` and
:meth:`~recmeta.compare.Comparison.plot_effects` call these with a metric of the comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .formatting import CORRECTION_NAMES, TEST_NAMES, interval_columns

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .report import Comparison

__all__ = ["plot_effects", "plot_means"]


def plot_means(
    comparison: Comparison, metric: str, *, interval: str = "bootstrap", matrix: bool = True
) -> Figure:
    """Means with intervals and letters, reference lines; beside it the matrix of p-values.

    Returns the matplotlib figure.
    """
    # imported here: matplotlib and seaborn take 1.5 s to import, which the command line
    # (tables only) does not pay
    import matplotlib.pyplot as plt
    import seaborn as sns

    lo, hi = interval_columns(interval)
    show_matrix = matrix and len(comparison.systems) > 1
    fig, axes = plt.subplots(
        1,
        2 if show_matrix else 1,
        figsize=(11 if show_matrix else 6, 0.5 * len(comparison.systems) + 2.2),
        squeeze=False,
    )
    ax = axes[0, 0]
    s = comparison.summary[comparison.summary["metric"] == metric].sort_values(
        "mean", kind="stable"
    )
    y = np.arange(len(s))
    colours = sns.color_palette("deep", 3)
    ax.errorbar(
        s["mean"],
        y,
        fmt="o",
        xerr=[np.maximum(s["mean"] - s[lo], 0), np.maximum(s[hi] - s["mean"], 0)],
        color=colours[0],
        capsize=3,
    )
    for yy, (_, row) in zip(y, s.iterrows(), strict=True):
        ax.annotate(
            row["letters"],
            (row[hi], yy),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=9,
        )
    for which, style, colour in (("random", "--", "grey"), ("popularity", ":", colours[1])):
        v = comparison.reference(metric, which)
        if np.isfinite(v):
            ax.axvline(v, ls=style, color=colour, label=f"{which}: {v:.3f}")
    ax.set_yticks(y, s["system"])
    ax.set(
        xlabel=f"{metric} (mean, {comparison.settings['confidence']:.0%} {interval} interval)",
        ylabel="system",
    )
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    if show_matrix:
        order = list(s["system"])[::-1]  # best first
        p = comparison.p_matrix(metric).loc[order, order].iloc[1:, :-1]
        sig = comparison.significant(metric).loc[order, order].iloc[1:, :-1]
        mask = np.triu(np.ones(p.shape, dtype=bool), 1)
        text = p.map(lambda v: f"{v:.2g}")
        sns.heatmap(
            sig.astype(float),
            mask=mask,
            annot=text,
            fmt="",
            vmin=0,
            vmax=1,
            cmap=sns.color_palette([colours[1], colours[0]], as_cmap=True),
            cbar=False,
            linewidths=1,
            linecolor="white",
            ax=axes[0, 1],
            annot_kws={"size": 8},
        )
        axes[0, 1].tick_params(axis="y", rotation=0)
        corr = (
            ""
            if comparison.settings["p_value"] == "tukey"
            or comparison.settings["correction"] == "none"
            else f", {CORRECTION_NAMES[comparison.settings['correction']]}"
        )
        axes[0, 1].set(
            xlabel="system",
            ylabel="system",
            title=f"p-values ({TEST_NAMES[comparison.settings['p_value']]}{corr}); "
            "blue: significant",
        )
    fig.tight_layout()
    return fig


def plot_effects(
    comparison: Comparison,
    metric: str,
    *,
    standardised: bool = False,
    interval: str = "bootstrap",
) -> Figure:
    """Every pair's effect with its interval (a forest plot); significant pairs in colour.

    ``standardised`` shows d_z with its noncentral-t (``interval="t"``) or bootstrap interval
    instead of the mean difference. Returns the matplotlib figure.
    """
    # imported here: matplotlib and seaborn take 1.5 s to import, which the command line
    # (tables only) does not pay
    import matplotlib.pyplot as plt
    import seaborn as sns

    p = comparison.pairs[comparison.pairs["metric"] == metric].reset_index(drop=True)
    if standardised:
        x, lo, hi = (
            p["smd"],
            *(
                ("smd_boot_low", "smd_boot_high")
                if interval == "bootstrap"
                else ("smd_low", "smd_high")
            ),
        )
        label = "standardised mean difference d_z"
    else:
        x, (lo, hi) = p["mean_diff"], interval_columns(interval)
        label = f"difference of mean {metric}"
    # orient every pair so that A is the system ahead: differences are >= 0
    flip = (x < 0).to_numpy()
    ahead = np.where(flip, p["b"], p["a"])
    behind = np.where(flip, p["a"], p["b"])
    sign = np.where(flip, -1.0, 1.0)
    x = x.to_numpy() * sign
    low = np.where(flip, -p[hi].to_numpy(), p[lo].to_numpy())
    high = np.where(flip, -p[lo].to_numpy(), p[hi].to_numpy())
    order = np.argsort(x, kind="stable")
    x, low, high = x[order], low[order], high[order]
    ahead, behind = ahead[order], behind[order]
    significant = p["significant"].to_numpy(dtype=bool)[order]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(x) + 1.8))
    colours = sns.color_palette("deep", 4)
    y = np.arange(len(x))
    for flag, colour, name in (
        (True, colours[0], "significant"),
        (False, colours[3], "not significant"),
    ):
        sel = significant == flag
        if sel.any():
            ax.errorbar(
                x[sel],
                y[sel],
                fmt="o",
                xerr=[np.maximum(x[sel] - low[sel], 0), np.maximum(high[sel] - x[sel], 0)],
                color=colour,
                capsize=3,
                label=name,
            )
    ax.axvline(0, color="grey", lw=1)
    ax.set_yticks(y, [f"{a} − {b}" for a, b in zip(ahead, behind, strict=True)])
    ax.set(
        xlabel=f"{label} ({comparison.settings['confidence']:.0%} {interval} interval)",
        ylabel="pair (system ahead − system behind)",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
