"""Benchmark: passes the chapters make on every run, against how they were made or numpy.

    .venv/bin/python benchmarks/passes.py

Each pair is timed best of three in this process after a first call, and its two results are
checked equal (to the bit, or value for value) before any time is printed:

- **pLSA's EM** (``recmeta.recommenders.components.plsa``; 50 topics, 50 iterations, the
  implicit training matrix of the whole dataset): ``PLSAScorer.train``, whose E-step takes each
  iteration's likelihood terms as its denominators, against the plain loop of ``em_step`` and
  ``log_likelihood``, which computes the same sums twice per iteration.
- **The duplicate check of candidate pairs** (``score_candidates``, ``attach_scores``, the
  target sets' and the judgments' checks): pandas' ``DataFrame.duplicated(...).any()`` against
  ``arrays.has_duplicate_pairs``, on the users × items grid the roster runs of statistical biases
  score.
- **The order check of scored pairs** (``candidate_pairs``, ``attach_scores``: pairs already
  sorted by user, then item, need no sort): numpy's comparisons of the shifted arrays against
  ``arrays.pairs_strictly_increasing``, one compiled pass, on the same grid (in order, so
  both read every pair).
- **The NN sample of non-relevant items** (``target_sets``: the 99 smallest of uniform keys over
  each unit's open candidates): numpy's ``argpartition`` of every row with the blocked keys set
  to +inf, against ``protocols.smallest.row_smallest``; the blocked share and the widths are
  those of 1R TI-NN on each dataset (the test items as candidates), one row per relevant test rating.
- **Positions of keys among sorted ids** (``arrays.positions``: a target set's rows among the
  test ratings, a frame's pairs among the scored pairs): numpy's binary search
  (``searchsorted``, kept where the id found is the key) against the compiled table of a short
  range of ids and the compiled gallop over rising keys, on the AR AI-AN sets' (user, item) keys
  among the test ratings' (a fifth of the ratings), coded over the item count (a short range)
  and over 10^9 (a long one).
- **A split's candidate counts** (statistical biases' ``split_sets``, every split of the
  chapter): the distinct items of the target sets and the mean rating count of their
  non-relevant rows' items, by pandas (``nunique``, ``value_counts().reindex(...).mean()``)
  against per-item row counts less the relevant rows', on AR AI-AN's sets (every item a
  candidate of every user with a test rating).

Data: ML-100K and ml-latest-small.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from lenskit.training import TrainingOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import best, load  # noqa: E402

from recmeta.arrays import (  # noqa: E402
    has_duplicate_pairs,
    pairs_strictly_increasing,
    positions,
    sorted_unique,
)
from recmeta.data.lenskit_objects import to_lenskit  # noqa: E402
from recmeta.papers.bellogin2017.trials import _candidate_counts, split_sets  # noqa: E402
from recmeta.protocols import Protocol  # noqa: E402
from recmeta.protocols.smallest import row_smallest  # noqa: E402
from recmeta.recommenders.components._common import training_matrix  # noqa: E402
from recmeta.recommenders.components.plsa import (  # noqa: E402
    PLSAScorer,
    em_step,
    log_likelihood,
)


def _plsa_loop(data, topics: int, iterations: int):
    """The training loop as it was: the E-step's sums, then the likelihood's, each iteration."""
    counts = training_matrix(data)
    rng = TrainingOptions(rng=0).random_generator()
    theta = rng.random((counts.shape[0], topics)) + 0.5
    phi = rng.random((counts.shape[1], topics)) + 0.5
    theta /= theta.sum(axis=1, keepdims=True)
    phi /= phi.sum(axis=0, keepdims=True)
    ll = []
    for _ in range(iterations):
        theta, phi = em_step(counts, theta, phi)
        ll.append(log_likelihood(counts, theta, phi))
    return theta, phi, ll


def _plsa_train(data, topics: int, iterations: int):
    s = PLSAScorer(topics=topics, iterations=iterations)
    s.train(data, TrainingOptions(rng=0))
    return s.theta_, s.phi_, s.log_likelihood_


def _increasing_by_numpy(u: np.ndarray, i: np.ndarray) -> bool:
    """The order check as it was: five temporary arrays of the shifted comparisons."""
    return bool(np.all((u[1:] > u[:-1]) | ((u[1:] == u[:-1]) & (i[1:] > i[:-1]))))


def _smallest_by_numpy(keys: np.ndarray, blocked: np.ndarray, n: int) -> np.ndarray:
    """The columns of the n smallest open keys of every row, sorted, by one argpartition."""
    cols = np.argpartition(np.where(blocked, np.inf, keys), n - 1, axis=1)[:, :n]
    return np.sort(cols, axis=1)


def _positions_by_search(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Positions of values among sorted distinct ids by numpy's binary search, -1 if absent."""
    at = np.searchsorted(ids, values).clip(0, len(ids) - 1)
    return np.where(ids[at] == values, at, -1)


def _counts_by_pandas(sets: pd.DataFrame, ratings: pd.DataFrame) -> tuple[int, float]:
    """A split's candidate counts as they were: pandas' nunique and a reindexed mean."""
    non = sets.loc[~sets["relevant"].to_numpy(dtype=bool), "item"].to_numpy()
    mean = float(ratings["item"].value_counts().reindex(non).mean())
    return int(sets["item"].nunique()), mean


def _row(what: str, label: str, ref: str, before: float, after: float) -> str:
    times = f"{before * 1e3:,.3f} ms | {after * 1e3:,.3f} ms"
    return f"| {what} | {label} | {ref} | {times} | {before / after:,.1f} |"


def main() -> None:
    print("| pass | data | reference | reference's time | ours | ratio |")
    print("|---|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ml-100k", "ml-latest-small"):
            label, ratings = load(name, Path(tmp))
            data = to_lenskit(ratings)
            t_old, old = best(lambda d=data: _plsa_loop(d, 50, 50))
            t_new, new = best(lambda d=data: _plsa_train(d, 50, 50))
            assert np.array_equal(old[0], new[0]) and np.array_equal(old[1], new[1])
            assert old[2] == new[2]
            print(
                _row("pLSA's EM, 50 topics × 50 iterations", label, "the plain loop", t_old, t_new)
            )

            users, items = sorted_unique(ratings["user"]), sorted_unique(ratings["item"])
            rng = np.random.default_rng(0)
            grid = pd.DataFrame(
                {
                    "user": np.repeat(users, len(items)),
                    "item": np.tile(items, len(users)),
                    "score": rng.random(len(users) * len(items)),
                }
            )
            size = f"{label}, {len(grid):,} pairs"
            t_old, old = best(lambda g=grid: bool(g.duplicated(["user", "item"]).any()))
            t_new, new = best(lambda g=grid: has_duplicate_pairs(g["user"], g["item"]))
            assert old is new is False
            print(_row("duplicate check of candidate pairs", size, "pandas", t_old, t_new))

            u, i = grid["user"].to_numpy(), grid["item"].to_numpy()
            t_old, old = best(lambda u=u, i=i: _increasing_by_numpy(u, i))
            t_new, new = best(lambda u=u, i=i: pairs_strictly_increasing(u, i))
            assert old is new is True
            print(_row("order check of scored pairs", size, "numpy", t_old, t_new))
            # 1R sets: by set, so out of order once a user's second set starts
            sets = split_sets(ratings, Protocol("TI", "1R", "NN", 99, threshold=5.0), 0)[2]
            u, i = sets["user"].to_numpy(), sets["item"].to_numpy()
            t_old, old = best(lambda u=u, i=i: _increasing_by_numpy(u, i))
            t_new, new = best(lambda u=u, i=i: pairs_strictly_increasing(u, i))
            assert old is new is False
            what = f"{label}, 1R TI-NN sets, {len(sets):,} rows"
            print(_row("order check of scored pairs", what, "numpy", t_old, t_new))

            # 1R TI-NN's draw: a row per positive test rating (a fifth of the ratings at
            # 4 stars or more), the test items as columns, the user's rated items blocked
            test = ratings.sample(frac=0.2, random_state=0)
            width = test["item"].nunique()
            rows = int((test["rating"] >= 4).sum())
            share = len(ratings) / len(users) / len(items)
            keys = rng.random((rows, width))
            blocked = rng.random((rows, width)) < share
            t_old, old = best(lambda k=keys, b=blocked: _smallest_by_numpy(k, b, 99))
            t_new, new = best(lambda k=keys, b=blocked: row_smallest(k, b, 99))
            assert np.array_equal(new[1].reshape(rows, 99), old)
            what = f"{label}, {rows:,} × {width:,} keys"
            print(
                _row("NN sample of 99 non-relevant items", what, "numpy argpartition", t_old, t_new)
            )

            sets = split_sets(ratings, Protocol("AI", "AR", "AN", threshold=5.0), 0)[2]
            rated = ratings["item"].to_numpy()
            t_old, old = best(lambda s=sets, r=ratings: _counts_by_pandas(s, r))
            t_new, new = best(lambda s=sets, r=rated: _candidate_counts(s, sorted_unique(r), r))
            assert old == new
            what = f"{label}, AR AI-AN, {len(sets):,} rows"
            print(_row("a split's candidate counts", what, "pandas", t_old, t_new))

            u_code = np.searchsorted(users, sets["user"].to_numpy())
            i_code = np.searchsorted(items, sets["item"].to_numpy())
            t_u = np.searchsorted(users, test["user"].to_numpy())
            t_i = np.searchsorted(items, test["item"].to_numpy())
            for scale, span in ((len(items), "short"), (10**9, "long")):
                keys, ids = u_code * scale + i_code, np.sort(t_u * scale + t_i)
                t_old, old = best(lambda i=ids, k=keys: _positions_by_search(i, k))
                t_new, new = best(lambda i=ids, k=keys: positions(i, k))
                assert np.array_equal(old, new)
                what = f"{label}, {len(keys):,} rising keys, {len(ids):,} ids, {span} range"
                print(_row("positions of keys", what, "numpy searchsorted", t_old, t_new))


if __name__ == "__main__":
    main()
