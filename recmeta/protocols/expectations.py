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

Where eqs. 3–4 are approximate, the exact counterparts are here too: ρ and its decomposition
(:func:`random_precision_terms`: eq. 4 leaves out the covariance between a user's relevant test
items and her target-set size), the per-item conditional form of eq. 3
(:func:`conditional_precision_ar`: p(rel | i ∈ T_u) with the item's own chance to be left out of
training), and the exact expectation of a fixed ranking over coin-flip splits
(:func:`expected_precision_fixed_ranking`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..arrays import first_rows, pair_codes, sorted_unique
from .ranks import rank_in_sets, rank_within, set_codes
from .set_metrics import target_metrics

__all__ = [
    "conditional_precision_ar",
    "expected_precision_fixed_ranking",
    "harmonic_target_size",
    "lemma_bounds",
    "lemma_ranks",
    "nonpersonalised_precision_ar",
    "nonpersonalised_precision_uniform",
    "random_precision",
    "random_precision_1r",
    "random_precision_an",
    "random_precision_ar",
    "random_precision_terms",
    "relevance_density",
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
    from :func:`recmeta.protocols.targets.target_sets`.
    """
    _, code, grouped = set_codes(sets["set"].to_numpy(), sets["item"].to_numpy())
    if not grouped:  # sets in any order: pandas groups them
        g = sets.groupby("set")
        return float(g["relevant"].mean().groupby(g["stratum"].first()).mean().mean())
    # grouped by set (as target_sets makes them): ρ_T by counting, one pass
    size = np.bincount(code)
    rho = np.bincount(code, weights=sets["relevant"].to_numpy(dtype=float)) / size
    first = np.r_[0, np.cumsum(size)[:-1]]
    stratum = sets["stratum"].to_numpy()[first]
    return float(pd.Series(rho).groupby(stratum).mean().mean())


def _positive_sums(positive_counts: np.ndarray, n: int | None = None) -> np.ndarray:
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

    The formula takes p(i ∈ T_u) = |T_u| / |𝒞| for every item. Under AN an item is in T_u when it
    is not in R_train(u), which for a popular item is much less likely than |T_u|/|𝒞|; given that
    it is shown, it is then more likely relevant (:func:`conditional_precision_ar`), so on dense
    data the formula underestimates a popularity list's precision. The tests check it within
    Monte-Carlo error on sparse data, and :func:`expected_precision_fixed_ranking` gives the
    exact expectation.
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


def lemma_bounds(
    scored: pd.DataFrame, n: int, per_set: pd.DataFrame | None = None
) -> tuple[float, float, float]:
    """(lower, 1R-P@n, upper) of the lemma (Bellogín et al. 2017, eq. 2) for one scored 1R run.

        |𝒰| P_s@n / |PR_test|  ≤  1R-P_s@n  ≤  Σ_u m_u P_s^u@m_u(T_u) / (n |PR_test|),

    m_u = n + |PR_test(u)| − 1 and T_u = ∪_r T_u^r. ``scored`` is a 1R target-set frame with a
    ``score`` column; a user's score of an item must not depend on the target set (a recommender
    scores (user, item) pairs). The inequalities are guaranteed when every user's sets share the
    same non-relevant items (``Protocol(shared_nonrelevant=True)``); otherwise they hold in
    expectation only. Ranks within T_u break ties by item id, as in
    :func:`recmeta.protocols.target_metrics`. ``per_set`` may pass the frame's
    :func:`target_metrics` at ``n`` when it is known already.
    """
    if per_set is None:
        per_set = target_metrics(scored, n)
    n_pos = int(scored["relevant"].sum())
    if n_pos != len(per_set):
        raise ValueError("lemma_bounds needs a 1R frame (exactly one relevant item per target set)")
    value = float(per_set["P"].mean())
    first, one_score = _first_pairs(scored)
    if not one_score:
        raise ValueError("a (user, item) pair has different scores in different target sets")
    u = scored["user"].to_numpy()[first]
    uniq, inv = np.unique(u, return_inverse=True)
    score = scored["score"].to_numpy(dtype=float)[first]
    order = np.lexsort((scored["item"].to_numpy()[first], -score, inv))
    inv_s = inv[order]
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first)) - np.searchsorted(inv_s, inv_s, side="left")
    rel = scored["relevant"].to_numpy(dtype=bool)[first]
    npos_u = np.bincount(inv, weights=rel, minlength=len(uniq))
    m_u = n + npos_u - 1
    lower = np.sum(rel & (rank < n)) / (n * n_pos)
    upper = np.sum(rel & (rank < m_u[inv])) / (n * n_pos)
    return float(lower), value, float(upper)


def _first_pairs(scored: pd.DataFrame) -> tuple[np.ndarray, bool]:
    """Rows of the first occurrence of each (user, item) pair, in frame order (as
    ``drop_duplicates(["user", "item"])`` keeps), and whether every pair has one score."""
    u, i = scored["user"].to_numpy(), scored["item"].to_numpy()
    coded = pair_codes([u], [i])
    if coded is not None:
        (key,), _ = coded
    else:
        _, uc = np.unique(u, return_inverse=True)
        items, ic = np.unique(i, return_inverse=True)
        key = uc.astype(np.int64) * len(items) + ic
    first = first_rows(key)
    score = scored["score"].to_numpy(dtype=float)
    lead = score[first]
    same = (score == lead) | (np.isnan(score) & np.isnan(lead))
    return np.flatnonzero(first == np.arange(len(first))), bool(same.all())


def top_positive_counts(scored: pd.DataFrame, n: int, positive_counts: pd.Series) -> np.ndarray:
    """|PR(i_k^{u,s})| for k = 1..n: the positive-rating counts of each set's top n items.

    ``scored`` is a scored target-set frame (ranked by score, ties by item id, as
    :func:`recmeta.protocols.target_metrics`); ``positive_counts`` maps item → |PR(i)| (items absent
    count 0). Returns a sets × n matrix, the input of :func:`nonpersonalised_precision_ar`.
    Sets with fewer than n items raise.
    """
    sizes = scored.groupby("set").size()
    if (sizes < n).any():
        raise ValueError(f"every target set needs at least n = {n} items")
    rank = rank_in_sets(scored, depth=n)
    top = np.flatnonzero(rank < n)
    s = scored["set"].to_numpy()[top]
    top = top[np.lexsort((rank[top], s))]  # sets in increasing order, ranks 0..n-1 within each
    values = positive_counts.reindex(scored["item"].to_numpy()[top]).fillna(0).to_numpy(dtype=float)
    return values.reshape(-1, n)


def lemma_ranks(scored: pd.DataFrame) -> pd.DataFrame:
    """The ranks the proof of the lemma (Bellogín et al. 2017, eq. 2) compares, one row per 1R set.

    For the relevant item i of each 1R set T_u^r: ``own`` = τ(i, T_u^r), its 1-based rank in its
    own set; ``union`` = τ(i, T_u), its rank in T_u = ∪_r T_u^r; ``relevant`` = |PR_test(u)|.
    Ranks break ties by item id, as :func:`recmeta.protocols.target_metrics`. With a shared
    non-relevant sample, T_u^r = T_u minus the user's other relevant items, so

        own ≤ union ≤ own + |PR_test(u)| − 1,

    which is what the lemma needs. The paper's proof prints the second step the other way round,
    τ(i, T_u^r) ≥ τ(i, T_u) + |PR_test(u)| − 1, which holds only when |PR_test(u)| = 1.
    """
    for c in ("set", "user", "item", "relevant", "score"):
        if c not in scored.columns:
            raise ValueError(
                f"scored frame lacks column {c!r}; build it with target_sets + attach_scores"
            )
    own = rank_within(scored, scored["set"].to_numpy()) + 1
    rel = scored["relevant"].to_numpy(dtype=bool)
    if (
        np.bincount(scored["set"].to_numpy()[rel]).max(initial=0) > 1
        or rel.sum() != scored["set"].nunique()
    ):
        raise ValueError("lemma_ranks needs a 1R frame (exactly one relevant item per target set)")
    union = scored.drop_duplicates(["user", "item"])
    if len(scored.drop_duplicates(["user", "item", "score"])) != len(union):
        raise ValueError("a (user, item) pair has different scores in different target sets")
    union_rank = pd.Series(
        rank_within(union, union["user"].to_numpy()) + 1,
        index=pd.MultiIndex.from_frame(union[["user", "item"]]),
    )
    r = scored.loc[rel, ["set", "user", "item"]].assign(own=own[rel])
    r["union"] = union_rank.reindex(pd.MultiIndex.from_frame(r[["user", "item"]])).to_numpy()
    r["relevant"] = r.groupby("user")["set"].transform("size").to_numpy()
    return r.sort_values("set").reset_index(drop=True)


def random_precision_terms(
    sets: pd.DataFrame,
    sigma: float | None = None,
    n_positive: float | None = None,
    n_users: int | None = None,
) -> pd.Series:
    """ρ of AR target sets split into the parts eq. 4 keeps and the part it leaves out.

    With a_u = |T_u ∩ PR_test(u)| and b_u = 1/|T_u| over the users with a target set,
    ρ = avg_u a_u b_u = avg(a)·avg(b) + cov(a, b) (population covariance). Eq. 4 writes
    σ|PR|/(t|𝒰|) = (σ|PR|/|𝒰|)·avg(b): it replaces avg(a) = |PR_test|/|𝒰| by its expectation
    σ|PR|/|𝒰| (``split`` = the difference times avg(b), zero on average over splits) and drops
    ``cov``. Users with many relevant test items have rated many items, so their target sets are
    smaller (training items leave T_u): cov > 0 and eq. 4 underestimates ρ.
    Returns ``rho``, ``mean_relevant``, ``inv_t``, ``product``, ``cov`` and, given ``sigma``,
    ``n_positive`` and ``n_users``, also ``eq4`` and ``split`` (so ρ = eq4 + split + cov).
    """
    g = sets.groupby("set")
    a = g["relevant"].sum().to_numpy(dtype=float)
    b = 1.0 / g.size().to_numpy(dtype=float)
    if sets["stratum"].nunique() > 1:  # (a set with two strata is a frame with two)
        raise ValueError("random_precision_terms needs sets without percentiles (one stratum)")
    out = {"rho": float(np.mean(a * b)), "mean_relevant": float(a.mean()), "inv_t": float(b.mean())}
    out["product"] = out["mean_relevant"] * out["inv_t"]
    out["cov"] = out["rho"] - out["product"]
    if sigma is not None and n_positive is not None and n_users is not None:
        out["eq4"] = random_precision_ar(sigma, n_positive, n_users, 1.0 / out["inv_t"])
        out["split"] = out["product"] - out["eq4"]
    return pd.Series(out)


def conditional_precision_ar(
    positive_counts: np.ndarray, rating_counts: np.ndarray, sigma: float, n_users: int
) -> float:
    """Eq. 3 with the conditional probability of relevance taken item by item.

    In AR with AN candidates an item i is in T_u exactly when it is not in R_train(u). Over
    coin-flip splits, E|{u : i ∈ T_u}| = |𝒰| − (1 − σ)|R(i)| and E|PR_test(i)| = σ|PR(i)|, so
    among the users who are shown i the share for whom it is relevant is

        p(rel | i ∈ T_u) ≈ σ|PR(i)| / (|𝒰| − (1 − σ)|R(i)|),

    where eq. 3 divides σ|PR(i)|/|𝒰| by the same |T_u|/|𝒞| for every item. Then
    E[P_s@n] ≈ (1/n) Σ_{k≤n} avg_u p(rel | i_k^{u,s} ∈ T_u).
    ``positive_counts`` and ``rating_counts`` hold |PR(i)| and |R(i)| of the items at ranks
    1..n of each set (sets × n, :func:`top_positive_counts`). The form still treats the users
    who see an item as exchangeable; :func:`expected_precision_fixed_ranking` does not.
    """
    pc = _positive_sums(positive_counts)
    rc = _positive_sums(rating_counts)
    if pc.shape != rc.shape:
        raise ValueError(f"positive and rating counts differ in shape: {pc.shape} and {rc.shape}")
    if not 0 < sigma <= 1:
        raise ValueError(f"sigma must lie in (0, 1], got {sigma}")
    shown = n_users - (1 - sigma) * rc
    if (shown <= 0).any():
        raise ValueError("an item has more ratings than there are users; check n_users")
    return float((sigma * pc / shown).mean(axis=0).sum() / pc.shape[1])


def expected_precision_fixed_ranking(
    ratings: pd.DataFrame,
    ranking: np.ndarray | pd.Index,
    sigma: float,
    n: int,
    threshold: float,
    *,
    n_users: int | None = None,
) -> float:
    """Exact E[P@n] of one fixed item ranking under AR with AN candidates, over coin-flip splits.

    Every user's target set is the ranked items minus her training items (AN; the candidates are
    ``ranking``). Each rating goes to test with probability σ, independently. An item i that u
    likes, at 0-based position k_i of the ranking with b_i of u's rated items before it, is
    among her first n exactly when it is in test (probability σ) and fewer than n of the k_i
    items before it stay in her set: k_i − b_i unrated ones always stay, and each rated one
    stays when it went to test. So

        E[P_u@n] = (1/n) Σ_{i ∈ PR(u)} σ · P[Bin(b_i, σ) ≤ n − 1 − (k_i − b_i)],

    and E[P@n] averages it over ``n_users`` users (default: every user of ``ratings``; users
    without a liked item count as zero, as the paper's average over 𝒰). This is the expectation
    eq. 3 approximates (Bellogín et al. 2017, §4.1) without the step p(i ∈ T_u) = |T_u|/|𝒞|;
    the ranking must not depend on the split (rank by |R(i)| over all data, for instance).
    """
    if not 0 < sigma <= 1:
        raise ValueError(f"sigma must lie in (0, 1], got {sigma}")
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    rank = pd.Index(np.asarray(ranking))
    if rank.has_duplicates:
        raise ValueError("ranking lists an item twice")
    users_all = ratings["user"].nunique() if n_users is None else int(n_users)
    pos = rank.get_indexer(ratings["item"].to_numpy())
    keep = pos >= 0
    u = ratings["user"].to_numpy()[keep]
    pos = pos[keep].astype(np.int64)
    liked = ratings["rating"].to_numpy(dtype=float)[keep] >= threshold
    _, uc = np.unique(u, return_inverse=True)
    order = np.lexsort((pos, uc))
    uc_s, pos_s, liked_s = uc[order], pos[order], liked[order]
    before = np.arange(len(order)) - np.searchsorted(uc_s, uc_s, side="left")  # b_i
    room = n - 1 - (pos_s - before)
    p = np.where(room >= 0, stats.binom.cdf(np.maximum(room, 0), before, sigma), 0.0)
    hits = sigma * p[liked_s].sum()
    return float(hits / (n * users_all))


def random_precision_an(
    train: pd.DataFrame,
    test: pd.DataFrame,
    threshold: float,
    candidates: str = "TI",
    *,
    items: np.ndarray | None = None,
    n_users: int | None = None,
) -> float:
    """ρ of the AR-AN target sets of a split, without building them (Bellogín et al. 2017, §4.2).

    Under AN, T_u = 𝒞 ∖ R_train(u) (the relevant items are in 𝒞 and not in training), so
    ρ = avg_u |PR_test(u)| / (|𝒞| − |R_train(u) ∩ 𝒞|) over the users of train ∪ test (or
    ``n_users`` of them, users without a rating counting as zero; ``Protocol(ar_users="all")``).
    𝒞 is every item (``"AI"``: ``items``, default those of train ∪ test) or the items with a
    test rating (``"TI"``). Equals :func:`random_precision` of
    ``target_sets(train, test, Protocol(candidates, "AR", "AN", ar_users="all"))``.
    """
    if candidates not in ("AI", "TI"):
        raise ValueError(f"candidates must be 'AI' or 'TI', got {candidates!r}")
    universe = (
        sorted_unique(np.concatenate([train["item"].to_numpy(), test["item"].to_numpy()]))
        if items is None
        else sorted_unique(items)
    )
    cand = sorted_unique(test["item"].to_numpy()) if candidates == "TI" else universe
    users = sorted_unique(np.concatenate([train["user"].to_numpy(), test["user"].to_numpy()]))
    in_c = np.isin(train["item"].to_numpy(), cand)
    train_in = pd.Series(train["user"].to_numpy()[in_c]).value_counts().reindex(users, fill_value=0)
    rel = (
        test.loc[test["rating"].to_numpy(dtype=float) >= threshold, "user"]
        .value_counts()
        .reindex(users, fill_value=0)
    )
    size = len(cand) - train_in.to_numpy()
    total = float((rel.to_numpy() / size).sum())
    return total / (len(users) if n_users is None else int(n_users))
