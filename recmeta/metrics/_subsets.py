"""Metrics on many subsets of one set of judgments: the incomplete test sets of meta-evaluation.

Robustness studies (Valcarce et al. 2018, 2020; :mod:`recmeta.metaeval.incompleteness`) score
the same runs against hundreds of incomplete versions of one test set. Only the ranked items that
carry a judgment change a metric, so :class:`Subsets` finds once, for every (system, user) list, its
*hits*: the positions of the list that hold a judged item, each with its judgment row. A subset
is a ``keep`` mask over the judgment rows (those of ``judgments.to_frame()``); evaluating it is
one compiled pass that reads the kept hits and the kept judgments of each user
(:func:`recmeta.metrics._kernel.subset_means`), every metric at every cut-off at once. The
values are those of :func:`recmeta.metrics.score_matrices` on ``judgments.subset(keep)`` —
definitions in :mod:`recmeta.metrics._plan`, options in :mod:`recmeta.metrics._options`. A mask
that keeps each user's rows whole (all or none, as when users are sampled) changes no kept user's
values, so its means are read from the full evaluation without a pass
(:func:`~recmeta.metrics._kernel.user_subset_means`).

>>> sub = Subsets(
...     judgments, runs, ["P@10", "nDCG@100", "infAP@100"], infap="pooled"
... )  # doctest: +SKIP
>>> sub.score(keep)["P@10"]  # systems × users on one incomplete test set  # doctest: +SKIP
>>> sub.means(masks.keep)["mean"]  # masks × metrics × systems  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

import numba
import numpy as np
import numpy.typing as npt

from . import _kernel as K
from ._evaluate import GMEAN_FLOOR
from ._judgments import Judgments
from ._names import parse_metric
from ._options import options
from ._plan import _max_entries, by_request, check_err, make_plan, tie_lists, unique_specs
from ._runs import Runs


class _HasKeep(Protocol):
    """A stack of masks, as :class:`recmeta.metaeval.incompleteness.Masks`."""

    @property
    def keep(self) -> np.ndarray: ...


__all__ = ["Subsets"]

AGGREGATES = ("mean", "gmean")


def _lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each key in ``sorted_keys`` and whether it is there."""
    if not sorted_keys.size:
        return np.zeros(keys.size, dtype=np.int64), np.zeros(keys.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return at, sorted_keys[at] == keys


class Subsets:
    """Evaluate ``metrics`` of ``runs`` on subsets of ``judgments`` (``keep`` masks over its rows).

    ``users``, ``infap``, ``gain`` and ``ties`` are those of
    :func:`recmeta.metrics.score_matrices`. A user is left out (NaN) of a subset where none of
    its kept judgments is relevant (with ``users="all"``: where it keeps none at all); empty
    lists score 0. Masks are boolean, one flag per row of ``judgments.to_frame()`` — the rows
    :mod:`recmeta.metaeval.incompleteness` builds its masks over.
    """

    def analysis_key(self) -> tuple[object, ...]:
        """What determines every score these subsets give (the key of :mod:`recmeta.analyses`):
        the judgments, the runs, the metrics, the users scored and the options."""
        return (self.judgments, self.runs, self.metrics, self._all_users, self.options)

    def __init__(
        self,
        judgments: Judgments,
        runs: Runs,
        metrics: Sequence[str],
        *,
        users: str = "relevant",
        infap: str = "trec_eval",
        gain: str | Mapping[float, float] = "linear",
        ties: str | None = None,
    ) -> None:
        if isinstance(metrics, str):
            metrics = [metrics]
        if users not in ("relevant", "all"):
            raise ValueError(f"users must be 'relevant' or 'all', got {users!r}")
        runs.check_aligned(judgments)
        self.metrics = [str(m) for m in metrics]
        if len(set(self.metrics)) != len(self.metrics):
            raise ValueError("a metric is listed twice")
        self.specs = [parse_metric(m) for m in metrics]
        gm = [m for m, s in zip(self.metrics, self.specs, strict=True) if s.aggregate is not None]
        if gm:
            raise ValueError(
                f"{gm}: ask for the plain metric and means(..., aggregates="
                "('gmean',)) for its geometric mean over users"
            )
        if judgments.item_popularity is None and any(s.name == "SRecall" for s in self.specs):
            raise ValueError(
                "SRecall weighs items by their relevant ratings, which a subset would change; "
                "give them once with judgments.with_popularity(counts) to score it on subsets"
            )
        self.judgments = judgments
        self.runs = runs
        self.options = options(infap, gain, runs.ties if ties is None else ties)
        self._unique = unique_specs(self.specs)
        self._plan = plan = make_plan(judgments, runs, self._unique, self.options)
        ranks, tied = tie_lists(runs, self.options.ties)
        self._all_users = users == "all"

        # the judged entries these judgments hold, in the row order of to_frame()
        e = judgments._entries
        rows = np.flatnonzero(judgments.active())
        n_users = len(judgments.users)
        self._items = np.ascontiguousarray(e.items[rows])
        self._grades = np.ascontiguousarray(e.grades[rows])
        entry_user = e.users[rows]
        self._indptr = np.zeros(n_users + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry_user, minlength=n_users), out=self._indptr[1:])
        self.n_rows = rows.size
        if self.n_rows >= 2**31:
            raise ValueError(f"{self.n_rows} judgment rows: Subsets numbers them in 32 bits")

        # the hits: positions read (the deepest cut-off, and for the tie rules the rest of the
        # tie block that holds it) that carry a judged item; found one system at a time
        n_sys, _, depth = ranks.shape
        self._max_cut = max_cut = int(plan.cuts.max()) if plan.cuts.size else 0
        tie_blocks = plan.tie_mode != K.TIE_STORED
        width = np.int64(len(runs.items) + 1)
        entry_key = entry_user.astype(np.int64) * width + self._items
        pos = np.arange(depth)
        parts: list[tuple[np.ndarray, ...]] = []
        counts = np.zeros((n_sys, n_users), dtype=np.int64)
        top_grade = 0.0
        for sys in range(n_sys):
            r = ranks[sys]
            present = r >= 0
            read = np.broadcast_to(pos < max_cut, r.shape)
            if tie_blocks:
                t = tied[sys]
                block = np.cumsum(~t, axis=1)
                if max_cut:
                    read = read | (block == block[:, max_cut - 1 : max_cut])
            u, d = np.nonzero(present & read)
            at, found = _lookup(entry_key, u.astype(np.int64) * width + r[u, d])
            u, d, at = u[found], d[found], at[found]
            counts[sys] = np.bincount(u, minlength=n_users)
            lo = hi = np.zeros(0, dtype=np.int32)
            if tie_blocks:
                lo = np.maximum.accumulate(np.where(~t, pos, 0), axis=1)[u, d]
                is_end = np.ones(r.shape, dtype=bool)
                is_end[:, :-1] = ~t[:, 1:]
                hi = np.minimum.accumulate(np.where(is_end, pos, depth)[:, ::-1], axis=1)[:, ::-1][
                    u, d
                ]
            parts.append(
                (d.astype(np.int32), at.astype(np.int32), lo.astype(np.int32), hi.astype(np.int32))
            )
            if plan.rmax.size:  # ERR's check reads the whole lists, as the full evaluation does
                u_all, d_all = np.nonzero(present)
                at_all, hit = _lookup(entry_key, u_all.astype(np.int64) * width + r[u_all, d_all])
                top_grade = max(top_grade, float(self._grades[at_all[hit]].max(initial=0.0)))
        if plan.rmax.size:
            check_err(plan, top_grade)
        self._list_ptr = np.zeros(n_sys * n_users + 1, dtype=np.int64)
        np.cumsum(counts.ravel(), out=self._list_ptr[1:])
        self._hit_pos = np.ascontiguousarray(np.concatenate([p[0] for p in parts]))
        self._hit_entry = np.ascontiguousarray(np.concatenate([p[1] for p in parts]))
        self._hit_lo = np.ascontiguousarray(np.concatenate([p[2] for p in parts]))
        self._hit_hi = np.ascontiguousarray(np.concatenate([p[3] for p in parts]))
        self._max_hits = int(counts.max(initial=0))
        self._list_len = np.ascontiguousarray(
            np.minimum((ranks >= 0).sum(axis=2), max_cut), dtype=np.int64
        )
        self._shape = (n_sys, n_users)
        self._full: np.ndarray | None = None

    def __repr__(self) -> str:
        return (
            f"Subsets({len(self.metrics)} metrics, {self._shape[0]} systems, "
            f"{self._shape[1]} users, {self.n_rows} judgment rows, "
            f"{self._hit_pos.size} judged positions)"
        )

    @property
    def systems(self) -> list[str]:
        return list(self.runs.systems)

    @property
    def judged_positions(self) -> int:
        """Ranked positions (all systems and users, within the deepest cut-off) holding a judged
        item — the only positions the subsets read."""
        return int(self._hit_pos.size)

    def _args(self):
        p = self._plan
        return (
            self._shape[0],
            self._shape[1],
            self._list_ptr,
            self._hit_pos,
            self._hit_entry,
            self._hit_lo,
            self._hit_hi,
            self._list_len,
            p.tie_mode,
            self._indptr,
            self._items,
            self._grades,
            float(self.judgments.threshold),
            p.infap_pooled,
            p.codes,
            p.cuts,
            p.kdivs,
            p.slots,
            p.need,
            p.rmax,
            p.weights,
            p.recall_levels,
            p.gain_keys,
            p.gain_vals,
            p.ideal_len,
            _max_entries(self.judgments),
            self._max_hits,
            self._max_cut,
            self._all_users,
        )

    def _check_keep(self, keep: npt.ArrayLike | _HasKeep | None, ndim: int) -> np.ndarray:
        keep = getattr(keep, "keep", keep)  # a recmeta.metaeval.incompleteness.Masks
        if keep is None:
            keep = np.ones((self.n_rows,) if ndim == 1 else (1, self.n_rows), dtype=bool)
        keep = np.asarray(keep)
        shape = "(judgment rows,)" if ndim == 1 else "(masks, judgment rows)"
        if keep.dtype != np.bool_ or keep.ndim != ndim or keep.shape[-1] != self.n_rows:
            raise ValueError(
                f"keep must be a boolean {shape} array with one flag per row of "
                f"judgments.to_frame() ({self.n_rows} rows), got {keep.dtype} {keep.shape}"
            )
        return np.ascontiguousarray(keep)

    def _full_values(self) -> np.ndarray:
        """Per-user values on the full judgments (requests × systems × users), computed once."""
        if self._full is None:
            self._full = np.full((self._plan.codes.shape[0], *self._shape), np.nan)
            every = np.ones((1, self.n_rows), dtype=bool)
            K.subset_scores_many(every, self._full[None], self._args())
        return self._full

    def score(self, keep: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per-user scores (systems × users) of every metric on the judgments ``keep`` leaves.

        ``None`` keeps every row: the values of :func:`recmeta.metrics.score_matrices`.
        """
        return next(self.scores(self._check_keep(keep, 1)[None, :]))

    def scores(
        self, keep: npt.ArrayLike | _HasKeep, chunk: int | None = None
    ) -> Iterator[dict[str, np.ndarray]]:
        """:meth:`score` of every mask of ``keep`` (masks × judgment rows, or a
        :class:`recmeta.metaeval.incompleteness.Masks`), in order. ``chunk`` masks (default:
        two per numba thread) are scored at a time, shared among numba's threads."""
        keep = self._check_keep(keep, 2)
        step = chunk or 2 * numba.get_num_threads()
        n_req = self._plan.codes.shape[0]
        for at in range(0, keep.shape[0], step):
            part = keep[at : at + step]
            out = np.full((part.shape[0], n_req, *self._shape), np.nan)
            whole, users = K.whole_users(part, self._indptr)
            for k in np.flatnonzero(whole):
                out[k] = self._full_values()
                out[k][:, :, ~users[k]] = np.nan
            rest = np.flatnonzero(~whole)
            if rest.size == part.shape[0]:
                K.subset_scores_many(part, out, self._args())
            elif rest.size:
                some = np.full((rest.size, *out.shape[1:]), np.nan)
                K.subset_scores_many(np.ascontiguousarray(part[rest]), some, self._args())
                out[rest] = some
            for o in out:
                values = by_request(self.specs, self._unique, self._plan, o)
                yield dict(zip(self.metrics, values, strict=True))

    def means(
        self, keep: npt.ArrayLike | _HasKeep, aggregates: Sequence[str] = ("mean",)
    ) -> dict[str, np.ndarray]:
        """System means on every subset: {aggregate: masks × metrics × systems}.

        ``keep`` is (masks × judgment rows), or a :class:`recmeta.metaeval.incompleteness.Masks`.
        ``"mean"`` is the arithmetic mean over the users a subset evaluates, ``"gmean"`` the
        geometric mean with zeros floored at :data:`recmeta.metrics.GMEAN_FLOOR`, as
        :func:`recmeta.metrics.aggregate`. The masks are shared among numba's threads.
        """
        if isinstance(aggregates, str):
            aggregates = (aggregates,)
        bad = [a for a in aggregates if a not in AGGREGATES]
        if bad:
            raise ValueError(f"aggregates must be among {AGGREGATES}, got {bad}")
        if "gmean" in aggregates and any(s.name == "IPrec11" for s in self.specs):
            raise ValueError(
                "IPrec11 is a mean of eleven values per user; its geometric mean "
                "over users is not computed here (ask for the IPrec levels)"
            )
        keep = self._check_keep(keep, 2)
        n_masks, with_gmean = keep.shape[0], "gmean" in aggregates
        n_req = self._plan.codes.shape[0]
        mean = np.full((n_masks, n_req, self._shape[0]), np.nan)
        gmean = np.full_like(mean, np.nan)
        # a mask that keeps each user's rows whole (all or none) leaves the kept users' values
        # as on the full judgments: their means need no pass over the lists
        whole, users = K.whole_users(keep, self._indptr)
        fast, slow = np.flatnonzero(whole), np.flatnonzero(~whole)
        if fast.size:
            full = self._full_values()
            threads = max(1, min(fast.size, numba.get_num_threads()))
            K.user_subset_means(full, users, fast, mean, gmean, GMEAN_FLOOR, with_gmean, threads)
        if slow.size:
            threads = max(1, min(slow.size, numba.get_num_threads()))
            hits = self._args()
            K.subset_means(keep, slow, mean, gmean, hits, GMEAN_FLOOR, with_gmean, threads)
        out = {}
        for agg, values in (("mean", mean), ("gmean", gmean)):
            if agg in aggregates:
                per = by_request(
                    self.specs, self._unique, self._plan, np.moveaxis(values, 0, -1)
                )  # each: systems × masks
                out[agg] = np.stack([np.moveaxis(v, -1, 0) for v in per], axis=1)
        return out
