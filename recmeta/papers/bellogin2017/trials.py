"""The trial harness of the statistical-biases chapter: systems as scorers of target sets, and
trials that run them under one protocol over several random splits (Bellogín et al. 2017, §3–§6).

:func:`trials` runs systems over several splits, per split or per target set (``per_set=True``,
averaged back by :func:`summarise`); a :class:`TrialCache` shares target sets and per-set
results between runs of the same design. The target sets, scores and measures come from
:mod:`recmeta.protocols`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal, Protocol as TypingProtocol, TypeGuard

import numpy as np
import pandas as pd

from ... import recommenders
from ...arrays import positions, sorted_unique
from ...data.popularity import head_items, item_counts
from ...data.splits import coin_flip
from ...protocols import (
    Protocol,
    attach_scores,
    candidate_pairs,
    engine_metrics,
    harmonic_target_size,
    item_scores,
    lemma_bounds,
    metric_cutoff,
    protocol_mean,
    random_precision,
    random_precision_1r,
    random_precision_ar,
    random_scores,
    rank_in_sets,
    shared_pairs,
    target_metrics,
    target_sets,
    uniform_test_split,
)
from ...recommenders import roster

__all__ = [
    "Scorer",
    "TrialCache",
    "liked_scorer",
    "mean_rating_scorer",
    "oracle_scorer",
    "popularity_scorer",
    "random_scorer",
    "remove_test_ratings",
    "roster_scorer",
    "score_all",
    "split_sets",
    "summarise",
    "trials",
]

Scorer = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]
"""A system under a protocol: ``(train, sets) -> (user, item, score)`` for the candidate pairs."""


class _PerSplitScorer(TypingProtocol):
    """A :data:`Scorer` marked ``per_split``: it also takes the seed of the split it scores."""

    per_split: bool

    def __call__(
        self, train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None
    ) -> pd.DataFrame: ...


def _takes_split_seed(scorer: Scorer) -> TypeGuard[_PerSplitScorer]:
    return bool(getattr(scorer, "per_split", False))


def popularity_scorer(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
    """The popularity recommender: score = |R_train(i)|, the item's number of training ratings."""
    return item_scores(sets, item_counts(train, items=sets["item"].unique()).astype(float))


def liked_scorer(threshold: float) -> Scorer:
    """A non-personalised system ranking items by |PR_train(i)|, their positive training ratings.

    Bellogín et al. (2017, §5.1) argue that popularity (|R_train(i)|) maximises eq. 3 among
    non-personalised rankings "as far as E[|PR_test(i)|] ∝ |R_train(i)|"; ranking by the positive
    ratings themselves is the competitor that tests that assumption. Ties: |R_train(i)|, then
    item id (through :func:`target_metrics`).
    """

    def score(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
        items = sets["item"].unique()
        liked = item_counts(train.loc[train["rating"] >= threshold], items=items).astype(float)
        rated = item_counts(train, items=items).astype(float)
        # |PR_train| first, |R_train| only to break ties (it is below 1 after scaling)
        return item_scores(sets, liked + rated.reindex(liked.index) / (rated.max() + 1.0))

    return score


def mean_rating_scorer(damping: float = 10.0) -> Scorer:
    """A non-personalised system ranking items by their damped mean training rating.

    score(i) = (Σ_{u ∈ R_train(i)} r_ui + k·μ) / (|R_train(i)| + k), with μ the global mean
    training rating and k = ``damping`` (a Bayesian average: an item with few ratings stays
    near μ). Items without training ratings score μ.
    """
    if damping < 0:
        raise ValueError(f"damping must be >= 0, got {damping}")

    def score(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
        mu = float(train["rating"].mean())
        g = train.groupby("item")["rating"].agg(["sum", "count"])
        mean = (g["sum"] + damping * mu) / (g["count"] + damping)
        items = sets["item"].unique()
        return item_scores(sets, mean.reindex(items).fillna(mu))

    return score


def oracle_scorer(train: pd.DataFrame, sets: pd.DataFrame) -> pd.DataFrame:
    """The best non-personalised ranking for these target sets; it reads the test data.

    score(i) = the number of target sets in which i is relevant (|PR_test(i)| in AR). Ranking
    every user's set by it maximises the sum over users of the hits in the top n among rankings
    that ignore the user — up to the items each user's set leaves out — so it is a ceiling for
    non-personalised systems, not a recommender (Bellogín et al. 2017, §5.1).
    """
    rel = sets.loc[sets["relevant"], "item"].value_counts()
    items = sets["item"].unique()
    return item_scores(sets, rel.reindex(items, fill_value=0).astype(float))


def random_scorer(seed: int, *, per_split: bool = True) -> Scorer:
    """The random recommender (see :func:`random_scores`).

    With ``per_split`` (default) :func:`trials` draws a fresh random system for every split, so a
    Monte-Carlo average over splits also averages over random rankings; the pair scores within a
    split stay consistent across target sets. Without it the hash seed is ``seed`` everywhere.
    """

    def score(
        train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None
    ) -> pd.DataFrame:
        mixed = seed if split_seed is None else seed * 1_000_003 + split_seed
        return random_scores(sets, mixed)

    # the mark of _PerSplitScorer; a function's type has no attribute to set, hence the ignore
    score.per_split = per_split  # type: ignore[attr-defined]
    return score


def roster_scorer(
    name: str,
    *,
    dataset: str,
    split: str = "protocols",
    root: str | Path | None = None,
    keep: int = 8,
) -> Scorer:
    """A system of :mod:`recmeta.recommenders.roster` as a :data:`Scorer`, trained per split.

    The system scores every (training user, training item) pair once per split, through
    :func:`recmeta.recommenders.make`, which caches the run on disk (keyed by dataset, ``split``
    label, seed, the system's configuration and a fingerprint of the training data), so every
    protocol built on the same split reuses one trained model and one cached run. Candidate
    pairs outside that grid (items or users without training data) and pairs the model cannot
    score come back as NaN; :func:`trials` ranks them last. The scorer also keeps the runs of
    the last ``keep`` splits it scored in memory as users × items score tables, reused for the
    same seed and training frame (columns, dtypes and values, as the disk cache's fingerprint
    compares): the designs of one figure alternate between a few splits per seed.
    """
    if keep < 1:
        raise ValueError(f"keep must be >= 1 (tables kept in memory), got {keep}")
    tables: list[tuple[int, pd.DataFrame, _ScoreTable]] = []  # the last used at the end

    def score(
        train: pd.DataFrame, sets: pd.DataFrame, split_seed: int | None = None
    ) -> pd.DataFrame:
        seed = split_seed or 0
        at = next(
            (k for k, (s, t, _) in enumerate(tables) if s == seed and _same_frame(t, train)),
            None,
        )
        if at is not None:
            tables.append(tables.pop(at))
            table = tables[-1][2]
        else:
            users = sorted_unique(train["user"].to_numpy())
            items = sorted_unique(train["item"].to_numpy())
            grid = pd.DataFrame(
                {"user": np.repeat(users, len(items)), "item": np.tile(items, len(users))}
            )
            run = recommenders.make(
                [roster.get(name)],
                train,
                dataset=dataset,
                split=split,
                seed=seed,
                pairs=grid,
                root=root,
                progress=False,
            )
            table = _ScoreTable.of(run, users, items)
            tables.append((seed, train.copy(), table))
            del tables[:-keep]
        pairs = candidate_pairs(sets)
        return pairs.assign(score=table.lookup(pairs["user"].to_numpy(), pairs["item"].to_numpy()))

    # the mark of _PerSplitScorer; a function's type has no attribute to set, hence the ignore
    score.per_split = True  # type: ignore[attr-defined]
    return score


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Same column names, dtypes and values (NaN equal to NaN), whatever the index."""
    if a.shape != b.shape or list(a.columns) != list(b.columns):
        return False
    if not a.dtypes.equals(b.dtypes):
        return False
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        nan = x.dtype.kind in "fc"
        if not np.array_equal(x, y, equal_nan=nan):
            return False
    return True


class _ScoreTable:
    """A run of candidate scores over a users × items grid as a dense table (NaN: no score).

    Runs hold float32-rounded scores (:func:`recmeta.recommenders.score_candidates`) in a
    float64 column; such a table is stored as float32, which gives back every value exactly,
    at half the memory; :meth:`lookup` answers in the run's dtype either way."""

    def __init__(
        self, users: np.ndarray, items: np.ndarray, table: np.ndarray, dtype: np.dtype
    ) -> None:
        self.users, self.items, self.table, self.dtype = users, items, table, dtype

    @classmethod
    def of(cls, run: pd.DataFrame, users: np.ndarray, items: np.ndarray) -> _ScoreTable:
        score = run["score"].to_numpy()
        dtype = score.dtype if score.dtype.kind == "f" else np.dtype(np.float64)
        narrow = score.astype(np.float32)
        exact = np.array_equal(narrow, score, equal_nan=True)
        values = narrow if exact else score
        shape = (len(users), len(items))
        ru, ri = run["user"].to_numpy(), run["item"].to_numpy()
        if (
            len(run) == shape[0] * shape[1]
            and np.array_equal(ru, np.repeat(users, shape[1]))
            and np.array_equal(ri, np.tile(items, shape[0]))
        ):  # the whole grid, user by user in order (as the runs of a grid are stored)
            return cls(users, items, values.reshape(shape).copy(), dtype)
        table = np.full(shape, np.nan, dtype=np.float32 if exact else dtype)
        u, i = positions(users, ru), positions(items, ri)
        if (u < 0).any() or (i < 0).any():
            raise ValueError(f"the run of {len(run)} scores holds pairs outside its grid")
        table[u, i] = values
        return cls(users, items, table, dtype)

    def lookup(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """The score of each (user, item) pair, NaN outside the grid."""
        u, i = positions(self.users, users), positions(self.items, items)
        inside = (u >= 0) & (i >= 0)
        out = np.full(len(users), np.nan, dtype=self.dtype)
        out[inside] = self.table[u[inside], i[inside]]
        return out


def score_all(
    scorers: dict[str, Scorer],
    train: pd.DataFrame,
    sets: pd.DataFrame,
    split_seed: int | None = None,
) -> dict[str, pd.DataFrame]:
    """Run every scorer on one split's target sets; per-split scorers get ``split_seed``."""
    out = {}
    for name, scorer in scorers.items():
        if _takes_split_seed(scorer):
            out[name] = scorer(train, sets, split_seed=split_seed)
        else:
            out[name] = scorer(train, sets)
    return out


def remove_test_ratings(test: pd.DataFrame, fraction: float, *, seed: int = 0) -> pd.DataFrame:
    """Drop round(fraction·|test|) test ratings chosen at random (test sparsity, §4.2, Fig. 4)."""
    if not 0 <= fraction < 1:
        raise ValueError(f"fraction must lie in [0, 1), got {fraction}")
    k = round(fraction * len(test))
    drop = np.random.default_rng(seed).choice(len(test), k, replace=False)
    keep = np.ones(len(test), dtype=bool)
    keep[drop] = False
    return test.loc[keep].reset_index(drop=True)


def trials(
    ratings: pd.DataFrame,
    protocol: Protocol,
    scorers: dict[str, Scorer],
    *,
    seeds: Iterable[int] = (0,),
    sigma: float = 0.2,
    removed: float = 0.0,
    n: int = 10,
    split: Literal["coin_flip", "uniform"] = "coin_flip",
    epsilon: float = 0.2,
    head: float = 0.0,
    gain: Literal["binary", "rating"] = "binary",
    missing: Literal["raise", "last"] = "last",
    per_set: bool = False,
    metrics: Sequence[str] = (),
    cache: TrialCache | None = None,
) -> pd.DataFrame:
    """Run systems under one protocol over several random splits (Bellogín et al. 2017, §3–§6).

    For each seed: split the ratings (coin flip with test probability σ, or the uniform-test split
    of §6.2 with σ and ε), drop a share ``removed`` of the test ratings, optionally remove the
    ``head`` share of most popular items from test and candidates ("−10 % head"), build the target
    sets, score them with every system and average P@n and nDCG@n as the protocol says.

    One row per (seed, system) with ``P``, ``nDCG``, and per split: ``sets`` (number of target
    sets), ``candidates`` (distinct items in them), ``nonrelevant popularity`` (mean |R(i)| over
    the ratings of the non-relevant target items), ``t`` (harmonic mean target-set size),
    ``rho`` (the exact expected precision of a random ranking,
    :func:`recmeta.protocols.random_precision`), ``formula`` (eq. 4 σ'δ with
    σ' = σ(1 − removed) in AR over 𝒰 = all users, eq. 5 1/t in 1R; NaN for P1R and the uniform
    split), and with ``shared_nonrelevant`` 1R the lemma's ``lower`` and ``upper`` bounds (eq. 2).

    With ``per_set`` the rows are the target sets instead — one row per (seed, system, set) with
    ``set``, ``user``, ``stratum``, that set's ``P`` and ``nDCG``, and the split's columns
    repeated — from which :func:`summarise` gives back the per-split rows and a bootstrap over
    users or sets can be drawn. ``metrics`` (names of the metric engine, per-set rows only) adds
    one column per metric from :func:`engine_metrics` on the same sets and scores, NaN for the
    sets the engine leaves out (no relevant item); lists are cut at the largest cut-off when
    every metric has one. A :class:`TrialCache` (per-set rows only) reuses what earlier calls
    on the same ratings computed.
    """
    if metrics and not per_set:
        raise ValueError("metrics are added to the per-set rows: pass per_set=True")
    if cache is not None and not per_set:
        raise ValueError("the cache keeps per-set rows: pass per_set=True")
    cuts = [metric_cutoff(m) for m in metrics]
    known = [k for k in cuts if k is not None]
    depth = max(known) if cuts and len(known) == len(cuts) else None
    rows, frames = [], []
    for seed in seeds:
        design = (
            protocol,
            split,
            float(sigma),
            float(epsilon),
            float(removed),
            float(head),
            int(seed),
        )
        result_key = {
            name: (design, name, int(n), gain, missing, tuple(metrics)) for name in scorers
        }
        todo = {
            name: sc
            for name, sc in scorers.items()
            if cache is None or result_key[name] not in cache.results
        }
        if todo:
            train, _, sets, common = split_sets(
                ratings,
                protocol,
                seed,
                sigma=sigma,
                split=split,
                epsilon=epsilon,
                removed=removed,
                head=head,
                cache=cache,
            )
            with shared_pairs(sets):
                for name, scores in score_all(todo, train, sets, seed).items():
                    scored = attach_scores(sets, scores, missing=missing)
                    rank = rank_in_sets(
                        scored, depth=None if metrics and depth is None else max(n, depth or n)
                    )
                    per = target_metrics(scored, n, gain=gain, rank=rank)
                    row = {
                        **common,
                        "system": name,
                        "P": protocol_mean(per, "P"),
                        "nDCG": protocol_mean(per, "nDCG"),
                    }
                    if (
                        protocol.relevant == "1R"
                        and protocol.shared_nonrelevant
                        and protocol.percentiles is None
                    ):
                        # P@n does not depend on the gain: the per-set values serve the lemma too
                        row["lower"], _, row["upper"] = lemma_bounds(scored, n, per_set=per)
                    if not per_set:
                        rows.append(row)
                        continue
                    split_cols = {k: v for k, v in row.items() if k not in ("P", "nDCG")}
                    per = per.assign(**split_cols)
                    if metrics:
                        eng = engine_metrics(
                            sets,
                            {name: scores},
                            list(metrics),
                            protocol.threshold,
                            missing=missing,
                            per_set=True,
                            depth=depth,
                            ranks={name: rank},
                        )
                        wide = eng.pivot_table(index="set", columns="metric", values="value")
                        per = per.join(wide.reindex(columns=list(metrics)), on="set")
                    if cache is not None:
                        cache.results[result_key[name]] = per
                    frames.append(per)
        if per_set and cache is not None:
            frames.extend(cache.results[result_key[name]] for name in scorers if name not in todo)
    if per_set:
        out = pd.concat(frames, ignore_index=True)
        first = ["seed", "removed", "system", "set", "user", "stratum", "P", "nDCG"]
        out = out[first + [c for c in out.columns if c not in first]]
        order = {name: k for k, name in enumerate(scorers)}
        return out.sort_values(
            ["seed", "system", "set"],
            key=lambda c: c.map(order) if c.name == "system" else c,
            kind="stable",
        ).reset_index(drop=True)
    return pd.DataFrame(rows)


class TrialCache:
    """What :func:`trials` may reuse across calls on one ratings frame.

    ``results`` keeps every per-set frame by (design, split seed, system, cut-off, gain,
    metrics), so a design run twice (e.g. as part of two figures) is scored once; ``sets`` keeps
    the last ``keep_sets`` target-set frames with their split, so systems added later to a
    design reuse its sets. Use one cache per ratings frame: the keys do not identify the data.
    """

    def __init__(self, keep_sets: int = 2) -> None:
        self.keep_sets = keep_sets
        self.results: dict[tuple, pd.DataFrame] = {}
        self.sets: dict[tuple, tuple] = {}

    def remember(self, key: tuple, value: tuple) -> None:
        self.sets.pop(key, None)
        self.sets[key] = value
        while len(self.sets) > self.keep_sets:
            self.sets.pop(next(iter(self.sets)))


def _candidate_counts(
    sets: pd.DataFrame, items: np.ndarray, rated: np.ndarray
) -> tuple[int, float]:
    """The distinct items of ``sets`` and the mean rating count of its non-relevant rows' items
    (``ratings["item"].value_counts().reindex(non).mean()``), by counts over the rated
    ``items``: Σ_i |R(i)| · #non-relevant rows of i / #non-relevant rows, its sum exact in int64,
    as pandas' float sum of the integers is (partial sums below 2^53)."""
    code = positions(items, sets["item"].to_numpy())
    if (code < 0).any():
        raise ValueError("the target sets hold items nobody rated; build them over rated items")
    rows = np.bincount(code, minlength=len(items))
    # the non-relevant rows of each item: its rows but the (few) relevant ones
    non_rows = rows - np.bincount(code[sets["relevant"].to_numpy(dtype=bool)], minlength=len(items))
    n_non = int(non_rows.sum())
    if not n_non:
        return int(np.count_nonzero(rows)), np.nan
    per_item = np.bincount(positions(items, rated), minlength=len(items))
    return int(np.count_nonzero(rows)), int(per_item @ non_rows) / n_non


def split_sets(
    ratings: pd.DataFrame,
    protocol: Protocol,
    seed: int,
    *,
    sigma: float = 0.2,
    split: Literal["coin_flip", "uniform"] = "coin_flip",
    epsilon: float = 0.2,
    removed: float = 0.0,
    head: float = 0.0,
    cache: TrialCache | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """One split of :func:`trials` and its target sets: (train, test, sets, split columns).

    The split columns are ``seed``, ``removed``, ``sets``, ``candidates``, ``nonrelevant
    popularity``, ``t``, ``rho`` and ``formula`` (see :func:`trials`). With a ``cache`` the
    last few results are kept and reused.
    """
    key = (protocol, split, float(sigma), float(epsilon), float(removed), float(head), int(seed))
    if cache is not None and key in cache.sets:
        cache.remember(key, cache.sets[key])
        return cache.sets[key]
    if split == "coin_flip":
        sp = coin_flip(ratings, sigma, seed=seed)
        train, test = sp.train, sp.test
    elif split == "uniform":
        us = uniform_test_split(ratings, sigma, epsilon, seed=seed)
        train, test = us.train, us.test
    else:
        raise ValueError(f"split must be 'coin_flip' or 'uniform', got {split!r}")
    if removed:
        test = remove_test_ratings(test, removed, seed=seed)
    exclude = head_items(ratings, head) if head else None
    rated = ratings["item"].to_numpy()
    items = sorted_unique(rated)
    sets = target_sets(train, test, protocol, seed=seed, items=items, exclude_items=exclude)
    sizes = np.bincount(sets["set"].to_numpy())
    sizes = sizes[sizes > 0]
    t = harmonic_target_size(sizes)
    candidates, non_pop = _candidate_counts(sets, items, rated)
    formula = np.nan
    if split == "coin_flip" and protocol.percentiles is None and not head:
        if protocol.relevant == "1R":
            formula = random_precision_1r(t)
        elif protocol.ar_users == "all":
            n_pos = int((ratings["rating"] >= protocol.threshold).sum())
            formula = random_precision_ar(
                sigma * (1 - removed), n_pos, ratings["user"].nunique(), t
            )
    common = {
        "seed": seed,
        "removed": removed,
        "sets": len(sizes),
        "candidates": candidates,
        "nonrelevant popularity": non_pop,
        "t": t,
        "rho": random_precision(sets),
        "formula": formula,
    }
    out = (train, test, sets, common)
    if cache is not None:
        cache.remember(key, out)
    return out


def summarise(per_set: pd.DataFrame, by: Iterable[str] = ()) -> pd.DataFrame:
    """Per-split rows from :func:`trials`'s per-set rows: P and nDCG averaged as the protocol says.

    Groups by ``seed``, ``system``, ``removed`` and the extra columns ``by`` (e.g. ``"design"``);
    ``P`` and ``nDCG`` are :func:`protocol_mean`s of each group, and the split's columns
    (``sets``, ``t``, ``rho``, ``formula``, ``lower``, ``upper``, ...) keep their value.
    """
    keys = [*by, "seed", "removed", "system"]
    missing = [k for k in keys if k not in per_set.columns]
    if missing:
        raise ValueError(f"per-set frame lacks {missing}; build it with trials(..., per_set=True)")
    strata = per_set.groupby([*keys, "stratum"], sort=False, dropna=False)[["P", "nDCG"]].mean()
    means = strata.groupby(level=list(range(len(keys))), sort=False, dropna=False).mean()
    skip = {"set", "user", "stratum", "P", "nDCG", *keys}
    extra = [c for c in per_set.columns if c not in skip]
    firsts = per_set.groupby(keys, sort=False, dropna=False)[extra].first() if extra else None
    out = means if firsts is None else means.join(firsts)
    return out.reset_index()
