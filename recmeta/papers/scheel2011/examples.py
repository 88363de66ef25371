"""The chapter's worked examples: AP at every threshold of a list of our own (the paper's
Table 1 is not legible in our copy) and NDCG, NDCNG and µAP of two toy lists written on three
scales (its Table 2), each with an independent computation by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...metrics import score_rankings
from .measures import level_weights

__all__ = [
    "OWN_LIST",
    "TOY_LABELS",
    "TOY_RANKINGS",
    "TOY_SCALES",
    "doubling_moves",
    "largest_other_move",
    "ndcg_exp_by_hand",
    "threshold_ap",
    "threshold_table",
    "toy_scale_table",
]

#: our own list for Table 1: eight items A–H with grades on a 0–4 scale, in ranked order
OWN_LIST = pd.Series([3, 0, 4, 1, 2, 0, 1, 4], index=list("ABCDEFGH"), name="grade", dtype=float)

#: two toy lists for Table 2, grades in ranked order on a 0–2 scale
TOY_RANKINGS = {
    "top item misplaced": np.array([1.0, 2.0, 2.0, 0.0, 1.0, 0.0]),
    "top item first": np.array([2.0, 0.0, 1.0, 1.0, 0.0, 0.0]),
}
#: the scales of Table 2: the factor every grade is multiplied by
TOY_SCALES = {"0-2": 1, "0-4 (doubled)": 2, "0-20 (ten-fold)": 10}
#: the measures of Table 2 (engine names) and their column labels
TOY_LABELS = {
    "nDCG(gain=exp)": "NDCG (exp. gain)",
    "nDCG": "NDCG (linear gain)",
    "NDCNG": "NDCNG",
    "muAP": "µAP",
}


def threshold_ap(grades: pd.Series = OWN_LIST) -> pd.Series:
    """AP of the list ``grades`` (in ranked order) at every integer threshold ``t = 1 ..
    max grade`` (relevant: grade >= t; Scheel et al., eq. 2), by the metric engine."""
    g = grades.to_numpy()
    return pd.Series(
        {
            t: score_rankings(g, ["AP"], threshold=t)["AP"][0]
            for t in range(1, int(grades.max()) + 1)
        }
    )


def _ap_by_hand(grades: np.ndarray, t: float) -> float:
    ranks = np.flatnonzero(grades >= t) + 1
    return float(np.mean(np.arange(1, ranks.size + 1) / ranks))


def threshold_table(grades: pd.Series = OWN_LIST) -> pd.DataFrame:
    """AP at every threshold, µAP (eq. 4) and the weighted mean ``Σ w_t AP^t`` of the list
    ``grades`` (integer grades), by the engine (column ``AP``) and by hand (``by hand``: the
    mean of P@rank over the relevant ranks; µAP as the plain mean over the thresholds, since
    integer levels are equally spaced)."""
    ap = threshold_ap(grades)
    g = grades.to_numpy()
    mu = score_rankings(g, ["muAP"])["muAP"][0]
    weighted = ap @ level_weights(g).to_numpy()
    hand = np.array([_ap_by_hand(g, t) for t in ap.index])
    index = [*(f"t = {t}" for t in ap.index), "µAP (eq. 4)", "Σ w_t AP^t"]
    return pd.DataFrame(
        {"AP": [*ap.to_numpy(), mu, weighted], "by hand": [*hand, hand.mean(), hand.mean()]},
        index=index,
    )


def toy_scale_table() -> pd.DataFrame:
    """:data:`TOY_LABELS` of every toy list of :data:`TOY_RANKINGS` on every scale of
    :data:`TOY_SCALES`, by the engine: one row per (ranking, scale)."""
    rows = {}
    for what, ranking in TOY_RANKINGS.items():
        for scale, factor in TOY_SCALES.items():
            out = score_rankings(factor * ranking, list(TOY_LABELS))
            rows[(what, scale)] = {TOY_LABELS[k]: v[0] for k, v in out.items()}
    return pd.DataFrame(rows).T.rename_axis(["ranking", "scale"])


def ndcg_exp_by_hand(table: pd.DataFrame) -> pd.Series:
    """NDCG with exponential gain (eq. 3) of every row of :func:`toy_scale_table`, by hand."""
    out = []
    for what, scale in table.index:
        g = TOY_SCALES[scale] * TOY_RANKINGS[what]
        disc = 1 / np.log2(np.arange(2, g.size + 2))
        out.append(((2**g - 1) * disc).sum() / ((2 ** np.sort(g)[::-1] - 1) * disc).sum())
    return pd.Series(out, index=table.index, name="NDCG (exp. gain) by hand")


def doubling_moves(table: pd.DataFrame) -> pd.Series:
    """Per toy list, NDCG (exp. gain) on the doubled scale minus on the native one."""
    moves = table["NDCG (exp. gain)"].unstack("scale")
    return moves["0-4 (doubled)"] - moves["0-2"]


def largest_other_move(table: pd.DataFrame) -> float:
    """The largest change, over the toy lists and scales, of every column of
    :func:`toy_scale_table` but NDCG (exp. gain) against the list's native 0–2 scale: 0 when
    those measures are scale-invariant."""
    others = table.drop(columns="NDCG (exp. gain)")
    native = others.xs("0-2", level="scale")
    base = native.loc[others.index.get_level_values("ranking")].to_numpy()
    return float(np.abs(others.to_numpy() - base).max())
