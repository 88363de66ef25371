"""Runs: for each system, a users × depth array of ranked items.

``Runs.ranks[s, u, d]`` is the code (position in ``Runs.items``) of the item system ``s`` puts at
rank ``d + 1`` for user ``u``, or ``-1`` for "no item" (a list shorter than the depth). Users are
those of the :class:`Judgments` the runs are built for; the item index starts with the judgments'
items, followed by items that appear only in the runs (they are unjudged).

Stored order: items by score, descending, and equal scores by the item id *as text*,
descending — the order trec_eval uses (``comp_sim_docno`` in its ``form_res_rels.c``), so a run
written to a TREC file and scored by trec_eval gives the same numbers. A frame with ranks instead
of scores is ordered by rank, then by the same text rule. The rank column of a TREC run file is
ignored, as trec_eval ignores it. ``Runs.from_frame(..., ties="item_id")`` stores equal scores by
item id ascending instead (which decides which tied items a ``depth=`` cut keeps), and any
``ties=`` given there becomes the runs' rule (``Runs.ties``), read by every evaluation that does
not name another.

Tie blocks: a run built from a frame records which consecutive items share their score (or rank)
in ``Runs.tied`` (``tied[s, u, d]`` is True when the item at rank ``d + 1`` ties with the one
above it). The evaluation's ``ties=`` option (:mod:`recmeta.metrics._options`) reads the blocks;
runs built from bare item orders (:meth:`Runs.from_orders` without ``tied=``) have none.

Users of a run that are not in the judgments are not evaluated (trec_eval likewise ignores topics
without qrels); their number is kept in ``Runs.dropped_users``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..arrays import has_duplicates, lexsort
from ._judgments import Judgments
from ._options import TIES
from ._trec_files import read_runs

if TYPE_CHECKING:
    from lenskit.data import ItemListCollection

__all__ = ["Runs", "RunsError", "text_order", "id_order"]


class RunsError(ValueError):
    """Malformed runs; the message names the problem and the fix."""


def text_order(ids: pd.Index | np.ndarray) -> np.ndarray:
    """Rank of each id when the ids are compared as text (``str``), ascending, from 0."""
    text = np.asarray([str(x) for x in ids], dtype=object)
    order = np.argsort(text, kind="stable")
    key = np.empty(len(text), dtype=np.int64)
    key[order] = np.arange(len(text))
    return key


def id_order(ids: pd.Index | np.ndarray) -> np.ndarray:
    """Rank of each id in the ids' own ascending order (numbers as numbers), from 0."""
    values = pd.Index(ids)
    try:
        order = np.argsort(values.to_numpy(), kind="stable")
    except TypeError:
        raise RunsError(
            "ties='item_id' orders tied items by their ids, but these ids cannot be compared "
            f"with each other (types: {sorted({type(x).__name__ for x in values})}); use one "
            "type of id, or ties='trec_eval' (ids as text)"
        ) from None
    key = np.empty(len(values), dtype=np.int64)
    key[order] = np.arange(len(values))
    return key


@dataclass(frozen=True, eq=False)
class Runs:
    """Ranked lists of several systems over the users of one set of judgments."""

    systems: pd.Index
    users: pd.Index
    items: pd.Index
    ranks: np.ndarray  # (n_systems, n_users, depth) int32, -1 = no item
    n_judged_items: int
    dropped_users: int = 0
    tied: np.ndarray | None = None  # same shape, bool: the item ties with the one above it
    ties: str = "trec_eval"  # the tie rule the runs are read with unless an evaluation says
    #                          otherwise; lists are stored in item_id order for "item_id", else
    #                          in trec_eval's

    @property
    def depth(self) -> int:
        return self.ranks.shape[2]

    def __repr__(self) -> str:
        s, u, d = self.ranks.shape
        return f"Runs({s} systems, {u} users, depth {d})"

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        judgments: Judgments,
        *,
        system_col: str = "system",
        user_col: str = "user",
        item_col: str = "item",
        score_col: str = "score",
        rank_col: str = "rank",
        system: str | None = None,
        depth: int | None = None,
        ties: str = "trec_eval",
    ) -> Runs:
        """Runs from a tidy frame (system, user, item, and score or rank).

        Ordering: by ``score`` descending if the frame has a score column, else by ``rank``
        ascending; ties by item id as text, descending (see the module docstring), or by item id
        ascending with ``ties="item_id"``. ``ties`` (a rule of :mod:`recmeta.metrics._options`)
        is the rule an evaluation applies unless it names another; the lists are stored in
        trec_eval's order for every rule but ``"item_id"``, and the tie blocks are recorded in
        ``tied``. A frame without a system column needs ``system=`` (its name). ``depth``
        truncates the lists (after ordering: the rule decides which tied items a cut keeps).
        """

        if ties not in TIES:
            raise RunsError(f"ties must be one of {', '.join(map(repr, TIES))}, got {ties!r}")
        if not isinstance(df, pd.DataFrame):
            raise RunsError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if system_col not in df.columns:
            if system is None:
                raise RunsError(
                    f"run frame has no {system_col!r} column; name the system with system='...'"
                    f" or pass system_col= (columns: {list(df.columns)})"
                )
            df = df.assign(**{system_col: system})
        missing = [c for c in (user_col, item_col) if c not in df.columns]
        if missing:
            raise RunsError(f"run frame lacks column(s) {missing}; it has {list(df.columns)}")
        if score_col in df.columns:
            key_col, sign = score_col, -1.0
        elif rank_col in df.columns:
            key_col, sign = rank_col, 1.0
        else:
            raise RunsError(
                f"run frame needs a {score_col!r} or a {rank_col!r} column to order the items"
            )
        if not pd.api.types.is_numeric_dtype(df[key_col]):
            raise RunsError(f"column {key_col!r} must be numeric, got {df[key_col].dtype}")
        key = df[key_col].to_numpy(dtype=np.float64)
        if np.isnan(key).any():
            raise RunsError(f"column {key_col!r} has {int(np.isnan(key).sum())} NaN values")
        if df[[system_col, user_col, item_col]].isna().any().any():
            raise RunsError("run frame has missing system/user/item ids")
        if depth is not None and depth < 1:
            raise RunsError(f"depth must be >= 1, got {depth}")

        # codes in order of first appearance, as pd.unique lists the values (one hash pass)
        scode, system_values = pd.factorize(df[system_col])
        systems = pd.Index(system_values, name="system")
        ucode = judgments.users.get_indexer(df[user_col])
        known = ucode >= 0
        dropped = int(pd.unique(df.loc[~known, user_col]).size) if not known.all() else 0

        dcode, item_distinct = pd.factorize(df[item_col].to_numpy())
        distinct = pd.Index(item_distinct)
        judged_code = judgments.items.get_indexer(distinct)
        extra = distinct[judged_code < 0]
        extra = extra[np.argsort(text_order(extra), kind="stable")]  # deterministic
        items = judgments.items.append(extra)
        item_code_of_distinct = items.get_indexer(distinct)
        icode = item_code_of_distinct[dcode]
        # the key is sorted descending below, so item ids (negated) come out ascending
        tkey = -id_order(distinct)[dcode] if ties == "item_id" else text_order(distinct)[dcode]

        if not known.all():
            scode, ucode, icode, tkey, key = (a[known] for a in (scode, ucode, icode, tkey, key))
        order = lexsort((-tkey, sign * key, ucode, scode))
        scode, ucode, icode, key = scode[order], ucode[order], icode[order], key[order]
        group = scode.astype(np.int64) * len(judgments.users) + ucode
        pairs = group * len(items) + icode
        if has_duplicates(pairs):
            raise RunsError(
                "an item appears twice in one system's list for one user; "
                "deduplicate the run (trec_eval rejects such runs too)"
            )
        start = np.r_[True, group[1:] != group[:-1]] if len(group) else np.zeros(0, bool)
        first = np.maximum.accumulate(np.where(start, np.arange(len(group)), 0))
        pos = np.arange(len(group)) - first
        d = int(pos.max()) + 1 if len(pos) else 1
        if depth is not None:
            d = depth
        keep = pos < d
        ranks = np.full((len(systems), len(judgments.users), d), -1, dtype=np.int32)
        ranks[scode[keep], ucode[keep], pos[keep]] = icode[keep]
        tied = np.zeros(ranks.shape, dtype=bool)
        same = np.zeros(len(group), dtype=bool)
        if len(group) > 1:
            same[1:] = (group[1:] == group[:-1]) & (key[1:] == key[:-1])
        tied[scode[keep], ucode[keep], pos[keep]] = same[keep]
        return cls(
            systems,
            judgments.users,
            items,
            ranks,
            len(judgments.items),
            dropped,
            tied=tied,
            ties=ties,
        )

    @classmethod
    def from_trec(
        cls,
        paths: str | PathLike | Sequence[str | PathLike],
        judgments: Judgments,
        depth: int | None = None,
    ) -> Runs:
        """Runs from TREC run files (``qid Q0 docno rank score tag``); one system per tag.

        Items are ordered by score, then docno descending, as trec_eval does.
        """

        if isinstance(paths, (str, PathLike)):
            paths = [paths]
        frame = read_runs(paths)
        return cls.from_frame(frame.drop(columns="rank"), judgments, depth=depth)

    @classmethod
    def from_lenskit(
        cls,
        collections: Mapping[str, ItemListCollection],
        judgments: Judgments,
        depth: int | None = None,
    ) -> Runs:
        """Runs from LensKit ``ItemListCollection`` objects, one per system name.

        Ordered lists keep their order; unordered lists are sorted by score with the tie rule
        of this module. The collection keys must carry the user id (``user_id`` field).
        """
        frames = []
        for name, coll in collections.items():
            # each list read as it is (what ``coll.to_df()`` holds, without building a table
            # through Arrow: a second per thousand lists): the first key field, the item ids,
            # the ranks of ordered lists and the scores
            lists = [(key[0], il) for key, il in coll.items() if len(il)]
            if not lists:
                continue
            lengths = [len(il) for _, il in lists]
            if all(il.ordered for _, il in lists):
                ranks = np.concatenate([il.ranks() for _, il in lists])
                key = {"rank": ranks.astype(np.float64)}
            else:
                parts = [s for _, il in lists if (s := il.scores()) is not None]
                scores = np.concatenate(parts) if len(parts) == len(lists) else None
                if scores is None or np.isnan(scores).any():
                    raise RunsError(
                        f"system {name!r}: lists need either all ranks (ordered lists) or all "
                        "scores"
                    )
                key = {"score": scores.astype(np.float64)}
            frames.append(
                pd.DataFrame(
                    {
                        "system": name,
                        "user": np.repeat(pd.Series([k for k, _ in lists]).to_numpy(), lengths),
                        "item": np.concatenate([il.ids() for _, il in lists]),
                        **key,
                    }
                )
            )
        if not frames:
            raise RunsError("no item lists in the given collections")
        keys = {tuple(sorted(set(f.columns) & {"rank", "score"})) for f in frames}
        if len(keys) > 1:  # some systems ranked, some scored: rank everything
            frames = [
                f if "rank" in f.columns else f.assign(rank=_rank_within(f)).drop(columns="score")
                for f in frames
            ]
        return cls.from_frame(pd.concat(frames, ignore_index=True), judgments, depth=depth)

    @classmethod
    def from_orders(
        cls,
        orders: np.ndarray,
        judgments: Judgments,
        systems: Sequence[str] | None = None,
        *,
        tied: np.ndarray | None = None,
    ) -> Runs:
        """Runs from arrays of item codes (positions in ``judgments.items``), -1 = no item.

        ``orders`` is users × depth (one system) or systems × users × depth, read as given.
        ``tied`` (same shape, bool) marks the items that tie with the one above them, for the
        tie rules of :mod:`recmeta.metrics._options`; without it the runs have no tie blocks.
        """
        r = np.asarray(orders)
        if r.ndim == 2:
            r = r[None]
        if tied is not None:
            tied = np.asarray(tied)
            if tied.ndim == 2:
                tied = tied[None]
            if tied.dtype != np.bool_ or tied.shape != r.shape:
                raise RunsError(
                    f"tied must be a boolean array shaped like orders {r.shape}, "
                    f"got {tied.dtype} {tied.shape}"
                )
            if tied[:, :, 0].any() or (tied & (r < 0)).any():
                raise RunsError(
                    "tied marks an item that ties with the one above it: the first "
                    "position and the padding (-1) cannot be tied"
                )
        if r.ndim != 3 or not np.issubdtype(r.dtype, np.integer):
            raise RunsError(
                f"orders must be an integer array of 2 or 3 dims, got {r.dtype} {r.shape}"
            )
        if r.shape[1] != len(judgments.users):
            raise RunsError(
                f"orders have {r.shape[1]} users, judgments have {len(judgments.users)}"
            )
        if ((r < -1) | (r >= len(judgments.items))).any():
            raise RunsError("item codes must lie in [-1, number of judged items)")
        if systems is None:
            systems = [f"s{i}" for i in range(r.shape[0])]
        runs = cls(
            pd.Index(systems, name="system"),
            judgments.users,
            judgments.items,
            r.astype(np.int32),
            len(judgments.items),
            tied=tied,
        )
        runs.validate()
        return runs

    @classmethod
    def concat(cls, parts: Sequence[Runs]) -> Runs:
        """The systems of several runs, built for the same judgments, as one ``Runs``.

        Gives what :meth:`from_frame` gives on the parts' frames concatenated: items that appear
        only in the runs follow the judged ones in text order, lists are padded to the deepest
        part, tie blocks are kept. Building one system at a time and concatenating holds one
        system's frame in memory instead of all of them (:func:`recmeta.runs.make_runs`).
        ``dropped_users`` is the largest of the parts' counts (a lower bound of their union).
        """
        parts = list(parts)
        if not parts:
            raise RunsError("no runs to concatenate")
        first = parts[0]
        names = [n for p in parts for n in p.systems]
        if len(set(names)) != len(names):
            raise RunsError(
                f"a system appears in two parts: {sorted({n for n in names if names.count(n) > 1})}"
            )
        n_judged = first.n_judged_items
        for p in parts[1:]:
            if not (
                p.users.equals(first.users)
                and p.n_judged_items == n_judged
                and p.items[:n_judged].equals(first.items[:n_judged])
            ):
                raise RunsError(
                    "runs built for other judgments cannot be concatenated; build "
                    "every part with the same Judgments"
                )
            if p.ties != first.ties:
                raise RunsError(
                    f"parts read with different tie rules ({first.ties!r}, {p.ties!r}); "
                    "build them with one ties= rule"
                )
        extra = pd.Index(pd.unique(np.concatenate([p.items[n_judged:].to_numpy() for p in parts])))
        extra = extra[np.argsort(text_order(extra), kind="stable")]
        items = first.items[:n_judged].append(extra)
        depth = max(p.depth for p in parts)
        shape = (len(names), len(first.users), depth)
        ranks = np.full(shape, -1, dtype=np.int32)
        with_ties = any(p.tied is not None for p in parts)
        tied = np.zeros(shape, dtype=bool) if with_ties else None
        s0 = 0
        for p in parts:  # the part's item codes -> codes in the shared index; -1 stays -1
            code = np.append(items.get_indexer(p.items), -1).astype(np.int32)
            s1 = s0 + len(p.systems)
            ranks[s0:s1, :, : p.depth] = code[p.ranks]
            if tied is not None and p.tied is not None:
                tied[s0:s1, :, : p.depth] = p.tied
            s0 = s1
        return cls(
            pd.Index(names, name="system"),
            first.users,
            items,
            ranks,
            n_judged,
            max(p.dropped_users for p in parts),
            tied=tied,
            ties=first.ties,
        )

    # ------------------------------------------------------------------ checks and views
    def validate(self) -> None:
        """Check that -1 only pads list ends and no item repeats within a list."""
        r = self.ranks
        empty = r < 0
        if (empty[:, :, :-1] & ~empty[:, :, 1:]).any():
            raise RunsError("'no item' (-1) must only pad the end of a list")
        s = np.sort(r, axis=2)
        if ((s[:, :, 1:] == s[:, :, :-1]) & (s[:, :, 1:] >= 0)).any():
            raise RunsError("an item appears twice in one list")

    def check_aligned(self, judgments: Judgments) -> None:
        if not (self.users is judgments.users or self.users.equals(judgments.users)):
            raise RunsError(
                "runs were built for other judgments (user index differs); "
                "rebuild them with Runs.from_frame(..., judgments)"
            )
        n = len(judgments.items)
        if n != self.n_judged_items or not (
            self.items is judgments.items or self.items[:n].equals(judgments.items)
        ):
            raise RunsError("runs were built for other judgments (item index differs)")

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame (system, user, item, rank) of the runs."""
        s, u, d = np.nonzero(self.ranks >= 0)
        return pd.DataFrame(
            {
                "system": self.systems[s],
                "user": self.users[u],
                "item": self.items[self.ranks[s, u, d]],
                "rank": d + 1,
            }
        )

    def only_judged(self, judgments: Judgments) -> Runs:
        """The lists without their unjudged items, order kept (trec_eval ``-J``).

        An item stays if the user has a grade >= 0 for it; items outside the judgments and
        pooled-but-unjudged ones (negative grades) are dropped, and the items below move up, as
        trec_eval's ``form_res_rels.c`` does with its judged-docs-only flag.
        """
        self.check_aligned(judgments)
        e = judgments._entries
        width = np.int64(len(self.items))
        keep_entry = judgments.active() & (e.grades >= 0)
        judged = np.sort(e.users[keep_entry] * width + e.items[keep_entry])
        r = self.ranks
        users = np.arange(r.shape[1], dtype=np.int64)[None, :, None]
        keys = users * width + r.astype(np.int64)
        if judged.size:
            pos = np.minimum(np.searchsorted(judged, keys), judged.size - 1)
            keep = (r >= 0) & (judged[pos] == keys)
        else:
            keep = np.zeros(r.shape, dtype=bool)
        order = np.argsort(~keep, axis=2, kind="stable")
        ranks = np.take_along_axis(np.where(keep, r, -1), order, axis=2).astype(np.int32)
        tied = None
        if self.tied is not None:  # two kept items tie when they were in one block
            block = np.take_along_axis(np.cumsum(~self.tied, axis=2), order, axis=2)
            tied = np.zeros(r.shape, dtype=bool)
            tied[:, :, 1:] = (block[:, :, 1:] == block[:, :, :-1]) & (ranks[:, :, 1:] >= 0)
        return Runs(
            self.systems,
            self.users,
            self.items,
            ranks,
            self.n_judged_items,
            self.dropped_users,
            tied,
            self.ties,
        )

    def select(self, systems: Sequence[str]) -> Runs:
        """The runs of some systems only."""
        idx = self.systems.get_indexer(systems)
        if (idx < 0).any():
            raise RunsError(f"unknown systems {list(np.asarray(systems)[idx < 0])}")
        return Runs(
            self.systems[idx],
            self.users,
            self.items,
            self.ranks[idx],
            self.n_judged_items,
            self.dropped_users,
            None if self.tied is None else self.tied[idx],
            self.ties,
        )


def _rank_within(frame: pd.DataFrame) -> np.ndarray:
    """Ranks (1 = best) per user by score descending, ties by item text descending."""
    ucode = pd.factorize(frame["user"])[0]
    icode, distinct = pd.factorize(frame["item"])
    tkey = text_order(distinct)[icode]
    order = np.lexsort((-tkey, -frame["score"].to_numpy(), ucode))
    u = ucode[order]
    start = np.r_[True, u[1:] != u[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(len(u)), 0))
    ranks = np.empty(len(u), dtype=np.float64)
    ranks[order] = np.arange(len(u)) - first + 1
    return ranks
