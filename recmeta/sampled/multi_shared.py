"""Sampled evaluation of real runs when users have several held-out items (beyond the paper).

Each user has R relevant (held-out) items among n candidates. For each system, sort the user's
candidates (score descending; a tie rule orders relevant items against tied non-relevant ones)
and give each non-relevant candidate its *gap*: the number of relevant items ranked before it.
Relevant item j (in the system's order) has g_j non-relevant items before it, so its true rank
is j + g_j; a sample of m non-relevant candidates puts X_j of them before it, the number of
sampled items with gap < j, and its sampled rank is j + X_j (:mod:`recmeta.sampled.multi`).

As for one item (:mod:`recmeta.sampled.shared`), only the joint class of a sampled candidate
matters — here its gap under every system — so a draw of m shared candidates is a draw of
counts over the (R_max + 1)^S joint classes, from the same chain of binomial (hypergeometric)
laws. Tie rules: ``"pessimistic"`` (relevant after tied non-relevant items), ``"optimistic"``,
``"trec_eval"`` (item id as text, descending) — the metric engine's rules
(:mod:`recmeta.metrics._options`); ``"expected"`` needs a random order and is not offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .evaluation import Estimator, parse_estimator
from .held_out import _align, _check_columns, _prepare
from .multi import _parse, _scale, _unscaled, item_corrections
from .shared import _sequential
from .ties import check_ties

__all__ = [
    "MultiStanding",
    "multi_standing",
    "multi_exact",
    "multi_shared_evaluation",
    "MULTI_TIES",
]

#: the tie rules the several-items study offers (a deterministic order is needed)
MULTI_TIES = ("pessimistic", "trec_eval", "optimistic")
_MAX_CELLS = 50_000


@dataclass(frozen=True)
class MultiStanding:
    """Relevant and non-relevant candidates of each user, for several systems.

    ``n`` (users,) candidates per user, ``R`` (users,) relevant ones; ``g`` (systems, users,
    R_max): non-relevant items before the j-th relevant one (−1 beyond R); ``cells`` (users,
    (R_max + 1)^S): non-relevant candidates per joint gap class, whose per-system gaps are the
    rows of ``patterns``.
    """

    users: np.ndarray
    systems: tuple[str, ...]
    n: np.ndarray
    R: np.ndarray
    g: np.ndarray
    cells: np.ndarray
    patterns: np.ndarray
    ties: str

    @property
    def negatives(self) -> np.ndarray:
        return self.n - self.R


def multi_standing(
    scores: pd.DataFrame | Mapping[str, pd.DataFrame],
    held_out: pd.DataFrame,
    ties: str = "pessimistic",
) -> MultiStanding:
    """Gaps of every candidate and the true ranks of every relevant item, for each system.

    ``scores`` as in :func:`~recmeta.sampled.held_out.standing`; ``held_out``: columns user,
    item, one row per relevant item (several per user). Users keep their first appearance's
    order.
    """
    check_ties(ties)
    if ties not in MULTI_TIES:
        raise ValueError(
            f"the several-items study needs a deterministic tie rule, one of {MULTI_TIES}; "
            f"got {ties!r}"
        )
    _check_columns("held_out", held_out, ["user", "item"])
    if held_out.duplicated(["user", "item"]).any():
        raise ValueError("held_out repeats a (user, item) pair")
    frames = _prepare(scores)
    users = pd.unique(held_out["user"].to_numpy())
    al = _align(frames, users, held_out["item"].to_numpy())
    hu = pd.Index(users).get_indexer(held_out["user"].to_numpy())
    pos = al.positions(hu, held_out["item"].to_numpy())
    if np.any(pos < 0):
        bad = int(np.flatnonzero(pos < 0)[0])
        raise ValueError(
            f"{int((pos < 0).sum())} held-out item(s) are not among their user's scored candidates "
            f"(e.g. user {held_out['user'].iloc[bad]!r}, item {held_out['item'].iloc[bad]!r}); "
            "drop them"
        )
    U, S = len(users), len(frames)
    rel = np.zeros(al.u.size, dtype=bool)
    rel[pos] = True
    n = np.bincount(al.u, minlength=U).astype(np.int64)
    R = np.bincount(al.u[rel], minlength=U).astype(np.int64)
    if np.any(n - R < 1):
        raise ValueError("every user needs at least one non-relevant candidate")
    R_max = int(R.max())
    width = R_max + 1
    if width**S > _MAX_CELLS:
        raise ValueError(
            f"(R_max + 1)^S = {width**S} joint classes is too many; hold out fewer items or "
            "compare fewer systems"
        )
    neg = ~rel
    cu = al.u[neg]
    text = al.text_rank[al.icode]
    text_neg = text[neg]
    ru, rpos = al.u[rel], np.flatnonzero(rel)
    first = np.concatenate([[0], np.cumsum(R)[:-1]])
    gaps = np.zeros((S, int(neg.sum())), dtype=np.int64)
    g = np.full((S, U, R_max), -1, dtype=np.int64)
    for s_, x in enumerate(al.scores):
        # NaN ranks below every number: as a key it is −inf (a real −inf score would tie with it)
        key = np.where(np.isnan(x), -np.inf, x)
        xn = key[neg]
        # each user's relevant items in the list's order: score descending (trec_eval rule: then
        # item text descending), in a (users, R_max) table padded with −inf
        rk, rt = key[rpos], text[rpos]
        order = np.lexsort((-rt, -rk, ru))
        slot = np.arange(order.size) - first[ru[order]]
        t_score = np.full((U, R_max), -np.inf)
        t_text = np.zeros((U, R_max), dtype=np.int64)
        t_score[ru[order], slot] = rk[order]
        t_text[ru[order], slot] = rt[order]
        valid = np.arange(R_max)[None, :] < R[:, None]
        for q in range(R_max):
            tq = t_score[cu, q]
            if (
                ties == "pessimistic"
            ):  # a relevant item comes after the non-relevant ones tied with it
                q_first = tq > xn
            elif ties == "optimistic":
                q_first = tq >= xn
            else:
                q_first = (tq > xn) | ((tq == xn) & (t_text[cu, q] > text_neg))
            gaps[s_] += q_first & valid[cu, q]
        # negatives before the j-th relevant item: those with gap < j
        per_gap = np.bincount(cu * width + gaps[s_], minlength=U * width).reshape(U, width)
        before = np.cumsum(per_gap, axis=1)[:, :R_max]
        g[s_] = np.where(valid, before, -1)
    pattern = (gaps * (width ** np.arange(S))[:, None]).sum(axis=0)
    cells = np.bincount(cu * width**S + pattern, minlength=U * width**S).reshape(U, width**S)
    patterns = (np.arange(width**S)[:, None] // (width ** np.arange(S))[None, :]) % width
    return MultiStanding(users, tuple(frames), n, R, g, cells.astype(np.int64), patterns, ties)


def _per_user(metric: str, x: np.ndarray, R: np.ndarray, negatives: np.ndarray | int) -> np.ndarray:
    """Σ_j f_j over the first R[u] items: ``x`` (..., users, R_max) negatives before item j."""
    family, k = _parse(metric)
    R_max = x.shape[-1]
    j = np.arange(1, R_max + 1)
    neg = np.asarray(negatives)[..., None] if np.ndim(negatives) else negatives
    vals = _unscaled(family, k, j, np.maximum(x, 0), neg)
    vals = np.where(j <= R[:, None], vals, 0.0)
    return vals.sum(axis=-1) * _scale(family, k, R)


def multi_exact(ms: MultiStanding, metrics: Sequence[str]) -> dict[tuple[str, str], np.ndarray]:
    """Exact metric per user on the full candidate list: {(system, metric): (users,)}."""
    out = {}
    for s, system in enumerate(ms.systems):
        for metric in metrics:
            out[(system, metric)] = _per_user(metric, ms.g[s], ms.R, ms.negatives)
    return out


def multi_shared_evaluation(
    ms: MultiStanding,
    m: int,
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator],
    *,
    repetitions: int = 100,
    seed: int | Sequence[int] = 0,
    replace: bool = True,
    fit_negatives: int | None = None,
) -> pd.DataFrame:
    """Repeat a sampled evaluation with m shared non-relevant items per user.

    Estimators: ``"sampled"`` (the metric of the sampled list of m + R items), and the per-item
    corrections of :func:`~recmeta.sampled.multi.item_corrections` (``"rank-estimate"``,
    ``"cls"``, ``"BV γ"``, ...), all fitted for one number of negatives, ``fit_negatives``
    (default: the rounded mean of n − R). Columns system, metric, estimator, repetition, value.
    """
    pool = ms.negatives
    if not replace and np.any(m > pool):
        raise ValueError(
            f"cannot sample m={m} without replacement: a user has only {int(pool.min())} "
            "non-relevant candidates"
        )
    ests = [parse_estimator(e) for e in estimators]
    N = int(np.rint(pool.mean())) if fit_negatives is None else int(fit_negatives)
    R_max = ms.g.shape[2]
    S = len(ms.systems)
    # per system and gap v < R_max, the classes whose items fall in that gap
    gaps = ms.patterns[:, :, None] == np.arange(R_max)[None, None, :]
    per_gap = _sequential(
        ms.cells,
        int(m),
        int(repetitions),
        replace,
        np.random.default_rng(np.atleast_1d(seed).astype(np.int64).tolist()),
        groups=gaps.reshape(len(ms.patterns), S * R_max),
    )
    # X_j = sampled items with gap < j, for j = 1..R_max: (repetitions, users, R_max)
    Xs = [np.cumsum(per_gap[:, :, s * R_max : (s + 1) * R_max], axis=2) for s in range(S)]
    uu = np.arange(ms.R.size)[None, :, None]
    jj = np.arange(R_max)[None, None, :]
    rows = []
    for metric in metrics:
        for e in ests:
            V = (
                None
                if e.method is None
                else item_corrections(
                    metric, ms.R, N, int(m), e.method, gamma=e.gamma, replace=replace
                )
            )
            for system, X in zip(ms.systems, Xs, strict=True):
                value = _per_user(metric, X, ms.R, m) if V is None else V[uu, jj, X].sum(axis=2)
                rows.append(
                    pd.DataFrame(
                        {
                            "system": system,
                            "metric": metric,
                            "estimator": e.label,
                            "repetition": np.arange(repetitions),
                            "value": value.mean(axis=1),
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True)
