"""The figures of the statistical-biases chapter, drawn from a :class:`~.study.Study`'s results
with seaborn; each is the analogue of a figure of Bellogín et al. (2017)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...data import popularity as pop
from .settings import FIG2_DESIGNS, ORACLE, PAPER
from .study import Study
from .tables import fig8_designs
from .trials import summarise

__all__ = [
    "colours",
    "fig2",
    "fig6",
    "fig8",
    "fig9",
    "lemma_bounds",
    "positive_ratio",
    "positive_shares",
    "simulation",
    "sparsity",
]


def colours(study: Study) -> dict[str, Any]:
    """One colour per system, the same in every figure."""
    order = [*study.order, "most liked", "mean rating", ORACLE]
    return dict(zip(order, sns.color_palette(n_colors=len(order)), strict=True))


def fig2(study: Study) -> plt.Axes:
    """P@n of every system under the three designs of Fig. 2 (means over splits, 95 % CIs)."""
    f = study.results["fig2"]
    ax = sns.barplot(
        summarise(f, by=["design"]),
        x="design",
        y="P",
        hue="system",
        hue_order=study.order,
        palette=colours(study),
        errorbar=("ci", 95),
        order=[d for d in FIG2_DESIGNS if d in set(f["design"])],
    )
    ax.set(
        xlabel="experimental design",
        ylabel=f"P@{study.s.n}",
        title=f"P@{study.s.n} on {study.dataset} (cf. Bellogín et al., Fig. 2)",
    )
    return ax


def lemma_bounds(study: Study) -> plt.Figure:
    """1R P@n and its AR bounds per system against the removed share and |T_u| (Fig. 3)."""
    by_removal, by_size = study.results["lemma_removal"], study.results["lemma_size"]
    palette = colours(study)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=False, constrained_layout=True)
    panels = (
        (axes[0], summarise(by_removal), "removed", "share of test ratings removed"),
        (axes[1], summarise(by_size, by=["size"]), "size", "target-set size |T_u|"),
    )
    for ax, frame, x, label in panels:
        mean = frame.groupby(["system", x])[["lower", "P", "upper"]].mean().reset_index()
        for name in [sy for sy in study.order if sy in set(mean["system"])]:
            d = mean[mean["system"] == name]
            ax.plot(d[x], d["P"], marker="o", color=palette[name], label=name)
            ax.fill_between(d[x], d["lower"], d["upper"], color=palette[name], alpha=0.2)
        ax.set(xlabel=label, ylabel=f"1R P@{study.s.n}")
        ax.legend(title="system")
    axes[1].set_xscale("log")
    return fig


def sparsity(study: Study) -> plt.Figure:
    """P@n against test sparsity (AR, 1R) and against |T_u| (1R), with eq. 4 or 5 (Fig. 4)."""
    r, n = study.results, study.s.n
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8), constrained_layout=True)
    panels = (
        (axes[0], summarise(r["ar_removal"]), "removed", "AR TI-AN"),
        (
            axes[1],
            summarise(r["lemma_removal"]),
            "removed",
            f"1R TI-NN, |T|={study.s.n_nonrelevant + 1}",
        ),
        (axes[2], summarise(r["lemma_size"], by=["size"]), "size", "1R TI-NN"),
    )
    for ax, frame, x, title in panels:
        sns.pointplot(
            frame,
            x=x,
            y="P",
            hue="system",
            hue_order=study.order,
            palette=colours(study),
            native_scale=True,
            errorbar=("ci", 95),
            ax=ax,
            linestyle="none",
            marker="o",
        )
        f = frame.groupby(x)["formula"].mean()
        ax.plot(f.index, f.to_numpy(), ls="--", color="black", label="formula (random)")
        ax.set(
            yscale="log",
            title=title,
            ylabel=f"P@{n}",
            xlabel="target-set size |T_u|" if x == "size" else "share of test ratings removed",
        )
        ax.legend(fontsize="small")
    return fig


def simulation(study: Study) -> plt.Figure:
    """Simulated popularity curves per α beside the real one, and 1R P@n per α (Fig. 5)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    sns.lineplot(
        study.results["curves"],
        x="item share",
        y="rating share",
        hue="alpha",
        palette="viridis",
        ax=axes[0],
    )
    real = pop.cumulative_share(pop.item_counts(study.ratings))
    axes[0].plot(
        np.arange(1, len(real) + 1) / len(real), real, color="black", ls="--", label=study.dataset
    )
    axes[0].legend(title="alpha", fontsize="small")
    axes[0].set(
        xlabel="share of items (most popular first)",
        ylabel="share of ratings",
        title="simulated popularity",
    )
    sns.lineplot(
        summarise(study.results["simulation"], by=["alpha"]),
        x="alpha",
        y="P",
        hue="system",
        hue_order=study.order,
        palette=colours(study),
        marker="o",
        errorbar=("ci", 95),
        ax=axes[1],
    )
    axes[1].set(
        xlabel="popularity skew α", ylabel=f"1R P@{study.s.n}", title="precision on simulated data"
    )
    return fig


def positive_shares(studies: Sequence[Study | None]) -> plt.Axes:
    """Cumulative share of positive ratings held by the most liked items, one line per
    dataset (Fig. 5 right); a ``None`` study is skipped."""
    curves = [
        st.results["positive_shares"]["curve"].assign(dataset=st.dataset)
        for st in studies
        if st is not None
    ]
    ax = sns.lineplot(
        pd.concat(curves, ignore_index=True), x="item share", y="positive share", hue="dataset"
    )
    ax.set(
        xlabel="share of items (most liked first)",
        ylabel="share of positive ratings",
        title="how positive ratings spread over items",
    )
    return ax


def positive_ratio(study: Study, segments: int = 100) -> plt.Axes:
    """|PR(i)|/|R(i)| against the popularity rank, averaged over ``segments`` (Fig. 7)."""
    ratio = pop.positive_ratio_by_rank(study.ratings, study.s.threshold, segments=segments)
    ax = sns.lineplot(ratio, x="rank", y="ratio", marker=".")
    ax.set(
        xlabel="item popularity rank (1 = most rated)",
        ylabel="|PR(i)| / |R(i)|",
        title=f"positive ratings ratio on {study.dataset}",
    )
    return ax


def fig6(study: Study) -> plt.Figure:
    """The two splits of Fig. 6 on the run's data, items by popularity rank: left, |R(i)| and the
    test ratings of a coin-flip split (dots) around their expectation σ|R(i)| (dashed), with
    the P1R percentiles' bounds; right, the uniform-test split: η test ratings for each item of
    T, (1 − ε)|R(i)| (dashed) and none beyond |T|."""
    s, f = study.s, study.results["fig6"]["curve"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax in (left, right):
        ax.plot(f["rank"], f["ratings"], color="grey", label="|R(i)|")
        ax.set(yscale="symlog", xlabel="item popularity rank")
    left.scatter(f["rank"], f["coin-flip test"], s=4, label="test ratings (coin flip)")
    left.plot(f["rank"], s.sigma * f["ratings"], "--", color="C3", label="σ|R(i)|")
    for r in f.groupby("stratum")["rank"].min().to_numpy()[1:]:
        left.axvline(r, color="black", lw=0.5, alpha=0.4)
    left.set(
        ylabel="ratings",
        title=f"a) coin flip, P1R's {s.percentiles} percentiles of ~{len(f) / s.percentiles:,.0f}\n"
        f"items (paper, {PAPER['dataset']}: ~{PAPER['p1r_size']})",
    )
    right.plot(f["rank"], f["uniform test"], color="C0", label="test ratings (uniform test)")
    right.plot(f["rank"], (1 - s.epsilon) * f["ratings"], "--", color="C3", label="(1 − ε)|R(i)|")
    u = study.results["fig6"]["uniform"]
    right.set(
        title=f"b) uniform test: |T| = {u['T']:,}, η = {u['eta']}\n(paper, {PAPER['dataset']}: "
        f"{PAPER['uniform_size']:,}, {PAPER['uniform_eta']})"
    )
    for ax in (left, right):
        ax.legend(fontsize="small")
    fig.suptitle(f"Rating splits on {study.dataset} (cf. Bellogín et al., Fig. 6)")
    fig.tight_layout()
    return fig


def fig8(study: Study) -> sns.FacetGrid:
    """P@n and nDCG@n of every system under the designs of Fig. 8 (means over splits)."""
    split = summarise(study.results["fig8"], by=["design"])
    long = split.melt(id_vars=["design", "system"], value_vars=["P", "nDCG"], var_name="metric")
    g = sns.catplot(
        long,
        x="design",
        y="value",
        hue="system",
        hue_order=study.order,
        palette=colours(study),
        col="metric",
        kind="bar",
        order=fig8_designs(study),
        sharey=False,
        height=3.8,
        aspect=1.4,
        errorbar=("ci", 95),
    )
    g.set_axis_labels("design", "value")
    g.set_titles(f"{{col_name}}@{study.s.n}")
    for ax in g.axes.flat:
        plt.setp(ax.get_xticklabels(), rotation=40, ha="right")
    return g


def fig9(study: Study) -> sns.FacetGrid:
    """P@n, bpref, infAP and stratified recall@n under AR TI-AN and 1R TI-NN (Fig. 9)."""
    f = study.results["fig9"]
    mean = f.groupby(["design", "metric", "system"])["value"].mean().reset_index()
    g = sns.catplot(
        mean,
        x="metric",
        y="value",
        hue="system",
        hue_order=study.order,
        palette=colours(study),
        col="design",
        kind="bar",
        sharey=False,
        height=3.6,
        aspect=1.3,
        order=["P", "bpref", "infAP", "SRecall"],
    )
    g.set_axis_labels("metric", "value")
    g.set_titles("{col_name}")
    return g
