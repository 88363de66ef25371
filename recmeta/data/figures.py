"""Figures shared by the chapters (seaborn, labelled axes)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

__all__ = ["long_tail_frame", "long_tail"]


def long_tail_frame(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Item popularity curves: per dataset, items ranked by number of ratings (1 = most rated).

    Columns: dataset, rank, ratings, item_share (rank / items), rating_share (cumulative share of
    all ratings held by the items up to this rank).
    """
    parts = []
    for name, df in frames.items():
        counts = np.sort(df.groupby("item").size().to_numpy())[::-1]
        rank = np.arange(1, counts.size + 1)
        parts.append(
            pd.DataFrame(
                {
                    "dataset": name,
                    "rank": rank,
                    "ratings": counts,
                    "item_share": rank / counts.size,
                    "rating_share": np.cumsum(counts) / counts.sum(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def long_tail(frames: dict[str, pd.DataFrame]) -> plt.Figure:
    """Two panels: ratings per item by popularity rank (log scale), and the cumulative share."""
    lt = long_tail_frame(frames)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    sns.lineplot(lt, x="rank", y="ratings", hue="dataset", ax=axes[0])
    axes[0].set(
        yscale="log",
        xscale="log",
        xlabel="item popularity rank",
        ylabel="ratings per item",
        title="Long tail",
    )
    sns.lineplot(lt, x="item_share", y="rating_share", hue="dataset", ax=axes[1])
    axes[1].plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="equal popularity")
    axes[1].set(
        xlabel="share of items (most rated first)",
        ylabel="share of all ratings",
        title="Concentration (Lorenz-type curve)",
    )
    axes[1].legend()
    return fig
