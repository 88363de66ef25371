r"""Item-based CF as specified in the appendix of Krichene & Rendle (2020), eqs. 27–30.

With :math:`U_i = \{u : (u, i) \in H\}` the training users of item *i*:

* eq. 27, sharpened cosine: :math:`s_{ij} = \big(|U_i \cap U_j| / \sqrt{|U_i|\,|U_j|}\big)^q`;
* eq. 28, sparsification: :math:`s'_{ij} = s_{ij}\,\delta(i \in N_k(j))\,\delta(j \in N_{k'}(i))`,
  :math:`N_k(j)` the *k* items most similar to *j*;
* eq. 29, row normalisation: :math:`s''_{ij} = s'_{ij} / \lVert s'_i \rVert_2`;
* eq. 30, prediction:
  :math:`\hat y(u, i) = \sum_{j:(u,j) \in H} s''_{ij} / \sum_{j \in I} s''_{ij}`.

Their recommender Y is ``q=3`` without sparsification, Z is ``q=1, k'=10``.

Choices the paper leaves open, fixed here:

* an item is not its own neighbour (the diagonal of *s* is zero before eq. 28);
* neighbours with equal similarity are taken in item-number order (smaller first) when a
  k-neighbourhood has to cut through a tie;
* an item whose row of :math:`s''` is empty (no co-rated item) scores 0, the value of eq. 30's
  numerator; a user without training items cannot be scored (NaN), as in LensKit's scorers;
* the norm of eq. 29 cancels in eq. 30 (numerator and denominator share it), so it changes no
  score; it is kept so that :attr:`ItemCFScorer.similarity` is the paper's :math:`s''`.

The similarity is held as a sparse matrix, so the component scales to catalogues where a dense
items × items matrix would not fit.
"""

from __future__ import annotations

from typing import Any, cast, override

import numpy as np
import scipy.sparse as sp
from lenskit.data import Dataset, ItemList, QueryInput, Vocabulary
from lenskit.pipeline import Component
from lenskit.training import Trainable, TrainingOptions
from pydantic import BaseModel, PositiveFloat, PositiveInt

from ._common import history_numbers, scored, training_matrix

__all__ = ["ItemCFConfig", "ItemCFScorer", "similarity"]


class ItemCFConfig(BaseModel, extra="forbid"):
    """Hyper-parameters of eqs. 27–28 (``None`` = no sparsification, the paper's ∞)."""

    q: PositiveFloat = 1.0
    "Exponent sharpening the cosine similarity (eq. 27)."
    k: PositiveInt | None = None
    "Keep s_ij only if i is among the k nearest items of j (eq. 28, column neighbourhood)."
    k_prime: PositiveInt | None = None
    "Keep s_ij only if j is among the k' nearest items of i (eq. 28, row neighbourhood)."


def _top_per_row(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, k: int) -> np.ndarray:
    """Mask of the entries among the k largest of their row (ties: smaller column first)."""
    order = np.lexsort((cols, -vals, rows))
    r = rows[order]
    start = np.r_[True, r[1:] != r[:-1]] if len(r) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(start, np.arange(len(r)), 0))
    keep = np.empty(len(r), dtype=bool)
    keep[order] = (np.arange(len(r)) - first) < k
    return keep


def similarity(
    ui: sp.sparray, q: float = 1.0, k: int | None = None, k_prime: int | None = None
) -> sp.csr_array:
    """The row-normalised, sparsified similarity :math:`s''` (eqs. 27–29) of a users × items matrix.

    ``ui`` is read as binary (any stored non-zero is an interaction).
    """
    x = sp.csr_array(ui, dtype=np.float64, copy=True)
    x.data[:] = 1.0
    n_items = x.shape[1]
    counts = np.asarray(x.sum(axis=0)).ravel()
    co = sp.coo_array(x.T @ x)
    off = (co.row != co.col) & (co.data > 0)
    rows, cols = co.row[off].astype(np.int64), co.col[off].astype(np.int64)
    vals = (co.data[off] / np.sqrt(counts[rows] * counts[cols])) ** q  # eq. 27
    keep = np.ones(len(vals), dtype=bool)
    if k_prime is not None:  # j in N_k'(i): row neighbourhood
        keep &= _top_per_row(rows, cols, vals, k_prime)
    if k is not None:  # i in N_k(j): column neighbourhood
        keep &= _top_per_row(cols, rows, vals, k)
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    norms = np.sqrt(np.bincount(rows, weights=vals**2, minlength=n_items))
    vals = vals / norms[rows]  # eq. 29
    return sp.csr_array((vals, (rows, cols)), shape=(n_items, n_items))


class ItemCFScorer(Component[ItemList], Trainable):
    """Krichene & Rendle's (2020) item-based CF (appendix, eqs. 27–30); see the module docstring.

    Scores for user *u* and item *i*: the share of row *i* of :math:`s''` that falls on the items
    *u* interacted with in training. Ratings are ignored (binary interactions).
    """

    config: ItemCFConfig
    items: Vocabulary
    users: Vocabulary
    similarity_: sp.csr_array
    "The matrix s'' of eq. 29 (items × items, row = scored item, column = neighbour)."
    row_sums_: np.ndarray
    "Denominator of eq. 30 for each item."
    ui_: sp.csr_array
    "Binary training matrix (users × items)."

    @override
    def is_trained(self) -> bool:
        return hasattr(self, "similarity_")

    @override
    def train(self, data: Dataset, options: TrainingOptions = TrainingOptions()) -> None:
        ui = training_matrix(data)
        ui.data[:] = 1.0
        c = self.config
        self.similarity_ = similarity(ui, c.q, c.k, c.k_prime)
        self.row_sums_ = np.asarray(self.similarity_.sum(axis=1)).ravel()
        self.items, self.users, self.ui_ = data.items, data.users, ui

    def _finish(self, num: np.ndarray | sp.sparray) -> np.ndarray:
        # scipy ships no types: `sp.sparray` is Any to the checker, so the union needs a cast
        num = cast(Any, num).toarray() if sp.issparse(num) else np.asarray(num)
        den = self.row_sums_
        return np.divide(num, den, out=np.zeros(num.shape), where=den > 0)  # eq. 30

    def score_matrix(self, users: np.ndarray) -> np.ndarray:
        """Eq. 30 for the training users numbered ``users`` and every item:
        (len(users), n_items)."""
        h = self.ui_[np.asarray(users)]
        out = self._finish(h @ self.similarity_.T)
        out[np.diff(h.indptr) == 0] = np.nan
        return out

    @override
    def __call__(self, query: QueryInput, items: ItemList) -> ItemList:
        hist = history_numbers(query, self.items)
        if hist is None or len(hist) == 0:
            return ItemList(items, scores=np.nan)
        row = np.zeros(len(self.items))
        row[hist] = 1.0
        return scored(items, self.items, self._finish(self.similarity_ @ row))
