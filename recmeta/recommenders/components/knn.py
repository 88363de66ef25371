r"""Block scoring for LensKit's k-NN scorers: many users at once, LensKit's scores.

LensKit's ``ItemKNNScorer`` and ``UserKNNScorer`` score one user per pipeline call. The
functions here compute the same scores for a block of users in one compiled pass (numba,
parallel over users) from the *trained* LensKit component, so the model, its similarities and
its hyper-parameters stay LensKit's; :mod:`recmeta.recommenders` uses them as the fast path of
the two k-NN families (``benchmarks/knn.py`` measures both paths side by side).

Item k-NN (Deshpande & Karypis 2004, as LensKit implements it). With :math:`s_{ji}` the stored
similarity of item *j* to item *i* (row *j* of ``sim_matrix``; only values :math:`\ge`
``min_sim`` are stored), :math:`H_u` the user's training items and :math:`N_k(u, i)` the
``max_nbrs`` items of :math:`H_u` with the largest stored :math:`s_{ji}`:

* implicit feedback: :math:`\hat y_{ui} = \sum_{j \in N_k(u,i)} s_{ji}`;
* explicit feedback: :math:`\hat y_{ui} = \mu_i + \sum_{j \in N_k(u,i)} s_{ji}(r_{uj} - \mu_j)
  / \sum_{j \in N_k(u,i)} s_{ji}`, :math:`\mu` the items' training means;
* NaN when :math:`|N_k(u, i)| <` ``min_nbrs`` (in particular when no item of :math:`H_u` has
  a stored similarity to *i*).

User k-NN (LensKit's user-user CF, after the Java LensKit). With :math:`x_v` user *v*'s
training vector (mean-centred with explicit feedback) scaled to unit length, the query vector
:math:`q_u` (explicit: :math:`r_{ui} - \bar r_u`; implicit: 1 on :math:`H_u`), similarities
:math:`w_{uv} = x_v \cdot q_u` (:math:`w_{uu} = 0`), candidate neighbours those with
:math:`w_{uv} \ge` ``min_sim``, and :math:`N_k(u, i)` the ``max_nbrs`` candidates who rated *i*
with the largest :math:`w_{uv}`:

* implicit: :math:`\hat y_{ui} = \sum_{v \in N_k(u,i)} w_{uv}`;
* explicit: :math:`\hat y_{ui} = \bar r_u + \sum_{v} w_{uv} (r_{vi} - \bar r_v) / \sum_v w_{uv}`;
* NaN when :math:`|N_k(u, i)| <` ``min_nbrs``.

**Tie rule.** Where the ``max_nbrs``-th neighbour's weight ties with others', LensKit keeps
whichever its heap met first; here the neighbour with the smaller item number (item k-NN) or
user number (user k-NN) is kept. The choice never changes an implicit-feedback score (the sum
of the k largest weights does not depend on which tied one is kept) but can change an
explicit one (the tied neighbours' ratings differ); such scores are "equal up to ties".

Precision: item similarities and neighbour weights are LensKit's float32 values; user
similarities are one sparse product in float64, cast to float32 as LensKit casts them. The
kept weights are summed in float32 (item k-NN, in a vectorised order) or float64 (user k-NN),
so a score can differ from LensKit's float32 sum in its last bits.

Cost and memory. Item k-NN keeps two dense items × items matrices (similarities, float32, and
each neighbour's rank within its target's neighbours, int16 below 32,767 items):
:func:`item_matrices_bytes`; beyond :data:`DENSE_BYTES` the scorer is left to LensKit. Per user
it finds the k-th smallest rank of every target at once by bisection, about
:math:`\lceil \log_2 |I| \rceil` passes over the user's :math:`|H_u|` rows of the rank matrix
(:math:`|H_u| \cdot |I|` per pass, vectorised). User k-NN computes a block's similarities as
one sparse product, then walks each user's candidates by decreasing weight over their
training items: about nnz(training matrix) per user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

__all__ = [
    "DENSE_BYTES",
    "ENV_DENSE",
    "dense_cap",
    "item_knn_scores",
    "item_matrices_bytes",
    "knn_scorer",
    "user_knn_scores",
]


# ----------------------------------------------------------------------------- kernels
@njit(cache=True, nogil=True, parallel=True)
def _neighbour_ranks(sim_t, rank):  # pragma: no cover - compiled
    """``rank[i, j]``: position of *j* among target *i*'s stored neighbours (``sim_t[i]`` > 0)
    by weight descending, then item number ascending; ``n`` (past the end) if not stored."""
    n = sim_t.shape[1]
    for i in prange(sim_t.shape[0]):
        order = np.argsort(-sim_t[i], kind="mergesort")
        for e in range(n):
            j = order[e]
            rank[i, j] = e if sim_t[i, j] > 0 else n


@njit(cache=True, nogil=True, parallel=True, fastmath={"reassoc", "contract"})
def _item_knn_kernel(
    h_ptr, h_items, h_vals, sims, rank_t, k, min_nbrs, explicit, out
):  # pragma: no cover - compiled
    """Item k-NN scores from dense matrices: ``sims[j, i]`` = s_ji (0 = not stored) and
    ``rank_t[j, i]`` = rank of *j* among *i*'s neighbours (:func:`_neighbour_ranks`).

    Parallel over users. A user's kept neighbours for target *i* are the history items whose
    rank is at most ``thr[i]``, the k-th smallest rank among them (all stored ones when they
    number ``k`` or fewer). The thresholds of all targets are found together by bisection,
    each step counting ``rank <= mid`` over the history's rows of ``rank_t`` — a pass over
    contiguous rows that the compiler vectorises; ranks are distinct within a target, so the
    kept set is exactly the k largest weights, smaller item number first among ties.
    """
    n_users = h_ptr.shape[0] - 1
    n = sims.shape[1]
    steps = 0
    while (1 << steps) < n:
        steps += 1
    for u in prange(n_users):
        h0 = h_ptr[u]
        h1 = h_ptr[u + 1]
        thr = np.full(n, n - 1, rank_t.dtype)  # largest kept rank; n - 1: every stored one
        if h1 - h0 > k:
            lo = np.zeros(n, rank_t.dtype)
            mid = np.empty(n, rank_t.dtype)
            cnt = np.empty(n, np.int32)
            for _ in range(steps):  # smallest t with #{rank <= t} >= k, else n - 1
                for i in range(n):
                    mid[i] = (lo[i] + thr[i]) >> 1
                    cnt[i] = 0
                for p in range(h0, h1):
                    rr = rank_t[h_items[p]]
                    for i in range(n):
                        cnt[i] += rr[i] <= mid[i]
                for i in range(n):
                    if cnt[i] >= k:
                        thr[i] = mid[i]
                    else:
                        lo[i] = mid[i] + 1
        ws = np.zeros(n, np.float32)
        vs = np.zeros(n, np.float32)
        kept = np.zeros(n, np.int32)
        for p in range(h0, h1):
            rr = rank_t[h_items[p]]
            sr = sims[h_items[p]]
            v = h_vals[p]
            for i in range(n):
                keep = rr[i] <= thr[i]
                w = sr[i] if keep else np.float32(0.0)
                ws[i] += w
                vs[i] += w * v
                kept[i] += keep
        for i in range(n):
            if kept[i] == 0 or kept[i] < min_nbrs:
                out[u, i] = np.nan
            else:
                out[u, i] = vs[i] / ws[i] if explicit else ws[i]


@njit(cache=True, nogil=True, parallel=True)
def _user_knn_kernel(
    sims, self_row, r_ptr, r_cols, r_vals, n_items, k, min_nbrs, min_sim, explicit, out
):  # pragma: no cover - compiled
    """User k-NN scores (before the user's mean) from the similarity block ``sims``.

    Parallel over the block's users. Neighbours with ``sims[u, v] >= min_sim`` (``v`` not the
    user) are visited by decreasing float32 weight, smaller user number first among equal
    weights; each item takes the first ``k`` of them who rated it.
    """
    n_users = sims.shape[0]
    for u in prange(n_users):
        row = sims[u].copy()
        if self_row[u] >= 0:
            row[self_row[u]] = 0.0
        cand = np.nonzero(row >= min_sim)[0]
        w32 = row[cand].astype(np.float32)
        order = np.argsort(-w32, kind="mergesort")
        cnt = np.zeros(n_items, np.int64)
        ws = np.zeros(n_items, np.float64)
        vs = np.zeros(n_items, np.float64)
        full = 0
        for o in order:
            v = cand[o]
            w = np.float64(w32[o])
            for jj in range(r_ptr[v], r_ptr[v + 1]):
                i = r_cols[jj]
                if cnt[i] < k:
                    cnt[i] += 1
                    ws[i] += w
                    vs[i] += w * r_vals[jj]
                    if cnt[i] == k:
                        full += 1
            if full == n_items:
                break
        for i in range(n_items):
            n = cnt[i]
            if n == 0 or n < min_nbrs:
                out[u, i] = np.nan
            else:
                out[u, i] = vs[i] / ws[i] if explicit else ws[i]


# ----------------------------------------------------------------------------- wrappers
#: largest size (bytes) of the dense item × item similarity and rank matrices of the item k-NN
#: path, unless ``$RECMETA_KNN_DENSE_GB`` sets it (in GiB); a catalogue that needs more goes
#: through LensKit's per-user path (:func:`knn_scorer` warns and returns ``None``)
DENSE_BYTES = 2 << 30
ENV_DENSE = "RECMETA_KNN_DENSE_GB"


def dense_cap() -> int:
    """The cap in bytes: ``$RECMETA_KNN_DENSE_GB`` GiB if set, else :data:`DENSE_BYTES`."""
    import os

    value = os.environ.get(ENV_DENSE)
    if not value:
        return DENSE_BYTES
    try:
        gib = float(value)
    except ValueError:
        raise ValueError(
            f"{ENV_DENSE}={value!r} is not a number of GiB (e.g. {ENV_DENSE}=5)"
        ) from None
    if gib <= 0:
        raise ValueError(f"{ENV_DENSE}={value!r} must be a positive number of GiB")
    return int(gib * (1 << 30))


def _np(a: Any) -> np.ndarray:
    """A pyarrow array (extension types unwrapped) as a numpy array."""
    storage = getattr(a, "storage", None)
    if storage is not None:
        a = storage
    return np.asarray(a.to_numpy(zero_copy_only=False))


def _histories(
    data: Any, users: np.ndarray, field: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR rows (indptr, item numbers ascending, values) of the training users ``users``."""
    ui = data.interactions().matrix().scipy(field, layout="csr")[np.asarray(users)]
    ui.sort_indices()
    vals = ui.data if field is not None else np.ones(ui.nnz)
    return (
        np.asarray(ui.indptr, np.int64),
        np.asarray(ui.indices, np.int64),
        np.asarray(vals, np.float32),
    )


def _rank_dtype(n_items: int) -> type:
    return np.int16 if n_items < np.iinfo(np.int16).max else np.int32


def item_matrices_bytes(n_items: int) -> int:
    """Memory (bytes) of the dense similarity and rank matrices for ``n_items`` items."""
    return n_items * n_items * (4 + np.dtype(_rank_dtype(n_items)).itemsize)


#: a trained item k-NN model as arrays: (similarities, neighbour ranks transposed)
type _ItemModel = tuple[np.ndarray, np.ndarray]
#: a trained user k-NN model as arrays: (user vectors transposed, a scipy CSR array; the rating
#: rows' offsets, columns and values)
type _UserModel = tuple[Any, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _item_model(scorer: Any) -> _ItemModel:
    """``sims[j, i]`` = s_ji (float32, 0 = not stored) and ``rank_t[j, i]`` = rank of *j*
    among *i*'s stored neighbours (weight descending, then item ascending; n if not stored)."""
    S = scorer.sim_matrix.to_scipy()
    n = S.shape[1]
    sims = S.toarray().astype(np.float32, copy=False)
    rank = np.empty((n, n), dtype=_rank_dtype(n))
    _neighbour_ranks(np.ascontiguousarray(sims.T), rank)
    return sims, np.ascontiguousarray(rank.T)


def item_knn_scores(
    scorer: Any, data: Any, users: np.ndarray, *, _model: _ItemModel | None = None
) -> np.ndarray:
    """Scores (users × items, float32, NaN = unscorable) of a trained ``ItemKNNScorer``.

    ``data`` is the training ``lenskit.data.Dataset`` (the users' histories); ``users`` are
    training user numbers. Equal to the scorer's own scores up to the module's tie rule.
    """
    cfg = scorer.config
    sims, rank_t = _model if _model is not None else _item_model(scorer)
    users = np.asarray(users, dtype=np.int64)
    h_ptr, h_items, h_vals = _histories(data, users, "rating" if cfg.explicit else None)
    means = None
    if cfg.explicit:
        means = np.asarray(scorer.item_means, dtype=np.float32)
        h_vals = h_vals - means[h_items]
    out = np.empty((len(users), sims.shape[1]), dtype=np.float32)
    if len(users):
        _item_knn_kernel(
            h_ptr,
            h_items,
            h_vals,
            sims,
            rank_t,
            int(cfg.max_nbrs),
            int(cfg.min_nbrs),
            bool(cfg.explicit),
            out,
        )
    if means is not None:
        out += means[None, :]
    return out


def _user_model(scorer: Any) -> _UserModel:
    """The trained user k-NN model as arrays: (user vectors transposed, rating rows)."""
    R = scorer.user_ratings
    r_vals = _np(R.values).astype(np.float32) if R.has_values else np.ones(R.nnz, np.float32)
    xt = sp.csr_array(scorer.user_vectors.T, dtype=np.float64)
    cols = _np(R.indices)  # the kernel streams these once per user: keep them narrow
    cols = cols.astype(np.int16 if R.dimension < np.iinfo(np.int16).max else np.int32)
    return xt, (_np(R.offsets).astype(np.int64), cols, r_vals)


def user_knn_scores(
    scorer: Any, data: Any, users: np.ndarray, *, _model: _UserModel | None = None
) -> np.ndarray:
    """Scores (users × items, float32, NaN = unscorable) of a trained ``UserKNNScorer``.

    ``users`` are training user numbers of ``data``, the training ``Dataset`` (whose rows are
    the queries' histories, as LensKit's history look-up gives them). The similarities of the
    block's users to every user are one sparse product (queries @ user vectors transposed) in
    float64; the kernel does the rest.
    """
    cfg = scorer.config
    xt, (r_ptr, r_cols, r_vals) = _model if _model is not None else _user_model(scorer)
    users = np.asarray(users, dtype=np.int64)
    q_ptr, q_items, q_vals = _histories(data, users, "rating" if cfg.explicit else None)
    n_items = len(scorer.items)
    means = np.zeros(len(users), dtype=np.float32)
    if cfg.explicit:  # the query's own mean, as LensKit takes it (float32)
        counts = np.diff(q_ptr)
        rows = np.repeat(np.arange(len(users)), counts)
        sums = np.bincount(rows, weights=q_vals.astype(np.float64), minlength=len(users))
        means = np.divide(sums, counts, out=np.zeros(len(users)), where=counts > 0)
        means = means.astype(np.float32)
        q_vals = q_vals - np.repeat(means, counts)
    q = sp.csr_array(
        (q_vals.astype(np.float32).astype(np.float64), q_items, q_ptr), shape=(len(users), n_items)
    )
    sims = np.asarray((q @ xt).toarray(), dtype=np.float64)
    # the query users' rows in the model (the training users are the model's users)
    self_row = np.asarray(
        scorer.users.numbers(data.users.ids(users), missing="negative"), dtype=np.int64
    )
    out = np.empty((len(users), n_items), dtype=np.float32)
    if len(users):
        _user_knn_kernel(
            sims,
            self_row,
            r_ptr,
            r_cols,
            r_vals,
            n_items,
            int(cfg.max_nbrs),
            int(cfg.min_nbrs),
            float(cfg.min_sim),
            bool(cfg.explicit),
            out,
        )
    if cfg.explicit:
        out += means[:, None]
    return out


def knn_scorer(scorer: Any, data: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    """``f(user_numbers) -> scores`` for a trained LensKit k-NN scorer, or ``None``.

    ``None`` for other scorers, and, with a warning, for an item k-NN model whose dense
    matrices would exceed :func:`dense_cap`. The model's arrays are prepared once, here, for
    every later block.
    """
    names = {c.__name__ for c in type(scorer).__mro__}
    if "ItemKNNScorer" in names:
        need, cap = item_matrices_bytes(len(scorer.items)), dense_cap()
        if need > cap:
            import warnings

            warnings.warn(
                f"item k-NN over {len(scorer.items):,} items needs {need / (1 << 30):.1f} GiB for "
                f"recmeta's fast path, above its cap of {cap / (1 << 30):.1f} GiB: the lists come "
                f"from LensKit's per-user path, which is much slower. With the memory to spare, "
                f"raise the cap: {ENV_DENSE}={need / (1 << 30) + 0.5:.0f}",
                stacklevel=2,
            )
            return None
        model = _item_model(scorer)
        return lambda users: item_knn_scores(scorer, data, users, _model=model)
    if "UserKNNScorer" in names:
        umodel = _user_model(scorer)
        return lambda users: user_knn_scores(scorer, data, users, _model=umodel)
    return None
