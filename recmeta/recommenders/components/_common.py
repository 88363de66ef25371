"""Helpers shared by recmeta's LensKit components: the training matrix and history look-ups."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from lenskit.data import Dataset, ItemList, QueryInput, RecQuery, Vocabulary


def training_matrix(data: Dataset, *, field: str | None = None) -> sp.csr_array:
    """The users × items training matrix (CSR, float64): 1 per interaction, or ``field`` values."""
    m = data.interactions().matrix().scipy(field, layout="coo")
    return sp.csr_array((np.asarray(m.data, dtype=np.float64), (m.row, m.col)), shape=m.shape)


def history_numbers(query: QueryInput, items: Vocabulary) -> np.ndarray | None:
    """Item numbers of the query's history that the model knows, or ``None`` without history."""
    q = RecQuery.create(query)
    hist = q.query_items
    if hist is None or len(hist) == 0:
        return None
    nums = hist.numbers(vocabulary=items, missing="negative")
    return nums[nums >= 0]


def user_number(query: QueryInput, users: Vocabulary) -> int | None:
    """The query user's row in the training vocabulary, or ``None`` for an unknown user."""
    q = RecQuery.create(query)
    if q.user_id is None:
        return None
    return users.number(q.user_id, missing=None)


def scored(items: ItemList, vocab: Vocabulary, row: np.ndarray) -> ItemList:
    """``items`` with scores looked up in ``row`` (one score per known item); NaN if unknown."""
    nums = items.numbers(vocabulary=vocab, missing="negative")
    scores = np.full(len(items), np.nan, dtype=np.float64)
    ok = nums >= 0
    scores[ok] = row[nums[ok]]
    return ItemList(items, scores=scores)
