"""Sentences about computed results, for chapters whose prose must follow their data.

A chapter states a result in prose only through code, so that the sentence stays true when the
chapter runs on another dataset. The datasets chapter's sentences live here: each function takes
the computed quantities and returns Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["VALCARCE2018_TABLE2", "dataset_comparison", "rating_scales", "head_share"]

#: Valcarce et al. (2018), Table 2: the three datasets of their study
VALCARCE2018_TABLE2 = pd.DataFrame(
    {
        "users": [6_040, 7_279, 33_388],
        "items": [3_706, 37_232, 66_055],
        "ratings": [1_000_209, 749_401, 1_571_808],
        "density": [0.04468, 0.00277, 0.00071],
        "item_gini": [0.634, 0.581, 0.865],
    },
    index=pd.Index(["ML-1M", "LibraryThing", "BeerAdvocate"], name="dataset"),
)


def _as_many(a: float, b: float) -> str:
    """``a`` against ``b`` in words: "5.8 times as many", "about as many", "3.0 times fewer"."""
    r = a / b
    if abs(r - 1) < 0.05:
        return "about as many"
    return f"{r:.1f} times as many" if r > 1 else f"{1 / r:.1f} times fewer"


def dataset_comparison(table: pd.DataFrame, reference: str = "ML-1M") -> str:
    """Each dataset's density and item Gini against the paper's ``reference`` row, in words.

    ``table`` is indexed by dataset with columns ``items``, ``density`` and ``item_gini`` (as
    :func:`recmeta.data.stats` gives them). The Gini indices count as "about as concentrated"
    within 0.02 of each other.
    """
    ref = VALCARCE2018_TABLE2.loc[reference]
    parts = [
        f"For comparison, Valcarce et al. {{cite}}`valcarce2018robustness` report "
        f"{ref['density']:.3%} density and an item Gini of {ref['item_gini']:.3f} for "
        f"{reference} (their Table 2)."
    ]
    for name, row in table.iterrows():
        denser = "denser" if row["density"] > ref["density"] else "sparser"
        gap = row["item_gini"] - ref["item_gini"]
        conc = (
            "about as concentrated"
            if abs(gap) <= 0.02
            else "more concentrated"
            if gap > 0
            else "less concentrated"
        )
        parts.append(
            f"{name} is {denser} ({row['density']:.3%}) and {conc} "
            f"(item Gini {row['item_gini']:.3f})."
        )
    if len(table) >= 2:
        first, *rest = table.index
        for other in rest:
            items = _as_many(table.at[other, "items"], table.at[first, "items"])
            ratings = _as_many(table.at[other, "ratings"], table.at[first, "ratings"])
            parts.append(f"Against {first}, {other} has {items} items and {ratings} ratings.")
    return " ".join(parts)


def rating_scales(frames: Mapping[str, pd.DataFrame]) -> str:
    """The rating scale of each frame in words: lowest and highest value and the step between."""
    parts = []
    for name, df in frames.items():
        if "rating" not in df.columns:
            parts.append(f"{name} has no ratings (implicit feedback)")
            continue
        values = np.unique(df["rating"].to_numpy())
        step = float(np.min(np.diff(values))) if len(values) > 1 else 0.0
        kind = "whole stars" if step == 1 else "half stars" if step == 0.5 else f"steps of {step:g}"
        parts.append(f"{name} uses {kind} from {values[0]:g} to {values[-1]:g}")
    return "; ".join(parts) + "."


def head_share(frames: Mapping[str, pd.DataFrame], head: float = 0.1) -> str:
    """Share of all ratings held by the ``head`` share of most rated items, per dataset."""
    shares = []
    for name, df in frames.items():
        counts = np.sort(df.groupby("item").size().to_numpy())[::-1]
        k = max(1, int(round(head * counts.size)))
        shares.append((name, counts[:k].sum() / counts.sum()))
    parts = [
        f"{share:.0%} of all ratings in {name}" if i == 0 else f"{share:.0%} in {name}"
        for i, (name, share) in enumerate(shares)
    ]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"The most rated {head:.0%} of the items hold {listed}."
