"""The inputs of :func:`~recmeta.compare.compare`: recommendations, test and training data.

Each is accepted as a LensKit object (``ItemListCollection``, ``Dataset``, ``{user: ItemList}``),
a tidy frame, a file, or the metric engine's own type, and turned into what the engine reads
(:class:`~recmeta.metrics.Judgments`, :class:`~recmeta.metrics.Runs`, a training frame), with a
message naming the problem when it cannot be.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from recmeta import data
from recmeta.metrics import Judgments, Runs

if TYPE_CHECKING:
    from lenskit.data import ItemListCollection

__all__ = ["as_frame", "as_judgments", "as_runs", "as_train", "is_item_lists", "item_lists"]


def item_lists(
    frame: pd.DataFrame, *, user_col: str = "user", item_col: str = "item"
) -> ItemListCollection:
    """A LensKit ``ItemListCollection`` (keyed by ``user_id``) of a tidy list frame.

    For runs kept as frames (e.g. :func:`recmeta.recommenders.make`, one system at a time):
    the columns ``rank`` and ``score`` are kept.
    """
    # imported here: lenskit takes 4 s to import, which `recmeta compare` on TREC files does
    # not need
    from lenskit.data import ItemList, ItemListCollection

    cols = {user_col: "user_id", item_col: "item_id"}
    keep = [c for c in (user_col, item_col, "rank", "score") if c in frame.columns]
    tidy = frame[keep].rename(columns=cols)
    if tidy["user_id"].isna().any():
        raise ValueError("item lists need a user for every row; some rows have none")
    # the lists added as ``ItemListCollection.from_df`` adds them (users in sorted order, each
    # user's rows in the frame's order, every column but the user's a field), from one stable
    # sort instead of a pandas group per user (ten times faster or more on a thousand users)
    out = ItemListCollection.empty(["user_id"])
    users = tidy["user_id"].to_numpy()
    order = np.argsort(users, kind="stable")
    keys, starts = np.unique(users[order], return_index=True)
    bounds = np.append(starts, len(order))
    fields = {c: tidy[c].to_numpy()[order] for c in tidy.columns if c != "user_id"}
    for key, a, b in zip(keys.tolist(), bounds[:-1], bounds[1:], strict=True):
        items = ItemList(**{"item_ids" if c == "item_id" else c: v[a:b] for c, v in fields.items()})
        out.add(items, key)
    return out


def is_item_lists(x: Any) -> bool:
    """Whether ``x`` looks like a LensKit ``ItemListCollection``."""
    return hasattr(x, "to_df") and hasattr(x, "key_fields")


def as_frame(x: Any, what: str) -> pd.DataFrame:
    """A tidy frame (user, item, ...) of a frame or a LensKit object.

    LensKit objects (``Dataset``, ``ItemListCollection``, ``{user: ItemList}``) as
    :func:`recmeta.data.lenskit_frame` reads them; a frame's ``user_id``/``userId``/... and
    ``item_id``/``movieId``/... columns are taken as ``user`` and ``item``.
    """
    if data.is_lenskit(x):
        return data.lenskit_frame(x, what)
    if isinstance(x, pd.DataFrame):
        return data.usual_names(x, ("user", "item"))
    raise TypeError(
        f"{what} must be a pandas DataFrame or a LensKit Dataset, ItemListCollection "
        f"or {{user: ItemList}}, got {type(x).__name__}"
    )


def as_judgments(test: Any, threshold: float | None) -> Judgments:
    """The test data as :class:`~recmeta.metrics.Judgments` (graded data need ``threshold``)."""
    if isinstance(test, Judgments):
        return test if threshold is None else test.with_threshold(threshold)
    if isinstance(test, (str, os.PathLike)):
        return Judgments.from_qrels(test, threshold=1.0 if threshold is None else threshold)
    df = as_frame(test, "the test data")
    if "rating" in df.columns and df["rating"].isna().any() and df["rating"].notna().any():
        raise ValueError(
            f"{int(df['rating'].isna().sum())} test ratings are missing; give every "
            "test item a rating, or drop the column for implicit feedback"
        )
    has_grades = "rating" in df.columns and df["rating"].notna().all()
    if has_grades and threshold is None:
        raise ValueError(
            "the test data have ratings: give threshold= (a rating ≥ threshold is "
            "relevant, e.g. 4 on a 5-star scale)"
        )
    if not has_grades:
        df = df.drop(columns=[c for c in ("rating",) if c in df.columns])
        return Judgments.from_frame(df[["user", "item"]], None)
    return Judgments.from_frame(df[["user", "item", "rating"]], threshold)


def as_runs(recs: Any, judgments: Judgments, depth: int | None) -> Runs:
    """The recommendations as :class:`~recmeta.metrics.Runs` on the users of ``judgments``."""
    if isinstance(recs, Runs):
        recs.check_aligned(judgments)
        return (
            recs
            if depth is None
            else Runs(
                recs.systems,
                recs.users,
                recs.items,
                recs.ranks[:, :, :depth],
                recs.n_judged_items,
                recs.dropped_users,
            )
        )
    if isinstance(recs, pd.DataFrame):
        return Runs.from_frame(as_frame(recs, "the recommendations"), judgments, depth=depth)
    if isinstance(recs, Mapping):
        if not recs:
            raise ValueError("no recommendations given")
        if data.is_lenskit(recs):
            raise TypeError(
                "recommendations: a mapping {user: ItemList} is one system's lists; "
                "name the system: {'my system': {user: ItemList, ...}}"
            )
        kinds = {is_item_lists(v) for v in recs.values()}
        if kinds == {True}:
            return Runs.from_lenskit(dict(recs), judgments, depth=depth)
        frames = [
            as_frame(v, f"recommendations of {k!r}").assign(system=str(k)) for k, v in recs.items()
        ]
        return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments, depth=depth)
    raise TypeError(
        "recommendations must be a mapping {system: ItemListCollection, "
        "{user: ItemList} or frame}, a frame with a 'system' column, or Runs; got "
        f"{type(recs).__name__}"
    )


def as_train(train: Any, judgments: Judgments) -> pd.DataFrame:
    """The training data as a tidy frame whose ids have the type of the test data's."""
    if isinstance(train, (str, os.PathLike)):
        df = data.load(train)
    else:
        df = as_frame(train, "the training data")
    for col, index in (("user", judgments.users), ("item", judgments.items)):
        if col not in df.columns:
            raise ValueError(
                f"the training data need a {col!r} column; they have {list(df.columns)}"
            )
        text_ids = index.dtype == object or pd.api.types.is_string_dtype(index.dtype)
        if text_ids and not (
            df[col].dtype == object or pd.api.types.is_string_dtype(df[col].dtype)
        ):
            df = df.assign(**{col: df[col].astype(str)})
    return df
