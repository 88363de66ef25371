"""Virtual users, Scheel, Lommatzsch & Albayrak (2011), sec. 2.2, Figs. 7–8, on MovieLens.

One system's scores, cut into graded levels, serve as the reference judgments for the others
(:func:`quantise_levels`, :func:`virtual_judgments`, :func:`virtual_user_study`), on candidate
items drawn per user (:func:`candidate_items`); the correlation of two systems' scores comes
with a bootstrap over users (:func:`pearson_over_users`). :func:`virtual_experiment` runs the
chapter's recommenders on the candidates and evaluates them so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import analyses, recommenders
from ...data import splits
from ...metaeval import bootstrap
from ...metrics import Judgments, Runs, evaluate
from ...recommenders import roster
from .candidates import candidate_items, virtual_candidates
from .measures import PAPER_METRICS
from .scales import REAL_LABELS, REAL_METRICS
from .settings import Settings

__all__ = [
    "candidate_items",
    "levels_per_user",
    "levels_used",
    "pearson_over_users",
    "quantise_levels",
    "virtual_experiment",
    "virtual_judgments",
    "virtual_means",
    "virtual_table",
    "virtual_user_study",
]


def quantise_levels(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score", scope: str = "user"
) -> np.ndarray:
    """Scores cut into graded levels, 0 for the lowest score.

    ``n_levels = L``: ``L`` equal-width ordinal levels ``0 .. L-1``,
    ``level = min(floor(L (s - lo) / (hi - lo)), L - 1)`` — the paper's ordinal virtual user
    (strategy 1, 9 levels). ``None``: the raw distance ``s - lo`` — its real-valued virtual user
    (strategy 9), whose levels are as many as the distinct scores and unevenly spaced.

    ``scope="user"`` (default): ``lo``, ``hi`` are the user's own lowest and highest score, so
    every user's top candidate reaches level ``L - 1``; a user whose scores are all equal gets 0
    everywhere (no relevant item). ``scope="global"``: one range over all users, as the paper's
    levels are (its TF scores are counts on one scale for every query), so a user may use only a
    few of the levels and may have no positive grade.
    """
    if "user" not in scores.columns or score_col not in scores.columns:
        raise KeyError(f"scores need columns 'user' and {score_col!r}; got {list(scores.columns)}")
    s = scores[score_col].to_numpy(np.float64)
    if not np.isfinite(s).all():
        raise ValueError(
            f"{int((~np.isfinite(s)).sum())} scores are NaN or infinite; a virtual "
            "user must grade every candidate (fill unscored items first)"
        )
    if n_levels is not None and n_levels < 2:
        raise ValueError(f"n_levels must be >= 2 or None, got {n_levels}")
    if scope not in ("user", "global"):
        raise ValueError(f"scope must be 'user' or 'global', got {scope!r}")
    if scope == "global":
        lo = np.full(s.shape, s.min(initial=0.0))
        hi = np.full(s.shape, s.max(initial=0.0))
    else:
        users = scores["user"].to_numpy()
        lo = pd.Series(s).groupby(users).transform("min").to_numpy()
        hi = pd.Series(s).groupby(users).transform("max").to_numpy()
    if n_levels is None:
        return s - lo
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.minimum(np.floor(n_levels * (s - lo) / span), n_levels - 1).astype(np.float64)


def levels_per_user(grades: pd.DataFrame, column: str = "rating") -> pd.Series:
    """Number of distinct grades each user's judgments use (level 0 included)."""
    missing = [c for c in ("user", column) if c not in grades.columns]
    if missing:
        raise KeyError(f"grades lack column(s) {missing}")
    return grades.groupby("user")[column].nunique().rename("levels")


def virtual_judgments(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score", scope: str = "user"
) -> pd.DataFrame:
    """Graded judgments (user, item, rating) from one system's scores: a "virtual user".

    Scheel et al. (sec. 2.2) take the scores of a retrieval strategy as reference ratings when a
    collection has too few relevance levels; the levels come from :func:`quantise_levels`.
    """
    missing = [c for c in ("user", "item", score_col) if c not in scores.columns]
    if missing:
        raise KeyError(f"scores lack column(s) {missing}; they have {list(scores.columns)}")
    return pd.DataFrame(
        {
            "user": scores["user"].to_numpy(),
            "item": scores["item"].to_numpy(),
            "rating": quantise_levels(scores, n_levels, score_col=score_col, scope=scope),
        }
    )


def virtual_user_study(
    scores: pd.DataFrame,
    reference: str,
    levels: Sequence[int | None],
    metrics: Sequence[str] = tuple(PAPER_METRICS),
    *,
    thresholds: bool = False,
    unscored: str = "raise",
    per_user: bool = False,
) -> pd.DataFrame:
    """Evaluate every system against the virtual user made of ``reference``'s scores.

    ``scores`` is a tidy frame (system, user, item, score) in which every system scores the same
    candidate items of each user; each system's ranking of the candidates (by score, ties as in
    :class:`recmeta.metrics.Runs`) is evaluated against the graded judgments
    ``virtual_judgments(scores of reference, n)`` for each ``n`` in ``levels``, the analogue of
    the paper's Figs. 7 (9 levels) and 8 (158 levels). τ is the lowest positive grade, so that
    every user with two distinct reference scores is evaluated. With ``thresholds``, MAP at every
    threshold is added as metric ``"MAP"`` with its ``threshold``.

    A system may leave candidates unscored (NaN, e.g. k-NN without neighbours): with
    ``unscored="last"`` they go to the end of its ranking; the default raises. The reference
    system must score every candidate.

    Returns a tidy frame: levels (``n``, or -1 for raw scores), system, metric, threshold, value
    (mean over users) — with ``per_user``, a ``user`` column and one row per evaluated user.
    """
    missing = [c for c in ("system", "user", "item", "score") if c not in scores.columns]
    if missing:
        raise KeyError(f"scores lack column(s) {missing}; they have {list(scores.columns)}")
    if unscored not in ("raise", "last"):
        raise ValueError(f"unscored must be 'raise' or 'last', got {unscored!r}")
    nan = scores["score"].isna()
    if nan.any():
        if unscored == "raise" or nan[scores["system"] == reference].any():
            bad = ", ".join(map(str, pd.unique(scores.loc[nan, "system"])))
            raise ValueError(
                f"{int(nan.sum())} candidate scores are NaN (systems: {bad}); pass "
                "unscored='last' to rank them last (not possible for the reference)"
            )
        scores = scores.assign(score=scores["score"].fillna(-np.inf))
    ref = scores[scores["system"] == reference]
    if ref.empty:
        known = ", ".join(map(str, pd.unique(scores["system"])))
        raise ValueError(f"no scores of reference system {reference!r}; systems: {known}")
    pairs = pd.MultiIndex.from_frame(scores[["user", "item"]])
    ref_pairs = pd.MultiIndex.from_frame(ref[["user", "item"]])
    if not pairs.isin(ref_pairs).all():
        raise ValueError(
            f"some systems score (user, item) pairs that {reference!r} does not; "
            "every system must score the same candidates"
        )
    parts = []
    first, runs = None, None  # every level count grades the same pairs: build the runs once
    for n in levels:
        grades = virtual_judgments(ref, n)
        positive = grades["rating"].to_numpy()[grades["rating"].to_numpy() > 0]
        if positive.size == 0:
            raise ValueError(f"the virtual user of {reference!r} grades nothing above 0")
        if first is None:
            j = first = Judgments.from_frame(grades, threshold=float(positive.min()))
            runs = Runs.from_frame(scores[["system", "user", "item", "score"]], j)
        else:
            j = Judgments.from_frame(
                grades, threshold=float(positive.min()), users=first.users, items=first.items
            )
        assert runs is not None  # built with ``first``, in the first pass
        res = evaluate(j, runs, list(metrics), per_user=per_user).assign(threshold=np.nan)
        if thresholds:
            for t in np.unique(positive):
                ap = evaluate(j.with_threshold(t), runs, ["AP"], per_user=per_user)
                res = pd.concat([res, ap.assign(metric="MAP", threshold=t)], ignore_index=True)
        parts.append(res.assign(levels=-1 if n is None else int(n)))
    cols = ["levels", "system", *(["user"] if per_user else []), "metric", "threshold", "value"]
    return pd.concat(parts, ignore_index=True)[cols]


def pearson_over_users(
    x: np.ndarray,
    y: np.ndarray,
    users: np.ndarray,
    *,
    n_resamples: int = 1999,
    seed: int = 0,
    counts: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Pearson's r of ``x`` and ``y`` over all pairs, and its bootstrap replicates over users.

    Pairs with a NaN on either side are dropped. A replicate draws the users with replacement
    (multinomial ``counts``, resamples × users, in the order of ``pandas.factorize(users)``;
    drawn from ``seed`` unless given) and keeps every pair of each drawn user, so the pairs of a
    user stay together. Vectorised: per-user sums of ``1, x, y, x², y², xy`` (after centring),
    one matrix product for all replicates. Scheel et al. (sec. 2.2) report r = 0.96 between
    their two virtual users.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    users = np.asarray(users)
    if not (x.shape == y.shape == users.shape) or x.ndim != 1:
        raise ValueError(
            f"x, y and users must be 1-d of one length, got {x.shape}, {y.shape}, {users.shape}"
        )
    codes, uniq = pd.factorize(users)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        raise ValueError("fewer than three pairs without NaN")
    xc = x[ok] - x[ok].mean()
    yc = y[ok] - y[ok].mean()
    columns = (np.ones_like(xc), xc, yc, xc * xc, yc * yc, xc * yc)
    sums = np.stack(
        [np.bincount(codes[ok], weights=w, minlength=uniq.size) for w in columns], axis=1
    )

    def pearson(s: np.ndarray) -> np.ndarray:
        n, sx, sy, sxx, syy, sxy = s.T
        with np.errstate(invalid="ignore", divide="ignore"):
            return (sxy - sx * sy / n) / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))

    r = float(pearson(sums.sum(axis=0)[None, :])[0])
    if counts is None:
        counts = bootstrap.resample_counts(uniq.size, int(n_resamples), seed)
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] != uniq.size:
        raise ValueError(f"counts must be resamples × {uniq.size} users, got {counts.shape}")
    return r, pearson(counts @ sums)


@analyses.analysis
def virtual_experiment(split: splits.Split, dataset: str, settings: Settings) -> dict[str, Any]:
    """The virtual-user study on one dataset: ``n_candidates`` unrated items per test user
    (:func:`candidate_items`), scored by every system (from the run cache), and each system
    evaluated per user against the reference system's virtual users (every level count of the
    settings, then the raw scores; unscored candidates last). Returns the ledger's
    ``candidate_scores`` and ``virtual_per_user``."""
    s = settings
    pairs = virtual_candidates(split, s)
    scores = recommenders.make(
        roster.systems(list(s.systems)),
        split.train,
        dataset=dataset,
        split=f"holdout-{s.test_fraction}",
        seed=s.seed,
        pairs=pairs,
    )
    per_user = virtual_user_study(
        scores,
        s.reference_system,
        [*s.virtual_levels, None],
        REAL_METRICS,
        unscored="last",
        per_user=True,
    )
    return {"candidate_scores": scores, "virtual_per_user": per_user}


def levels_used(scores: pd.DataFrame, reference: str, n_levels: int) -> dict[str, float]:
    """Mean number of levels a user's candidates use when the ``reference`` system's scores are
    cut into ``n_levels`` per user and once over all users (``"user"``, ``"global"``)."""
    ref = scores[scores["system"] == reference]
    return {
        scope: float(levels_per_user(virtual_judgments(ref, n_levels, scope=scope)).mean())
        for scope in ("user", "global")
    }


def virtual_means(per_user: pd.DataFrame) -> pd.DataFrame:
    """:func:`virtual_user_study` per-user rows averaged over users: levels, system, metric,
    value, the measure's label and the reference's levels as text (``raw`` for -1)."""
    out = per_user.groupby(["levels", "system", "metric"], sort=False)["value"].mean().reset_index()
    out["measure"] = out["metric"].map(REAL_LABELS)
    out["reference levels"] = out["levels"].map(lambda n: "raw" if n < 0 else str(n))
    return out


def virtual_table(means: pd.DataFrame) -> pd.DataFrame:
    """Each system's mean per measure and reference levels (columns), from
    :func:`virtual_means`."""
    return means.pivot_table(
        index="system", columns=["measure", "reference levels"], values="value", sort=False
    )
