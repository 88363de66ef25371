r"""Valcarce et al. (2018), §3, eqs. 1–8: the seven metrics written out as the paper prints them.

Each function reads one ranked list as the grades of its items (``NaN``: an item the user did not
rate, i.e. unjudged) and the user's judged grades (``judged``), with the relevance threshold
``t`` (a grade ``>= t`` is relevant, a lower one judged non-relevant), cut at ``n``. They are
direct numpy transcriptions of the paper's formulas, written apart from the metric engine
(:mod:`recmeta.metrics`), so that the chapter can check the engine against them
(:func:`engine_gaps`) on a hand-made case (:data:`HAND_TEST`, :data:`HAND_RUNS`) and on a sample
of its own runs (the ``metric_sample`` result of :func:`.study.analyse`).

Where an equation leaves a value undefined the transcription takes trec_eval's reading, which
the paper says it follows (§3): RR is 0 when no relevant item is ranked; in bpref (eq. 6) a
user with no judged non-relevant item makes the fraction 0/0, read as 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...metrics import Judgments, Runs, score_matrices
from .values import PAPER_EPSILON

__all__ = [
    "EQUATIONS",
    "HAND_RUNS",
    "HAND_TEST",
    "engine_gaps",
    "grades_of",
    "transcribe",
]

Eq = Callable[[np.ndarray, np.ndarray, float, int], float]


def _parts(
    ranked: np.ndarray, judged: np.ndarray, t: float, n: int
) -> tuple[np.ndarray, np.ndarray, int, int]:
    g = np.asarray(ranked, dtype=float)[:n]
    rel = (g >= t).astype(float)  # NaN (unjudged) compares false: not relevant
    non = (g < t).astype(float)
    judged = np.asarray(judged, dtype=float)
    return rel, non, int((judged >= t).sum()), int((judged < t).sum())


def precision(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 1: :math:`P_u@n = |L_u^n \cap R_u| / n`."""
    rel, _, _, _ = _parts(ranked, judged, t, n)
    return float(rel.sum() / n)


def recall(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 2: :math:`Recall_u@n = |L_u^n \cap R_u| / |R_u|`."""
    rel, _, n_rel, _ = _parts(ranked, judged, t, n)
    return float(rel.sum() / n_rel)


def average_precision(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 3: :math:`AP_u@n = \frac{1}{|R_u|}\sum_{k=1}^n rel(L_u^n[k])\, P_u@k`."""
    rel, _, n_rel, _ = _parts(ranked, judged, t, n)
    p_at_k = np.cumsum(rel) / np.arange(1, rel.size + 1)
    return float((rel * p_at_k).sum() / n_rel)


def ndcg(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 4 with :math:`G(u, n, k) = r(u, L_u^n[k])` and :math:`D(k) = 1/\log_2(k + 1)`; the
    ideal ranking orders the user's judged items by decreasing gain."""
    g = np.nan_to_num(np.asarray(ranked, dtype=float)[:n], nan=0.0)
    ideal = np.sort(np.asarray(judged, dtype=float))[::-1][:n]
    disc = 1 / np.log2(np.arange(2, n + 2))
    return float((g * disc[: g.size]).sum() / (ideal * disc[: ideal.size]).sum())


def reciprocal_rank(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 5: :math:`RR_u = 1 / \min_k\{rel(L_u^n[k]) > 0\}` (0 when no relevant item is
    ranked)."""
    rel, _, _, _ = _parts(ranked, judged, t, n)
    hits = np.flatnonzero(rel)
    return float(1 / (hits[0] + 1)) if hits.size else 0.0


def bpref(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 6: :math:`\frac{1}{|R_u|}\sum_k rel(L_u^n[k])\,(1 - \frac{\min(|L_u^k \cap N_u|,
    |R_u|)}{\min(|N_u|, |R_u|)})` (the fraction read as 0 when :math:`N_u` is empty)."""
    rel, non, n_rel, n_non = _parts(ranked, judged, t, n)
    above = np.minimum(np.cumsum(non), n_rel)
    frac = above / min(n_non, n_rel) if n_non else np.zeros_like(above)
    return float((rel * (1 - frac)).sum() / n_rel)


def inferred_ap(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eqs. 7–8: :math:`\frac{1}{|R_u|}\sum_k rel(L_u^n[k])\,E[P@k]` with
    :math:`E[P@k] = \frac1k + \frac{k-1}{k}\frac{|L^{k-1} \cap R| + \epsilon}{|L^{k-1} \cap R|
    + |L^{k-1} \cap N| + 2\epsilon}`, :math:`\epsilon = 10^{-5}` (§3)."""
    rel, non, n_rel, _ = _parts(ranked, judged, t, n)
    k = np.arange(1, rel.size + 1)
    r_above = np.concatenate([[0.0], np.cumsum(rel)[:-1]])
    n_above = np.concatenate([[0.0], np.cumsum(non)[:-1]])
    eps = PAPER_EPSILON
    expected = 1 / k + (k - 1) / k * (r_above + eps) / (r_above + n_above + 2 * eps)
    return float((rel * expected).sum() / n_rel)


#: each engine metric, its equations in the paper and its transcription
EQUATIONS: dict[str, tuple[str, Eq]] = {
    "P": ("eq. 1", precision),
    "R": ("eq. 2", recall),
    "AP": ("eq. 3", average_precision),
    "nDCG": ("eq. 4", ndcg),
    "RR": ("eq. 5", reciprocal_rank),
    "bpref": ("eq. 6", bpref),
    "infAP": ("eqs. 7–8", inferred_ap),
}


def transcribe(metric: str, ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    """The paper's value of ``metric`` (an engine name: ``"AP"``) at cut-off ``n``."""
    if metric not in EQUATIONS:
        raise ValueError(f"no equation for {metric!r}; the paper defines {list(EQUATIONS)}")
    return EQUATIONS[metric][1](ranked, judged, t, n)


def grades_of(test: pd.DataFrame, runs: Runs, users: Sequence[int] | np.ndarray) -> np.ndarray:
    """The grade of every ranked item of the users at positions ``users`` of ``runs.users``:
    systems × users × depth, ``NaN`` for an unrated item or an empty slot.

    A lookup of the ranked item ids in the test frame (user, item, rating), apart from the
    engine's own join."""
    codes = runs.ranks[:, users, :]
    ids = runs.items.to_numpy()[np.maximum(codes, 0)]  # empty slots masked below
    table = test.set_index(["user", "item"])["rating"]
    out = np.full(codes.shape, np.nan)
    for j, u in enumerate(runs.users[list(users)]):
        mine = table.xs(u, level="user") if u in table.index.get_level_values(0) else None
        if mine is None:
            continue
        got = pd.Series(ids[:, j, :].ravel()).map(mine).to_numpy(dtype=float)
        out[:, j, :] = np.where(codes[:, j, :] >= 0, got.reshape(codes.shape[0], -1), np.nan)
    return out


#: a hand-made test set: user 1 has 2 relevant and 2 non-relevant items, user 2 one relevant
#: item and none judged non-relevant, user 3 no relevant item (the engine leaves it out)
HAND_TEST = pd.DataFrame(
    {
        "user": [1, 1, 1, 1, 2, 2, 3],
        "item": [10, 11, 12, 13, 20, 21, 30],
        "rating": [5.0, 4.0, 2.0, 1.0, 4.0, 5.0, 3.0],
    }
)
#: two systems' lists for it (higher score first), with unrated items among the rated ones
HAND_RUNS = pd.DataFrame(
    {
        "system": ["a"] * 9 + ["b"] * 7,
        "user": [1, 1, 1, 1, 1, 2, 2, 2, 3] + [1, 1, 1, 1, 2, 2, 3],
        "item": [12, 99, 10, 13, 11, 98, 21, 20, 30] + [10, 11, 12, 97, 97, 20, 96],
        "score": [9.0, 8, 7, 6, 5, 9, 8, 7, 1] + [4.0, 3, 2, 1, 2, 1, 1],
    }
)


def engine_gaps(
    test: pd.DataFrame,
    runs: Runs,
    judgments: Judgments,
    metrics: Sequence[str],
    cutoffs: Sequence[int],
    users: Sequence[int] | np.ndarray | None = None,
    scores: Mapping[str, np.ndarray] | None = None,
) -> dict[str, float]:
    """The largest |engine − transcription| of each ``metric@cutoff`` over every system and
    every user at ``users`` (positions in ``judgments.users``; default all) that has a relevant
    item. ``scores`` (measure → systems × users) are the engine's scores when the caller has
    them; by default :func:`recmeta.metrics.score_matrices` with the paper's infAP
    (``infap="pooled"``)."""
    users = list(range(len(judgments.users))) if users is None else list(users)
    measures = [f"{m}@{k}" for m in metrics for k in cutoffs]
    if scores is None:
        scores = score_matrices(judgments, runs, measures, infap="pooled")
    grades = grades_of(test, runs, users)
    by_user = {u: g["rating"].to_numpy(dtype=float) for u, g in test.groupby("user")}
    t = judgments.threshold
    out: dict[str, float] = {}
    for m in metrics:
        for k in cutoffs:
            gaps = [
                abs(scores[f"{m}@{k}"][s, u] - transcribe(m, grades[s, j], by_user[uid], t, k))
                for j, (u, uid) in enumerate(zip(users, judgments.users[users], strict=True))
                if (by_user.get(uid, np.empty(0)) >= t).any()
                for s in range(len(runs.systems))
            ]
            out[f"{m}@{k}"] = float(max(gaps)) if gaps else float("nan")
    return out


def hand_gaps(metrics: Sequence[str], cutoffs: Sequence[int] = (1, 3, 5)) -> dict[str, float]:
    """:func:`engine_gaps` on the hand-made case :data:`HAND_TEST`, :data:`HAND_RUNS`."""
    j = Judgments.from_frame(HAND_TEST, threshold=4)
    runs = Runs.from_frame(HAND_RUNS, j)
    return engine_gaps(HAND_TEST, runs, j, metrics, cutoffs)


def worst(gaps: Mapping[str, float]) -> tuple[str, float]:
    """The measure with the largest gap, and that gap (NaN gaps, no user, are skipped)."""
    finite = {k: v for k, v in gaps.items() if np.isfinite(v)}
    if not finite:
        return "", float("nan")
    key = max(finite, key=lambda k: finite[k])
    return key, finite[key]
