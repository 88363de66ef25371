"""Target sets: which items a recommender ranks for each user (Bellogín et al. 2017, §3, Table 3).

Bellogín, Castells & Cantador (2017, §3, Table 3) describe the ways of turning a rating split
into ranking tasks along three axes:

* candidate items 𝒞 — **AI**: all items ℐ; **TI**: the items with at least one test rating,
  𝒞 = ∪_u R_test(u);
* relevant items — **AR**: one target set per user, T_u ⊇ PR_test(u); **1R**: one target set
  T_u^r per positive test rating, holding that single relevant item;
* non-relevant items — **AN**: N_u = 𝒞 ∖ PR_test(u) ∖ R_train(u); **NN**: a uniform random
  sample of fixed size |N_u| from that pool.

and a popularity-neutralising variant (§6.1): **P1R**, 1R computed within ``m`` popularity
percentiles and averaged over them. The "−10 % head" protocol removes the most popular items
from the test data and from 𝒞 (``exclude_items``).

A relevant item is a test rating with ``rating >= threshold``. A target-set frame (the output of
:func:`target_sets`) has one row per (target set, item) with the columns

``set`` (int64, the target set id), ``user``, ``item``, ``relevant`` (bool),
``rating`` (the user's test rating of the item, NaN if the item is unjudged), ``stratum``
(popularity percentile for P1R, else 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ..arrays import has_duplicate_pairs, has_duplicates, positions, sorted_unique
from ..data.popularity import percentile_strata
from .smallest import row_smallest

__all__ = ["Candidates", "NonRelevant", "Protocol", "Relevant", "check_ratings", "target_sets"]

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
                    "percentiles (P1R) apply to 1R only (Bellogín et al. 2017, §6.1); "
                    "set relevant='1R'"
                )
            if self.percentiles < 1:
                raise ValueError(f"percentiles must be >= 1, got {self.percentiles}")

    @property
    def name(self) -> str:
        """Short label, e.g. ``TI-NN 1R`` or ``TI-NN P1R(m=10)``."""
        rel = self.relevant if self.percentiles is None else f"P1R(m={self.percentiles})"
        non = self.nonrelevant if self.nonrelevant == "AN" else f"NN({self.n_nonrelevant})"
        return f"{self.candidates}-{non} {rel}"


# ----------------------------------------------------------------------------- validation


def check_ratings(df: pd.DataFrame, what: str) -> None:
    """Raise unless ``df`` is a tidy ratings frame: columns user, item, rating, no gaps, one
    rating per (user, item) pair; ``what`` names the frame in the message."""
    for c in ("user", "item", "rating"):
        if c not in df.columns:
            raise ValueError(
                f"{what} lacks column {c!r}; pass a tidy ratings frame (user, item, rating)."
            )
    if df[["user", "item", "rating"]].isna().any().any():
        raise ValueError(
            f"{what} has missing user, item or rating values; drop or fill them first."
        )
    if has_duplicate_pairs(df["user"], df["item"]):
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

    - ``train``, ``test``: disjoint tidy ratings frames;
    - ``protocol``: the :class:`Protocol`;
    - ``seed``: seeds the NN sampling (the only randomness);
    - ``items``: the item universe ℐ for AI; default: every item in train or test;
    - ``exclude_items``: items removed from the test data and from 𝒞 (the "−10 % head"
      protocol: pass the items of :func:`recmeta.data.popularity.head_items`); training data
      are left as they are;
    - ``popularity``: ratings that define the popularity percentiles of P1R; default: train
      and test together, i.e. the number of ratings of each item.

    Returns the target-set frame described in the module docstring. In AR there is one set per
    user with at least one test rating, or per user of train ∪ test with ``ar_users="all"`` (sets
    without a relevant item count as zero precision); in 1R one set per positive test rating,
    in (user, item) order. NN raises if a user's pool 𝒞 ∖ PR_test(u) ∖ R_train(u) holds fewer
    than |N_u| items.
    """
    check_ratings(train, "train")
    check_ratings(test, "test")
    if len(test) == 0:
        raise ValueError("test is empty: there is nothing to evaluate")
    both_user = np.concatenate([train["user"].to_numpy(), test["user"].to_numpy()])
    both_item = np.concatenate([train["item"].to_numpy(), test["item"].to_numpy()])
    users, rated = sorted_unique(both_user), sorted_unique(both_item)
    pair_u, pair_i = positions(users, both_user), positions(rated, both_item)
    if has_duplicates(pair_u.astype(np.int64) * len(rated) + pair_i):
        raise ValueError(
            "train and test share (user, item) pairs; a split must put each rating on one side"
        )

    universe = rated if items is None else sorted_unique(items)
    at = np.searchsorted(universe, rated).clip(0, max(len(universe) - 1, 0))
    missing = rated[(universe[at] != rated) if len(universe) else slice(None)]
    if len(missing):
        raise ValueError(
            f"{len(missing)} rated items are not in `items` (e.g. {missing[:5].tolist()}); add them"
        )
    if exclude_items is not None:
        exclude_items = np.asarray(exclude_items)
        universe = np.setdiff1d(universe, exclude_items)
        test = test.loc[~test["item"].isin(exclude_items)]
        if len(test) == 0:
            raise ValueError("exclude_items removes every test rating")
    n_items = len(universe)

    # codes: users over train ∪ test, items over the universe (train items outside it: code -1)
    tr_u = positions(users, train["user"].to_numpy())
    te_u = positions(users, test["user"].to_numpy())
    te_i = positions(universe, test["item"].to_numpy())
    tr_i = positions(universe, train["item"].to_numpy())
    tr_in = tr_i >= 0
    te_rating = test["rating"].to_numpy(dtype=float)
    te_rel = te_rating >= protocol.threshold

    # candidate items 𝒞 (as codes into universe) and their stratum
    cand = np.arange(n_items) if protocol.candidates == "AI" else sorted_unique(te_i)
    if protocol.percentiles is not None:
        pop_src = (
            pd.DataFrame({"user": both_user, "item": both_item})
            if popularity is None
            else popularity
        )
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
    excl = sorted_unique(
        np.concatenate(
            [_keys(tr_u[tr_in], tr_i[tr_in], n_items), _keys(te_u[te_rel], te_i[te_rel], n_items)]
        )
    )

    # sampling units: AR -> users with a test rating; 1R -> positive test ratings
    if protocol.relevant == "AR":
        unit_user = sorted_unique(te_u) if protocol.ar_users == "test" else np.arange(len(users))
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
                f"no test rating reaches the threshold {protocol.threshold}; "
                "1R needs relevant items"
            )

    rng = np.random.default_rng(seed)
    share = protocol.relevant == "1R" and protocol.shared_nonrelevant
    if share:
        # draw once per (user, group) and copy to the user's sets in that group
        pair = unit_user * n_groups + unit_group
        uniq_pair, inverse = np.unique(pair, return_inverse=True)
        d_unit, d_item = _nonrelevant(
            uniq_pair // n_groups,
            uniq_pair % n_groups,
            cand,
            stratum_of,
            excl,
            n_items,
            protocol,
            rng,
            users,
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
    # by set, then item: one stable sort of the pair code (the AN rows come sorted already)
    order = np.argsort(set_id.astype(np.int64) * n_items + item_code, kind="stable")
    set_id, item_code, relevant = set_id[order], item_code[order], relevant[order]
    user_code = unit_user[set_id]

    # the test rating of each (user, item), NaN when unjudged
    te_keys = _keys(te_u, te_i, n_items)
    te_order = np.argsort(te_keys)
    pos = positions(te_keys[te_order], _keys(user_code, item_code, n_items))
    rating = np.where(pos >= 0, te_rating[te_order][pos], np.nan)

    # every column is a fresh array: the frame takes them as they are (stacking the integer
    # columns into one block would copy 32 bytes a row, millions of rows in AN)
    return pd.DataFrame(
        {
            "set": set_id.astype(np.int64, copy=False),
            "user": users[user_code],
            "item": universe[item_code],
            "relevant": relevant,
            "rating": rating,
            "stratum": unit_group[set_id].astype(np.int64, copy=False),
        },
        copy=False,
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
    for g in sorted_unique(unit_group):
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
                # Protocol.__post_init__ has checked that NN carries n_nonrelevant >= 1
                assert protocol.n_nonrelevant is not None
                n = int(protocol.n_nonrelevant)
                short = np.flatnonzero(pool_size < n)
                if len(short) and protocol.short_pool == "raise":
                    j = short[0]
                    raise ValueError(
                        f"NN needs {n} non-relevant candidates but the pool of user "
                        f"{user_ids[uu[j]]} (stratum {g}) holds only {pool_size[j]} items; "
                        "lower n_nonrelevant, use AN or AI candidates, or pass "
                        "short_pool='shrink' to take the whole pool"
                    )
                # the n smallest keys of each pool (the whole pool when it is short)
                r, c = row_smallest(rng.random((len(us), width)), blocked, n)
            out_unit.append(us[r])
            out_item.append(pool_items[c])
    if not out_unit:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_unit), np.concatenate(out_item)
