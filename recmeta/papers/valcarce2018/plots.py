"""Valcarce et al. (2018): the chapter's figures: τ heatmaps, robustness curves, p-value curves, DP.

Imported by the chapter, not by the package's ``__init__``: the ledger (which ``recmeta claims``
loads for every paper) needs no plotting library, and seaborn alone takes seconds to import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ...metaeval import significance

__all__ = ["plot_curves", "plot_dp", "plot_heatmaps", "plot_pvalue_curves"]


def plot_heatmaps(
    frames: Mapping[str, pd.DataFrame],
    *,
    ncols: int = 4,
    vmin: float = 0.5,
    annot: bool | Sequence[str] = True,
    size: float = 3.2,
    label: str = "Kendall's τ",
    axis_label: str = "cut-off",
) -> Figure:
    """τ matrices side by side on one colour scale; returns the figure.

    ``annot`` writes the value in every cell of every panel (``True``) or of the panels whose
    titles it lists. Drawn with ``imshow`` and one text per cell: seaborn's ``heatmap`` draws the
    same picture but annotates several times more slowly, which matters for a page of 11 × 11
    matrices.
    """
    if not frames:
        raise ValueError("no τ matrices to plot: frames is empty")
    n = len(frames)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    same = len({(tuple(f.index), tuple(f.columns)) for f in frames.values()}) == 1
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(size * ncols + 1.0, size * nrows + 0.4),
        squeeze=False,
        sharex=same,
        sharey=same,
    )
    fig.subplots_adjust(
        left=0.06,
        right=0.88,
        bottom=0.1,
        top=0.93,
        wspace=0.45 if not same else 0.15,
        hspace=0.45 if not same else 0.25,
    )
    image = None
    # the grid may have more axes than panels: the spare ones are hidden below
    for ax, (title, frame) in zip(axes.flat, frames.items(), strict=False):
        a = frame.to_numpy(dtype=float)
        image = ax.imshow(a, cmap="viridis", vmin=vmin, vmax=1.0)
        ax.set_xticks(range(a.shape[1]), [str(c) for c in frame.columns], rotation=90)
        ax.set_yticks(range(a.shape[0]), [str(c) for c in frame.index])
        ax.grid(False)
        ax.tick_params(labelsize=7)
        ax.set(title=title, xlabel=axis_label, ylabel=axis_label)
        if same:  # shared labels: only the outer panels carry them
            ax.label_outer()
        if annot is True or (not isinstance(annot, bool) and title in annot):
            for (i, j), value in np.ndenumerate(a):
                ax.text(
                    j,
                    i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=5.5 if a.shape[0] > 8 else 7,
                    color="white" if value < (vmin + 1.0) / 2 else "black",
                )
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    assert image is not None  # frames is not empty, so the loop drew at least one panel
    fig.colorbar(image, cax=fig.add_axes((0.91, 0.15, 0.015, 0.7)), label=label)
    return fig


def plot_curves(
    panels: Mapping[str, tuple[pd.DataFrame, Sequence[str], str]],
    labels: Sequence[str],
    *,
    ncols: int = 4,
    size: float = 3.0,
    x: str = "share",
    bands: Sequence[int] | None = None,
) -> Figure:
    """Robustness curves with their bands, one panel per entry of ``panels``.

    ``panels`` maps a title to ``(curves, measures, xlabel)``: ``curves`` has columns measure,
    ``x``, tau, low, high (:func:`sparsity_curves`, :func:`popularity_curves`), and the panel
    draws one line per measure, named by ``labels`` (one per position, shared palette), with
    the band of the positions in ``bands`` (all by default). The x axis (share kept, in %) runs
    from the full test set down. Returns the figure.
    """
    n = len(panels)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(size * ncols + 1.2, size * nrows * 0.9),
        squeeze=False,
        sharey=True,
        constrained_layout=True,
    )
    width = max(len(p[1]) for p in panels.values())
    palette = sns.color_palette("viridis" if width > 7 else "tab10", width)
    # more axes than panels, and palette and labels sized for the widest panel: zip stops early
    for ax, (title, (curves, measures, xlabel)) in zip(axes.flat, panels.items(), strict=False):
        for pos, (colour, m, lab) in enumerate(zip(palette, measures, labels, strict=False)):
            c = curves[curves["measure"] == m].sort_values(x)
            ax.plot(100 * c[x], c["tau"], color=colour, label=lab, lw=1.2)
            if bands is None or pos in bands:
                ax.fill_between(100 * c[x], c["low"], c["high"], color=colour, alpha=0.2, lw=0)
        ax.invert_xaxis()
        ax.set(title=title, xlabel=xlabel)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("Kendall's τ with the full test set")
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside right center", fontsize=8)
    return fig


def plot_pvalue_curves(
    results: Mapping[str, Any],
    measures: Sequence[str],
    labels: Sequence[str],
    *,
    title: str,
    viridis: bool = False,
    ncol: int = 1,
    shown: int = 25,
) -> Figure:
    """p-value curves (Sakai 2006; the paper's Figs. 4 and 8): for each measure, the permutation
    test's p-values of all system pairs sorted in decreasing order, the first ``shown`` pairs
    drawn (the others are all near 0). A curve closer to the axes discriminates more pairs."""
    pvals = results["pvalues"]
    perm = pvals[pvals["test"] == "permutation"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = sns.color_palette("viridis", len(measures)) if viridis else [None] * len(measures)
    for colour, m, lab in zip(colours, measures, labels, strict=False):
        curve = significance.p_value_curve(perm.loc[perm["metric"] == m, "p"])
        ax.plot(np.arange(1, curve.size + 1), curve, color=colour, label=lab)
    ax.set(
        xlabel="system pair (sorted by p-value)",
        ylabel="p-value (permutation test)",
        title=title,
        xlim=(0, min(results["n_pairs"], shown)),
    )
    ax.legend(fontsize=8, ncol=ncol)
    return fig


def plot_dp(frame: pd.DataFrame, n_pairs: int) -> Figure:
    """DP of every metric at every cut-off with its bootstrap band: ``frame`` has columns
    metric, cut-off, DP, low, high (:func:`~recmeta.papers.valcarce2018.tables.dp_by_cutoff`)."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    names = frame["metric"].unique()
    colours = dict(zip(names, sns.color_palette("tab10", len(names)), strict=True))
    for name, part in frame.groupby("metric", sort=False):
        ax.plot(part["cut-off"], part["DP"], marker="o", color=colours[name], label=name)
        ax.fill_between(
            part["cut-off"], part["low"], part["high"], color=colours[name], alpha=0.15, lw=0
        )
    ax.set(xlabel="cut-off", ylabel="DP (sum of p-values)", title=f"DP over {n_pairs} system pairs")
    ax.legend(fontsize=8, ncol=2)
    return fig
