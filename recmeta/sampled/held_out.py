"""How each user's candidates stand to the user's held-out item: the input of a sampled-metrics
study.

Given every candidate's score for each user (e.g. all items the user has not rated in training)
and each user's single held-out item, each other candidate is, for each system, scored strictly
higher than the held-out item (*above*), equal to it (*tied*; then *before* or *after* it by item
id as text, descending, the book's order) or lower (*below*). NaN scores (a model that cannot
score the item) tie with each other and rank below every number.

:class:`Standing` keeps, per system and user, the counts above, tied and tied-before-by-id
(from which :func:`~recmeta.sampled.ties.tie_span` gives the true rank under a tie rule), and,
per user, how many candidates fall in each joint class of all systems — what a sampled
evaluation with negatives shared by all systems needs (:mod:`recmeta.sampled.shared`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .ties import DEFAULT_TIES, check_ties, tie_span

__all__ = ["Standing", "standing", "true_ranks", "candidate_pairs", "CODES"]

#: class codes of a candidate relative to the held-out item, per system
CODES = {"below": 0, "tied after": 1, "tied before": 2, "above": 3}
_MAX_SYSTEMS = 6  # 4**6 joint classes per user


@dataclass(frozen=True)
class Standing:
    """Candidates of each user against the user's held-out item, for several systems.

    ``above``, ``tied``, ``id_above`` have shape (systems, users); ``n`` (users,) counts the
    candidates of each user, the held-out item included; ``cells`` (users, 4**S) counts the
    other candidates in each joint class, whose per-system codes (:data:`CODES`) are the rows
    of ``patterns`` (4**S, S).
    """

    users: np.ndarray
    items: np.ndarray
    systems: tuple[str, ...]
    n: np.ndarray
    above: np.ndarray
    tied: np.ndarray
    id_above: np.ndarray
    cells: np.ndarray
    patterns: np.ndarray

    def spans(self, ties: str = DEFAULT_TIES) -> tuple[np.ndarray, np.ndarray]:
        """Span ``[lo, hi]`` of true ranks under ``ties``, each of shape (systems, users)."""
        return tie_span(self.above, self.tied, self.id_above, ties)

    def ranks(self, ties: str = DEFAULT_TIES) -> dict[str, np.ndarray]:
        """True rank per system under ``ties`` (the mean rank of the span for ``"expected"``)."""
        lo, hi = self.spans(ties)
        mid = (lo + hi) / 2.0
        return {s: (lo[i] if ties != "expected" else mid[i]) for i, s in enumerate(self.systems)}

    def tied_counts(self) -> dict[str, np.ndarray]:
        """Per system, the number of other candidates tied with each user's held-out item."""
        return {s: self.tied[i] for i, s in enumerate(self.systems)}


def _patterns(S: int) -> np.ndarray:
    return (np.arange(4**S)[:, None] // (4 ** np.arange(S))[None, :]) % 4


def _frames(scores: pd.DataFrame | Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    if isinstance(scores, Mapping):
        return dict(scores)
    if "system" in scores.columns:
        return {str(k): g for k, g in scores.groupby("system", sort=False)}
    return {"system": scores}


def _check_columns(name: str, frame: pd.DataFrame, cols: list[str]) -> None:
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; expected {cols}")


@dataclass(frozen=True)
class _Aligned:
    """Candidates of the held-out users, aligned across systems."""

    u: np.ndarray  # user index of each candidate (into the held-out users)
    icode: np.ndarray  # item code of each candidate (into ``items``)
    items: np.ndarray  # distinct item ids
    keys: np.ndarray  # u * (len(items) + 1) + icode, unique
    scores: np.ndarray  # (systems, candidates) float64
    text_rank: np.ndarray  # rank of each distinct item id as text (ascending)
    index: pd.Index  # ``keys`` as an index, its hash table built once (by the duplicate check)

    def key(self, u: np.ndarray, item: np.ndarray) -> np.ndarray:
        code = pd.Index(self.items).get_indexer(item)
        return np.where(code >= 0, u.astype(np.int64) * (len(self.items) + 1) + code, -1)

    def positions(self, u: np.ndarray, item: np.ndarray) -> np.ndarray:
        """Position among the candidates of each (user index, item) pair; −1 if absent."""
        return self.index.get_indexer(self.key(u, item))


def _align(frames: dict[str, pd.DataFrame], users: np.ndarray, extra_items: np.ndarray) -> _Aligned:
    """Scores of every system on the candidates of ``users``, in the first system's order."""
    uindex = pd.Index(users)
    names = list(frames)
    first = frames[names[0]]
    fu, fi = first["user"].to_numpy(), first["item"].to_numpy()
    keep = uindex.get_indexer(fu)
    sel = keep >= 0
    u = keep[sel]
    fi = fi[sel]
    icode, uniq = pd.factorize(np.concatenate([fi, extra_items]))
    icode = icode[: fi.size]
    width = len(uniq) + 1
    keys = u.astype(np.int64) * width + icode
    key_index = pd.Index(keys)
    if not key_index.is_unique:
        raise ValueError("scores repeat a (user, item) pair; keep one score per candidate")
    text_rank = np.empty(len(uniq), dtype=np.int64)
    text_rank[np.argsort(np.asarray(uniq).astype(str), kind="stable")] = np.arange(len(uniq))
    scores = np.empty((len(names), u.size))
    scores[0] = first["score"].to_numpy(dtype=np.float64)[sel]
    for i, name in enumerate(names[1:], start=1):
        f = frames[name]
        if (
            len(f) == len(first)
            and np.array_equal(f["user"].to_numpy(), first["user"].to_numpy())
            and np.array_equal(f["item"].to_numpy(), first["item"].to_numpy())
        ):
            scores[i] = f["score"].to_numpy(dtype=np.float64)[sel]
            continue
        uu = uindex.get_indexer(f["user"].to_numpy())
        ok = uu >= 0
        ic = pd.Index(uniq).get_indexer(f["item"].to_numpy()[ok])
        order = pd.Index(np.where(ic >= 0, uu[ok].astype(np.int64) * width + ic, -1)).get_indexer(
            keys
        )
        if np.any(order < 0) or ok.sum() != u.size:
            raise ValueError(
                f"system {name!r} does not score exactly the candidates of the first system"
            )
        scores[i] = f["score"].to_numpy(dtype=np.float64)[ok][order]
    return _Aligned(u, icode, np.asarray(uniq), keys, scores, text_rank, key_index)


def _prepare(
    scores: pd.DataFrame | Mapping[str, pd.DataFrame], max_systems: int = _MAX_SYSTEMS
) -> dict[str, pd.DataFrame]:
    frames = _frames(scores)
    if not frames:
        raise ValueError("no scores given")
    if len(frames) > max_systems:
        raise ValueError(
            f"at most {max_systems} systems at once (joint classes), got {len(frames)}"
        )
    for name, f in frames.items():
        _check_columns(f"scores of {name!r}", f, ["user", "item", "score"])
    return frames


def _missing_targets(pos: np.ndarray, users: np.ndarray, targets: np.ndarray) -> None:
    if np.any(pos < 0):
        bad = int(np.flatnonzero(pos < 0)[0])
        raise ValueError(
            f"{int((pos < 0).sum())} held-out item(s) are not among their user's scored candidates "
            f"(e.g. user {users[bad]!r}, item {targets[bad]!r}); score them too, or drop those "
            "users (items never seen in training cannot be ranked)"
        )


def standing(scores: pd.DataFrame | Mapping[str, pd.DataFrame], held_out: pd.DataFrame) -> Standing:
    """Classify every candidate against its user's held-out item, for each system.

    ``scores``: columns user, item, score (one row per candidate, the held-out item included),
    with a ``system`` column for several systems, or a mapping {system: frame}. Every system
    must score the same (user, item) pairs. ``held_out``: columns user, item, one row per user;
    its order is the order of the users in the result. Candidates of other users are ignored.
    """
    _check_columns("held_out", held_out, ["user", "item"])
    if held_out["user"].duplicated().any():
        users = held_out.loc[held_out["user"].duplicated(), "user"].unique()[:5].tolist()
        raise ValueError(
            f"held_out has several items for users {users}...: the sampled-metric analysis takes "
            "one held-out item per user (use a leave-one-out split)"
        )
    frames = _prepare(scores)
    users = held_out["user"].to_numpy()
    targets = held_out["item"].to_numpy()
    al = _align(frames, users, targets)
    pos = al.positions(np.arange(len(users)), targets)
    _missing_targets(pos, users, targets)
    u = al.u
    is_target = np.zeros(u.size, dtype=bool)
    is_target[pos] = True
    before_by_id = al.text_rank[al.icode] > al.text_rank[al.icode[pos]][u]
    codes = []
    for x in al.scores:
        t = x[pos][u]
        xn, tn = np.isnan(x), np.isnan(t)
        above = (~xn & tn) | (x > t)
        tied = ((xn & tn) | (x == t)) & ~is_target
        codes.append(
            np.where(above, 3, np.where(tied, np.where(before_by_id, 2, 1), 0)).astype(np.int8)
        )
    U, S = len(users), len(frames)
    n = np.bincount(u, minlength=U).astype(np.int64)
    stack = np.stack(codes)
    neg = ~is_target
    counts = {
        c: np.stack(
            [np.bincount(u[neg], weights=(cs[neg] == c), minlength=U) for cs in stack]
        ).astype(np.int64)
        for c in (1, 2, 3)
    }
    pattern = (stack[:, neg].astype(np.int64) * (4 ** np.arange(S))[:, None]).sum(axis=0)
    cells = (
        np.bincount(u[neg] * 4**S + pattern, minlength=U * 4**S).reshape(U, 4**S).astype(np.int64)
    )
    return Standing(
        users=users,
        items=targets,
        systems=tuple(frames),
        n=n,
        above=counts[3],
        tied=counts[1] + counts[2],
        id_above=counts[2],
        cells=cells,
        patterns=_patterns(S),
    )


def true_ranks(
    scores: pd.DataFrame, held_out: pd.DataFrame, ties: str = DEFAULT_TIES
) -> pd.DataFrame:
    """Rank of each user's held-out item among the user's scored candidates, under a tie rule.

    ``scores``: columns user, item, score (one system; the held-out item included). ``held_out``:
    columns user, item, one row per user. Returns columns user, item, rank (1-based; the mean
    rank of the tie block for ``ties="expected"``), n (candidates of the user), above, tied,
    id_above (see :mod:`.ties`), in the order of ``held_out``.
    """
    check_ties(ties)
    _check_columns("scores", scores, ["user", "item", "score"])
    st = standing({"system": scores[["user", "item", "score"]]}, held_out)
    out = held_out[["user", "item"]].reset_index(drop=True)
    out["rank"] = st.ranks(ties)["system"]
    out["n"] = st.n
    out["above"], out["tied"], out["id_above"] = st.above[0], st.tied[0], st.id_above[0]
    return out


def candidate_pairs(train: pd.DataFrame, users: np.ndarray | pd.Series) -> pd.DataFrame:
    """(user, item) for every training item each user has not rated in training (AllItems).

    The candidates a full ranking orders for a leave-one-out test user; the held-out item is
    among them whenever it occurs in training. Columns user, item; users in the given order.
    """
    if not {"user", "item"} <= set(train.columns):
        raise ValueError("train needs columns user and item")
    u = pd.unique(np.asarray(users))
    items = np.sort(train["item"].unique())
    if len(u) == 0 or len(items) == 0:
        raise ValueError("no users or no training items to pair")
    unknown = ~np.isin(u, train["user"].unique())
    if unknown.any():
        raise ValueError(
            f"{int(unknown.sum())} user(s) have no training data (e.g. {u[unknown][0]!r}); "
            "drop them first"
        )
    rated = np.zeros((len(u), len(items)), dtype=bool)
    sub = train[train["user"].isin(u)]
    rated[pd.Index(u).get_indexer(sub["user"]), np.searchsorted(items, sub["item"].to_numpy())] = (
        True
    )
    rows, cols = np.nonzero(~rated)
    return pd.DataFrame({"user": u[rows], "item": items[cols]})
