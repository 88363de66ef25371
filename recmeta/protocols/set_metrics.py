"""Measures on target sets: each set one topic of the metric engine, averaged as the protocol says.

A recommender scores every (user, item) pair of a target-set frame
(:func:`recmeta.protocols.scoring.candidate_pairs`); the scores are joined back
(:func:`recmeta.protocols.scoring.attach_scores`), each set is evaluated by the metric engine as
one topic (:func:`target_metrics`, :func:`engine_metrics`), and the per-set values are averaged
as the protocol says (:func:`protocol_mean`): over users in AR, over positive test ratings in 1R
(Bellogín et al. 2017, eq. 1), and over percentiles in P1R.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from ..arrays import sorted_unique
from ..metrics import Judgments, Runs, evaluate, parse_metric, score_matrices
from .ranks import rank_in_sets, set_codes
from .scoring import attach_scores

__all__ = [
    "engine_metrics",
    "evaluate_systems",
    "metric_cutoff",
    "one_r_an_metrics",
    "protocol_mean",
    "target_metrics",
]


def target_metrics(
    scored: pd.DataFrame,
    n: int,
    *,
    gain: Literal["binary", "rating"] = "binary",
    rank: np.ndarray | None = None,
) -> pd.DataFrame:
    """P@n and nDCG@n of every target set of a scored target-set frame, by the metric engine.

    Each target set is one topic of :mod:`recmeta.metrics` and its items, ranked, one list:
    items by decreasing score, ties by increasing item id — the engine's ``ties="item_id"``,
    computed here by :func:`recmeta.protocols.ranks.rank_in_sets`. The set's
    relevant items are its judgments, with grade 1 (``gain="binary"``) or their test rating
    (``"rating"``: the paper uses the rating values above the threshold as grades, §6.3), so
    ``P@n`` divides by n even if the set is smaller (trec_eval's P) and ``nDCG@n`` takes binary
    or linear gains with the ideal from the set's relevant items; in 1R the grade cancels. A set
    without a relevant item scores 0 on both: the protocol's mean counts it (eq. 4).
    ``rank`` may pass the rows' 0-based ranks within their sets when they are known already.
    Returns one row per set: ``set``, ``user``, ``stratum``, ``P``, ``nDCG``.
    """
    for c in ("set", "user", "item", "relevant", "score", "stratum"):
        if c not in scored.columns:
            raise ValueError(
                f"scored frame lacks column {c!r}; build it with target_sets + attach_scores"
            )
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    if gain not in ("binary", "rating"):
        raise ValueError(f"gain must be 'binary' or 'rating', got {gain!r}")
    s = scored["set"].to_numpy()
    if np.isnan(scored["score"].to_numpy(dtype=float)).any():
        raise ValueError(
            "scores contain NaN; use attach_scores(..., missing='last') for unscored items"
        )
    item = scored["item"].to_numpy()
    rel = scored["relevant"].to_numpy(dtype=bool)
    sets, inverse, grouped = set_codes(s, item)
    if grouped:
        first_row = (
            np.r_[0, np.flatnonzero(np.diff(inverse)) + 1] if len(s) else np.zeros(0, np.int64)
        )
    else:
        _, first_row = np.unique(inverse, return_index=True)
    if rank is None:
        rank = rank_in_sets(scored, depth=n)
    elif len(rank) != len(scored):
        raise ValueError("rank must hold one rank per row of the scored frame")
    # topics = target sets; judgments = their relevant items; one run = the first n of each set
    top = np.flatnonzero(rank < n)
    judged = np.flatnonzero(rel)
    ids = pd.Index(sorted_unique(np.concatenate([item[judged], item[top]])))
    grade = np.ones(judged.size) if gain == "binary" else scored["rating"].to_numpy(float)[judged]
    threshold = float(grade.min()) if grade.size else 1.0
    j = Judgments.from_frame(
        pd.DataFrame({"user": inverse[judged], "item": item[judged], "rating": grade}),
        threshold,
        users=pd.RangeIndex(len(sets)),
        items=ids,
    )
    orders = np.full((1, len(sets), n), -1, dtype=np.int64)
    orders[0, inverse[top], rank[top]] = ids.get_indexer(item[top])
    names = [f"P@{n}", f"nDCG(gain={'binary' if gain == 'binary' else 'linear'})@{n}"]
    values = score_matrices(j, Runs.from_orders(orders, j), names)
    return pd.DataFrame(
        {
            "set": sets,
            "user": scored["user"].to_numpy()[first_row],
            "stratum": scored["stratum"].to_numpy()[first_row],
            "P": np.nan_to_num(values[names[0]][0]),  # sets without a relevant item: 0
            "nDCG": np.nan_to_num(values[names[1]][0]),
        }
    )


def metric_cutoff(metric: str) -> int | None:
    """The cut-off of a metric name of the engine (``"R@10"`` → 10), ``None`` without one."""
    return parse_metric(metric).k


def one_r_an_metrics(scored_ar: pd.DataFrame, n: int) -> pd.DataFrame:
    """P@n and nDCG@n of the 1R-AN target sets, read off the scored AR-AN sets of the same split.

    Under AN every 1R set of a user holds one relevant item r and the same non-relevant items
    N_u = 𝒞 ∖ PR_test(u) ∖ R_train(u) — the non-relevant items of her AR-AN set T_u. So the rank
    of r in T_u^r is one plus the number of non-relevant items of T_u ranked above r (scores
    descending, ties by item id, as :func:`target_metrics`), and the 1R sets need not be built
    (Bellogín et al. 2017, Table 3). With a single relevant item, P@n = [rank ≤ n]/n and
    nDCG@n = [rank ≤ n]/log2(rank + 1), whatever the grade.
    ``scored_ar`` is an AR-AN target-set frame with scores (``Protocol(c, "AR", "AN")``).
    Returns one row per positive test rating in (user, item) order — the sets of
    ``Protocol(c, "1R", "AN")`` — with ``set``, ``user``, ``item``, ``size`` (|N_u| + 1),
    ``rank``, ``stratum``, ``P`` and ``nDCG``.
    """
    for c in ("set", "user", "item", "relevant", "score", "stratum"):
        if c not in scored_ar.columns:
            raise ValueError(
                f"scored frame lacks column {c!r}; build it with target_sets + attach_scores"
            )
    if n < 1:
        raise ValueError(f"cut-off n must be >= 1, got {n}")
    s = scored_ar["set"].to_numpy()
    item = scored_ar["item"].to_numpy()
    score = scored_ar["score"].to_numpy(dtype=float)
    rel = scored_ar["relevant"].to_numpy(dtype=bool)
    _, inv = np.unique(s, return_inverse=True)
    order = np.lexsort((item, -score, inv))
    inv_o, rel_o = inv[order], rel[order]
    start = np.searchsorted(inv_o, inv_o, side="left")
    rank_all = np.arange(len(order)) - start  # 0-based rank in T_u
    cum_rel = np.cumsum(rel_o) - rel_o  # relevant items strictly above, counted from the start
    rel_above = cum_rel - (np.cumsum(rel_o) - rel_o)[start]
    nonrel_above = rank_all - rel_above
    size = np.bincount(inv, minlength=inv.max() + 1 if len(inv) else 0) - np.bincount(
        inv, weights=rel
    ).astype(np.int64)
    pick = order[rel_o]
    rank = nonrel_above[rel_o] + 1
    hit = rank <= n
    out = (
        pd.DataFrame(
            {
                "user": scored_ar["user"].to_numpy()[pick],
                "item": item[pick],
                "size": size[inv[pick]] + 1,
                "rank": rank,
                "stratum": scored_ar["stratum"].to_numpy()[pick],
                "P": hit / n,
                "nDCG": np.where(hit, 1.0 / np.log2(rank + 1.0), 0.0),
            }
        )
        .sort_values(["user", "item"], kind="stable")
        .reset_index(drop=True)
    )
    out.insert(0, "set", np.arange(len(out), dtype=np.int64))
    return out


def protocol_mean(per_set: pd.DataFrame, metric: str = "P") -> float:
    """Average per-set values as the protocol prescribes.

    Mean over target sets within each stratum, then mean over strata. With one stratum this is the
    mean over users in AR and Bellogín et al.'s eq. 1 in 1R:
    1R-P@n = (1/|PR_test|) Σ_u Σ_r P_u@n(T_u^r); with m percentiles (P1R) it is the mean of the m
    per-percentile 1R values (§6.1).
    """
    if metric not in per_set.columns:
        raise ValueError(
            f"no column {metric!r} in the per-set frame (have {list(per_set.columns)})"
        )
    return float(per_set.groupby("stratum")[metric].mean().mean())


def evaluate_systems(
    sets: pd.DataFrame,
    systems: dict[str, pd.DataFrame],
    n: int = 10,
    *,
    gain: Literal["binary", "rating"] = "binary",
    missing: Literal["raise", "last"] = "raise",
) -> pd.DataFrame:
    """P@n and nDCG@n of several systems on one set of target sets, averaged by the protocol.

    ``systems`` maps a name to its (user, item, score) frame. Returns one row per system with
    the columns ``system``, ``P@n``, ``nDCG@n`` (see :func:`target_metrics`, :func:`protocol_mean`).
    """
    rows = []
    for name, scores in systems.items():
        per_set = target_metrics(attach_scores(sets, scores, missing=missing), n, gain=gain)
        rows.append(
            {
                "system": name,
                f"P@{n}": protocol_mean(per_set, "P"),
                f"nDCG@{n}": protocol_mean(per_set, "nDCG"),
            }
        )
    return pd.DataFrame(rows)


def engine_metrics(
    sets: pd.DataFrame,
    systems: dict[str, pd.DataFrame],
    metrics: list[str],
    threshold: float,
    *,
    popularity: pd.Series | None = None,
    missing: Literal["raise", "last"] = "last",
    judged: Literal["all", "relevant"] = "all",
    per_set: bool = False,
    depth: int | Literal["judged"] | None = None,
    ranks: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Any metric of :mod:`recmeta.metrics` on target sets, each set taken as one query.

    With ``judged="all"`` the judged items of a set (test rating present, relevant or not) become
    its judgments, so bpref and infAP see judged non-relevant items apart from unjudged ones;
    ``judged="relevant"`` keeps only the relevant items as judgments, so graded gains come from
    relevant items alone (the paper's grades, §6.3: "the rating values above the relevance
    threshold"). ``popularity`` (|PR(i)| by item) feeds stratified recall. Each system ranks the
    whole set, in the order of :func:`target_metrics` (score descending, ties by item id), handed
    to the engine as ranks; ``depth`` keeps only the first ``depth`` items of each list, which
    changes nothing for metrics cut at ``depth`` or less and saves time on large sets;
    ``depth="judged"`` keeps each list down to its last judged item, or to the largest cut-off
    of ``metrics`` if that is deeper — exact for metrics that read judged items only (P, R,
    nDCG, AP, RR, bpref, infAP, stratified recall; not AUC). The
    engine averages over sets with a relevant item — in 1R every set, which is eq. 1; in AR the
    users with a positive test rating. ``ranks`` may pass each system's ranks of the rows of
    ``sets`` when known (that system's scores are then not read again).
    Returns a frame system, metric, value; with ``per_set`` one row per evaluated set:
    system, set, user, stratum, metric, value.
    """
    if judged not in ("all", "relevant"):
        raise ValueError(f"judged must be 'all' or 'relevant', got {judged!r}")
    set_ids, set_code, grouped = set_codes(sets["set"].to_numpy(), sets["item"].to_numpy())
    ids = pd.Index(set_ids, name="user")
    keep = (
        sets["relevant"].to_numpy(dtype=bool)
        if judged == "relevant"
        else sets["rating"].notna().to_numpy()
    )
    judged_rows = sets.loc[keep, ["set", "item", "rating"]]
    # the judged items index the judgments; the runs add the other items they rank
    j = Judgments.from_frame(
        judged_rows,
        threshold,
        user_col="set",
        users=ids,
        items=pd.Index(sorted_unique(judged_rows["item"].to_numpy())),
    )
    if popularity is not None:
        j = j.with_popularity(popularity)
    if depth == "judged":
        cuts = [metric_cutoff(m) for m in metrics]
        floor = max((k for k in cuts if k is not None), default=1)
        is_judged = keep
    elif depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, 'judged' or None, got {depth}")
    frames = []
    set_col, item_col = sets["set"].to_numpy(), sets["item"].to_numpy()
    for name, scores in systems.items():
        if ranks is not None and name in ranks:
            rank = ranks[name]  # of the rows of sets, which attach_scores keeps in order
        else:
            scored = attach_scores(sets, scores, missing=missing)
            rank = rank_in_sets(scored, depth=depth if isinstance(depth, int) else None)
        if depth == "judged":
            last = np.zeros(set_code.max() + 1 if len(set_code) else 0, dtype=np.int64)
            np.maximum.at(last, set_code[is_judged], rank[is_judged] + 1)
            keep = rank < np.maximum(last, floor)[set_code]
        else:
            keep = slice(None) if depth is None else rank < depth
        frames.append(
            pd.DataFrame(
                {
                    "user": set_col[keep],
                    "item": item_col[keep],
                    "rank": rank[keep],
                    "system": name,
                }
            )
        )
    runs = Runs.from_frame(pd.concat(frames, ignore_index=True), j)
    if not per_set:
        return evaluate(j, runs, metrics)
    out = evaluate(j, runs, metrics, per_user=True).rename(columns={"user": "set"})
    if grouped:  # each set's first row opens its run of rows
        top = np.flatnonzero(np.r_[True, set_code[1:] != set_code[:-1]])
        first = sets.iloc[top][["user", "stratum"]].set_axis(pd.Index(set_ids, name="set"))
    else:
        first = sets.drop_duplicates("set").set_index("set")[["user", "stratum"]]
    out = out.join(first, on="set")
    return out[["system", "set", "user", "stratum", "metric", "value"]]
