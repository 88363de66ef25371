r"""Valcarce et al. (2020), §3.2, eqs. 1–11: the nine metrics written out as the paper prints them.

Seven of the nine are the formulas of Valcarce et al. (2018), eqs. 1–8, which that chapter
already writes out in numpy (:mod:`recmeta.papers.valcarce2018.equations`): P (eq. 1),
Recall (2), AP (4), nDCG with the rating as gain (5), RR (6), bpref (9) and infAP with
:math:`\varepsilon = 10^{-5}` (10–11) are the same equations, and this module reuses those
transcriptions. The two new metrics are written out here: F1 (eq. 3) and ERR with the gain
:math:`(2^r - 1)/2^{r_{\max}}` (eqs. 7–8).

The chapter's scores come from the study's scorer (:func:`~.folds.scorer`, one compiled pass
over the judged positions). :func:`hand_gaps` checks that scorer against the transcriptions on
the 2018 chapter's hand-made case, pooled as a one-fold study; :func:`study_check` does it on a
sample of the chapter's own (fold, user) topics, every system, at the chapter's cut-off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...metrics import Runs
from ..valcarce2018 import equations as v18
from .folds import METRICS, pool_folds, scorer

__all__ = [
    "EQUATIONS",
    "EQ_SAMPLE",
    "err",
    "f1",
    "gaps",
    "hand_gaps",
    "hand_study",
    "study_check",
    "transcribe",
]

#: (fold, user) topics of the chapter's runs on which the scores are checked
EQ_SAMPLE = 50

Eq = Callable[..., float]


def f1(ranked: np.ndarray, judged: np.ndarray, t: float, n: int) -> float:
    r"""Eq. 3: :math:`F1_u@n = 2\,P_u@n\,Recall_u@n / (P_u@n + Recall_u@n)` (0 when both
    are 0), with eqs. 1–2 as :mod:`recmeta.papers.valcarce2018.equations` writes them."""
    p = v18.precision(ranked, judged, t, n)
    r = v18.recall(ranked, judged, t, n)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def err(ranked: np.ndarray, judged: np.ndarray, t: float, n: int, *, rmax: float) -> float:
    r"""Eqs. 7–8: :math:`ERR_u = \sum_{k=1}^n \frac1k \prod_{p<k}(1 - G_p)\,G_k` with
    :math:`G_k = (2^{r(u, L_u^n[k])} - 1) / 2^{r_{\max}}`. An unrated item has gain 0; a rated
    one has its rating's gain whether or not it reaches the threshold (eq. 8 uses the rating)."""
    g = np.nan_to_num(np.asarray(ranked, dtype=float)[:n], nan=0.0)
    gain = (2.0**g - 1.0) / 2.0**rmax
    reach = np.concatenate([[1.0], np.cumprod(1.0 - gain)[:-1]])
    return float((reach * gain / np.arange(1, g.size + 1)).sum())


#: each engine metric, its equations in the paper and its transcription
EQUATIONS: dict[str, tuple[str, Eq]] = {
    "P": ("eq. 1", v18.precision),
    "R": ("eq. 2", v18.recall),
    "F1": ("eq. 3", f1),
    "AP": ("eq. 4", v18.average_precision),
    "nDCG": ("eq. 5", v18.ndcg),
    "RR": ("eq. 6", v18.reciprocal_rank),
    "ERR": ("eqs. 7–8", err),
    "bpref": ("eq. 9", v18.bpref),
    "infAP": ("eqs. 10–11", v18.inferred_ap),
}
assert tuple(EQUATIONS) == METRICS


def transcribe(
    metric: str, ranked: np.ndarray, judged: np.ndarray, t: float, n: int, *, rmax: float
) -> float:
    """The paper's value of ``metric`` (an engine name: ``"ERR"``) at cut-off ``n``; ``rmax``
    is ERR's top of the rating scale (eq. 8), unused by the others."""
    if metric not in EQUATIONS:
        raise ValueError(f"no equation for {metric!r}; the paper defines {list(EQUATIONS)}")
    fn = EQUATIONS[metric][1]
    if metric == "ERR":
        return fn(ranked, judged, t, n, rmax=rmax)
    return fn(ranked, judged, t, n)


def gaps(
    test: pd.DataFrame,
    runs: Runs,
    scores: Mapping[str, np.ndarray],
    *,
    threshold: float,
    rmax: float,
    cutoff: int,
    topics: Sequence[int] | np.ndarray,
) -> dict[str, float]:
    """The largest |score − transcription| of each metric at ``cutoff`` over every system and
    the ``topics`` (positions in ``runs.users``) that have a relevant item.

    ``test`` holds the judged entries (user, item, rating) with the users as ``runs.users``
    names them; ``scores`` maps ``"P@100"``-style measures to (systems × topics) scores. The
    grades of the ranked items come from :func:`recmeta.papers.valcarce2018.equations.grades_of`,
    a lookup apart from the engine's own join."""
    topics = np.sort(np.asarray(topics, dtype=np.int64))
    grades = v18.grades_of(test, runs, topics)
    by_user = {u: g["rating"].to_numpy(dtype=float) for u, g in test.groupby("user")}
    judged = [by_user.get(u, np.empty(0)) for u in runs.users[topics]]
    keep = [j for j, r in enumerate(judged) if (r >= threshold).any()]
    out: dict[str, float] = {}
    for m in EQUATIONS:
        matrix = scores.get(f"{m}@{cutoff}")
        if matrix is None:
            continue
        found = [
            abs(
                matrix[s, topics[j]]
                - transcribe(m, grades[s, j], judged[j], threshold, cutoff, rmax=rmax)
            )
            for j in keep
            for s in range(matrix.shape[0])
        ]
        out[f"{m}@{cutoff}"] = float(max(found)) if found else float("nan")
    return out


def hand_study() -> Any:
    """The 2018 chapter's hand-made case (:data:`~recmeta.papers.valcarce2018.equations.
    HAND_TEST`, ``HAND_RUNS``) pooled as a one-fold :class:`~.folds.Study` (threshold 4,
    ratings up to 5)."""
    return pool_folds([v18.HAND_TEST], [v18.HAND_RUNS], threshold=4, max_grade=5)


def _study_gaps(
    study: Any, scores: Mapping[str, np.ndarray], cutoff: int, topics: np.ndarray
) -> dict[str, float]:
    """:func:`gaps` on a :class:`~.folds.Study`'s judgments and runs."""
    j = study.judgments
    return gaps(
        j.to_frame(),
        study.runs,
        scores,
        threshold=j.threshold,
        rmax=j.max_grade,
        cutoff=cutoff,
        topics=topics,
    )


def hand_gaps(
    metrics: Sequence[str] = METRICS,
    cutoffs: Sequence[int] = (1, 3, 5),
    infap: str = "pooled",
) -> dict[str, float]:
    """:func:`gaps` on the hand-made case (:func:`hand_study`) at each of ``cutoffs``, for
    ``metrics``: the chapter's scorer against eqs. 1–11 written out (``infap="trec_eval"``
    scores infAP as trec_eval reads plain qrels, which is not eq. 11: a check that must then
    fail)."""
    study = hand_study()
    every = np.arange(len(study.runs.users))
    out: dict[str, float] = {}
    for k in cutoffs:
        out |= _study_gaps(study, scorer(study, k, metrics, infap=infap).score(), k, every)
    return out


def study_check(
    study: Any, matrices: Mapping[str, np.ndarray], cutoff: int, *, seed: int
) -> dict[str, Any]:
    """The chapter's scores against eqs. 1–11 written out, on :data:`EQ_SAMPLE` (fold, user)
    topics with a relevant item (seeded) × every system, at ``cutoff``: the ``metric_check``
    result of :meth:`~.study.Results.ledger_inputs` (``gaps`` per measure, ``users`` the
    topics checked, ``systems``, ``cutoffs``)."""
    candidates = np.flatnonzero(study.judgments.relevant_counts() > 0)
    pick = np.random.default_rng(seed).permutation(candidates)[:EQ_SAMPLE]
    return {
        "gaps": _study_gaps(study, matrices, cutoff, pick),
        "users": int(pick.size),
        "systems": len(study.runs.systems),
        "cutoffs": [int(cutoff)],
    }
