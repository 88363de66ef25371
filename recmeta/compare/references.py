"""Reference systems under the reader's own protocol: a random and a popularity ranking.

Bellogín, Castells & Cantador (2017) show that a metric's value means little without the values
of trivial systems under the *same* protocol: a random ranking's precision is set by the share
of relevant items among the candidates (σδ in AR, 1/t in 1R, their eqs. 4–5), and ranking by
popularity scores far above it because test ratings concentrate on popular items (their §5).
The protocol here is the one of :mod:`recmeta.recommenders` and of LensKit's ``topn_pipeline``: each
user's candidates are the catalogue (by default every item of the training data) minus the items
the user rated in training, and a list holds the first ``depth`` of them.

* :func:`random_runs` — ``n_runs`` uniformly random rankings of every user's candidates. The
  expected value of *any* metric of the engine is the mean of its values over these runs
  (:func:`reference_values` reports that mean with its Monte-Carlo standard error); for precision
  it is the exact ρ = mean_u |T_u ∩ PR_test(u)| / |T_u| of Bellogín et al. (§4.2,
  :func:`recmeta.protocols.random_precision`), which the tests check.
* :func:`popularity_runs` — the popularity recommender, the candidates ranked by their number of
  training ratings |R_train(i)|, ties by item id as text, descending (the engine's tie rule).
  It is computed, not approximated: the paper's eq. 3 assumes every item is equally likely to be
  a candidate, which on dense data underestimates the popularity ranking (the
  statistical-biases chapter shows by how much).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from recmeta.metrics import Judgments, Runs, aggregate, score_matrices

__all__ = ["catalogue", "random_runs", "popularity_runs", "reference_values"]

#: random keys held at once by :func:`random_runs` (float64 elements)
BLOCK_ELEMENTS = 4_000_000


def catalogue(train: pd.DataFrame, items: Sequence | pd.Index | None = None) -> pd.Index:
    """The items that can be recommended: ``items`` if given, else every item of ``train``."""
    if items is not None:
        idx = pd.Index(pd.unique(np.asarray(items)))
    else:
        idx = pd.Index(pd.unique(train["item"].to_numpy()))
    if len(idx) == 0:
        raise ValueError("the catalogue is empty: give training data or items")
    return idx


def _layout(
    judgments: Judgments, train: pd.DataFrame, items: pd.Index
) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """(run item index, code of each catalogue item in it, users × catalogue training mask)."""
    for col in ("user", "item"):
        if col not in train.columns:
            raise ValueError(
                f"training data need a {col!r} column; they have {list(train.columns)}"
            )
    extra = items[~items.isin(judgments.items)]
    run_items = judgments.items.append(extra)
    codes = run_items.get_indexer(items)
    u = judgments.users.get_indexer(train["user"].to_numpy())
    i = items.get_indexer(train["item"].to_numpy())
    ok = (u >= 0) & (i >= 0)
    seen = np.zeros((len(judgments.users), len(items)), dtype=bool)
    seen[u[ok], i[ok]] = True
    return run_items, codes, seen


def random_runs(
    judgments: Judgments,
    train: pd.DataFrame,
    *,
    depth: int,
    n_runs: int = 20,
    seed: int = 0,
    items: Sequence | pd.Index | None = None,
) -> Runs:
    """``n_runs`` random rankings (systems ``random-0`` ...) of every user's candidates.

    Each list is the first ``depth`` items of a uniform random permutation of the user's
    candidates (catalogue minus training items), drawn as the ``depth`` smallest of independent
    uniform keys; a user with fewer candidates gets a shorter list.
    """
    if depth < 1 or n_runs < 1:
        raise ValueError(f"depth and n_runs must be positive, got {depth} and {n_runs}")
    cat = catalogue(train, items)
    run_items, codes, seen = _layout(judgments, train, cat)
    n_users, n_cat = seen.shape
    d = min(depth, n_cat)
    ranks = np.full((n_runs, n_users, depth), -1, dtype=np.int32)
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_ELEMENTS // n_cat)
    for r in range(n_runs):
        for start in range(0, n_users, block):
            rows = slice(start, min(start + block, n_users))
            keys = rng.random((rows.stop - rows.start, n_cat))
            keys[seen[rows]] = np.inf
            top = (
                np.argpartition(keys, d - 1, axis=1)[:, :d]
                if d < n_cat
                else np.argsort(keys, axis=1)
            )
            top = np.take_along_axis(top, np.argsort(np.take_along_axis(keys, top, 1), 1), 1)
            ok = np.isfinite(np.take_along_axis(keys, top, 1))
            ranks[r, rows, :d] = np.where(ok, codes[top], -1)
    # a short list may hold -1 before valid entries only if keys tie at inf, which sorting prevents
    runs = Runs(
        pd.Index([f"random-{r}" for r in range(n_runs)], name="system"),
        judgments.users,
        run_items,
        ranks,
        len(judgments.items),
    )
    return runs


def popularity_runs(
    judgments: Judgments,
    train: pd.DataFrame,
    *,
    depth: int,
    items: Sequence | pd.Index | None = None,
    name: str = "popularity",
) -> Runs:
    """The popularity ranking of every user's candidates, first ``depth`` items.

    Score of an item: its number of training ratings (0 for a catalogue item never rated in
    training); ties by item id as text, descending — the order of :mod:`recmeta.metrics` and of
    LensKit's ``PopScorer(score="count")`` run through :mod:`recmeta.recommenders`.
    """
    if depth < 1:
        raise ValueError(f"depth must be positive, got {depth}")
    cat = catalogue(train, items)
    run_items, codes, seen = _layout(judgments, train, cat)
    counts = pd.Series(train["item"].to_numpy()).value_counts().reindex(cat, fill_value=0)
    text = pd.Index([str(x) for x in cat]).argsort()
    text_rank = np.empty(len(cat), dtype=np.int64)
    text_rank[text] = np.arange(len(cat))
    order = np.lexsort((-text_rank, -counts.to_numpy()))  # count desc, then text desc
    avail = ~seen[:, order]
    position = np.cumsum(avail, axis=1)
    u, c = np.nonzero(avail & (position <= depth))
    ranks = np.full((1, len(judgments.users), depth), -1, dtype=np.int32)
    ranks[0, u, position[u, c] - 1] = codes[order[c]]
    return Runs(
        pd.Index([name], name="system"), judgments.users, run_items, ranks, len(judgments.items)
    )


def reference_values(
    judgments: Judgments,
    train: pd.DataFrame,
    metrics: Sequence[str],
    *,
    depth: int,
    n_random: int = 20,
    seed: int = 0,
    items: Sequence | pd.Index | None = None,
) -> pd.DataFrame:
    """Value of each metric for the random (expected) and the popularity ranking.

    Columns metric, reference ("random" or "popularity"), value, se (the Monte-Carlo standard
    error of the random expectation over ``n_random`` rankings; 0 for popularity). Averages over
    the users with a relevant item, as the compared systems are.
    """
    metrics = list(metrics)
    rand = score_matrices(
        judgments,
        random_runs(judgments, train, depth=depth, n_runs=n_random, seed=seed, items=items),
        metrics,
    )
    pop = score_matrices(
        judgments, popularity_runs(judgments, train, depth=depth, items=items), metrics
    )
    rows = []
    for m in metrics:
        per_run = aggregate(rand[m])
        se = per_run.std(ddof=1) / np.sqrt(per_run.size) if per_run.size > 1 else np.nan
        rows.append(
            {"metric": m, "reference": "random", "value": float(per_run.mean()), "se": float(se)}
        )
        rows.append(
            {
                "metric": m,
                "reference": "popularity",
                "value": float(aggregate(pop[m])[0]),
                "se": 0.0,
            }
        )
    return pd.DataFrame(rows)
