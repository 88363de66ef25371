"""True ranks of held-out items from candidate scores (the input of a sampled-metrics study).

Given every candidate's score for each user (e.g. all items the user has not rated in training)
and each user's single held-out item, the true rank is the item's position in the user's full
ranking, and n the number of candidates. Order: score descending, then item id *as text*
descending (the book's tie rule, trec_eval's order, see :mod:`recmeta.runs`); a NaN score (a
model that cannot score the item) ranks below every number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["true_ranks", "candidate_pairs"]


def true_ranks(scores: pd.DataFrame, held_out: pd.DataFrame) -> pd.DataFrame:
    """Rank of each user's held-out item among the user's scored candidates.

    ``scores``: columns user, item, score (one row per candidate, the held-out item included).
    ``held_out``: columns user, item, one row per user. Returns columns user, item, rank
    (1-based), n (candidates of the user), in the order of ``held_out``.
    """
    for name, frame, cols in (("scores", scores, ["user", "item", "score"]), ("held_out", held_out, ["user", "item"])):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} lacks column(s) {missing}; expected {cols}")
    if held_out["user"].duplicated().any():
        users = held_out.loc[held_out["user"].duplicated(), "user"].unique()[:5].tolist()
        raise ValueError(
            f"held_out has several items for users {users}...: the sampled-metric analysis takes one "
            "held-out item per user (use a leave-one-out split)"
        )
    if scores.duplicated(["user", "item"]).any():
        raise ValueError("scores repeat a (user, item) pair; keep one score per candidate")
    target = held_out[["user", "item"]].merge(scores[["user", "item", "score"]], on=["user", "item"], how="left", indicator=True)
    absent = target["_merge"] == "left_only"
    if absent.any():
        raise ValueError(
            f"{int(absent.sum())} held-out item(s) are not among their user's scored candidates "
            f"(e.g. user {target.loc[absent, 'user'].iloc[0]!r}, item {target.loc[absent, 'item'].iloc[0]!r}); "
            "score them too, or drop those users (items never seen in training cannot be ranked)"
        )
    frame = scores[["user", "item", "score"]].merge(
        target[["user", "item", "score"]].rename(columns={"item": "target_item", "score": "target_score"}),
        on="user",
        how="inner",
    )
    s = frame["score"].to_numpy(dtype=np.float64)
    t = frame["target_score"].to_numpy(dtype=np.float64)
    s_key = np.where(np.isnan(s), -np.inf, s)
    t_key = np.where(np.isnan(t), -np.inf, t)
    s_nan, t_nan = np.isnan(s), np.isnan(t)
    # "strictly before the target" under the tie rule; NaN ranks after -inf-valued numbers too
    tie = (s_key == t_key) & (s_nan == t_nan)
    text_after = frame["item"].astype(str).to_numpy() > frame["target_item"].astype(str).to_numpy()
    before = (~s_nan & t_nan) | (s_key > t_key) | (tie & text_after)
    frame = frame.assign(before=before)
    per_user = frame.groupby("user", sort=False).agg(before=("before", "sum"), n=("item", "size"))
    out = held_out[["user", "item"]].reset_index(drop=True)
    out["rank"] = (per_user["before"].reindex(out["user"]).to_numpy() + 1).astype(np.int64)
    out["n"] = per_user["n"].reindex(out["user"]).to_numpy().astype(np.int64)
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
        raise ValueError(f"{int(unknown.sum())} user(s) have no training data (e.g. {u[unknown][0]!r}); drop them first")
    rated = np.zeros((len(u), len(items)), dtype=bool)
    sub = train[train["user"].isin(u)]
    rated[pd.Index(u).get_indexer(sub["user"]), np.searchsorted(items, sub["item"].to_numpy())] = True
    rows, cols = np.nonzero(~rated)
    return pd.DataFrame({"user": u[rows], "item": items[cols]})
