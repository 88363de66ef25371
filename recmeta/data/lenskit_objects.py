"""LensKit's own objects as data: ``Dataset``, ``ItemListCollection`` and ``{user: ItemList}`` to
a tidy frame, and a tidy frame to a LensKit ``Dataset``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from lenskit.data import Dataset

from .columns import ROLES
from .validation import DataError, is_implicit, validate_ratings


# ----------------------------------------------------------------- LensKit's objects
def is_lenskit(x: object) -> bool:
    """A LensKit ``Dataset``, ``ItemListCollection`` or ``ItemList``, or a mapping of lists."""
    if hasattr(x, "interaction_table") or (hasattr(x, "to_df") and hasattr(x, "key_fields")):
        return True
    if _is_item_list(x):
        return True
    return isinstance(x, Mapping) and len(x) > 0 and all(_is_item_list(v) for v in x.values())


def _is_item_list(x: object) -> bool:
    return hasattr(x, "ids") and hasattr(x, "to_df") and not hasattr(x, "key_fields")


def lenskit_frame(x: object, what: str = "the data") -> pd.DataFrame:
    """Tidy frame (``user``, ``item`` and the other columns) of a LensKit object, not validated.

    A ``Dataset`` gives its interaction table with the original ids; an ``ItemListCollection``
    (e.g. ``lenskit.batch.recommend``'s output, or a split's ``test``) gives one row per
    (key, item), its first key field as ``user``; a mapping ``{user: ItemList}`` likewise. A
    single ``ItemList`` has no user: wrap it as ``{user: item_list}``.
    """
    if hasattr(x, "interaction_table"):
        df = x.interaction_table(format="pandas", original_ids=True)
        return df.rename(columns={"user_id": "user", "item_id": "item"})
    if hasattr(x, "to_df") and hasattr(x, "key_fields"):
        keys = list(x.key_fields)
        if len(keys) != 1:
            raise DataError(
                f"{what}: an ItemListCollection keyed by one field (the user) is "
                f"needed; this one has keys {keys}"
            )
        return x.to_df().rename(columns={keys[0]: "user", "item_id": "item"})
    if _is_item_list(x):
        raise DataError(
            f"{what}: a single ItemList does not say whose list it is; pass "
            "{user: item_list} (several users: an ItemListCollection or a mapping)"
        )
    if isinstance(x, Mapping) and x and all(_is_item_list(v) for v in x.values()):
        parts = [v.to_df().assign(user=k) for k, v in x.items()]
        return pd.concat(parts, ignore_index=True).rename(columns={"item_id": "item"})
    raise DataError(
        f"{what}: expected a LensKit Dataset, ItemListCollection or "
        f"{{user: ItemList}}, got {type(x).__name__}"
    )


def from_lenskit(x: object, *, source: str | None = None) -> pd.DataFrame:
    """Tidy ratings (or interaction) frame of a LensKit object (:func:`lenskit_frame`); validated.

    Timestamps that LensKit holds as dates become whole seconds since 1970-01-01 UTC; integer
    ids (LensKit's MovieLens loader keeps them as int32) become int64, as the releases load.
    """
    source = source or f"LensKit {type(x).__name__}"
    df = lenskit_frame(x, source)
    for col in ("user", "item"):
        if col in df.columns and pd.api.types.is_integer_dtype(df[col]):
            df[col] = df[col].astype("int64")
    keep = [c for c in ROLES if c in df.columns]
    return validate_ratings(df[keep], source=source, implicit="rating" not in keep)


def to_lenskit(df: pd.DataFrame) -> Dataset:
    """LensKit :class:`~lenskit.data.Dataset` of a tidy ratings or interaction frame."""
    from lenskit.data import from_interactions_df

    return from_interactions_df(
        df,
        user_col="user",
        item_col="item",
        rating_col=None if is_implicit(df) else "rating",
        timestamp_col="timestamp" if "timestamp" in df.columns else None,
    )
