"""Valcarce et al. (2020), §5.1 (Table 2) and §6.2: what the paper says of its datasets.

Table 2 gives each dataset's users, items, ratings, density and the Gini coefficients of the
ratings over users and over items. The text of the paper available to the book carries the
table's caption but not its cells. MovieLens 1M is a fixed release, whose users, items,
ratings and density the same authors print in their 2018 paper's Table 2
(:data:`recmeta.papers.valcarce2018.values.PAPER_TABLE2`); those counts are the release's, so
the chapter holds its data against them. §6.2 prints one more figure per dataset: the share of
grades above 4 (:data:`PAPER_TOP_GRADES`).

:func:`summary` computes the same quantities on the chapter's ratings (the ``data`` result of
:meth:`~.study.Results.ledger_inputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...data import stats
from ..valcarce2018.values import PAPER_TABLE2, PAPER_TABLE2_TAIL

__all__ = ["PAPER_TOP_GRADES", "TOP_GRADE", "summary", "table2"]

#: §6.2: "31,48% of grades higher than 4 compared to 22.63% of ML and 26.10% of BA", per cent,
#: as printed (strings: the printed digits set the rounding)
PAPER_TOP_GRADES: dict[str, str] = {
    "ML-1M": "22.63",
    "LibraryThing": "31.48",
    "BeerAdvocate": "26.10",
}
#: §6.2's "higher than 4": a grade strictly above this value
TOP_GRADE = 4.0


def summary(ratings: pd.DataFrame, name: str = "") -> dict[str, Any]:
    """Users, items, ratings, density (a fraction), the Gini coefficients over users and items
    (:func:`recmeta.data.stats`) and the per cent of ratings above :data:`TOP_GRADE`."""
    if "rating" not in ratings.columns:
        raise ValueError("the chapter needs graded ratings (a rating column) for Table 2")
    s: dict[str, Any] = dict(stats(ratings, name))
    s["top_grades"] = 100.0 * float((ratings["rating"] > TOP_GRADE).mean())
    keys = ("users", "items", "ratings", "density", "user_gini", "item_gini", "top_grades")
    return {k: s[k] for k in keys}


def table2(ours: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Table 2's ML-1M row (as the 2018 paper prints the release's counts) and §6.2's share of
    top grades beside the same quantities on each of ``ours`` (dataset name → :func:`summary`);
    density and top grades in per cent."""
    paper: dict[str, int | str] = {**PAPER_TABLE2["ML-1M"], **PAPER_TABLE2_TAIL["ML-1M"]}
    rows = {
        "users": float(paper["users"]),
        "items": float(paper["items"]),
        "ratings": float(paper["ratings"]),
        "density (%)": float(paper["density"]),
        "ratings above 4 (%)": float(PAPER_TOP_GRADES["ML-1M"]),
    }
    out = {"ML-1M (paper)": rows}
    for name, s in ours.items():
        out[str(name)] = {
            "users": float(s["users"]),
            "items": float(s["items"]),
            "ratings": float(s["ratings"]),
            "density (%)": 100.0 * float(s["density"]),
            "ratings above 4 (%)": float(s["top_grades"]),
        }
    return pd.DataFrame(out)
