"""Judgments: the graded relevance of the test set, as a sparse users × items matrix.

Three kinds of (user, item) pairs are kept apart:

* *relevant* — judged with a grade ``>= threshold`` (τ);
* *judged non-relevant* — judged with a grade ``< threshold``;
* *unjudged* — no grade at all (not in the matrix).

bpref (Buckley & Voorhees 2004) and infAP (Yilmaz & Aslam 2006) need the difference between the
last two; the other metrics treat both as non-relevant, as trec_eval does. A fourth kind exists
only when asked for (``negative="pooled"``, the default of :meth:`Judgments.from_qrels`): a
negative grade, which trec_eval reads as *in the judgment pool but not judged* — unjudged for
every metric, but counted in the pool by infAP.

The matrix is stored as CSR arrays over a user index and an item index (pandas ``Index`` of the
external ids). :meth:`Judgments.subset` takes a boolean mask over the judged entries and returns
judgments that share these arrays (same users, same items), so that many incomplete versions of
one test set can be evaluated against the same runs without rebuilding anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from os import PathLike

import numpy as np
import pandas as pd

from ..arrays import has_duplicate_pairs
from ._trec_files import read_qrels

__all__ = ["Judgments", "JudgmentsError"]


class JudgmentsError(ValueError):
    """Malformed judgments; the message names the problem and the fix."""


@dataclass(frozen=True, eq=False)
class _Entries:
    """The full CSR arrays; shared by every subset of one set of judgments."""

    indptr: np.ndarray  # (n_users + 1,) int64
    items: np.ndarray  # (n_entries,) int64 item codes, sorted within each user
    grades: np.ndarray  # (n_entries,) float64; < 0 only for pooled but unjudged entries
    users: np.ndarray  # (n_entries,) int64 user code of each entry


@dataclass(frozen=True, eq=False)
class Judgments:
    """Graded test judgments with a relevance threshold.

    Build with :meth:`from_frame`, :meth:`from_qrels` or :meth:`from_grades`. Attributes:
    ``users`` and ``items`` (pandas ``Index`` of external ids), ``threshold`` (τ: a grade ``>= τ``
    is relevant), ``max_grade`` (top of the rating scale, used by ERR), ``item_popularity``
    (optional counts aligned with ``items``, used by stratified recall).
    """

    users: pd.Index
    items: pd.Index
    threshold: float
    max_grade: float
    _entries: _Entries
    _mask: np.ndarray | None = None  # bool over _entries; None = every entry active
    item_popularity: np.ndarray | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        threshold: float | None,
        user_col: str = "user",
        item_col: str = "item",
        rating_col: str = "rating",
        *,
        users: pd.Index | None = None,
        items: pd.Index | None = None,
        max_grade: float | None = None,
        negative: str = "error",
    ) -> Judgments:
        """Judgments from a tidy frame of graded test ratings.

        ``users``/``items`` fix the indices (e.g. to keep a masked frame aligned with runs built
        for the full one); by default they are the sorted distinct ids of the frame.
        ``max_grade`` defaults to the largest grade in the frame (at least 0). ``threshold=None``
        reads a frame without grades (implicit feedback): every pair it lists is relevant with
        grade 1. ``negative`` says what a grade < 0 is: ``"error"`` (default) refuses it,
        ``"pooled"`` reads it as trec_eval does — in the pool but not judged (trec_eval
        ``form_res_rels.c``): never relevant, not judged non-relevant, counted only by infAP.
        """
        if not isinstance(df, pd.DataFrame):
            raise JudgmentsError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if threshold is None:  # implicit feedback: every listed pair is relevant, grade 1
            if rating_col in df.columns:
                raise JudgmentsError(
                    f"threshold=None means implicit feedback, but the frame has a {rating_col!r} "
                    "column; give the relevance threshold of its grades"
                )
            df = df.assign(**{rating_col: 1.0})
            threshold = 1.0
        missing = [c for c in (user_col, item_col, rating_col) if c not in df.columns]
        if missing:
            raise JudgmentsError(
                f"judgments frame lacks column(s) {missing}; it has {list(df.columns)}. "
                "Pass user_col=, item_col=, rating_col= to name yours"
                + (
                    "; for implicit feedback (no ratings) pass threshold=None"
                    if missing == [rating_col]
                    else ""
                )
                + "."
            )
        threshold = _check_threshold(threshold)
        if not pd.api.types.is_numeric_dtype(df[rating_col]) or pd.api.types.is_bool_dtype(
            df[rating_col]
        ):
            raise JudgmentsError(
                f"column {rating_col!r} must be numeric, got dtype {df[rating_col].dtype}"
            )
        grades = df[rating_col].to_numpy(dtype=np.float64)
        if not np.isfinite(grades).all():
            raise JudgmentsError(
                f"column {rating_col!r} has {int((~np.isfinite(grades)).sum())} NaN/inf grades; "
                "drop or fill them first"
            )
        if negative not in ("error", "pooled"):
            raise JudgmentsError(f"negative must be 'error' or 'pooled', got {negative!r}")
        if negative == "error" and (grades < 0).any():
            raise JudgmentsError(
                "negative grades are refused by default; trec_eval reads them as 'in the pool "
                "but not judged': pass negative='pooled' for that reading, or shift the rating "
                "scale so that the lowest grade is >= 0"
            )
        if df[[user_col, item_col]].isna().any().any():
            raise JudgmentsError(f"columns {user_col!r}/{item_col!r} contain missing ids")
        if has_duplicate_pairs(df[user_col], df[item_col]):
            dup = df[df.duplicated([user_col, item_col], keep=False)].head(3)
            raise JudgmentsError(
                "duplicate (user, item) pairs in judgments, e.g.\n"
                f"{dup[[user_col, item_col, rating_col]].to_string(index=False)}\n"
                "keep one grade per pair (e.g. df.drop_duplicates([user, item], keep='last'))"
            )
        users = _index(df[user_col], users, "user")
        items = _index(df[item_col], items, "item")
        ucode = users.get_indexer(df[user_col])
        icode = items.get_indexer(df[item_col])
        for codes, name in ((ucode, "user"), (icode, "item")):
            if (codes < 0).any():
                raise JudgmentsError(
                    f"some {name} ids of the frame are not in the given {name}s index"
                )
        if max_grade is None:
            max_grade = max(float(grades.max()), 0.0) if len(grades) else 0.0
        elif len(grades) and grades.max() > max_grade:
            raise JudgmentsError(f"a grade ({grades.max()}) exceeds max_grade={max_grade}")
        return cls._from_codes(users, items, ucode, icode, grades, threshold, float(max_grade))

    @classmethod
    def from_qrels(
        cls, path: str | PathLike, threshold: float = 1.0, negative: str = "pooled"
    ) -> Judgments:
        """Judgments from a TREC qrels file (``qid iter docno rel``); ids stay strings.

        ``threshold`` plays the role of trec_eval's ``-l`` relevance level (default 1); a
        negative grade is read as trec_eval reads it (``negative="pooled"``, see
        :meth:`from_frame`).
        """

        return cls.from_frame(read_qrels(path), threshold=threshold, negative=negative)

    @classmethod
    def from_grades(cls, grades: np.ndarray, threshold: float = 1.0) -> Judgments:
        """Judgments for synthetic rankings: row ``u`` holds the grades of items ``0..n-1``.

        Every item of every row is judged. Pair with :meth:`Runs.from_orders` (or use
        :func:`recmeta.metrics.score_rankings`) to score permutations of a reference ranking.
        """
        g = np.asarray(grades, dtype=np.float64)
        if g.ndim == 1:
            g = g[None, :]
        if g.ndim != 2:
            raise JudgmentsError(f"grades must be 1-d or 2-d, got shape {g.shape}")
        n_users, n_items = g.shape
        frame = pd.DataFrame(
            {
                "user": np.repeat(np.arange(n_users), n_items),
                "item": np.tile(np.arange(n_items), n_users),
                "rating": g.ravel(),
            }
        )
        return cls.from_frame(
            frame, threshold, users=pd.RangeIndex(n_users), items=pd.RangeIndex(n_items)
        )

    @classmethod
    def _from_codes(
        cls,
        users: pd.Index,
        items: pd.Index,
        ucode: np.ndarray,
        icode: np.ndarray,
        grades: np.ndarray,
        threshold: float,
        max_grade: float,
    ) -> Judgments:
        order = np.lexsort((icode, ucode))
        ucode = ucode[order].astype(np.int64)
        icode = icode[order].astype(np.int64)
        indptr = np.zeros(len(users) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ucode, minlength=len(users)), out=indptr[1:])
        entries = _Entries(indptr, icode, grades[order], ucode)
        return cls(users, items, threshold, max_grade, entries)

    # ------------------------------------------------------------------ subsets
    @property
    def n_entries(self) -> int:
        """Number of judged (user, item) pairs."""
        return int(self._entries.grades.size if self._mask is None else self._mask.sum())

    def subset(self, mask: np.ndarray) -> Judgments:
        """Keep the judged entries where ``mask`` is True (in the row order of :meth:`to_frame`).

        Users, items and ``max_grade`` are kept, so runs built for ``self`` stay valid; a user
        whose relevant entries are all removed is then excluded from evaluation.
        """
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (self.n_entries,):
            raise JudgmentsError(
                f"subset mask must be a boolean array of shape ({self.n_entries},) — one flag "
                f"per judged entry, in the order of to_frame() — got {mask.dtype} {mask.shape}"
            )
        if self._mask is None:
            full = mask.copy()
        else:
            full = np.zeros_like(self._mask)
            full[np.flatnonzero(self._mask)] = mask
        return replace(self, _mask=full)

    def with_threshold(self, threshold: float) -> Judgments:
        """The same judgments with another relevance threshold τ."""
        return replace(self, threshold=_check_threshold(threshold))

    def with_popularity(self, counts: pd.Series) -> Judgments:
        """Attach item popularity counts (e.g. relevant ratings per item in the whole data).

        Stratified recall weighs items by these counts; items missing from ``counts`` get 0.
        """
        if not isinstance(counts, pd.Series):
            raise JudgmentsError("popularity counts must be a pandas Series indexed by item id")
        values = counts.reindex(self.items).fillna(0).to_numpy(dtype=np.float64)
        if (values < 0).any():
            raise JudgmentsError("popularity counts must be >= 0")
        return replace(self, item_popularity=values)

    # ------------------------------------------------------------------ views
    def active(self) -> np.ndarray:
        """Boolean flag per stored entry: is it part of these judgments."""
        if self._mask is None:
            return np.ones(self._entries.grades.size, dtype=bool)
        return self._mask

    def to_frame(self) -> pd.DataFrame:
        """The judged entries as a tidy frame (user, item, rating), sorted by user then item."""
        keep = self.active()
        e = self._entries
        return pd.DataFrame(
            {
                "user": self.users[e.users[keep]],
                "item": self.items[e.items[keep]],
                "rating": e.grades[keep],
            }
        )

    def relevant_counts(self) -> np.ndarray:
        """Number of relevant items (grade >= τ, and >= 0) per user."""
        e = self._entries
        keep = self.active() & (e.grades >= self.threshold) & (e.grades >= 0)
        return np.bincount(e.users[keep], minlength=len(self.users))

    def judged_counts(self) -> np.ndarray:
        """Number of judged items per user (a negative grade, pooled but unjudged, is not)."""
        e = self._entries
        return np.bincount(e.users[self.active() & (e.grades >= 0)], minlength=len(self.users))

    def evaluable(self) -> np.ndarray:
        """Users that enter the averages: those with at least one relevant item."""
        return self.relevant_counts() > 0

    def __repr__(self) -> str:
        return (
            f"Judgments({len(self.users)} users, {len(self.items)} items, "
            f"{self.n_entries} judged, threshold={self.threshold:g})"
        )


def _check_threshold(threshold: float) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise JudgmentsError(f"threshold must be a number, got {threshold!r}") from None
    if not np.isfinite(t):
        raise JudgmentsError(f"threshold must be finite, got {threshold!r}")
    return t


def _index(values: pd.Series, given: pd.Index | None, name: str) -> pd.Index:
    if given is not None:
        given = pd.Index(given)
        if not given.is_unique:
            raise JudgmentsError(f"the given {name} index has duplicate ids")
        return given
    return pd.Index(np.sort(pd.unique(values)), name=name)
