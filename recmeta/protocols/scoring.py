"""A recommender's scores on target sets: the pairs to score, non-personalised and random
scores, and the join back onto the target-set frame."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

import numpy as np
import pandas as pd

from ..arrays import (
    has_duplicate_pairs,
    pair_codes,
    pairs_strictly_increasing,
    positions,
    sorted_unique,
)
from ..recommenders.components.random import pair_uniform

__all__ = ["attach_scores", "candidate_pairs", "item_scores", "random_scores", "shared_pairs"]

#: (sets, its candidate pairs, the pair of each of its rows or None for ids that are not
#: numbers) inside :func:`shared_pairs`
_SHARED: ContextVar[tuple[pd.DataFrame, pd.DataFrame, np.ndarray | None] | None] = ContextVar(
    "recmeta_shared_pairs", default=None
)


def _numeric(column: pd.Series) -> bool:
    """A column of plain numpy integers or floats (no extension dtype, no NaN for floats)."""
    if not isinstance(column.dtype, np.dtype):
        return False
    kind = column.dtype.kind
    return kind in ("i", "u") or (kind == "f" and not column.isna().any())


def candidate_pairs(sets: pd.DataFrame) -> pd.DataFrame:
    """The distinct (user, item) pairs a recommender must score for these target sets, sorted."""
    shared = _SHARED.get()
    if shared is not None and sets is shared[0]:
        return shared[1].copy(deep=False)
    return _pairs_and_rows(sets, rows=False)[0]


def _pairs_and_rows(
    sets: pd.DataFrame, *, rows: bool = True
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """:func:`candidate_pairs` and, if asked and the ids are numeric, the index of each row's
    pair among them."""
    u, i = sets["user"].to_numpy(), sets["item"].to_numpy()
    if pairs_strictly_increasing(u, i):  # AR sets come out of target_sets this way: nothing to do
        return pd.DataFrame({"user": u, "item": i}), np.arange(len(u)) if rows else None
    if _numeric(sets["user"]) and _numeric(sets["item"]):
        # the distinct codes of the pairs over the distinct users and items, sorted: users
        # first, items within (1R repeats pairs); dense codes keep the range of the pair
        # codes near the number of pairs, which sorted_unique marks in a table instead of
        # sorting
        users, items = sorted_unique(u), sorted_unique(i)
        codes = positions(users, u) * len(items) + positions(items, i)
        key = sorted_unique(codes)
        pairs = pd.DataFrame({"user": users[key // len(items)], "item": items[key % len(items)]})
        return pairs, positions(key, codes) if rows else None
    pairs = (
        sets[["user", "item"]]
        .drop_duplicates()
        .sort_values(["user", "item"])
        .reset_index(drop=True)
    )
    return pairs, None


@contextmanager
def shared_pairs(sets: pd.DataFrame) -> Iterator[None]:
    """Within the block, :func:`candidate_pairs` of this very frame is computed once, and
    :func:`attach_scores` joins scores given for exactly those pairs by each row's pair instead
    of searching for it (numeric ids; others are joined as outside): the same frames, for
    several systems scoring one set of target sets. The frame must not change inside the
    block."""
    token = _SHARED.set((sets, *_pairs_and_rows(sets)))
    try:
        yield
    finally:
        _SHARED.reset(token)


def item_scores(sets: pd.DataFrame, scores: pd.Series) -> pd.DataFrame:
    """(user, item, score) for a non-personalised system: every user gets ``scores[item]``.

    ``scores`` is indexed by item (e.g. :func:`recmeta.data.popularity.item_counts` of the training
    data for the popularity recommender). Candidate items missing from it raise.
    """
    pairs = candidate_pairs(sets)
    values = scores.reindex(pairs["item"].to_numpy()).to_numpy(dtype=float)
    if np.isnan(values).any():
        missing = pairs["item"].to_numpy()[np.isnan(values)]
        raise ValueError(
            f"{len(np.unique(missing))} candidate items have no score "
            f"(e.g. {missing[:3].tolist()}); give every candidate a score "
            "(count unseen items as 0 for popularity)"
        )
    return pairs.assign(score=values)


def random_scores(sets: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """(user, item, score) of the random recommender: a seeded hash of (seed, user, item).

    The score of a pair does not depend on the other candidates, so one random system ranks the
    same pair consistently in every target set (as :mod:`recmeta.recommenders.components.random`).
    """
    pairs = candidate_pairs(sets)
    return pairs.assign(
        score=pair_uniform(seed, pairs["user"].to_numpy(), pairs["item"].to_numpy())
    )


def _same_numeric_ids(sets: pd.DataFrame, scores: pd.DataFrame) -> bool:
    return all(
        _numeric(sets[c]) and _numeric(scores[c]) and sets[c].dtype == scores[c].dtype
        for c in ("user", "item")
    )


def _lookup(
    su: np.ndarray, si: np.ndarray, cu: np.ndarray, ci: np.ndarray, score: pd.Series
) -> np.ndarray:
    """The score of each (su, si) pair among the strictly sorted pairs (cu, ci), NaN if absent:
    the left join of the pairs on the scores, by binary search on shared pair codes."""
    coded = pair_codes([cu, su], [ci, si])
    if coded is not None:
        (known, wanted), _ = coded
    else:
        _, uc = np.unique(np.concatenate([cu, su]), return_inverse=True)
        items, ic = np.unique(np.concatenate([ci, si]), return_inverse=True)
        key = uc.astype(np.int64) * len(items) + ic
        known, wanted = key[: len(cu)], key[len(cu) :]
    at = positions(known, wanted)
    hit = at >= 0
    values = score.to_numpy()
    out = np.full(len(wanted), np.nan, dtype=values.dtype)
    out[hit] = values[at[hit]]
    return out


def attach_scores(
    sets: pd.DataFrame, scores: pd.DataFrame, *, missing: Literal["raise", "last"] = "raise"
) -> pd.DataFrame:
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
    shared = _SHARED.get()
    rows = None
    if (
        shared is not None
        and sets is shared[0]
        and shared[2] is not None
        and len(cu) == len(shared[1])
    ):
        pu, pi = shared[1]["user"].to_numpy(), shared[1]["item"].to_numpy()
        if np.array_equal(cu, pu) and np.array_equal(ci, pi):
            rows = shared[2]  # the scores are for the frame's candidate pairs, in their order
    unique = rows is not None or pairs_strictly_increasing(cu, ci)
    if not unique and has_duplicate_pairs(cu, ci):
        raise ValueError("scores have duplicate (user, item) pairs; keep one score per pair")
    if unique and len(su) == len(cu) and np.array_equal(su, cu) and np.array_equal(si, ci):
        out = sets.assign(
            score=scores["score"].to_numpy(dtype=float)
        )  # same pairs in the same order
    elif (
        unique
        and "score" not in sets.columns
        and _same_numeric_ids(sets, scores)
        and scores["score"].dtype.kind == "f"
    ):
        values = (
            scores["score"].to_numpy()[rows]
            if rows is not None
            else _lookup(su, si, cu, ci, scores["score"])
        )
        out = sets.reset_index(drop=True).assign(score=values)
    else:
        out = sets.merge(scores[["user", "item", "score"]], on=["user", "item"], how="left")
    nan = out["score"].isna()
    if nan.any():
        if missing == "raise":
            raise ValueError(
                f"{int(nan.sum())} candidate pairs have no score "
                f"(e.g. user {out.loc[nan, 'user'].iloc[0]}, "
                f"item {out.loc[nan, 'item'].iloc[0]}); score them or pass missing='last'"
            )
        out.loc[nan, "score"] = -np.inf
    return out
