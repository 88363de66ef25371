"""The real-data study of the sampled-metrics chapter, on one dataset, in one call.

:func:`real_study` follows Krichene & Rendle (2020, §6): every interaction counts, each user's
last one is held out, three recommenders rank all items the user has not interacted with, and
m negatives are sampled from those candidates, shared by all systems, many times over. It
returns a :class:`RealStudy` holding what the chapter shows and the ledger
(:mod:`.claims`) reads: the candidates' standing against the held-out item,
the exact metrics under every tie rule, the repeated sampled evaluations (shared and
independent negatives), the order study over a grid of m, and, beyond the paper, the study with
several held-out items per user.

Recommender runs come from :func:`recmeta.recommenders.make` (cached on disk); each system's
scores are read, classified and dropped in turn, so a catalogue of ten thousand items fits in
memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import analyses, recommenders
from ...data import splits
from ...recommenders import roster
from ...sampled import (
    MULTI_TIES,
    TIE_RULES,
    MultiStanding,
    Standing,
    candidate_pairs,
    check_ties,
    exact_per_user,
    fit_n as _fit_n,
    multi_exact,
    multi_shared_evaluation,
    multi_standing,
    order_study,
    shared_evaluation,
    standing,
    tie_blocks,
)
from .paper import PAPER
from .settings import DEFAULT_TIES

__all__ = [
    "PAPER_LABELS",
    "PAPER_N",
    "MultiStudy",
    "RealStudy",
    "order_grid",
    "paper_points",
    "real_study",
    "study_from_standing",
]

#: the book's roster names of Krichene & Rendle's recommenders X, Y, Z
PAPER_LABELS = {"kr-x": "X", "kr-y": "Y", "kr-z": "Z"}
#: items of ML-1M the paper ranks (its n), used to translate its m thresholds into sampling rates
PAPER_N = PAPER["n"]


@dataclass
class MultiStudy:
    """Several held-out items per user: standing, exact metrics and repeated sampled evaluation."""

    held_out: int
    ties: str
    standing: MultiStanding
    exact: dict[tuple[str, str], np.ndarray]
    sim: pd.DataFrame
    dropped_items: int


@dataclass
class RealStudy:
    """Everything the chapter and the ledger read about one dataset (see :func:`real_study`)."""

    dataset: str
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    estimators: tuple[str, ...]
    m: int
    repetitions: int
    replace: bool
    ties: str
    seed: int
    standing: Standing
    n_fit: int
    dropped_users: int
    exact: dict[str, dict[tuple[str, str], np.ndarray]]
    sim: pd.DataFrame
    sim_independent: pd.DataFrame
    order: pd.DataFrame
    order_means: pd.DataFrame
    order_estimators: tuple[str, ...]
    ms: tuple[int, ...]
    multi: MultiStudy | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def users(self) -> int:
        return int(self.standing.n.size)

    def ranks(self, ties: str | None = None) -> dict[str, np.ndarray]:
        """True rank of the held-out item per system (mean rank of the tie span for "expected")."""
        return self.standing.ranks(ties or self.ties)

    def exact_means(self, ties: str | None = None) -> pd.DataFrame:
        """Mean exact metric: rows metric, columns system."""
        ex = self.exact[ties or self.ties]
        rows = [(metric, system, float(v.mean())) for (system, metric), v in ex.items()]
        return (
            pd.DataFrame(rows, columns=["metric", "system", "value"])
            .pivot(index="metric", columns="system", values="value")
            .loc[list(self.metrics), list(self.systems)]
        )

    def sampled(self, ties: str | None = None, shared: bool = True) -> pd.DataFrame:
        """Repetitions of the sampled evaluation under a tie rule (shared or independent
        negatives)."""
        rule = ties or self.ties
        if shared:
            return self.sim[self.sim["ties"] == rule].drop(columns="ties").reset_index(drop=True)
        if rule != self.ties:
            raise ValueError(
                f"independent draws were run under the chapter's tie rule {self.ties!r} only"
            )
        return self.sim_independent.drop(columns="ties").reset_index(drop=True)

    def tie_blocks(self) -> pd.DataFrame:
        """Per system, users whose held-out item is tied, and the sizes of those tie blocks."""
        return tie_blocks(self.standing.tied_counts())


def order_grid(ms: Sequence[int], n_min: int, replace: bool) -> tuple[int, ...]:
    """The m grid of the order study: ``ms`` sorted, capped at n_min − 1 without replacement."""
    grid = sorted({int(m) for m in ms if int(m) >= 1})
    if not replace:
        grid = [m for m in grid if m <= n_min - 1]
    return tuple(grid)


def paper_points(
    n_mean: float, n_min: int, replace: bool, bv: str = "BV 0.1"
) -> dict[int, tuple[str, ...]]:
    """The paper's Fig. 6 thresholds at its sampling rate on this catalogue (m · n̄ / 3,706), with
    the estimators their claims need: m = 1,000 for the uncorrected metric, m = 60 for BV 0.1."""
    points: dict[int, tuple[str, ...]] = {}
    for paper_m, ests in ((1000, ("sampled",)), (60, ("sampled", bv))):
        m = max(1, round(paper_m * n_mean / PAPER_N))
        if replace or m <= n_min - 1:
            points[m] = tuple(dict.fromkeys((*points.get(m, ()), *ests)))
    return points


def _scores_by_system(
    systems: Sequence[str],
    labels: Mapping[str, str],
    train: pd.DataFrame,
    *,
    dataset: str,
    split: str,
    seed: int,
    pairs: pd.DataFrame,
) -> dict[str, pd.DataFrame]:
    """Candidate scores per system (label), from the run cache (one fingerprint of the frames)."""
    frame = recommenders.make(
        [roster.get(name) for name in systems],
        train,
        dataset=dataset,
        split=split,
        seed=seed,
        pairs=pairs,
        progress=False,
    )
    P = len(pairs)
    sys_col = frame["system"]
    if len(frame) == P * len(systems) and all(
        sys_col.iat[k * P] == name and sys_col.iat[(k + 1) * P - 1] == name
        for k, name in enumerate(systems)
    ):
        # recommenders.make stacks the systems' frames in order, one row per pair each:
        # slice, do not group
        cols = frame[["user", "item", "score"]]
        return {
            labels.get(name, name): cols.iloc[k * P : (k + 1) * P] for k, name in enumerate(systems)
        }
    return {
        labels.get(name, name): g[["user", "item", "score"]]
        for name, g in frame.groupby("system", sort=False)
    }


def _last_k_out(ratings: pd.DataFrame, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each user's last k interactions held out, by k applications of the leave-last-out split."""
    train, held = ratings, []
    for _ in range(k):
        part = splits.leave_last_out(train)
        train = part.train
        held.append(part.test)
    return train, pd.concat(held, ignore_index=True)


@analyses.analysis
def real_study(
    dataset: str,
    ratings: pd.DataFrame,
    *,
    systems: Sequence[str] = tuple(PAPER_LABELS),
    labels: Mapping[str, str] = PAPER_LABELS,
    metrics: Sequence[str] = ("Recall@10", "NDCG@10", "AP", "AUC"),
    estimators: Sequence[str] = (
        "sampled",
        "rank-estimate",
        "cls",
        "BV 1",
        "BV 0.1",
        "BV 0.01",
        "BV 0.001",
    ),
    m: int = 100,
    repetitions: int = 100,
    replace: bool = True,
    ties: str = DEFAULT_TIES,
    seed: int = 0,
    ms: Sequence[int] = (10, 20, 30, 60, 100, 200, 300, 600, 1000),
    order_estimators: Sequence[str] = ("sampled", "rank-estimate", "BV 0.1"),
    order_repetitions: int | None = None,
    multi_held_out: int | None = 5,
    multi_metrics: Sequence[str] = ("Recall@10", "NDCG@10", "AP@10", "AP", "AUC"),
    multi_estimators: Sequence[str] = ("sampled", "rank-estimate", "BV 0.1", "BV 0.01"),
    fit_n: int | None = None,
) -> RealStudy:
    """Run the chapter's real-data study on ``ratings`` (a frame of
    :func:`recmeta.book.chapters.ratings`).

    ``dataset`` names the data in the run cache. Leave-last-out split; candidates: every
    training item the user has not interacted with; users whose held-out item never occurs in
    training cannot be ranked and are dropped (counted in ``dropped_users``). The sampled
    evaluation uses negatives shared by all systems, evaluated under every tie rule on the same
    draws; independent draws and the order study use the tie rule ``ties``. Every estimator is
    built for one n (the rounded mean number of candidates, unless ``fit_n``).
    ``multi_held_out`` (None to skip) holds out each user's last k interactions for the
    several-items study, with ``ties`` if it is deterministic, else trec_eval's order.
    """
    check_ties(ties)
    split = splits.leave_last_out(ratings)
    held = split.test[["user", "item"]]
    known = held["item"].isin(split.train["item"].unique())
    dropped = int((~known).sum())
    held = held[known].reset_index(drop=True)
    pairs = candidate_pairs(split.train, held["user"])
    frames = _scores_by_system(
        systems,
        labels,
        split.train,
        dataset=dataset,
        split="leave-last-out",
        seed=seed,
        pairs=pairs,
    )
    st = standing(frames, held)
    del frames
    multi = None
    notes = []
    if multi_held_out:
        multi_ties = ties if ties in MULTI_TIES else "trec_eval"
        if multi_ties != ties:
            notes.append(
                f"the several-items study needs a deterministic order; it uses trec_eval's order "
                f"where the chapter's tie rule is {ties!r}"
            )
        multi = _multi_study(
            dataset,
            ratings,
            systems,
            labels,
            int(multi_held_out),
            multi_ties,
            seed,
            m,
            repetitions,
            replace,
            multi_metrics,
            multi_estimators,
        )
    out = study_from_standing(
        dataset,
        st,
        metrics=metrics,
        estimators=estimators,
        m=m,
        repetitions=repetitions,
        replace=replace,
        ties=ties,
        seed=seed,
        ms=ms,
        order_estimators=order_estimators,
        order_repetitions=order_repetitions,
        fit_n=fit_n,
        multi=multi,
    )
    out.dropped_users = dropped
    out.notes.extend(notes)
    return out


def study_from_standing(
    dataset: str,
    st: Standing,
    *,
    metrics: Sequence[str] = ("Recall@10", "NDCG@10", "AP", "AUC"),
    estimators: Sequence[str] = (
        "sampled",
        "rank-estimate",
        "cls",
        "BV 1",
        "BV 0.1",
        "BV 0.01",
        "BV 0.001",
    ),
    m: int = 100,
    repetitions: int = 100,
    replace: bool = True,
    ties: str = DEFAULT_TIES,
    seed: int = 0,
    ms: Sequence[int] = (10, 20, 30, 60, 100, 200, 300, 600, 1000),
    order_estimators: Sequence[str] = ("sampled", "rank-estimate", "BV 0.1"),
    order_repetitions: int | None = None,
    fit_n: int | None = None,
    multi: MultiStudy | None = None,
) -> RealStudy:
    """The sampled-evaluation part of :func:`real_study` on candidates already classified
    (:func:`recmeta.sampled.standing`), e.g. from your own scores."""
    check_ties(ties)
    n_fit = _fit_n(st.n, fit_n)
    exact = {rule: exact_per_user(st, metrics, rule) for rule in TIE_RULES}
    sim = shared_evaluation(
        st,
        m,
        metrics,
        estimators,
        repetitions=repetitions,
        seed=[seed, 1],
        replace=replace,
        shared=True,
        ties=TIE_RULES,
        fit_n=n_fit,
    )
    indep = shared_evaluation(
        st,
        m,
        metrics,
        estimators,
        repetitions=repetitions,
        seed=[seed, 2],
        replace=replace,
        shared=False,
        ties=ties,
        fit_n=n_fit,
    )
    grid = order_grid(ms, int(st.n.min()), replace)
    runs_ = [(grid, tuple(order_estimators))]
    for pm, ests in paper_points(float(st.n.mean()), int(st.n.min()), replace).items():
        if pm not in grid:  # the paper's thresholds, with the estimators their claims read
            runs_.append(((pm,), ests))
    parts = [
        order_study(
            st,
            g,
            metrics,
            e,
            repetitions=order_repetitions or repetitions,
            seed=seed,
            replace=replace,
            shared=True,
            ties=ties,
            fit_n=n_fit,
            with_means=True,
        )
        for g, e in runs_
        if g
    ]
    order = pd.concat([p[0] for p in parts], ignore_index=True).sort_values(
        "m", kind="stable", ignore_index=True
    )
    order_means = pd.concat([p[1] for p in parts], ignore_index=True).sort_values(
        "m", kind="stable", ignore_index=True
    )
    grid = tuple(sorted(set(order["m"])))
    return RealStudy(
        dataset=str(dataset),
        systems=st.systems,
        metrics=tuple(metrics),
        estimators=tuple(estimators),
        m=int(m),
        repetitions=int(repetitions),
        replace=bool(replace),
        ties=ties,
        seed=int(seed),
        standing=st,
        n_fit=n_fit,
        dropped_users=0,
        exact=exact,
        sim=sim,
        sim_independent=indep,
        order=order,
        order_means=order_means,
        order_estimators=tuple(order_estimators),
        ms=grid,
        multi=multi,
        notes=[],
    )


def _multi_study(
    dataset: str,
    ratings: pd.DataFrame,
    systems: Sequence[str],
    labels: Mapping[str, str],
    k: int,
    ties: str,
    seed: int,
    m: int,
    repetitions: int,
    replace: bool,
    metrics: Sequence[str],
    estimators: Sequence[str],
) -> MultiStudy:
    """Each user's last k interactions held out; gaps, exact metrics and repeated sampled
    evaluation."""
    train, held = _last_k_out(ratings, k)
    held = held[["user", "item"]]
    known = held["item"].isin(train["item"].unique())
    dropped = int((~known).sum())
    held = held[known].reset_index(drop=True)
    pairs = candidate_pairs(train, held["user"].unique())
    frames = _scores_by_system(
        systems, labels, train, dataset=dataset, split=f"leave-last-{k}-out", seed=seed, pairs=pairs
    )
    ms_ = multi_standing(frames, held, ties)
    del frames
    exact = multi_exact(ms_, metrics)
    sim = multi_shared_evaluation(
        ms_, m, metrics, estimators, repetitions=repetitions, seed=[seed, 3], replace=replace
    )
    return MultiStudy(k, ties, ms_, exact, sim, dropped)
