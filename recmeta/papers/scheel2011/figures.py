"""The chapter's figures: the swap study's curves (the layout of Scheel et al.'s Figs. 4–5),
MAP per threshold, the reference rankings' levels (Fig. 3) and the virtual users (Figs. 7–8).

Kept out of the package's ``__init__``: matplotlib and seaborn take about a second to import,
which the ledger (imported by ``recmeta claims``) does not need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from .measures import PAPER_METRICS
from .settings import Settings

#: the label of the unit-level study's NDCG panel
UNIT_LABELS = {"nDCG(gain=exp)": "NDCG, levels on [0, 1]"}

__all__ = [
    "UNIT_LABELS",
    "plot_level_counts",
    "plot_swap_study",
    "plot_thresholds",
    "plot_virtual_bars",
    "plot_virtual_levels",
]


def plot_swap_study(
    study: pd.DataFrame, distribution: str, labels: Mapping[str, str] = PAPER_METRICS
) -> Figure:
    """One panel per measure: mean value against the number of swaps, a line per level count
    (the layout of Scheel et al.'s Figs. 4–5)."""
    part = study[(study["distribution"] == distribution) & study["metric"].isin(list(labels))]
    if part.empty:
        raise ValueError(
            f"the study has no rows for distribution {distribution!r} and {list(labels)}"
        )
    fig, axes = plt.subplots(
        1, len(labels), figsize=(4 * len(labels), 3.6), sharey=True, constrained_layout=True
    )
    for ax, (metric, label) in zip(np.atleast_1d(axes), labels.items(), strict=True):
        sns.lineplot(
            part[part["metric"] == metric],
            x="swaps",
            y="value",
            hue="levels",
            palette="viridis",
            ax=ax,
            legend=ax is np.atleast_1d(axes)[0],
        )
        ax.set(xlabel="number of random swaps", ylabel=f"mean {label}", title=label)
    np.atleast_1d(axes)[0].legend(title="levels")
    return fig


def plot_thresholds(study: pd.DataFrame, distribution: str, levels: int) -> Figure:
    """MAP at each threshold (thin lines, coloured by threshold) and µAP (black) against swaps."""
    part = study[(study["distribution"] == distribution) & (study["levels"] == levels)]
    maps = part[part["metric"] == "MAP"]
    if maps.empty:
        raise ValueError("the study has no MAP rows: run swap_study(..., thresholds=True)")
    fig, ax = plt.subplots(figsize=(6.5, 4), constrained_layout=True)
    sns.lineplot(maps, x="swaps", y="value", hue="threshold", palette="crest", lw=1, ax=ax)
    mu = part[part["metric"] == "muAP"]
    ax.plot(mu["swaps"], mu["value"], color="black", lw=2.2, label="µAP")
    ax.set(
        xlabel="number of random swaps",
        ylabel="mean value",
        title=f"MAP per threshold and µAP, {levels} levels ({distribution})",
    )
    ax.legend(title="threshold t", ncol=2, fontsize="small")
    return fig


def plot_level_counts(counts: pd.DataFrame, levels: Sequence[int]) -> Figure:
    """Items per level of the non-uniform references, one panel per level count (Fig. 3)."""
    fig, axes = plt.subplots(
        1, len(levels), figsize=(3.2 * len(levels), 2.8), sharey=True, constrained_layout=True
    )
    for ax, n in zip(np.atleast_1d(axes), levels, strict=True):
        part = counts[(counts.distribution == "non-uniform") & (counts.levels == n)]
        ax.bar(part["level"], part["items"], color="steelblue")
        ax.set(xlabel="relevance level", title=f"{n} levels")
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    np.atleast_1d(axes)[0].set_ylabel("items in the reference")
    return fig


def plot_virtual_bars(virtual: pd.DataFrame, settings: Settings) -> sns.FacetGrid:
    """Mean value of each measure per system against the ordinal virtual user and its raw
    scores (the reference system left out), a panel each (Figs. 7–8)."""
    s = settings
    bars = virtual[
        virtual["levels"].isin([s.ordinal_levels, -1]) & (virtual.system != s.reference_system)
    ]
    g = sns.catplot(
        bars,
        x="system",
        y="value",
        hue="measure",
        col="reference levels",
        kind="bar",
        height=3.4,
        aspect=1.4,
        palette="Set2",
    )
    g.set_axis_labels("system", "mean value")
    for ax in g.axes.flat:
        ax.tick_params(axis="x", labelrotation=30)
    return g


def plot_virtual_levels(virtual: pd.DataFrame, settings: Settings) -> sns.FacetGrid:
    """Mean value of each measure against the virtual user's ordinal level count (log scale),
    a line per system (the reference system left out), a panel per measure."""
    sweep = virtual[(virtual["levels"] > 0) & (virtual.system != settings.reference_system)]
    g = sns.relplot(
        sweep,
        x="levels",
        y="value",
        hue="system",
        col="measure",
        kind="line",
        marker="o",
        col_wrap=2,
        height=3,
        aspect=1.4,
    )
    g.set(xscale="log")
    g.set_axis_labels("levels of the virtual user's grades", "mean value")
    return g
