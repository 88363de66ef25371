"""Target item sets: which items a recommender ranks for each user, and how the metric averages.

Bellogín, Castells & Cantador (2017, §3, Table 3) describe the ways of turning a rating split
into ranking tasks along three axes:

* candidate items 𝒞 — **AI**: all items ℐ; **TI**: the items with at least one test rating,
  𝒞 = ∪_u R_test(u);
* relevant items — **AR**: one target set per user, T_u ⊇ PR_test(u); **1R**: one target set
  T_u^r per positive test rating, holding that single relevant item;
* non-relevant items — **AN**: N_u = 𝒞 ∖ PR_test(u) ∖ R_train(u); **NN**: a uniform random
  sample of fixed size |N_u| from that pool.

and two popularity-neutralising variants (§6): **P1R**, 1R computed within ``m`` popularity
percentiles and averaged over them, and **UAR/U1R**, AR/1R on a split where every test item has
the same number η of test ratings (:func:`uniform_test_split`). The "−10 % head" protocol removes
the most popular items from the test data and from 𝒞 (``exclude_items``).

A relevant item is a test rating with ``rating >= threshold``. A target-set frame (the output of
:func:`target_sets`) has one row per (target set, item) with the columns

``set`` (int64, the target set id), ``user``, ``item``, ``relevant`` (bool),
``rating`` (the user's test rating of the item, NaN if the item is unjudged), ``stratum``
(popularity percentile for P1R, else 0).

A recommender scores every (user, item) pair of the frame (:func:`candidate_pairs`); the scores
are joined back (:func:`attach_scores`), ranked within each set (:func:`set_metrics`), and the
per-set values are averaged as the protocol says (:func:`protocol_mean`): over users in AR, over
positive test ratings in 1R (eq. 1), and over percentiles in P1R.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .popularity import item_counts, percentile_strata

__all__ = [
    "Protocol",
    "UniformSplit",
    "target_sets",
    "uniform_test_size",
    "uniform_test_split",
    "candidate_pairs",
    "item_scores",
    "random_scores",
    "attach_scores",
    "set_metrics",
    "protocol_mean",
    "evaluate_systems",
    "engine_metrics",
    "Scorer",
    "popularity_scorer",
    "random_scorer",
    "roster_scorer",
    "score_all",
    "remove_test_ratings",
    "trials",
]

Candidates = Literal["AI", "TI"]
Relevant = Literal["AR", "1R"]
NonRelevant = Literal["AN", "NN"]


@dataclass(frozen=True)
class Protocol:
    """One way of forming target sets (Bellogín et al. 2017, Table 3 and §6).

    ``n_nonrelevant`` is |N_u| for NN (so a 1R target set holds ``n_nonrelevant + 1`` items).
    ``percentiles`` = m turns 1R into P1R. ``shared_nonrelevant`` samples N_u once per user and
    reuses it in all of the user's 1R sets — the assumption of the paper's lemma (eq. 2); by
    default every 1R set draws its own sample. ``ar_users`` chooses who gets an AR target set:
    ``"test"`` the users with at least one test rating (as trec_eval evaluates only judged
    queries), ``"all"`` every user of train or test — the average over 𝒰 of the paper's
    eqs. 3–4, where users without a test rating count as zero. ``short_pool`` says what NN does
    when a pool holds fewer than |N_u| items (a heavy rater, or a popular percentile in P1R):
    ``"raise"`` (default) or ``"shrink"``, which takes the whole pool so that set is smaller.
    """

    candidates: Candidates = "TI"
    relevant: Relevant = "1R"
    nonrelevant: NonRelevant = "NN"
    n_nonrelevant: int | None = 99
    threshold: float = 5.0
    percentiles: int | None = None
    shared_nonrelevant: bool = False
    ar_users: Literal["test", "all"] = "test"
    short_pool: Literal["raise", "shrink"] = "raise"

    def __post_init__(self) -> None:
        if self.candidates not in ("AI", "TI"):
            raise ValueError(f"candidates must be 'AI' or 'TI', got {self.candidates!r}")
        if self.relevant not in ("AR", "1R"):
            raise ValueError(f"relevant must be 'AR' or '1R', got {self.relevant!r}")
        if self.nonrelevant not in ("AN", "NN"):
            raise ValueError(f"nonrelevant must be 'AN' or 'NN', got {self.nonrelevant!r}")
        if self.nonrelevant == "NN" and (self.n_nonrelevant is None or self.n_nonrelevant < 1):
            raise ValueError("NN needs n_nonrelevant >= 1 (the size of the sampled set N_u)")
        if self.short_pool not in ("raise", "shrink"):
            raise ValueError(f"short_pool must be 'raise' or 'shrink', got {self.short_pool!r}")
        if self.ar_users not in ("test", "all"):
            raise ValueError(f"ar_users must be 'test' or 'all', got {self.ar_users!r}")
        if self.percentiles is not None:
            if self.relevant != "1R":
                raise ValueError(
                    "percentiles (P1R) apply to 1R only (Bellogín et al. 2017, §6.1); set relevant='1R'"
                )
            if self.percentiles < 1:
                raise ValueError(f"percentiles must be >= 1, got {self.percentiles}")

    @property
    def name(self) -> str:
        """Short label, e.g. ``TI-NN 1R`` or ``TI-NN P1R(m=10)``."""
        rel = self.relevant if self.percentiles is None else f"P1R(m={self.percentiles})"
        non = self.nonrelevant if self.nonrelevant == "AN" else f"NN({self.n_nonrelevant})"
        return f"{self.candidates}-{non} {rel}"


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


# ----------------------------------------------------------------------------- validation


def _check_ratings(df: pd.DataFrame, what: str) -> None:
    for c in ("user", "item", "rating"):
        if c not in df.columns:
            raise ValueError(f"{what} lacks column {c!r}; pass a tidy ratings frame (user, item, rating).")
    if df[["user", "item", "rating"]].isna().any().any():
        raise ValueError(f"{what} has missing user, item or rating values; drop or fill them first.")
    if df.duplicated(["user", "item"]).any():
        raise ValueError(
            f"{what} has duplicate (user, item) pairs; keep one rating per pair "
            "(e.g. the latest) before building target sets."
        )


def _keys(u: np.ndarray, i: np.ndarray, n_items: int) -> np.ndarray:
    return u.astype(np.int64) * n_items + i.astype(np.int64)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenate arange(s, s + l) for every (s, l), vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + offsets


# ----------------------------------------------------------------------------- target sets


def target_sets(
    train: pd.DataFrame,
    test: pd.DataFrame,
    protocol: Protocol,
    *,
    seed: int = 0,
    items: np.ndarray | None = None,
    exclude_items: np.ndarray | None = None,
    popularity: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Build the target sets of ``protocol`` for a train/test split (Bellogín et al. 2017, §3.1).

    Parameters
    ----------
    train, test:
        Disjoint tidy ratings frames.
    protocol:
        The :class:`Protocol`.
    seed:
        Seeds the NN sampling (the only randomness).
    items:
        The item universe ℐ for AI; default: every item in train or test.
    exclude_items:
        Items removed from the test data and from 𝒞 (the "−10 % head" protocol: pass
        :func:`recmeta.popularity.head_items`). Training data are left as they are.
    popularity:
        Ratings that define the popularity percentiles of P1R; default: train and test together,
        i.e. |R(i)| over all ratings.

    Returns the target-set frame described in the module docstring. In AR there is one set per
    user with at least one test rating, or per user of train ∪ test with ``ar_users="all"`` (sets
    without a relevant item count as zero precision); in 1R one set per positive test rating, in (user, item)
    order. NN raises if a user's pool 𝒞 ∖ PR_test(u) ∖ R_train(u) holds fewer than |N_u| items.
    """
    _check_ratings(train, "train")
    _check_ratings(test, "test")
    if len(test) == 0:
        raise ValueError("test is empty: there is nothing to evaluate")
    both = pd.concat([train[["user", "item"]], test[["user", "item"]]], ignore_index=True)
    if both.duplicated().any():
        raise ValueError("train and test share (user, item) pairs; a split must put each rating on one side")

    universe = np.unique(both["item"].to_numpy()) if items is None else np.unique(np.asarray(items))
    missing = np.setdiff1d(both["item"].to_numpy(), universe)
    if len(missing):
        raise ValueError(f"{len(missing)} rated items are not in `items` (e.g. {missing[:5].tolist()}); add them")
    if exclude_items is not None:
        exclude_items = np.asarray(exclude_items)
        universe = np.setdiff1d(universe, exclude_items)
        test = test.loc[~test["item"].isin(exclude_items)]
        if len(test) == 0:
            raise ValueError("exclude_items removes every test rating")
    n_items = len(universe)

    # codes: users over train ∪ test, items over the universe (train items outside it: code -1)
    users = np.unique(both["user"].to_numpy())
    tr_u = np.searchsorted(users, train["user"].to_numpy())
    te_u = np.searchsorted(users, test["user"].to_numpy())
    te_i = np.searchsorted(universe, test["item"].to_numpy())
    tr_item = train["item"].to_numpy()
    tr_i = np.searchsorted(universe, tr_item)
    tr_in = tr_i < n_items
    tr_in[tr_in] = universe[tr_i[tr_in]] == tr_item[tr_in]
    te_rating = test["rating"].to_numpy(dtype=float)
    te_rel = te_rating >= protocol.threshold

    # candidate items 𝒞 (as codes into universe) and their stratum
    if protocol.candidates == "AI":
        cand = np.arange(n_items)
    else:
        cand = np.unique(te_i)
    if protocol.percentiles is not None:
        pop_src = both if popularity is None else popularity
        pop_src = pop_src.loc[pop_src["item"].isin(universe)]
        strata_s = percentile_strata(pop_src, protocol.percentiles, items=universe)
        stratum_of = strata_s.reindex(universe).to_numpy()
        if np.isnan(stratum_of.astype(float)).any():
            raise ValueError("popularity ratings do not cover every item; pass popularity=None")
        stratum_of = stratum_of.astype(np.int64)
        n_groups = protocol.percentiles
    else:
        stratum_of = np.zeros(n_items, dtype=np.int64)
        n_groups = 1

    # excluded pairs per user: R_train(u) ∪ PR_test(u), as sorted keys
    excl = np.unique(
        np.concatenate([_keys(tr_u[tr_in], tr_i[tr_in], n_items), _keys(te_u[te_rel], te_i[te_rel], n_items)])
    )

    # sampling units: AR -> users with a test rating; 1R -> positive test ratings
    if protocol.relevant == "AR":
        unit_user = np.unique(te_u) if protocol.ar_users == "test" else np.arange(len(users))
        unit_group = np.zeros(len(unit_user), dtype=np.int64)
        rel_unit = np.searchsorted(unit_user, te_u[te_rel])
        rel_item = te_i[te_rel]
    else:
        order = np.lexsort((te_i[te_rel], te_u[te_rel]))
        unit_user = te_u[te_rel][order]
        rel_item = te_i[te_rel][order]
        rel_unit = np.arange(len(unit_user))
        unit_group = stratum_of[rel_item]
        if len(unit_user) == 0:
            raise ValueError(
                f"no test rating reaches the threshold {protocol.threshold}; 1R needs relevant items"
            )

    rng = np.random.default_rng(seed)
    share = protocol.relevant == "1R" and protocol.shared_nonrelevant
    if share:
        # draw once per (user, group) and copy to the user's sets in that group
        pair = unit_user * n_groups + unit_group
        uniq_pair, inverse = np.unique(pair, return_inverse=True)
        d_unit, d_item = _nonrelevant(
            uniq_pair // n_groups, uniq_pair % n_groups, cand, stratum_of, excl, n_items, protocol, rng, users
        )
        # expand: every set gets the draws of its (user, group)
        per = np.bincount(d_unit, minlength=len(uniq_pair))
        starts = np.concatenate([[0], np.cumsum(per)[:-1]])
        sorted_idx = np.argsort(d_unit, kind="stable")
        take = _ranges(starts[inverse], per[inverse])
        non_unit = np.repeat(np.arange(len(unit_user)), per[inverse])
        non_item = d_item[sorted_idx][take]
    else:
        non_unit, non_item = _nonrelevant(
            unit_user, unit_group, cand, stratum_of, excl, n_items, protocol, rng, users
        )

    set_id = np.concatenate([rel_unit, non_unit])
    item_code = np.concatenate([rel_item, non_item])
    relevant = np.concatenate([np.ones(len(rel_unit), bool), np.zeros(len(non_unit), bool)])
    order = np.lexsort((item_code, set_id))
    set_id, item_code, relevant = set_id[order], item_code[order], relevant[order]
    user_code = unit_user[set_id]

    # the test rating of each (user, item), NaN when unjudged
    te_keys = _keys(te_u, te_i, n_items)
    te_order = np.argsort(te_keys)
    k = _keys(user_code, item_code, n_items)
    pos = np.searchsorted(te_keys[te_order], k).clip(0, max(len(te_keys) - 1, 0))
    hit = te_keys[te_order][pos] == k
    rating = np.where(hit, te_rating[te_order][pos], np.nan)

    return pd.DataFrame(
        {
            "set": set_id.astype(np.int64),
            "user": users[user_code],
            "item": universe[item_code],
            "relevant": relevant,
            "rating": rating,
            "stratum": unit_group[set_id].astype(np.int64),
        }
    )


def _nonrelevant(
    unit_user: np.ndarray,
    unit_group: np.ndarray,
    cand: np.ndarray,
    stratum_of: np.ndarray,
    excl: np.ndarray,
    n_items: int,
    protocol: Protocol,
    rng: np.random.Generator,
    user_ids: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Non-relevant items of every unit: all of its pool (AN) or a uniform sample (NN).

    The pool of a unit is {i ∈ 𝒞 : stratum(i) = group} minus the user's excluded items. NN draws
    by random keys: each pool item gets a U(0, 1) key and the |N_u| smallest are kept, which is a
    uniform sample without replacement. Units are processed group by group, in chunks.
    """
    out_unit, out_item = [], []
    n_units = len(unit_user)
    # excluded items per user, CSR by user code
    ex_user = excl // max(n_items, 1)
    ex_item = excl % max(n_items, 1)
    n_users = int(unit_user.max()) + 1 if n_units else 0
    ex_user_in = ex_user < n_users
    indptr = np.concatenate([[0], np.cumsum(np.bincount(ex_user[ex_user_in], minlength=n_users))])
    ex_item = ex_item[ex_user_in]
    for g in np.unique(unit_group):
        units = np.flatnonzero(unit_group == g)
        pool_items = cand[stratum_of[cand] == g]
        col = np.full(n_items, -1, dtype=np.int64)
        col[pool_items] = np.arange(len(pool_items))
        width = len(pool_items)
        chunk = max(1, int(4e6 // max(width, 1)))
        for lo in range(0, len(units), chunk):
            us = units[lo : lo + chunk]
            uu = unit_user[us]
            lengths = indptr[uu + 1] - indptr[uu]
            rows = np.repeat(np.arange(len(us)), lengths)
            cols = col[ex_item[_ranges(indptr[uu], lengths)]]
            keep = cols >= 0
            blocked = np.zeros((len(us), width), dtype=bool)
            blocked[rows[keep], cols[keep]] = True
            pool_size = width - blocked.sum(axis=1)
            if protocol.nonrelevant == "AN":
                r, c = np.nonzero(~blocked)
            else:
                n = int(protocol.n_nonrelevant)
                short = np.flatnonzero(pool_size < n)
                if len(short) and protocol.short_pool == "raise":
                    j = short[0]
                    raise ValueError(
                        f"NN needs {n} non-relevant candidates but the pool of user {user_ids[uu[j]]} "
                        f"(stratum {g}) holds only {pool_size[j]} items; lower n_nonrelevant, use AN "
                        "or AI candidates, or pass short_pool='shrink' to take the whole pool"
                    )
                keys = rng.random((len(us), width))
                keys[blocked] = 2.0
                if n < width:
                    cols = np.argpartition(keys, n - 1, axis=1)[:, :n]
                else:
                    cols = np.tile(np.arange(width), (len(us), 1))
                take = np.take_along_axis(keys, cols, axis=1) < 2.0  # drops blocked items of short pools
                r = np.repeat(np.arange(len(us)), cols.shape[1])[take.ravel()]
                c = cols.ravel()[take.ravel()]
            out_unit.append(us[r])
            out_item.append(pool_items[c])
    if not out_unit:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_unit), np.concatenate(out_item)


# ----------------------------------------------------------------------------- uniform split


def uniform_test_size(counts: np.ndarray | pd.Series, sigma: float, epsilon: float) -> tuple[int, int]:
    """|T| and η of the uniform-test split (Bellogín et al. 2017, §6.2).

    With items sorted by decreasing |R(i_k)|, |T| = ζ = max{k : k·η_k ≥ σ|R|} where
    η_k = ⌊(1 − ε)|R(i_k)|⌋, and η = η_ζ. Every item of T then keeps at least a share ε of its
    ratings for training, and the test share |T|·η/|R| is at least σ (the paper writes the
    condition with the real-valued (1 − ε)|R(i_k)|; we take the floor so η is a whole number of
    ratings and the inequality holds exactly).
    """
    if not 0 < sigma < 1 or not 0 <= epsilon < 1:
        raise ValueError(f"need 0 < sigma < 1 and 0 <= epsilon < 1, got sigma={sigma}, epsilon={epsilon}")
    c = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    eta_k = np.floor((1 - epsilon) * c + 1e-9).astype(np.int64)
    k = np.arange(1, len(c) + 1)
    ok = np.flatnonzero((k * eta_k >= sigma * c.sum()) & (eta_k >= 1))
    if len(ok) == 0:
        raise ValueError(
            f"no uniform-test split reaches sigma={sigma} with epsilon={epsilon}: lower sigma or epsilon"
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
    _check_ratings(ratings, "ratings")
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


# ----------------------------------------------------------------------------- scoring


def candidate_pairs(sets: pd.DataFrame) -> pd.DataFrame:
    """The distinct (user, item) pairs a recommender must score for these target sets."""
    return sets[["user", "item"]].drop_duplicates().sort_values(["user", "item"]).reset_index(drop=True)


def item_scores(sets: pd.DataFrame, scores: pd.Series) -> pd.DataFrame:
    """(user, item, score) for a non-personalised system: every user gets ``scores[item]``.

    ``scores`` is indexed by item (e.g. :func:`recmeta.popularity.item_counts` of the training
    data for the popularity recommender). Candidate items missing from it raise.
    """
    pairs = candidate_pairs(sets)
    values = scores.reindex(pairs["item"].to_numpy()).to_numpy(dtype=float)
    if np.isnan(values).any():
        missing = pairs["item"].to_numpy()[np.isnan(values)]
        raise ValueError(
            f"{len(np.unique(missing))} candidate items have no score (e.g. {missing[:3].tolist()}); "
            "give every candidate a score (count unseen items as 0 for popularity)"
        )
    return pairs.assign(score=values)


def random_scores(sets: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """(user, item, score) of the random recommender: a seeded hash of (seed, user, item).

    The score of a pair does not depend on the other candidates, so one random system ranks the
    same pair consistently in every target set (as :mod:`recmeta.components.random`).
    """
    from .components.random import pair_uniform

    pairs = candidate_pairs(sets)
    return pairs.assign(score=pair_uniform(seed, pairs["user"].to_numpy(), pairs["item"].to_numpy()))


def attach_scores(sets: pd.DataFrame, scores: pd.DataFrame, *, missing: Literal["raise", "last"] = "raise") -> pd.DataFrame:
    """Join a recommender's ``scores`` (user, item, score) onto the target-set frame.

    Pairs the recommender did not score raise by default; ``missing="last"`` gives them score
    −inf, i.e. they rank after every scored item (a recommender that cannot score an item does not
    recommend it). Duplicate (user, item) scores raise.
    """
    for c in ("user", "item", "score"):
        if c not in scores.columns:
            raise ValueError(f"scores lack column {c!r}; expected a frame (user, item, score)")
    if scores.duplicated(["user", "item"]).any():
        raise ValueError("scores have duplicate (user, item) pairs; keep one score per pair")
    out = sets.merge(scores[["user", "item", "score"]], on=["user", "item"], how="left")
    nan = out["score"].isna()
    if nan.any():
        if missing == "raise":
            raise ValueError(
                f"{int(nan.sum())} candidate pairs have no score (e.g. user {out.loc[nan, 'user'].iloc[0]}, "
                f"item {out.loc[nan, 'item'].iloc[0]}); score them or pass missing='last'"
            )
        out.loc[nan, "score"] = -np.inf
    return out


def set_metrics(
    scored: pd.DataFrame, n: int, *, gain: Literal["binary", "rating"] = "binary"
) -> pd.DataFrame:
    """P@n and nDCG@n of every target set from a scored target-set frame.

    Items are ranked by decreasing score; ties are broken by increasing item id (deterministic).
    P@n = |top_n ∩ relevant| / n (trec_eval's P: the divisor is n even if the set is smaller).
    nDCG@n = Σ_{k≤n} g_k / log2(k + 1) divided by the same sum over the set's relevant items
    sorted by gain (ideal ranking from the judgments); a set with no relevant item scores 0.
    ``gain="binary"`` uses g = 1 for relevant items, ``"rating"`` the test rating (the paper uses
    the rating values above the threshold as grades, §6.3). In 1R the grade cancels.
    Returns one row per set: ``set``, ``user``, ``stratum``, ``P``, ``nDCG``.
    """
    for c in ("set", "user", "item", "relevant", "score", "stratum"):
        if c not in scored.columns:
            raise ValueError(f"scored frame lacks column {c!r}; build it with target_sets + attach_scores")
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    s = scored["set"].to_numpy()
    score = scored["score"].to_numpy(dtype=float)
    if np.isnan(score).any():
        raise ValueError("scores contain NaN; use attach_scores(..., missing='last') for unscored items")
    rel = scored["relevant"].to_numpy(dtype=bool)
    if gain == "binary":
        g = rel.astype(float)
    elif gain == "rating":
        g = np.where(rel, scored["rating"].to_numpy(dtype=float), 0.0)
    else:
        raise ValueError(f"gain must be 'binary' or 'rating', got {gain!r}")
    sets, first_row, inverse = np.unique(s, return_index=True, return_inverse=True)

    def rank_within(order: np.ndarray) -> np.ndarray:
        so = inverse[order]
        start = np.searchsorted(so, so, side="left")
        r = np.empty(len(order), dtype=np.int64)
        r[order] = np.arange(len(order)) - start
        return r

    rank = rank_within(np.lexsort((scored["item"].to_numpy(), -score, inverse)))
    top = rank < n
    disc = 1.0 / np.log2(rank + 2.0)
    hits = np.bincount(inverse, weights=(rel & top).astype(float), minlength=len(sets))
    dcg = np.bincount(inverse, weights=np.where(top, g * disc, 0.0), minlength=len(sets))
    irank = rank_within(np.lexsort((-g, inverse)))
    idisc = 1.0 / np.log2(irank + 2.0)
    idcg = np.bincount(inverse, weights=np.where(irank < n, g * idisc, 0.0), minlength=len(sets))
    ndcg = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)
    return pd.DataFrame(
        {
            "set": sets,
            "user": scored["user"].to_numpy()[first_row],
            "stratum": scored["stratum"].to_numpy()[first_row],
            "P": hits / n,
            "nDCG": ndcg,
        }
    )


def protocol_mean(per_set: pd.DataFrame, metric: str = "P") -> float:
    """Average per-set values as the protocol prescribes.

    Mean over target sets within each stratum, then mean over strata. With one stratum this is the
    mean over users in AR and Bellogín et al.'s eq. 1 in 1R:
    1R-P@n = (1/|PR_test|) Σ_u Σ_r P_u@n(T_u^r); with m percentiles (P1R) it is the mean of the m
    per-percentile 1R values (§6.1).
    """
    if metric not in per_set.columns:
        raise ValueError(f"no column {metric!r} in the per-set frame (have {list(per_set.columns)})")
    return float(per_set.groupby("stratum")[metric].mean().mean())


def evaluate_systems(
    sets: pd.DataFrame,
    systems: dict[str, pd.DataFrame],
    n: int = 10,
    *,
    gain: Literal["binary", "rating"] = "binary",
    missing: Literal["raise", "last"] = "raise",
) -> pd.DataFrame:
    """P@n and nDCG@n of several systems on one set of target sets, averaged by the protocol.

    ``systems`` maps a name to its (user, item, score) frame. Returns one row per system with
    the columns ``system``, ``P@n``, ``nDCG@n`` (see :func:`set_metrics`, :func:`protocol_mean`).
    """
    rows = []
    for name, scores in systems.items():
        per_set = set_metrics(attach_scores(sets, scores, missing=missing), n, gain=gain)
        rows.append({"system": name, f"P@{n}": protocol_mean(per_set, "P"), f"nDCG@{n}": protocol_mean(per_set, "nDCG")})
    return pd.DataFrame(rows)


def engine_metrics(
    sets: pd.DataFrame,
    systems: dict[str, pd.DataFrame],
    metrics: list[str],
    threshold: float,
    *,
    popularity: pd.Series | None = None,
    missing: Literal["raise", "last"] = "last",
) -> pd.DataFrame:
    """Any metric of :mod:`recmeta.metrics` on target sets, each set taken as one query.

    Judged items of a set (test rating present, relevant or not) become its judgments, so bpref
    and infAP see judged non-relevant items apart from unjudged ones; ``popularity`` (|PR(i)| by
    item) feeds stratified recall. Each system ranks the whole set. The engine averages over sets
    with a relevant item — in 1R every set, which is eq. 1; in AR the users with a positive test
    rating. Ties follow the engine's rule (trec_eval's), not :func:`set_metrics`'s.
    Returns a frame system, metric, value.
    """
    from .metrics import Judgments, Runs, evaluate

    ids = pd.Index(np.unique(sets["set"].to_numpy()), name="user")
    judged = sets.loc[sets["rating"].notna(), ["set", "item", "rating"]]
    j = Judgments.from_frame(judged, threshold, user_col="set", users=ids, items=pd.Index(np.unique(sets["item"])))
    if popularity is not None:
        j = j.with_popularity(popularity)
    frames = []
    for name, scores in systems.items():
        scored = attach_scores(sets, scores, missing=missing)
        scored["score"] = scored["score"].replace(-np.inf, np.finfo(float).min)
        frames.append(scored[["set", "item", "score"]].rename(columns={"set": "user"}).assign(system=name))
    runs = Runs.from_frame(pd.concat(frames, ignore_index=True), j)
    return evaluate(j, runs, metrics)


# ----------------------------------------------------------------------------- experiments

Scorer = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]
"""A system under a protocol: ``(train, sets) -> (user, item, score)`` for the candidate pairs."""


def popularity_scorer(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
    """The popularity recommender: score = |R_train(i)|, the item's number of training ratings."""
    return item_scores(sets, item_counts(train, items=sets["item"].unique()).astype(float))


def random_scorer(seed: int, *, per_split: bool = True) -> Scorer:
    """The random recommender (see :func:`random_scores`).

    With ``per_split`` (default) :func:`trials` draws a fresh random system for every split, so a
    Monte-Carlo average over splits also averages over random rankings; the pair scores within a
    split stay consistent across target sets. Without it the hash seed is ``seed`` everywhere.
    """

    def score(train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None) -> pd.DataFrame:
        mixed = seed if split_seed is None else seed * 1_000_003 + split_seed
        return random_scores(sets, mixed)

    score.per_split = per_split  # type: ignore[attr-defined]
    return score


def roster_scorer(name: str, *, dataset: str, split: str = "protocols", root=None) -> Scorer:
    """A system of :mod:`recmeta.roster` as a :data:`Scorer`, trained on each split's training data.

    The system scores every (training user, training item) pair once per split, through
    :func:`recmeta.runs.make`, which caches the run on disk (keyed by dataset, ``split`` label,
    seed, the system's configuration and a fingerprint of the training data), so every protocol
    built on the same split reuses one trained model and one cached run. Candidate pairs outside
    that grid (items or users without training data) and pairs the model cannot score come back
    as NaN; :func:`trials` ranks them last.
    """

    def score(train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None) -> pd.DataFrame:
        from . import roster, runs

        users = np.unique(train["user"].to_numpy())
        items = np.unique(train["item"].to_numpy())
        grid = pd.DataFrame({"user": np.repeat(users, len(items)), "item": np.tile(items, len(users))})
        run = runs.make(
            [roster.get(name)], train, dataset=dataset, split=split, seed=split_seed or 0, pairs=grid,
            root=root, progress=False,
        )
        pairs = candidate_pairs(sets)
        return pairs.merge(run[["user", "item", "score"]], on=["user", "item"], how="left")

    score.per_split = True  # type: ignore[attr-defined]
    return score


def score_all(
    scorers: dict[str, Scorer], train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None
) -> dict[str, pd.DataFrame]:
    """Run every scorer on one split's target sets; per-split scorers get ``split_seed``."""
    out = {}
    for name, scorer in scorers.items():
        if getattr(scorer, "per_split", False):
            out[name] = scorer(train, sets, split_seed=split_seed)
        else:
            out[name] = scorer(train, sets)
    return out


def remove_test_ratings(test: pd.DataFrame, fraction: float, *, seed: int = 0) -> pd.DataFrame:
    """Drop round(fraction·|test|) test ratings chosen at random (test sparsity, §4.2, Fig. 4)."""
    if not 0 <= fraction < 1:
        raise ValueError(f"fraction must lie in [0, 1), got {fraction}")
    k = int(round(fraction * len(test)))
    drop = np.random.default_rng(seed).choice(len(test), k, replace=False)
    keep = np.ones(len(test), dtype=bool)
    keep[drop] = False
    return test.loc[keep].reset_index(drop=True)


def trials(
    ratings: pd.DataFrame,
    protocol: Protocol,
    scorers: dict[str, Scorer],
    *,
    seeds: Iterable[int] = (0,),
    sigma: float = 0.2,
    removed: float = 0.0,
    n: int = 10,
    split: Literal["coin_flip", "uniform"] = "coin_flip",
    epsilon: float = 0.2,
    head: float = 0.0,
    gain: Literal["binary", "rating"] = "binary",
    missing: Literal["raise", "last"] = "last",
) -> pd.DataFrame:
    """Run systems under one protocol over several random splits (Bellogín et al. 2017, §3–§6).

    For each seed: split the ratings (coin flip with test probability σ, or the uniform-test split
    of §6.2 with σ and ε), drop a share ``removed`` of the test ratings, optionally remove the
    ``head`` share of most popular items from test and candidates ("−10 % head"), build the target
    sets, score them with every system and average P@n and nDCG@n as the protocol says.

    One row per (seed, system) with ``P``, ``nDCG``, and per split: ``sets`` (number of target
    sets), ``t`` (harmonic mean target-set size), ``rho`` (the exact expected precision of a
    random ranking, :func:`recmeta.expectations.random_precision`), ``formula`` (eq. 4 σ'δ with
    σ' = σ(1 − removed) in AR over 𝒰 = all users, eq. 5 1/t in 1R; NaN for P1R and the uniform
    split), and with ``shared_nonrelevant`` 1R the lemma's ``lower`` and ``upper`` bounds (eq. 2).
    """
    from . import expectations as ex
    from .popularity import head_items
    from .splits import coin_flip

    rows = []
    for seed in seeds:
        if split == "coin_flip":
            sp = coin_flip(ratings, sigma, seed=seed)
            train, test = sp.train, sp.test
        elif split == "uniform":
            us = uniform_test_split(ratings, sigma, epsilon, seed=seed)
            train, test = us.train, us.test
        else:
            raise ValueError(f"split must be 'coin_flip' or 'uniform', got {split!r}")
        if removed:
            test = remove_test_ratings(test, removed, seed=seed)
        exclude = head_items(ratings, head) if head else None
        sets = target_sets(train, test, protocol, seed=seed, items=np.unique(ratings["item"]), exclude_items=exclude)
        sizes = sets.groupby("set").size()
        t = ex.harmonic_target_size(sizes)
        formula = np.nan
        if split == "coin_flip" and protocol.percentiles is None and not head:
            if protocol.relevant == "1R":
                formula = ex.random_precision_1r(t)
            elif protocol.ar_users == "all":
                n_pos = int((ratings["rating"] >= protocol.threshold).sum())
                formula = ex.random_precision_ar(sigma * (1 - removed), n_pos, ratings["user"].nunique(), t)
        common = {"seed": seed, "removed": removed, "sets": len(sizes), "t": t, "rho": ex.random_precision(sets), "formula": formula}
        for name, scores in score_all(scorers, train, sets, seed).items():
            scored = attach_scores(sets, scores, missing=missing)
            per_set = set_metrics(scored, n, gain=gain)
            row = {**common, "system": name, "P": protocol_mean(per_set, "P"), "nDCG": protocol_mean(per_set, "nDCG")}
            if protocol.relevant == "1R" and protocol.shared_nonrelevant and protocol.percentiles is None:
                row["lower"], _, row["upper"] = ex.lemma_bounds(scored, n)
            rows.append(row)
    return pd.DataFrame(rows)
