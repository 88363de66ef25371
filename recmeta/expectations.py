"""Expected precision of random and non-personalised rankings, and the AR–1R bounds.

Closed forms from Bellogín, Castells & Cantador (2017), §3.4, §4.1, §5.1 and §6.2. Notation:
σ the share of ratings in test, 𝒰 the users, 𝒞 the candidate items, |PR| the number of positive
ratings, |T_u| the target-set size and t = 1 / avg_u(1 / |T_u|) the "average" target-set size,
δ = |PR| / (t |𝒰|) the density of relevance in the target sets.

Two kinds of result live here:

* exact identities given a realised split and target sets — the expected P@n of a random ranking
  is ρ = the protocol mean of |T ∩ PR_test| / |T| (:func:`random_precision`, §4.2), and the
  lemma's bounds between 1R and AR precision hold for every ranking (:func:`lemma_bounds`, eq. 2);
* the paper's closed forms in terms of σ, |PR|, t and item popularity (eqs. 3–5 and the §6.2
  variant), which average over random splits. Eq. 5 is exact; eqs. 3–4 assume an item's
  chance to be in T_u does not depend on the item (p(i ∈ T_u) = |T_u| / |𝒞|), which holds when
  the users' training profiles are a small part of 𝒞.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "harmonic_target_size",
    "relevance_density",
    "random_precision_ar",
    "random_precision_1r",
    "random_precision",
    "nonpersonalised_precision_ar",
    "nonpersonalised_precision_uniform",
    "lemma_bounds",
    "top_positive_counts",
]


def harmonic_target_size(sizes: np.ndarray | pd.Series) -> float:
    """t = 1 / avg_u(1 / |T_u|) (Bellogín et al. 2017, Table 2)."""
    s = np.asarray(sizes, dtype=float)
    if len(s) == 0 or (s <= 0).any():
        raise ValueError("target-set sizes must be a non-empty array of positive numbers")
    return float(1.0 / np.mean(1.0 / s))


def relevance_density(n_positive: float, n_users: int, t: float) -> float:
    """δ = |PR| / (t |𝒰|) (Bellogín et al. 2017, Table 2 and eq. 4)."""
    if n_users <= 0 or t <= 0:
        raise ValueError("n_users and t must be positive")
    return n_positive / (t * n_users)


def random_precision_ar(sigma: float, n_positive: float, n_users: int, t: float) -> float:
    """E[P_RND@n] in AR ≈ σ |PR| / (t |𝒰|) = σ δ (Bellogín et al. 2017, eq. 4).

    ``n_positive`` is |PR| over the whole data (test and training), ``sigma`` the test share.
    Independent of n (for n ≤ |T_u|).
    """
    if not 0 < sigma <= 1:
        raise ValueError(f"sigma must lie in (0, 1], got {sigma}")
    return sigma * relevance_density(n_positive, n_users, t)


def random_precision_1r(t: float) -> float:
    """E[1R-P_RND@n] = 1 / t with t = |T_u^r| (Bellogín et al. 2017, eq. 5); exact for n ≤ t."""
    if t < 1:
        raise ValueError(f"target-set size must be >= 1, got {t}")
    return 1.0 / t


def random_precision(sets: pd.DataFrame) -> float:
    """Exact expected P@n of a uniformly random ranking of the given target sets (§4.2).

    For a random permutation of T, E[P@n] = |T ∩ PR_test| / |T| for every n ≤ |T| (each of the
    first n positions holds a relevant item with that probability), so the expectation is the
    protocol mean of ρ_T = |T ∩ PR_test| / |T| — the paper's ρ. ``sets`` is a target-set frame
    from :func:`recmeta.protocols.target_sets`.
    """
    g = sets.groupby("set")
    rho = g["relevant"].mean()
    stratum = g["stratum"].first()
    return float(rho.groupby(stratum).mean().mean())


def _positive_sums(positive_counts: np.ndarray, n: int | None = None) -> float:
    pc = np.asarray(positive_counts, dtype=float)
    if pc.ndim == 1:
        pc = pc[None, :]
    if pc.ndim != 2:
        raise ValueError("positive_counts must be a vector (ranks) or a matrix (users × ranks)")
    if n is not None and pc.shape[1] < n:
        raise ValueError(f"need counts for at least {n} ranks, got {pc.shape[1]}")
    return pc


def nonpersonalised_precision_ar(
    positive_counts: np.ndarray, sigma: float, n_candidates: int, n_users: int, t: float
) -> float:
    """E[P_s@n] of a non-personalised ranking in AR (Bellogín et al. 2017, eq. 3).

    E[P_s@n] = σ |𝒞| / (n t |𝒰|) · Σ_{k=1..n} avg_u |PR(i_k^{u,s})|

    ``positive_counts`` holds |PR(i)| (positive ratings over all data) of the items the system puts
    at ranks 1..n *within each user's target set*: a users × n matrix
    (:func:`top_positive_counts`), or a vector of length n when every T_u starts with the same
    items (e.g. AN candidates on sparse data). n is its number of columns.

    The formula takes p(i ∈ T_u) = |T_u| / |𝒞| for every item. Training items leave T_u, and they
    are mostly the popular ones, so on dense data a popularity list reaches further down than the
    formula assumes and the formula underestimates its precision (by about half on ML-100K); the
    tests check it within Monte-Carlo error on sparse data only.
    """
    pc = _positive_sums(positive_counts)
    n = pc.shape[1]
    if not 0 < sigma <= 1:
        raise ValueError(f"sigma must lie in (0, 1], got {sigma}")
    return float(sigma * n_candidates / (n * t * n_users) * pc.mean(axis=0).sum())


def nonpersonalised_precision_uniform(
    positive_ratio: np.ndarray, sigma: float, n_ratings: int, n_users: int, t: float
) -> float:
    """E[P_s@n] of a non-personalised ranking in UAR with 𝒞 = T (Bellogín et al. 2017, §6.2).

    With η test ratings per item of T, E|PR_test(i)| = η |PR(i)| / |R(i)| and η = σ |R| / |T|, so
    eq. 3 becomes E[P_s@n] = σ |R| / (n t |𝒰|) · Σ_{k=1..n} avg_u |PR(i_k)| / |R(i_k)|.
    ``positive_ratio`` holds |PR(i)| / |R(i)| of the items at ranks 1..n (vector or users × n).
    """
    pr = _positive_sums(positive_ratio)
    n = pr.shape[1]
    return float(sigma * n_ratings / (n * t * n_users) * pr.mean(axis=0).sum())


def lemma_bounds(scored: pd.DataFrame, n: int) -> tuple[float, float, float]:
    """(lower, 1R-P@n, upper) of the lemma (Bellogín et al. 2017, eq. 2) for one scored 1R run.

        |𝒰| P_s@n / |PR_test|  ≤  1R-P_s@n  ≤  Σ_u m_u P_s^u@m_u(T_u) / (n |PR_test|),

    m_u = n + |PR_test(u)| − 1 and T_u = ∪_r T_u^r. ``scored`` is a 1R target-set frame with a
    ``score`` column; a user's score of an item must not depend on the target set (a recommender
    scores (user, item) pairs). The inequalities are guaranteed when every user's sets share the
    same non-relevant items (``Protocol(shared_nonrelevant=True)``); otherwise they hold in
    expectation only. Ranks within T_u break ties by item id, as in
    :func:`recmeta.protocols.set_metrics`.
    """
    from .protocols import set_metrics

    per_set = set_metrics(scored, n)
    n_pos = int(scored["relevant"].sum())
    if n_pos != len(per_set):
        raise ValueError("lemma_bounds needs a 1R frame (exactly one relevant item per target set)")
    value = float(per_set["P"].mean())
    ar = scored.drop_duplicates(["user", "item"])
    if len(scored.drop_duplicates(["user", "item", "score"])) != len(ar):
        raise ValueError("a (user, item) pair has different scores in different target sets")
    u = ar["user"].to_numpy()
    uniq, inv = np.unique(u, return_inverse=True)
    order = np.lexsort((ar["item"].to_numpy(), -ar["score"].to_numpy(dtype=float), inv))
    inv_s = inv[order]
    rank = np.empty(len(ar), dtype=np.int64)
    rank[order] = np.arange(len(ar)) - np.searchsorted(inv_s, inv_s, side="left")
    rel = ar["relevant"].to_numpy(dtype=bool)
    npos_u = np.bincount(inv, weights=rel, minlength=len(uniq))
    m_u = n + npos_u - 1
    lower = np.sum(rel & (rank < n)) / (n * n_pos)
    upper = np.sum(rel & (rank < m_u[inv])) / (n * n_pos)
    return float(lower), value, float(upper)


def top_positive_counts(scored: pd.DataFrame, n: int, positive_counts: pd.Series) -> np.ndarray:
    """|PR(i_k^{u,s})| for k = 1..n: the positive-rating counts of each set's top n items.

    ``scored`` is a scored target-set frame (ranked by score, ties by item id, as
    :func:`recmeta.protocols.set_metrics`); ``positive_counts`` maps item → |PR(i)| (items absent
    count 0). Returns a sets × n matrix, the input of :func:`nonpersonalised_precision_ar`.
    Sets with fewer than n items raise.
    """
    sizes = scored.groupby("set").size()
    if (sizes < n).any():
        raise ValueError(f"every target set needs at least n = {n} items")
    order = scored.sort_values(["set", "score", "item"], ascending=[True, False, True])
    top = order.groupby("set", sort=True).head(n)
    values = positive_counts.reindex(top["item"].to_numpy()).fillna(0).to_numpy(dtype=float)
    return values.reshape(-1, n)
