"""A dataset described: size, density, Gini indices of item popularity and user activity."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .validation import DataError, is_implicit


def gini(counts: np.ndarray) -> float:
    """Gini index of non-negative counts: G = Σ_i (2i − n − 1) x_(i) / (n Σ x), x sorted ascending.

    0 when every entry is equal; (n − 1)/n when a single entry holds everything.
    """
    x = np.sort(np.asarray(counts, dtype=np.float64))
    n = x.size
    if n == 0 or x.sum() == 0:
        raise DataError("Gini index needs at least one positive count.")
    i = np.arange(1, n + 1)
    return float(np.sum((2 * i - n - 1) * x) / (n * x.sum()))


def stats(df: pd.DataFrame, name: str = "") -> dict[str, object]:
    """Summary in the spirit of Valcarce et al. (2018), Table 2.

    users, items, ratings, density = ratings / (users · items), Gini index of the item
    popularity (ratings per rated item) and of user activity, and the rating-value distribution
    (empty, with ``implicit`` true, for implicit feedback).
    """
    n_u, n_i, n_r = int(df["user"].nunique()), int(df["item"].nunique()), len(df)
    implicit = is_implicit(df)
    dist = {} if implicit else df["rating"].value_counts().sort_index()
    return {
        "dataset": name,
        "users": n_u,
        "items": n_i,
        "ratings": n_r,
        "density": n_r / (n_u * n_i),
        "item_gini": gini(df.groupby("item").size().to_numpy()),
        "user_gini": gini(df.groupby("user").size().to_numpy()),
        "implicit": implicit,
        "rating_distribution": {float(k): int(v) for k, v in dict(dist).items()},
    }
