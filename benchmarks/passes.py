"""Benchmark: two passes the chapters make on every run, against how they were made.

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

from recmeta.arrays import has_duplicate_pairs, sorted_unique  # noqa: E402
from recmeta.data.lenskit_objects import to_lenskit  # noqa: E402
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


def _row(what: str, label: str, before: float, after: float) -> str:
    return f"| {what} | {label} | {before:.3f} s | {after:.3f} s | {before / after:.1f} |"


def main() -> None:
    print("| pass | data | before | now | ratio |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ml-100k", "ml-latest-small"):
            label, ratings = load(name, Path(tmp))
            data = to_lenskit(ratings)
            t_old, old = best(lambda d=data: _plsa_loop(d, 50, 50))
            t_new, new = best(lambda d=data: _plsa_train(d, 50, 50))
            assert np.array_equal(old[0], new[0]) and np.array_equal(old[1], new[1])
            assert old[2] == new[2]
            print(_row("pLSA's EM, 50 topics × 50 iterations", label, t_old, t_new))

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
            print(_row("duplicate check of candidate pairs", size, t_old, t_new))


if __name__ == "__main__":
    main()
