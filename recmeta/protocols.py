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
are joined back (:func:`attach_scores`), each set is evaluated by the metric engine as one topic
(:func:`target_metrics`), and the per-set values are averaged as the protocol says
(:func:`protocol_mean`): over users in AR, over positive test ratings in 1R (eq. 1), and over
percentiles in P1R. :func:`trials` runs systems over several splits, per split or per target set
(``per_set=True``, averaged back by :func:`summarise`); a :class:`TrialCache` shares target sets
and per-set results between runs of the same design.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
    "target_metrics",
    "one_r_an_metrics",
    "protocol_mean",
    "evaluate_systems",
    "engine_metrics",
    "Scorer",
    "popularity_scorer",
    "liked_scorer",
    "mean_rating_scorer",
    "oracle_scorer",
    "random_scorer",
    "roster_scorer",
    "score_all",
    "remove_test_ratings",
    "trials",
    "summarise",
    "split_sets",
    "TrialCache",
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


def _strictly_sorted(u: np.ndarray, i: np.ndarray) -> bool:
    """Whether the (u, i) pairs are in strictly increasing lexicographic order (so all distinct)."""
    if len(u) < 2:
        return True
    try:
        return bool(np.all((u[1:] > u[:-1]) | ((u[1:] == u[:-1]) & (i[1:] > i[:-1]))))
    except TypeError:  # ids that do not compare
        return False


def candidate_pairs(sets: pd.DataFrame) -> pd.DataFrame:
    """The distinct (user, item) pairs a recommender must score for these target sets, sorted."""
    u, i = sets["user"].to_numpy(), sets["item"].to_numpy()
    if _strictly_sorted(u, i):  # AR sets come out of target_sets this way: nothing to do
        return pd.DataFrame({"user": u, "item": i})
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
    same pair consistently in every target set (as :mod:`recmeta.recommenders.components.random`).
    """
    from .recommenders.components.random import pair_uniform

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
    su, si = sets["user"].to_numpy(), sets["item"].to_numpy()
    cu, ci = scores["user"].to_numpy(), scores["item"].to_numpy()
    unique = _strictly_sorted(cu, ci)
    if not unique and scores.duplicated(["user", "item"]).any():
        raise ValueError("scores have duplicate (user, item) pairs; keep one score per pair")
    if unique and len(su) == len(cu) and np.array_equal(su, cu) and np.array_equal(si, ci):
        out = sets.assign(score=scores["score"].to_numpy(dtype=float))  # same pairs in the same order
    else:
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


def target_metrics(
    scored: pd.DataFrame, n: int, *, gain: Literal["binary", "rating"] = "binary",
    rank: np.ndarray | None = None,
) -> pd.DataFrame:
    """P@n and nDCG@n of every target set of a scored target-set frame, by the metric engine.

    Each target set is one topic of :mod:`recmeta.metrics` and its items, ranked, one list:
    items by decreasing score, ties by increasing item id — the engine's ``ties="item_id"``
    (:mod:`recmeta.metrics._options`), computed here by :func:`_rank_in_sets`. The set's
    relevant items are its judgments, with grade 1 (``gain="binary"``) or their test rating
    (``"rating"``: the paper uses the rating values above the threshold as grades, §6.3), so
    ``P@n`` divides by n even if the set is smaller (trec_eval's P) and ``nDCG@n`` takes binary
    or linear gains with the ideal from the set's relevant items; in 1R the grade cancels. A set
    without a relevant item scores 0 on both: the protocol's mean counts it (eq. 4).
    ``rank`` may pass the rows' 0-based ranks within their sets when they are known already.
    Returns one row per set: ``set``, ``user``, ``stratum``, ``P``, ``nDCG``.
    """
    from .metrics import Judgments, Runs, score_matrices

    for c in ("set", "user", "item", "relevant", "score", "stratum"):
        if c not in scored.columns:
            raise ValueError(f"scored frame lacks column {c!r}; build it with target_sets + attach_scores")
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    if gain not in ("binary", "rating"):
        raise ValueError(f"gain must be 'binary' or 'rating', got {gain!r}")
    s = scored["set"].to_numpy()
    if np.isnan(scored["score"].to_numpy(dtype=float)).any():
        raise ValueError("scores contain NaN; use attach_scores(..., missing='last') for unscored items")
    item = scored["item"].to_numpy()
    rel = scored["relevant"].to_numpy(dtype=bool)
    sets, inverse, grouped = _set_codes(s, item)
    if grouped:
        first_row = np.r_[0, np.flatnonzero(np.diff(inverse)) + 1] if len(s) else np.zeros(0, np.int64)
    else:
        _, first_row = np.unique(inverse, return_index=True)
    if rank is None:
        rank = _rank_in_sets(scored, depth=n)
    elif len(rank) != len(scored):
        raise ValueError("rank must hold one rank per row of the scored frame")
    # topics = target sets; judgments = their relevant items; one run = the first n of each set
    top = np.flatnonzero(rank < n)
    judged = np.flatnonzero(rel)
    ids = pd.Index(np.unique(np.concatenate([item[judged], item[top]])))
    grade = np.ones(judged.size) if gain == "binary" else scored["rating"].to_numpy(float)[judged]
    threshold = float(grade.min()) if grade.size else 1.0
    j = Judgments.from_frame(pd.DataFrame({"user": inverse[judged], "item": item[judged], "rating": grade}),
                             threshold, users=pd.RangeIndex(len(sets)), items=ids)
    orders = np.full((1, len(sets), n), -1, dtype=np.int64)
    orders[0, inverse[top], rank[top]] = ids.get_indexer(item[top])
    names = [f"P@{n}", f"nDCG(gain={'binary' if gain == 'binary' else 'linear'})@{n}"]
    values = score_matrices(j, Runs.from_orders(orders, j), names)
    return pd.DataFrame(
        {
            "set": sets,
            "user": scored["user"].to_numpy()[first_row],
            "stratum": scored["stratum"].to_numpy()[first_row],
            "P": np.nan_to_num(values[names[0]][0]),  # sets without a relevant item: 0
            "nDCG": np.nan_to_num(values[names[1]][0]),
        }
    )


def _cutoff(metric: str) -> int | None:
    """The cut-off of a metric name of the engine (``"R@10"`` → 10), ``None`` without one."""
    from .metrics import parse_metric

    return parse_metric(metric).k


def _set_codes(s: np.ndarray, item: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(set ids, code of each row's set, whether rows are grouped by set and sorted by item within)."""
    same = s[1:] == s[:-1]
    grouped = bool(np.all((s[1:] > s[:-1]) | (same & (item[1:] >= item[:-1])))) if len(s) > 1 else True
    if grouped:
        start = np.r_[True, ~same] if len(s) else np.zeros(0, bool)
        return s[start], np.cumsum(start) - 1, True
    sets, inverse = np.unique(s, return_inverse=True)
    return sets, inverse, False


def _rank_in_sets(scored: pd.DataFrame, depth: int | None = None) -> np.ndarray:
    """0-based rank of every row within its set: score descending, ties by item id ascending —
    the metric engine's ``ties="item_id"`` order, computed without building runs.

    With ``depth`` only the ranks below ``depth`` are exact: the rows that cannot reach the first
    ``depth`` places of their set are found by a partition instead of a sort and get ``depth``.
    """
    s = scored["set"].to_numpy()
    item = scored["item"].to_numpy()
    score = scored["score"].to_numpy(dtype=float)
    _, inv, grouped = _set_codes(s, item)
    rows = np.arange(len(s))
    if depth is not None and grouped and len(s):
        counts = np.bincount(inv)
        width = int(counts.max())
        if width > depth and len(counts) * width <= 4 * len(s) + 4096:
            starts = np.r_[0, np.cumsum(counts)[:-1]]
            table = np.full((len(counts), width), -np.inf)
            table[inv, rows - starts[inv]] = score
            # the depth-th largest score of each set: every row that can rank above depth has at least it
            floor = np.partition(table, width - depth, axis=1)[:, width - depth]
            pick = np.flatnonzero(score >= floor[inv])
            rank = np.full(len(s), depth, dtype=np.int64)
            order = pick[np.lexsort((-score[pick], inv[pick]))]  # stable: item order among ties
            so = inv[order]
            rank[order] = np.arange(len(order)) - np.searchsorted(so, so, side="left")
            return rank
    if grouped:  # stable sorts keep the item order among equal scores
        by_score = np.argsort(-score, kind="stable")
        order = by_score[np.argsort(inv[by_score], kind="stable")]
    else:
        order = np.lexsort((item, -score, inv))
    so = inv[order]
    rank = np.empty(len(s), dtype=np.int64)
    rank[order] = rows - np.searchsorted(so, so, side="left")
    return rank


def one_r_an_metrics(scored_ar: pd.DataFrame, n: int) -> pd.DataFrame:
    """P@n and nDCG@n of the 1R-AN target sets, read off the scored AR-AN sets of the same split.

    Under AN every 1R set of a user holds one relevant item r and the same non-relevant items
    N_u = 𝒞 ∖ PR_test(u) ∖ R_train(u) — the non-relevant items of her AR-AN set T_u. So the rank
    of r in T_u^r is one plus the number of non-relevant items of T_u ranked above r (scores
    descending, ties by item id, as :func:`target_metrics`), and the 1R sets need not be built
    (Bellogín et al. 2017, Table 3). With a single relevant item, P@n = [rank ≤ n]/n and
    nDCG@n = [rank ≤ n]/log2(rank + 1), whatever the grade.
    ``scored_ar`` is an AR-AN target-set frame with scores (``Protocol(c, "AR", "AN")``).
    Returns one row per positive test rating in (user, item) order — the sets of
    ``Protocol(c, "1R", "AN")`` — with ``set``, ``user``, ``item``, ``size`` (|N_u| + 1),
    ``rank``, ``stratum``, ``P`` and ``nDCG``.
    """
    for c in ("set", "user", "item", "relevant", "score", "stratum"):
        if c not in scored_ar.columns:
            raise ValueError(f"scored frame lacks column {c!r}; build it with target_sets + attach_scores")
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    s = scored_ar["set"].to_numpy()
    item = scored_ar["item"].to_numpy()
    score = scored_ar["score"].to_numpy(dtype=float)
    rel = scored_ar["relevant"].to_numpy(dtype=bool)
    _, inv = np.unique(s, return_inverse=True)
    order = np.lexsort((item, -score, inv))
    inv_o, rel_o = inv[order], rel[order]
    start = np.searchsorted(inv_o, inv_o, side="left")
    rank_all = np.arange(len(order)) - start  # 0-based rank in T_u
    cum_rel = np.cumsum(rel_o) - rel_o  # relevant items strictly above, counted from the start
    rel_above = cum_rel - (np.cumsum(rel_o) - rel_o)[start]
    nonrel_above = rank_all - rel_above
    size = np.bincount(inv, minlength=inv.max() + 1 if len(inv) else 0) - np.bincount(inv, weights=rel).astype(np.int64)
    pick = order[rel_o]
    rank = nonrel_above[rel_o] + 1
    hit = rank <= n
    out = pd.DataFrame({
        "user": scored_ar["user"].to_numpy()[pick],
        "item": item[pick],
        "size": size[inv[pick]] + 1,
        "rank": rank,
        "stratum": scored_ar["stratum"].to_numpy()[pick],
        "P": hit / n,
        "nDCG": np.where(hit, 1.0 / np.log2(rank + 1.0), 0.0),
    }).sort_values(["user", "item"], kind="stable").reset_index(drop=True)
    out.insert(0, "set", np.arange(len(out), dtype=np.int64))
    return out


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
    the columns ``system``, ``P@n``, ``nDCG@n`` (see :func:`target_metrics`, :func:`protocol_mean`).
    """
    rows = []
    for name, scores in systems.items():
        per_set = target_metrics(attach_scores(sets, scores, missing=missing), n, gain=gain)
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
    judged: Literal["all", "relevant"] = "all",
    per_set: bool = False,
    depth: int | Literal["judged"] | None = None,
    ranks: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Any metric of :mod:`recmeta.metrics` on target sets, each set taken as one query.

    With ``judged="all"`` the judged items of a set (test rating present, relevant or not) become
    its judgments, so bpref and infAP see judged non-relevant items apart from unjudged ones;
    ``judged="relevant"`` keeps only the relevant items as judgments, so graded gains come from
    relevant items alone (the paper's grades, §6.3: "the rating values above the relevance
    threshold"). ``popularity`` (|PR(i)| by item) feeds stratified recall. Each system ranks the
    whole set, in the order of :func:`target_metrics` (score descending, ties by item id), handed
    to the engine as ranks; ``depth`` keeps only the first ``depth`` items of each list, which
    changes nothing for metrics cut at ``depth`` or less and saves time on large sets;
    ``depth="judged"`` keeps each list down to its last judged item, or to the largest cut-off
    of ``metrics`` if that is deeper — exact for metrics that read judged items only (P, R,
    nDCG, AP, RR, bpref, infAP, stratified recall; not AUC). The
    engine averages over sets with a relevant item — in 1R every set, which is eq. 1; in AR the
    users with a positive test rating. ``ranks`` may pass each system's row ranks when known.
    Returns a frame system, metric, value; with ``per_set`` one row per evaluated set:
    system, set, user, stratum, metric, value.
    """
    from .metrics import Judgments, Runs, evaluate

    if judged not in ("all", "relevant"):
        raise ValueError(f"judged must be 'all' or 'relevant', got {judged!r}")
    set_ids, set_code, _ = _set_codes(sets["set"].to_numpy(), sets["item"].to_numpy())
    ids = pd.Index(set_ids, name="user")
    keep = sets["relevant"].to_numpy(dtype=bool) if judged == "relevant" else sets["rating"].notna().to_numpy()
    judged_rows = sets.loc[keep, ["set", "item", "rating"]]
    # the judged items index the judgments; the runs add the other items they rank
    j = Judgments.from_frame(judged_rows, threshold, user_col="set", users=ids,
                             items=pd.Index(np.unique(judged_rows["item"].to_numpy())))
    if popularity is not None:
        j = j.with_popularity(popularity)
    if depth == "judged":
        cuts = [_cutoff(m) for m in metrics]
        floor = max((k for k in cuts if k is not None), default=1)
        is_judged = keep
    elif depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, 'judged' or None, got {depth}")
    frames = []
    for name, scores in systems.items():
        scored = attach_scores(sets, scores, missing=missing)
        rank = ranks[name] if ranks is not None and name in ranks else \
            _rank_in_sets(scored, depth=depth if isinstance(depth, int) else None)
        if depth == "judged":
            last = np.zeros(set_code.max() + 1 if len(set_code) else 0, dtype=np.int64)
            np.maximum.at(last, set_code[is_judged], rank[is_judged] + 1)
            keep = rank < np.maximum(last, floor)[set_code]
        else:
            keep = slice(None) if depth is None else rank < depth
        frames.append(pd.DataFrame({"user": scored["set"].to_numpy()[keep], "item": scored["item"].to_numpy()[keep],
                                    "rank": rank[keep], "system": name}))
    runs = Runs.from_frame(pd.concat(frames, ignore_index=True), j)
    if not per_set:
        return evaluate(j, runs, metrics)
    out = evaluate(j, runs, metrics, per_user=True).rename(columns={"user": "set"})
    first = sets.drop_duplicates("set").set_index("set")[["user", "stratum"]]
    out = out.join(first, on="set")
    return out[["system", "set", "user", "stratum", "metric", "value"]]


# ----------------------------------------------------------------------------- experiments

Scorer = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]
"""A system under a protocol: ``(train, sets) -> (user, item, score)`` for the candidate pairs."""


def popularity_scorer(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
    """The popularity recommender: score = |R_train(i)|, the item's number of training ratings."""
    return item_scores(sets, item_counts(train, items=sets["item"].unique()).astype(float))


def liked_scorer(threshold: float) -> Scorer:
    """A non-personalised system ranking items by |PR_train(i)|, their positive training ratings.

    Bellogín et al. (2017, §5.1) argue that popularity (|R_train(i)|) maximises eq. 3 among
    non-personalised rankings "as far as E[|PR_test(i)|] ∝ |R_train(i)|"; ranking by the positive
    ratings themselves is the competitor that tests that assumption. Ties: |R_train(i)|, then
    item id (through :func:`target_metrics`).
    """

    def score(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
        items = sets["item"].unique()
        liked = item_counts(train.loc[train["rating"] >= threshold], items=items).astype(float)
        rated = item_counts(train, items=items).astype(float)
        # |PR_train| first, |R_train| only to break ties (it is below 1 after scaling)
        return item_scores(sets, liked + rated.reindex(liked.index) / (rated.max() + 1.0))

    return score


def mean_rating_scorer(damping: float = 10.0) -> Scorer:
    """A non-personalised system ranking items by their damped mean training rating.

    score(i) = (Σ_{u ∈ R_train(i)} r_ui + k·μ) / (|R_train(i)| + k), with μ the global mean
    training rating and k = ``damping`` (a Bayesian average: an item with few ratings stays
    near μ). Items without training ratings score μ.
    """
    if damping < 0:
        raise ValueError(f"damping must be >= 0, got {damping}")

    def score(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
        mu = float(train["rating"].mean())
        g = train.groupby("item")["rating"].agg(["sum", "count"])
        mean = (g["sum"] + damping * mu) / (g["count"] + damping)
        items = sets["item"].unique()
        return item_scores(sets, mean.reindex(items).fillna(mu))

    return score


def oracle_scorer(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
    """The best non-personalised ranking for these target sets; it reads the test data.

    score(i) = the number of target sets in which i is relevant (|PR_test(i)| in AR). Ranking
    every user's set by it maximises the sum over users of the hits in the top n among rankings
    that ignore the user — up to the items each user's set leaves out — so it is a ceiling for
    non-personalised systems, not a recommender (Bellogín et al. 2017, §5.1).
    """
    rel = sets.loc[sets["relevant"], "item"].value_counts()
    items = sets["item"].unique()
    return item_scores(sets, rel.reindex(items, fill_value=0).astype(float))


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
    :func:`recmeta.recommenders.make`, which caches the run on disk (keyed by dataset, ``split`` label,
    seed, the system's configuration and a fingerprint of the training data), so every protocol
    built on the same split reuses one trained model and one cached run. Candidate pairs outside
    that grid (items or users without training data) and pairs the model cannot score come back
    as NaN; :func:`trials` ranks them last.
    """

    def score(train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None) -> pd.DataFrame:
        from . import recommenders
        from .recommenders import roster

        users = np.unique(train["user"].to_numpy())
        items = np.unique(train["item"].to_numpy())
        grid = pd.DataFrame({"user": np.repeat(users, len(items)), "item": np.tile(items, len(users))})
        run = recommenders.make(
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
    per_set: bool = False,
    metrics: Sequence[str] = (),
    cache: TrialCache | None = None,
) -> pd.DataFrame:
    """Run systems under one protocol over several random splits (Bellogín et al. 2017, §3–§6).

    For each seed: split the ratings (coin flip with test probability σ, or the uniform-test split
    of §6.2 with σ and ε), drop a share ``removed`` of the test ratings, optionally remove the
    ``head`` share of most popular items from test and candidates ("−10 % head"), build the target
    sets, score them with every system and average P@n and nDCG@n as the protocol says.

    One row per (seed, system) with ``P``, ``nDCG``, and per split: ``sets`` (number of target
    sets), ``candidates`` (distinct items in them), ``nonrelevant popularity`` (mean |R(i)| over
    the ratings of the non-relevant target items), ``t`` (harmonic mean target-set size), ``rho`` (the exact expected precision of a
    random ranking, :func:`recmeta.expectations.random_precision`), ``formula`` (eq. 4 σ'δ with
    σ' = σ(1 − removed) in AR over 𝒰 = all users, eq. 5 1/t in 1R; NaN for P1R and the uniform
    split), and with ``shared_nonrelevant`` 1R the lemma's ``lower`` and ``upper`` bounds (eq. 2).

    With ``per_set`` the rows are the target sets instead — one row per (seed, system, set) with
    ``set``, ``user``, ``stratum``, that set's ``P`` and ``nDCG``, and the split's columns
    repeated — from which :func:`summarise` gives back the per-split rows and a bootstrap over
    users or sets can be drawn. ``metrics`` (names of the metric engine, per-set rows only) adds
    one column per metric from :func:`engine_metrics` on the same sets and scores, NaN for the
    sets the engine leaves out (no relevant item); lists are cut at the largest cut-off when
    every metric has one. A :class:`TrialCache` (per-set rows only) reuses what earlier calls
    on the same ratings computed.
    """
    from . import expectations as ex

    if metrics and not per_set:
        raise ValueError("metrics are added to the per-set rows: pass per_set=True")
    if cache is not None and not per_set:
        raise ValueError("the cache keeps per-set rows: pass per_set=True")
    cuts = [_cutoff(m) for m in metrics]
    depth = max(cuts) if cuts and all(k is not None for k in cuts) else None
    rows, frames = [], []
    for seed in seeds:
        design = (protocol, split, float(sigma), float(epsilon), float(removed), float(head), int(seed))
        result_key = {name: (design, name, int(n), gain, missing, tuple(metrics)) for name in scorers}
        todo = {name: sc for name, sc in scorers.items() if cache is None or result_key[name] not in cache.results}
        if todo:
            train, _, sets, common = split_sets(ratings, protocol, seed, sigma=sigma, split=split, epsilon=epsilon,
                                                removed=removed, head=head, cache=cache)
            for name, scores in score_all(todo, train, sets, seed).items():
                scored = attach_scores(sets, scores, missing=missing)
                rank = _rank_in_sets(scored, depth=None if metrics and depth is None else max(n, depth or n))
                per = target_metrics(scored, n, gain=gain, rank=rank)
                row = {**common, "system": name, "P": protocol_mean(per, "P"), "nDCG": protocol_mean(per, "nDCG")}
                if protocol.relevant == "1R" and protocol.shared_nonrelevant and protocol.percentiles is None:
                    row["lower"], _, row["upper"] = ex.lemma_bounds(scored, n)
                if not per_set:
                    rows.append(row)
                    continue
                split_cols = {k: v for k, v in row.items() if k not in ("P", "nDCG")}
                per = per.assign(**split_cols)
                if metrics:
                    eng = engine_metrics(sets, {name: scores}, list(metrics), protocol.threshold, missing=missing,
                                         per_set=True, depth=depth, ranks={name: rank})
                    wide = eng.pivot_table(index="set", columns="metric", values="value")
                    per = per.join(wide.reindex(columns=list(metrics)), on="set")
                if cache is not None:
                    cache.results[result_key[name]] = per
                frames.append(per)
        if per_set and cache is not None:
            frames.extend(cache.results[result_key[name]] for name in scorers if name not in todo)
    if per_set:
        out = pd.concat(frames, ignore_index=True)
        first = ["seed", "removed", "system", "set", "user", "stratum", "P", "nDCG"]
        out = out[first + [c for c in out.columns if c not in first]]
        order = {name: k for k, name in enumerate(scorers)}
        return out.sort_values(["seed", "system", "set"], key=lambda c: c.map(order) if c.name == "system" else c,
                               kind="stable").reset_index(drop=True)
    return pd.DataFrame(rows)


class TrialCache:
    """What :func:`trials` may reuse across calls on one ratings frame.

    ``results`` keeps every per-set frame by (design, split seed, system, cut-off, gain,
    metrics), so a design run twice (e.g. as part of two figures) is scored once; ``sets`` keeps
    the last ``keep_sets`` target-set frames with their split, so systems added later to a
    design reuse its sets. Use one cache per ratings frame: the keys do not identify the data.
    """

    def __init__(self, keep_sets: int = 2) -> None:
        self.keep_sets = keep_sets
        self.results: dict[tuple, pd.DataFrame] = {}
        self.sets: dict[tuple, tuple] = {}

    def remember(self, key: tuple, value: tuple) -> None:
        self.sets.pop(key, None)
        self.sets[key] = value
        while len(self.sets) > self.keep_sets:
            self.sets.pop(next(iter(self.sets)))


def split_sets(
    ratings: pd.DataFrame,
    protocol: Protocol,
    seed: int,
    *,
    sigma: float = 0.2,
    split: Literal["coin_flip", "uniform"] = "coin_flip",
    epsilon: float = 0.2,
    removed: float = 0.0,
    head: float = 0.0,
    cache: TrialCache | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """One split of :func:`trials` and its target sets: (train, test, sets, split columns).

    The split columns are ``seed``, ``removed``, ``sets``, ``candidates``, ``nonrelevant
    popularity``, ``t``, ``rho`` and ``formula`` (see :func:`trials`). With a ``cache`` the
    last few results are kept and reused.
    """
    from . import expectations as ex
    from .popularity import head_items
    from .splits import coin_flip

    key = (protocol, split, float(sigma), float(epsilon), float(removed), float(head), int(seed))
    if cache is not None and key in cache.sets:
        cache.remember(key, cache.sets[key])
        return cache.sets[key]
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
    sizes = np.bincount(sets["set"].to_numpy())
    sizes = sizes[sizes > 0]
    t = ex.harmonic_target_size(sizes)
    non = sets.loc[~sets["relevant"].to_numpy(dtype=bool), "item"].to_numpy()
    counts = ratings["item"].value_counts()
    non_pop = float(counts.reindex(non).mean()) if len(non) else np.nan
    formula = np.nan
    if split == "coin_flip" and protocol.percentiles is None and not head:
        if protocol.relevant == "1R":
            formula = ex.random_precision_1r(t)
        elif protocol.ar_users == "all":
            n_pos = int((ratings["rating"] >= protocol.threshold).sum())
            formula = ex.random_precision_ar(sigma * (1 - removed), n_pos, ratings["user"].nunique(), t)
    common = {"seed": seed, "removed": removed, "sets": len(sizes), "candidates": int(sets["item"].nunique()),
              "nonrelevant popularity": non_pop, "t": t, "rho": ex.random_precision(sets), "formula": formula}
    out = (train, test, sets, common)
    if cache is not None:
        cache.remember(key, out)
    return out


def summarise(per_set: pd.DataFrame, by: Iterable[str] = ()) -> pd.DataFrame:
    """Per-split rows from :func:`trials`'s per-set rows: P and nDCG averaged as the protocol says.

    Groups by ``seed``, ``system``, ``removed`` and the extra columns ``by`` (e.g. ``"design"``);
    ``P`` and ``nDCG`` are :func:`protocol_mean`s of each group, and the split's columns
    (``sets``, ``t``, ``rho``, ``formula``, ``lower``, ``upper``, ...) keep their value.
    """
    keys = [*by, "seed", "removed", "system"]
    missing = [k for k in keys if k not in per_set.columns]
    if missing:
        raise ValueError(f"per-set frame lacks {missing}; build it with trials(..., per_set=True)")
    strata = per_set.groupby([*keys, "stratum"], sort=False, dropna=False)[["P", "nDCG"]].mean()
    means = strata.groupby(level=list(range(len(keys))), sort=False, dropna=False).mean()
    skip = {"set", "user", "stratum", "P", "nDCG", *keys}
    extra = [c for c in per_set.columns if c not in skip]
    firsts = per_set.groupby(keys, sort=False, dropna=False)[extra].first() if extra else None
    out = means if firsts is None else means.join(firsts)
    return out.reset_index()
