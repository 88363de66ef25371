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

from typing import override

import numpy as np
import scipy.sparse as sp
from lenskit.data import Dataset, ItemList, QueryInput, Vocabulary
from lenskit.pipeline import Component
from lenskit.training import Trainable, TrainingOptions
from numba import njit
from pydantic import BaseModel, PositiveFloat, PositiveInt

from ._common import history_numbers, scored, training_matrix

__all__ = ["ItemCFConfig", "ItemCFScorer", "cooccurrence", "similarity"]


class ItemCFConfig(BaseModel, extra="forbid"):
    """Hyper-parameters of eqs. 27–28 (``None`` = no sparsification, the paper's ∞)."""

    q: PositiveFloat = 1.0
    "Exponent sharpening the cosine similarity (eq. 27)."
    k: PositiveInt | None = None
    "Keep s_ij only if i is among the k nearest items of j (eq. 28, column neighbourhood)."
    k_prime: PositiveInt | None = None
    "Keep s_ij only if j is among the k' nearest items of i (eq. 28, row neighbourhood)."


# ----------------------------------------------------------------------------- kernels
@njit(cache=True, nogil=True)
def _compact(ptr, idx, keep, vals, scale):  # pragma: no cover - compiled
    """The CSR arrays (row pointers, columns, values) of the entries ``keep`` marks, each
    row's values divided by its ``scale``."""
    n = ptr.shape[0] - 1
    size = np.zeros(n + 1, dtype=np.int64)
    for r in range(n):
        for p in range(ptr[r], ptr[r + 1]):
            if keep[p]:
                size[r + 1] += 1
    out_ptr = np.cumsum(size)
    out_idx = np.empty(out_ptr[n], dtype=np.int32)
    out_vals = np.empty(out_ptr[n])
    for r in range(n):
        o = out_ptr[r]
        for p in range(ptr[r], ptr[r + 1]):
            if keep[p]:
                out_idx[o] = idx[p]
                out_vals[o] = vals[p] / scale[r]
                o += 1
    return out_ptr, out_idx, out_vals


@njit(cache=True, nogil=True)
def _co_row(i, ptr, idx, t_ptr, t_idx, acc, touched):  # pragma: no cover - compiled
    """Row *i* of :math:`X^\\top X` into ``acc`` (counts, zero elsewhere); its columns, in
    the order first met, into ``touched``; returns how many."""
    m = 0
    for p in range(t_ptr[i], t_ptr[i + 1]):
        u = t_idx[p]
        for q in range(ptr[u], ptr[u + 1]):
            j = idx[q]
            if acc[j] == 0:
                touched[m] = j
                m += 1
            acc[j] += 1
    return m


# Every pass runs on one thread. Written for numba's threads, the co-occurrence and score
# passes took about 3.5 s longer to compile (a fresh clone's first item CF) and the four passes
# over its entries 5 s longer, more than threads save in a chapter, whose two cores are busy
# with other work: on ml-latest-small the similarity takes 1.9–2.2 s (q = 3) and 1.4–1.6 s
# (k' = 10) either way.
@njit(cache=True, nogil=True)
def _co_sizes(ptr, idx, t_ptr, t_idx, n_items):  # pragma: no cover - compiled
    """The number of columns of each row of :math:`X^\\top X` (row *i* at *i* + 1)."""
    sizes = np.zeros(n_items + 1, dtype=np.int64)
    acc = np.zeros(n_items, dtype=np.int32)
    touched = np.empty(n_items, dtype=np.int64)
    for i in range(n_items):
        m = _co_row(i, ptr, idx, t_ptr, t_idx, acc, touched)
        sizes[i + 1] = m
        acc[touched[:m]] = 0
    return sizes


@njit(cache=True, nogil=True)
def _co_fill(ptr, idx, t_ptr, t_idx, out_ptr, out_idx, out_co):  # pragma: no cover - compiled
    """The columns (ascending) and counts of each row of :math:`X^\\top X` into ``out_idx``
    and ``out_co`` at the row pointers ``out_ptr``."""
    n_items = out_ptr.shape[0] - 1
    acc = np.zeros(n_items, dtype=np.int32)
    touched = np.empty(n_items, dtype=np.int64)
    for i in range(n_items):
        m = _co_row(i, ptr, idx, t_ptr, t_idx, acc, touched)
        o = out_ptr[i]
        if 16 * m < n_items:  # few columns: sort them; else read them off in order
            cols = np.sort(touched[:m])
            for t in range(m):
                out_idx[o + t], out_co[o + t] = cols[t], acc[cols[t]]
            acc[cols] = 0
        else:
            for j in range(n_items):
                if acc[j] != 0:
                    out_idx[o], out_co[o] = j, acc[j]
                    acc[j] = 0
                    o += 1


def cooccurrence(x: sp.csr_array) -> sp.csr_array:
    """:math:`X^\\top X` of a CSR users × items matrix read as binary, with sorted columns:
    the same arrays as scipy's ``x.T @ x`` followed by ``sort_indices`` on a matrix of ones,
    in two compiled passes (row sizes, then columns and counts) instead of scipy's product,
    its unsorted rows and their sort."""
    n_items = x.shape[1]
    ptr, idx = x.indptr, x.indices
    xt = sp.csr_array((np.ones(x.nnz), idx, ptr), shape=x.shape).T.tocsr()  # items × users
    out_ptr = np.cumsum(_co_sizes(ptr, idx, xt.indptr, xt.indices, n_items))
    kind = np.int32 if out_ptr[-1] <= np.iinfo(np.int32).max else np.int64  # as scipy's
    out_ptr = out_ptr.astype(kind)
    out_idx = np.empty(out_ptr[-1], dtype=kind)
    out_co = np.empty(out_ptr[-1])
    _co_fill(ptr, idx, xt.indptr, xt.indices, out_ptr, out_idx, out_co)
    return sp.csr_array((out_co, out_idx, out_ptr), shape=(n_items, n_items))


@njit(cache=True, nogil=True)
def _rows_times(h_ptr, h_idx, h_vals, b_ptr, b_idx, b_vals, n_cols):  # pragma: no cover
    """The dense product of CSR ``h`` and CSR ``b``, each row summed as scipy's sparse product
    sums it: over ``h``'s stored entries in order, then over ``b``'s row."""
    out = np.zeros((h_ptr.shape[0] - 1, n_cols))
    for r in range(h_ptr.shape[0] - 1):
        row = out[r]
        for p in range(h_ptr[r], h_ptr[r + 1]):
            j, v = h_idx[p], h_vals[p]
            for q in range(b_ptr[j], b_ptr[j + 1]):
                row[b_idx[q]] += v * b_vals[q]
    return out


@njit(cache=True, nogil=True)
def _cosines(ptr, idx, co, counts):  # pragma: no cover - compiled
    """Eq. 27's base :math:`|U_i \\cap U_j| / \\sqrt{|U_i|\\,|U_j|}` for the stored
    off-diagonal entries of the co-occurrence ``(ptr, idx, co)`` (CSR, sorted columns), as
    CSR arrays."""
    keep = np.empty(co.shape[0], dtype=np.bool_)
    base = np.zeros(co.shape[0])
    for r in range(ptr.shape[0] - 1):
        for p in range(ptr[r], ptr[r + 1]):
            c = idx[p]
            keep[p] = c != r and co[p] > 0
            if keep[p]:
                base[p] = co[p] / np.sqrt(counts[r] * counts[c])
    return _compact(ptr, idx, keep, base, np.ones(ptr.shape[0] - 1))


@njit(cache=True, nogil=True)
def _kth(ptr, cols, vals, k):  # pragma: no cover - compiled
    """Each row's k-th entry by value descending, then column ascending: (value, column);
    (-inf, n) for a row of k entries or fewer, which keeps them all."""
    n = ptr.shape[0] - 1
    kv = np.full(n, -np.inf)
    kc = np.full(n, n, dtype=np.int64)
    for r in range(n):
        a, b = ptr[r], ptr[r + 1]
        if b - a <= k:
            continue
        if k > 32:  # a stable sort: columns ascend within the row
            e = a + np.argsort(-vals[a:b], kind="mergesort")[k - 1]
            kv[r], kc[r] = vals[e], cols[e]
            continue
        bv = np.empty(k)  # the best k so far, best first; columns arrive ascending, so an
        bc = np.empty(k, dtype=np.int64)  # equal value ranks after those already held
        m = 0
        for p in range(a, b):
            v = vals[p]
            if m == k and v <= bv[k - 1]:
                continue
            j = min(m, k - 1)
            while j > 0 and bv[j - 1] < v:
                bv[j], bc[j] = bv[j - 1], bc[j - 1]
                j -= 1
            bv[j], bc[j] = v, cols[p]
            m = min(m + 1, k)
        kv[r], kc[r] = bv[k - 1], bc[k - 1]
    return kv, kc


@njit(cache=True, nogil=True)
def _sparsify_normalise(ptr, cols, vals, row_v, row_c, col_v, col_c):  # pragma: no cover
    """Eqs. 28–29: keep s_ij when j is among row i's kept (``row_*``, :func:`_kth`) and i among
    column j's (``col_*``: by symmetry, row j's), then divide each row by its L2 norm, summed in
    column order. Returns the CSR arrays of :math:`s''`."""
    n = ptr.shape[0] - 1
    keep = np.empty(cols.shape[0], dtype=np.bool_)
    norms = np.zeros(n)
    for r in range(n):
        sq = 0.0
        for p in range(ptr[r], ptr[r + 1]):
            c, v = cols[p], vals[p]
            ok = (v > row_v[r] or (v == row_v[r] and c <= row_c[r])) and (
                v > col_v[c] or (v == col_v[c] and r <= col_c[c])
            )
            keep[p] = ok
            if ok:
                sq += v * v
        norms[r] = np.sqrt(sq)
    return _compact(ptr, cols, keep, vals, norms)


def similarity(
    ui: sp.sparray, q: float = 1.0, k: int | None = None, k_prime: int | None = None
) -> sp.csr_array:
    """The row-normalised, sparsified similarity :math:`s''` (eqs. 27–29) of a users × items matrix.

    ``ui`` is read as binary (any stored non-zero is an interaction). The co-occurrence
    :math:`X^\\top X` is symmetric (its entries are exact integer counts), and so is eq. 27;
    the compiled passes read column neighbourhoods (eq. 28's :math:`N_k`) from the rows. The
    power of eq. 27 is numpy's, on the same values as an element-wise evaluation.
    """
    x = sp.csr_array(ui, dtype=np.float64, copy=True)
    x.data[:] = 1.0
    n_items = x.shape[1]
    counts = np.asarray(x.sum(axis=0)).ravel()
    co = cooccurrence(x)  # symmetric: its CSR and CSC arrays describe the same matrix
    ptr, cols, base = _cosines(co.indptr, co.indices, co.data, counts)
    vals = base**q  # eq. 27
    none = np.full(n_items, -np.inf), np.full(n_items, n_items, dtype=np.int64)
    row = _kth(ptr, cols, vals, k_prime) if k_prime is not None else none  # j in N_k'(i)
    col = _kth(ptr, cols, vals, k) if k is not None else none  # i in N_k(j)
    out_ptr, out_cols, out_vals = _sparsify_normalise(ptr, cols, vals, *row, *col)
    return sp.csr_array((out_vals, out_cols, out_ptr.astype(np.int32)), shape=(n_items, n_items))


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
    _transposed: sp.csr_array | None = None

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
        self._transposed = None

    def _finish(self, num: np.ndarray) -> np.ndarray:
        den = self.row_sums_
        return np.divide(num, den, out=np.zeros(num.shape), where=den > 0)  # eq. 30

    def _neighbours(self) -> sp.csr_array:
        """:math:`s''^\\top` as CSR (row *j*: the items *i* with :math:`s''_{ij}`, ascending),
        made at the first block of users scored and kept for the next ones."""
        if self._transposed is None:
            self._transposed = self.similarity_.T.tocsr()
        return self._transposed

    def score_matrix(self, users: np.ndarray) -> np.ndarray:
        """Eq. 30 for the training users numbered ``users`` and every item:
        (len(users), n_items)."""
        h = self.ui_[np.asarray(users)]
        st = self._neighbours()
        num = _rows_times(h.indptr, h.indices, h.data, st.indptr, st.indices, st.data, h.shape[1])
        out = self._finish(num)  # the sums of ``h @ s''.T``, as scipy's product adds them
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
