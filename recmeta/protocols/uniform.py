"""The uniform-test split of Bellogín et al. (2017, §6.2): UAR and U1R.

Every test item has the same number η of test ratings, so an item's number of positive test
ratings follows its share of positive ratings, not its popularity. Evaluating with TI
candidates on this split gives UAR/U1R.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.popularity import item_counts
from .targets import check_ratings

__all__ = ["UniformSplit", "uniform_test_size", "uniform_test_split"]


@dataclass(frozen=True)
class UniformSplit:
    """A split where each item of ``items`` (the set T) has exactly ``eta`` test ratings."""

    train: pd.DataFrame
    test: pd.DataFrame
    items: np.ndarray
    eta: int

    def __repr__(self) -> str:
        return (
            f"UniformSplit(train={len(self.train)} ratings, test={len(self.test)} ratings, "
            f"|T|={len(self.items)}, eta={self.eta})"
        )


def uniform_test_size(
    counts: np.ndarray | pd.Series, sigma: float, epsilon: float
) -> tuple[int, int]:
    """|T| and η of the uniform-test split (Bellogín et al. 2017, §6.2).

    With items sorted by decreasing |R(i_k)|, |T| = ζ = max{k : k·η_k ≥ σ|R|} where
    η_k = ⌊(1 − ε)|R(i_k)|⌋, and η = η_ζ. Every item of T then keeps at least a share ε of its
    ratings for training, and the test share |T|·η/|R| is at least σ (the paper writes the
    condition with the real-valued (1 − ε)|R(i_k)|; we take the floor so η is a whole number of
    ratings and the inequality holds exactly).
    """
    if not 0 < sigma < 1 or not 0 <= epsilon < 1:
        raise ValueError(
            f"need 0 < sigma < 1 and 0 <= epsilon < 1, got sigma={sigma}, epsilon={epsilon}"
        )
    c = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    eta_k = np.floor((1 - epsilon) * c + 1e-9).astype(np.int64)
    k = np.arange(1, len(c) + 1)
    ok = np.flatnonzero((k * eta_k >= sigma * c.sum()) & (eta_k >= 1))
    if len(ok) == 0:
        raise ValueError(
            f"no uniform-test split reaches sigma={sigma} with epsilon={epsilon}: "
            "lower sigma or epsilon"
        )
    zeta = int(ok[-1]) + 1
    return zeta, int(eta_k[zeta - 1])


def uniform_test_split(
    ratings: pd.DataFrame, sigma: float = 0.2, epsilon: float = 0.2, *, seed: int = 0
) -> UniformSplit:
    """Split so that each of the |T| most popular items has exactly η random test ratings (§6.2).

    |T| and η come from :func:`uniform_test_size`; all other ratings (including every rating of
    items outside T) go to train. Evaluating with TI candidates on this split gives UAR/U1R, with
    𝒞 = T as the paper requires.
    """
    check_ratings(ratings, "ratings")
    counts = item_counts(ratings)
    zeta, eta = uniform_test_size(counts.to_numpy(), sigma, epsilon)
    chosen = counts.index.to_numpy()[:zeta]
    rng = np.random.default_rng(seed)
    item = ratings["item"].to_numpy()
    in_t = np.isin(item, chosen)
    order = np.lexsort((rng.random(len(ratings)), item))
    sorted_item = item[order]
    first = np.searchsorted(sorted_item, sorted_item, side="left")
    rank = np.arange(len(ratings)) - first
    is_test = np.zeros(len(ratings), dtype=bool)
    is_test[order] = in_t[order] & (rank < eta)
    return UniformSplit(
        ratings.loc[~is_test].reset_index(drop=True),
        ratings.loc[is_test].reset_index(drop=True),
        np.sort(chosen),
        eta,
    )
