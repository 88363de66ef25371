"""The folds of Valcarce et al. (2020) pooled into one evaluation, and the study's metrics.

Valcarce, Bellogín, Parapar and Castells (2020, *Assessing ranking metrics in top-N
recommendation*, IRJ) evaluate nine metrics on a 5-fold cross-validation. This module holds:

* :func:`pool_folds` and :func:`kfold_study` — the folds' test sets and runs as **one**
  evaluation whose *topics* are (fold, user) pairs. A user is judged in every fold in which they
  have test ratings, with a different test set and different runs each time, so each
  (fold, user) is one topic, as a TREC topic is one query. System scores are means over all
  topics of all folds. The incompleteness units stay the dataset's own users and items: removing
  an item removes its test ratings in every fold, removing a user removes all of that user's
  topics (:func:`incompleteness_masks`).
* :func:`scorer` — the nine metrics at one cut-off on any subset of the test rows, as a
  :class:`recmeta.metrics.Subsets` of the metric engine (infAP read as the paper's eq. 11,
  ``infap="pooled"``).
* :func:`per_user` — each user's scores averaged over the folds where the user is evaluated:
  the units of the paper's permutation tests.
* :func:`judged_share` — the share of the ranked positions that carry a test rating (§6.3.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ... import analyses, recommenders
from ...book.costs import run_seconds
from ...data import splits
from ...metaeval import incompleteness
from ...metaeval.incompleteness import Masks
from ...metrics import Judgments, Runs, Subsets
from ...recommenders.roster import System

__all__ = [
    "AGGREGATES",
    "LABELS",
    "METRICS",
    "SCHEMES",
    "Study",
    "incompleteness_masks",
    "judged_share",
    "kfold_study",
    "label",
    "measures",
    "overall_judged_share",
    "per_user",
    "pool_folds",
    "scorer",
]

#: the nine metrics of Valcarce et al. (2020, Sec. 3.2), engine names
METRICS: tuple[str, ...] = ("P", "R", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP")
#: the paper's names for them (arithmetic mean); the geometric ones add a leading "G"
LABELS: dict[str, str] = {
    "P": "P",
    "R": "Recall",
    "F1": "F1",
    "AP": "MAP",
    "nDCG": "nDCG",
    "RR": "MRR",
    "ERR": "ERR",
    "bpref": "bpref",
    "infAP": "infAP",
}
AGGREGATES = ("mean", "gmean")


def measures(cutoff: int = 100, metrics: Sequence[str] = METRICS) -> list[str]:
    """Engine names of the metrics at ``cutoff``: ``["P@100", "R@100", ...]``."""
    unknown = [m for m in metrics if m not in LABELS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; the study knows {list(METRICS)}")
    return [f"{m}@{int(cutoff)}" for m in metrics]


def label(measure: str, aggregate: str = "mean") -> str:
    """The paper's name of an engine measure: ``"RR@100"`` → ``"MRR"`` (``"GMRR"`` for gmean)."""
    base = measure.split("@", 1)[0]
    if base not in LABELS:
        raise ValueError(f"unknown metric {measure!r}; the study knows {list(METRICS)}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    return ("G" if aggregate == "gmean" else "") + LABELS[base]


# ---------------------------------------------------------------------------------- pooling
@dataclass(frozen=True)
class Study:
    """The folds of a cross-validation pooled into one evaluation over (fold, user) topics.

    Attributes
    ----------
    judgments, runs:
        Metric-engine inputs whose users are topic numbers 0..T-1.
    topics:
        One row per topic (aligned with ``judgments.users``): ``fold`` and the dataset's ``user``.
    test:
        The judged entries in the row order of ``judgments.to_frame()`` with the dataset's ids:
        ``fold``, ``user``, ``item``, ``rating``. Build incompleteness masks from this frame.
    """

    judgments: Judgments
    runs: Runs
    topics: pd.DataFrame
    test: pd.DataFrame

    @property
    def systems(self) -> list[str]:
        return list(self.runs.systems)

    @property
    def n_folds(self) -> int:
        return int(self.topics["fold"].nunique())

    def __repr__(self) -> str:
        return (
            f"Study({self.n_folds} folds, {len(self.topics)} topics, "
            f"{len(self.test)} judged entries, {len(self.systems)} systems)"
        )


def pool_folds(
    tests: Sequence[pd.DataFrame],
    run_frames: Sequence[pd.DataFrame],
    *,
    threshold: float,
    max_grade: float | None = None,
) -> Study:
    """Pool the folds: topic = (fold, user), one :class:`Study` for the whole cross-validation.

    ``tests[f]`` is fold ``f``'s test frame (user, item, rating); ``run_frames[f]`` its runs
    (system, user, item, and score or rank, e.g. from :func:`recmeta.recommenders.make`). Every
    fold must hold the same systems. ``max_grade`` (ERR's r_max, Valcarce et al. 2020, eq. 8)
    defaults to
    the largest test rating of all folds — with k folds over ratings, the largest rating of the
    dataset. Users of a run without test ratings in that fold are not topics and are ignored.
    """
    if len(tests) != len(run_frames):
        raise ValueError(
            f"{len(tests)} test frames but {len(run_frames)} run frames; give one of each per fold"
        )
    if not tests:
        raise ValueError("no folds given")
    for f, (t, r) in enumerate(zip(tests, run_frames, strict=True)):
        for frame, what, cols in (
            (t, "test", ("user", "item", "rating")),
            (r, "run", ("system", "user", "item")),
        ):
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(
                    f"fold {f}: the {what} must be a DataFrame, got {type(frame).__name__}"
                )
            missing = [c for c in cols if c not in frame.columns]
            if missing:
                raise ValueError(f"fold {f}: the {what} frame lacks column(s) {missing}")
        if len(t) == 0:
            raise ValueError(f"fold {f}: the test frame is empty")
    systems = [sorted(pd.unique(r["system"])) for r in run_frames]
    if any(s != systems[0] for s in systems[1:]):
        bad = next(f for f, s in enumerate(systems) if s != systems[0])
        raise ValueError(
            f"fold {bad} has systems {systems[bad]} but fold 0 has {systems[0]}; "
            "every fold must hold the runs of the same systems"
        )
    judgments, all_users, pooled_test, topics = _pool_tests(tests, threshold, max_grade)
    runs = _pool_runs(run_frames, judgments, all_users)
    return Study(judgments, runs, topics, pooled_test)


def _pool_tests(
    tests: Sequence[pd.DataFrame],
    threshold: float,
    max_grade: float | None,
) -> tuple[Judgments, pd.Index, pd.DataFrame, pd.DataFrame]:
    """The judgments over (fold, user) topics (topic = fold · |users| + the user's code), the
    dataset's users, the pooled test frame and the topics frame of :class:`Study`."""
    # dense codes of the dataset's users, shared by all folds
    all_users = pd.Index(pd.unique(np.concatenate([t["user"].to_numpy() for t in tests])))
    n_u = len(all_users)
    tagged = []
    for f, t in enumerate(tests):
        code = all_users.get_indexer(t["user"])
        tagged.append(
            pd.DataFrame(
                {
                    "topic": f * n_u + code,
                    "fold": f,
                    "user": t["user"].to_numpy(),
                    "item": t["item"].to_numpy(),
                    "rating": t["rating"].to_numpy(dtype=np.float64),
                }
            )
        )
    test = pd.concat(tagged, ignore_index=True)
    if max_grade is None:
        max_grade = float(test["rating"].max())
    judgments = Judgments.from_frame(test, threshold, user_col="topic", max_grade=max_grade)
    topic = judgments.users.to_numpy()
    topics = pd.DataFrame({"fold": topic // n_u, "user": all_users[topic % n_u]})
    rows = judgments.to_frame()
    rows_topic = rows["user"].to_numpy()  # to_frame names the topic column "user"
    pooled_test = pd.DataFrame(
        {
            "fold": rows_topic // n_u,
            "user": all_users[rows_topic % n_u],
            "item": rows["item"].to_numpy(),
            "rating": rows["rating"].to_numpy(),
        }
    )
    return judgments, all_users, pooled_test, topics


def _pool_runs(
    run_frames: Sequence[pd.DataFrame], judgments: Judgments, all_users: pd.Index
) -> Runs:
    """The folds' runs (``run_frames[f]`` for fold ``f``) over the topics of :func:`_pool_tests`."""
    n_u = len(all_users)
    frames = []
    for f, r in enumerate(run_frames):
        code = all_users.get_indexer(r["user"])
        known = code >= 0
        frames.append(r.loc[known].assign(user=f * n_u + code[known]))
    return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments)


def per_user(matrix: ArrayLike, topics: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Average each user's per-topic scores over the folds where the user is evaluated.

    ``matrix`` is systems × topics (NaN = topic not evaluated, as from
    :func:`recmeta.metrics.score_matrix`). Returns (systems × users, the users), dropping users
    evaluated in no fold. These are the units of the paper's paired tests (its n is the number
    of users); the (fold, user) topics would count a user up to k times.
    """
    a = np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != len(topics):
        raise ValueError(f"need a (systems × {len(topics)} topics) matrix, got shape {a.shape}")
    codes, users = pd.factorize(topics["user"])
    seen = ~np.isnan(a)
    sums = np.zeros((a.shape[0], len(users)))
    counts = np.zeros((a.shape[0], len(users)))
    for s in range(a.shape[0]):  # loop over systems only
        sums[s] = np.bincount(codes, weights=np.where(seen[s], a[s], 0.0), minlength=len(users))
        counts[s] = np.bincount(codes, weights=seen[s].astype(np.float64), minlength=len(users))
    keep = counts[0] > 0
    if not (counts[:, keep] > 0).all():
        raise ValueError("a user is evaluated for some systems but not others")
    return sums[:, keep] / counts[:, keep], pd.Index(users[keep], name="user")


# ------------------------------------------------------------------------------- scoring
def scorer(
    study: Study, cutoff: int = 100, metrics: Sequence[str] = METRICS, *, infap: str = "pooled"
) -> Subsets:
    """The study's metrics at ``cutoff`` on any subset of its test rows (``Study.test`` order).

    A :class:`recmeta.metrics.Subsets` over the pooled judgments and runs: ``.score(keep)`` gives
    per-topic scores (systems × topics), ``.means(masks.keep, aggregates=AGGREGATES)`` the system
    means on every incomplete test set. infAP defaults to the paper's eq. 11
    (``infap="pooled"``: every ranked item pooled, the unrated ones unjudged); ``"trec_eval"``
    is trec_eval's reading, which without a pool repeats AP.
    """
    if int(cutoff) != cutoff or cutoff < 1:
        raise ValueError(f"the cut-off must be a positive integer, got {cutoff!r}")
    return Subsets(study.judgments, study.runs, measures(int(cutoff), metrics), infap=infap)


def judged_share(study: Study, cutoff: int = 100) -> pd.Series:
    """Per user: the share of their ranked positions (all systems, all folds, top ``cutoff``)
    that carry a test rating — the paper's "test rating coverage" of the top 100 (Valcarce et
    al. 2020, §6.3.1)."""
    judgments, runs = study.judgments, study.runs
    ranks = runs.ranks[:, :, : min(int(cutoff), runs.depth)]
    ranked = (ranks >= 0).sum(axis=(0, 2)).astype(np.float64)  # per topic
    rows = judgments.to_frame()
    width = np.int64(len(runs.items) + 1)
    judged = np.sort(
        judgments.users.get_indexer(rows["user"]).astype(np.int64) * width
        + judgments.items.get_indexer(rows["item"])
    )
    s, t, d = np.nonzero(ranks >= 0)
    key = t.astype(np.int64) * width + ranks[s, t, d]
    at = np.minimum(np.searchsorted(judged, key), max(judged.size - 1, 0))
    hit = judged[at] == key if judged.size else np.zeros(key.size, dtype=bool)
    per_topic = np.bincount(t[hit], minlength=len(judgments.users)).astype(np.float64)
    codes, users = pd.factorize(study.topics["user"])
    num = np.bincount(codes, weights=per_topic, minlength=len(users))
    den = np.bincount(codes, weights=ranked, minlength=len(users))
    keep = den > 0
    return pd.Series(num[keep] / den[keep], index=pd.Index(users[keep], name="user"), name="judged")


def overall_judged_share(study: Study, subsets: Subsets, cutoff: int = 100) -> float:
    """The share of all ranked positions in the top ``cutoff`` (every system and topic) that
    carry a test rating, from the judged positions ``subsets`` found (:func:`scorer`)."""
    return float(subsets.judged_positions / (study.runs.ranks[:, :, :cutoff] >= 0).sum())


# ------------------------------------------------------------------------------- pipeline
#: the five incompleteness schemes of Valcarce et al. (2020, Sec. 4.2), in the paper's order
SCHEMES: dict[str, str] = {
    "ratings": "random ratings removed",
    "items": "random items removed",
    "popular": "most popular items removed",
    "users": "random users removed",
    "large-users": "largest users removed",
}


@analyses.analysis
def kfold_study(
    ratings: pd.DataFrame,
    systems: Sequence[System],
    *,
    dataset: str,
    k: int = 5,
    folds: Sequence[int] | None = None,
    seed: int = 0,
    threshold: float = 4,
    depth: int = 100,
    progress: bool | None = None,
) -> Study:
    """Runs of ``systems`` (:class:`recmeta.recommenders.roster.System`) on a k-fold split.

    The ratings are cut into ``k`` folds with :func:`recmeta.data.splits.kfold` (seeded); for each
    of
    ``folds`` (default all), every system is trained on the other folds and ranks all the items
    the user has not rated in training (AllItems, top ``depth``), through the run cache of
    :func:`recmeta.recommenders.make` (split ``"{k}fold-{f}"``, ``seed``): a second call trains
    nothing.
    ERR's r_max is the largest rating of the dataset.
    """
    parts = splits.kfold(ratings, k, seed=seed)
    folds = list(range(k)) if folds is None else [int(f) for f in folds]
    bad = [f for f in folds if not 0 <= f < k]
    if bad or not folds or len(set(folds)) != len(folds):
        raise ValueError(f"folds must be distinct numbers in [0, {k}), got {folds}")
    tests = [parts[f].test for f in folds]
    judgments, all_users, pooled_test, topics = _pool_tests(
        tests, threshold, float(ratings["rating"].max())
    )
    options: dict[int, dict[str, Any]] = {
        f: {"dataset": dataset, "split": f"{k}fold-{f}", "seed": seed, "depth": depth}
        for f in folds
    }
    recommenders.make_ahead(
        [recommenders.Task(s, parts[f].train, options[f]) for s in systems for f in folds],
        cost=lambda t: run_seconds(t.system.name, t.train),
        progress=progress,
    )
    # one system at a time (its folds pooled, then its arrays): memory holds one system's
    # frames, not every system's (Runs.concat; the same runs as pool_folds on all frames)
    runs = Runs.concat(
        [
            _pool_runs(
                [
                    recommenders.make([system], parts[f].train, progress=progress, **options[f])
                    for f in folds
                ],
                judgments,
                all_users,
            )
            for system in systems
        ]
    )
    study = Study(judgments, runs, topics, pooled_test)
    # fold numbers as in the split, not positions in ``folds``
    fold_of = np.asarray(folds)
    topics = study.topics.assign(fold=fold_of[study.topics["fold"].to_numpy()])
    test = study.test.assign(fold=fold_of[study.test["fold"].to_numpy()])
    return Study(study.judgments, study.runs, topics, test)


def incompleteness_masks(
    test: pd.DataFrame,
    scheme: str,
    shares: ArrayLike,
    n_samples: int,
    *,
    seed: int,
) -> Masks:
    """The masks of one scheme of :data:`SCHEMES` over the pooled test rows (``Study.test``).

    Random schemes draw ``n_samples`` masks per share; ``popular`` and ``large-users`` are
    deterministic (one mask per share). Units are the dataset's ratings, items or users, shared
    by all folds (:mod:`recmeta.metaeval.incompleteness` keeps exactly ``round(p·units)`` of them).
    """
    if scheme == "ratings":
        return incompleteness.random_ratings(test, shares, n_samples, seed=seed)
    if scheme == "items":
        return incompleteness.random_items(test, shares, n_samples, seed=seed)
    if scheme == "users":
        return incompleteness.random_users(test, shares, n_samples, seed=seed)
    if scheme == "popular":
        return incompleteness.popular_items_removed(test, shares)
    if scheme == "large-users":
        return incompleteness.largest_users_removed(test, shares)
    raise ValueError(f"unknown scheme {scheme!r}; choose from {list(SCHEMES)}")
