"""The tables of the assessing-ranking-metrics chapter, built from the study's results.

Each function returns the frame a cell shows (and :mod:`.text` describes): the check of the
study's scorer against the engine, DP per metric, the metrics' change under rating removal,
the areas under the robustness curves, the datasets side by side and the verdicts on both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import analyses
from ...data import stats
from ...ledger import Estimate, format_estimate
from ...metrics import Subsets, score_matrices
from .folds import SCHEMES, Study, label
from .replicates import dp_estimate
from .study import Results

__all__ = [
    "area_table",
    "change_table",
    "dataset_table",
    "dp_estimates",
    "dp_table",
    "middle_share",
    "scorer_check",
    "verdicts_side_by_side",
]

#: the column of :func:`scorer_check` that compares the engine's infAP with its AP
INFAP_GAP = "infAP (engine) − MAP"


@analyses.analysis
def scorer_check(study: Study, subsets: Subsets, *, share: float, seed: int) -> pd.DataFrame:
    """Largest absolute difference, over systems and topics, between ``subsets`` (the pass over
    judged positions, :func:`~.folds.scorer`) and the engine's pass over whole lists, on the full
    test sets and on a random ``share`` of the ratings (seeded); one column per metric, plus
    :data:`INFAP_GAP`, the engine's infAP against its AP."""
    names = subsets.metrics
    cutoff = names[0].split("@", 1)[1]
    mask = np.random.default_rng(seed).random(study.judgments.n_entries) < share
    gaps = {}
    for what, j, keep in (
        ("full test sets", study.judgments, None),
        (f"{share:.0%} of the ratings", study.judgments.subset(mask), mask),
    ):
        mine, engine = subsets.score(keep), score_matrices(j, study.runs, names)
        gaps[what] = {label(n): np.nanmax(np.abs(mine[n] - engine[n])) for n in names}
        gaps[what][INFAP_GAP] = np.nanmax(
            np.abs(engine[f"infAP@{cutoff}"] - engine[f"AP@{cutoff}"])
        )
    return pd.DataFrame(gaps).T


def middle_share(shares: Sequence[float]) -> float:
    """The share below 1 closest to one half."""
    below = [s for s in shares if s < 1]
    if not below:
        raise ValueError(f"no share below 1 in {list(shares)}")
    return min(below, key=lambda s: abs(s - 0.5))


def dp_estimates(inputs: Mapping[str, Any]) -> dict[str, Estimate]:
    """DP of each metric (short names) with its interval, from the ledger's inputs."""
    return {
        m: dp_estimate(inputs["dp"], inputs["dp_reps"], inputs["dp_base"], inputs["dp_mc"], m)
        for m in inputs["metrics"]
    }


def dp_table(results: Results, inputs: Mapping[str, Any], alpha: float) -> pd.DataFrame:
    """DP per metric on users (with its interval and rank) and on (fold, user) topics, and the
    number of pairs significant at ``alpha``, indexed by the paper's labels."""
    est = dp_estimates(inputs)
    p = results.pvalues
    sig = p.groupby("metric", sort=False)["p"].apply(lambda x: int((x <= alpha).sum()))
    return pd.DataFrame(
        {
            "DP (users)": results.dp.to_numpy(),
            "interval": [format_estimate(est[m]).split(" ", 1)[1] for m in inputs["metrics"]],
            "rank (users)": results.dp.rank(method="min").astype(int).to_numpy(),
            f"pairs with p ≤ {alpha:g}": sig.to_numpy(),
            "DP (topics)": results.dp_topics.to_numpy(),
            "rank (topics)": results.dp_topics.rank(method="min").astype(int).to_numpy(),
        },
        index=[label(m) for m in results.measures],
    )


def change_table(results: Results, shares: Sequence[float]) -> pd.DataFrame:
    """Each metric's arithmetic mean over the systems on the full test set, at the share of
    ratings kept closest to one half and at the smallest share, with the relative change at the
    middle share (the paper's Fig. 4 in numbers)."""
    mid, low = middle_share(shares), min(shares)
    a = results.absolute
    a = a[(a.scheme == "ratings") & (a["aggregate"] == "mean")]
    arith = a.pivot_table(index="metric", columns="share", values="value", sort=False)
    change = pd.DataFrame(
        {
            "full": arith[1.0] if 1.0 in arith else results.reference["mean"].mean(),
            f"{mid:.0%} kept": arith[mid],
            f"{low:.0%} kept": arith[low],
        }
    )
    change["relative change at the middle share"] = change[f"{mid:.0%} kept"] / change["full"] - 1
    change.index = [label(m) for m in change.index]
    return change


def area_table(results: Results) -> pd.DataFrame:
    """Area under each metric's robustness curve (rows: the paper's labels), one column per
    (aggregate, scheme), arithmetic means first."""
    wide = results.summary().pivot_table(
        index="metric", columns=["aggregate", "scheme"], values="mean_tau", sort=False
    )
    wide = wide.reindex(columns=[(a, s) for a in ("mean", "gmean") for s in SCHEMES])
    wide.index = [label(m) for m in wide.index]
    return wide


def dataset_table(
    studies: Mapping[str, tuple[pd.DataFrame, Study]], threshold: float
) -> pd.DataFrame:
    """The datasets side by side (one column per name): size, density, test ratings per user
    and fold, share of relevant ratings and the Gini indices of :func:`recmeta.data.stats`."""
    out = {}
    for name, (ratings, study) in studies.items():
        # recmeta.data.stats types its values as object; these are its counts and ratios
        s: Mapping[str, Any] = stats(ratings, str(name))
        per_topic = study.test.groupby(["fold", "user"]).size()
        out[str(name)] = {
            "users": s["users"],
            "items": s["items"],
            "ratings": s["ratings"],
            "ratings per user": s["ratings"] / s["users"],
            "density": s["density"],
            "test ratings per user and fold": per_topic.mean(),
            f"share rated ≥ {threshold:g}": float((ratings["rating"] >= threshold).mean()),
            "user Gini": s["user_gini"],
            "item Gini": s["item_gini"],
        }
    return pd.DataFrame(out)


def verdicts_side_by_side(
    ledger: pd.DataFrame, other: pd.DataFrame, dataset: str, second: str
) -> pd.DataFrame:
    """Each claim's statement, source and verdict on ``dataset`` (``ledger``) and on ``second``
    (``other``), in the ledger's order."""
    return pd.DataFrame(
        {
            "claim": ledger["statement"],
            "source": ledger["source"],
            str(dataset): ledger["verdict"],
            str(second): other.set_index("claim").loc[ledger["claim"], "verdict"].to_numpy(),
        }
    )
