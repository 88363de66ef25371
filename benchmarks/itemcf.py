"""Benchmark: Krichene & Rendle's item CF, its co-occurrence and its scores, against scipy's.

    .venv/bin/python benchmarks/itemcf.py

``recmeta.recommenders.components.itemcf`` computes the co-occurrence :math:`X^\\top X` of the
training matrix in two compiled passes (``cooccurrence``), and eq. 30's numerators for a block
of users in one (``ItemCFScorer.score_matrix``). Before, both were scipy's sparse products: ``x.T
@ x`` then ``sort_indices``, and ``(h @ s.T).toarray()``. Each is timed best of three in this
process after a first call (numba's compilation is not timed), and the two results are checked
equal to the last bit before any time is printed: the co-occurrence's row pointers, columns and
counts, and the dense numerators of every training user. Data: ML-100K, ml-latest-small and the
half-million-rating MovieLens subset of ``../shared/data/ml-1m-partial``; the similarity is
system Y's (q = 3, no sparsification: the densest, about a quarter of all item pairs).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import best, load  # noqa: E402

from recmeta.recommenders.components import itemcf  # noqa: E402


def _scipy_co(x: sp.csr_array) -> sp.csr_array:
    co = x.T @ x
    co.sort_indices()
    return co


def _binary(ratings) -> sp.csr_array:
    users = ratings["user"].astype("category").cat.codes.to_numpy()
    items = ratings["item"].astype("category").cat.codes.to_numpy()
    return sp.csr_array((np.ones(len(ratings)), (users, items)))


def main() -> None:
    print(
        "| data | users × items | co-occurrence entries | scipy `x.T @ x`, sorted "
        "| `cooccurrence` | ratio | scipy `(h @ s.T).toarray()` | `score_matrix`'s pass | ratio |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ml-100k", "ml-latest-small", "half"):
            label, ratings = load(name, Path(tmp))
            x = _binary(ratings)
            t_ref, ref = best(lambda x=x: _scipy_co(x))
            t_new, new = best(lambda x=x: itemcf.cooccurrence(x))
            for a, b in zip(
                (ref.indptr, ref.indices, ref.data),
                (new.indptr, new.indices, new.data),
                strict=True,
            ):
                assert a.dtype == b.dtype and np.array_equal(a, b)
            s = itemcf.similarity(x, q=3.0)
            st = s.T.tocsr()
            t_sref, sref = best(lambda x=x, s=s: (x @ s.T).toarray())
            t_snew, snew = best(
                lambda x=x, st=st: itemcf._rows_times(
                    x.indptr, x.indices, x.data, st.indptr, st.indices, st.data, x.shape[1]
                )
            )
            assert np.array_equal(sref, snew)
            print(
                f"| {label} | {x.shape[0]:,} × {x.shape[1]:,} | {ref.nnz:,} | {t_ref:.3f} s "
                f"| {t_new:.3f} s | {t_ref / t_new:.1f} | {t_sref:.3f} s | {t_snew:.3f} s "
                f"| {t_sref / t_snew:.1f} |"
            )


if __name__ == "__main__":
    main()
