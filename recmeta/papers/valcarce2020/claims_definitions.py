"""The ledger of Valcarce et al. (2020), §3.2 and §5.1: the metrics' definitions (eqs. 1–11, as
derivations) and the datasets (Table 2, and §6.2's share of top grades).

The equations are checked, not assumed: the chapter's scorer against the formulas written out
in :mod:`.equations`, on the 2018 chapter's hand-made case and on a sample of the chapter's own
topics, with the rule of the 2018 chapter
(:func:`recmeta.papers.valcarce2018.claims_definitions.equation_rule`). Table 2's ML-1M row is
a replication on ML-1M and a magnitude shown beside ours elsewhere; its other rows need data
this book does not have. Declared on :data:`~.claims.LEDGER` after :mod:`.claims_means`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from ...ledger import DERIVED, Estimate, Margin, Outcome, not_reproduced, value_rule
from ..valcarce2018.claims_definitions import EQ_TOLERANCE, TABLE2_MARGINS, equation_rule
from ..valcarce2018.values import PAPER_TABLE2, PAPER_TABLE2_TAIL
from .claims import LEDGER, ML
from .datasets import PAPER_TOP_GRADES
from .equations import EQ_SAMPLE, EQUATIONS, hand_gaps
from .estimates import metric_label

__all__ = ["NO_DATA", "TOP_GRADES_MARGIN"]

#: why a row on the paper's other datasets is not reproduced (the ledger's tests read the
#: phrase "not available here")
NO_DATA = {
    "LibraryThing": "LibraryThing is not available here (the chapter runs on MovieLens only)",
    "BeerAdvocate": "BeerAdvocate is not available here (the chapter runs on MovieLens only)",
}
_NO_CELLS = (
    "; and the text of the paper available to us carries Table 2's caption, not its cells "
    "(not legible)"
)


# ---- §3.2, eqs. 1–11 ---------------------------------------------------------------------------
def _equation(metric: str, r: Mapping[str, Any]) -> Outcome:
    gaps = r["metric_check"]["gaps"]
    ours = {k: v for k, v in gaps.items() if k.split("@")[0] == metric}
    hand = hand_gaps([metric])
    return equation_rule(EQUATIONS[metric][0], hand, ours, users=r["metric_check"]["users"])


for _metric, (_eq, _fn) in EQUATIONS.items():
    _lab = metric_label(_metric)
    _plural = _eq.startswith("eqs")
    LEDGER.claim(
        f"valcarce2020.{_eq.replace('eqs. ', 'eq').replace('eq. ', 'eq').replace('–', '-')}."
        f"{_lab.lower()}",
        statement=f"The chapter computes {_lab}@n as the paper's {_eq} "
        f"{'define' if _plural else 'defines'} it",
        source=f"§3.2, {_eq}",
        paper_value=_eq,
        paper_dataset=DERIVED,
        rule=(
            f"identity: the chapter's scorer's {_lab} against {_eq} written out in numpy, on "
            "the hand-made case of the robustness chapter (cut-offs 1, 3, 5) and on "
            f"{EQ_SAMPLE} (fold, user) topics × every system of the chapter's runs at its "
            f"cut-off; holds within {EQ_TOLERANCE:g}"
        ),
        needs=("metric_check",),
    )(partial(_equation, _metric))


# ---- §5.1, Table 2 -----------------------------------------------------------------------------
_WHAT = {
    "users": "number of users",
    "items": "number of items",
    "ratings": "number of ratings",
    "density": "density (% of user-item pairs rated)",
}


def _table2(column: str, r: Mapping[str, Any]) -> Outcome:
    printed = {**PAPER_TABLE2[ML], **PAPER_TABLE2_TAIL[ML]}[column]
    value = float(r["data"][column]) * (100 if column == "density" else 1)
    if not np.isfinite(value):
        return not_reproduced(f"the data give no finite {column}")
    return value_rule(
        float(str(printed)), Estimate.exact(value), TABLE2_MARGINS[column], label=f"our {column}"
    )


for _col, _words in _WHAT.items():
    _printed = {**PAPER_TABLE2[ML], **PAPER_TABLE2_TAIL[ML]}[_col]
    LEDGER.claim(
        f"valcarce2020.tab2.ml1m-{_col}",
        statement=f"MovieLens 1M's {_words}, as in Table 2 (the release's count, which the same "
        "authors print in their 2018 Table 2)",
        source="§5.1, Table 2",
        paper_value=float(str(_printed)),
        paper_dataset=ML,
        rule=(
            "value rule (equivalence): ours, exact, inside the value ± "
            f"{TABLE2_MARGINS[_col].total:g} ({TABLE2_MARGINS[_col].reason}); a magnitude of "
            "ML-1M, shown and not graded on other data"
        ),
        needs=("data",),
    )(partial(_table2, _col))


def _no_data(dataset: str, r: Mapping[str, Any]) -> Outcome:
    return not_reproduced(NO_DATA[dataset] + _NO_CELLS)


for _ds in ("LibraryThing", "BeerAdvocate"):
    LEDGER.claim(
        f"valcarce2020.tab2.{_ds.lower()}",
        statement=f"{_ds}'s users, items, ratings, density and Gini coefficients over users "
        "and items, as Table 2 prints them",
        source="§5.1, Table 2",
        paper_value="not legible",
        paper_dataset=_ds,
        rule="not run here",
    )(partial(_no_data, _ds))


# ---- §6.2: the share of top grades --------------------------------------------------------------
TOP_GRADES_MARGIN = Margin.printed(
    PAPER_TOP_GRADES[ML],
    0.0,
    "a ratio of exact counts of one release: only the printing rounds it",
)


@LEDGER.claim(
    "valcarce2020.s6-2.ml1m-top-grades",
    statement=f"{PAPER_TOP_GRADES[ML]} % of MovieLens 1M's ratings are higher than 4",
    source="§6.2",
    rule=f"value rule (equivalence): our share, exact, inside the paper's ± "
    f"{TOP_GRADES_MARGIN.total:g} ({TOP_GRADES_MARGIN.reason}); a magnitude of ML-1M, shown "
    "and not graded on other data",
    paper_value=float(PAPER_TOP_GRADES[ML]),
    paper_dataset=ML,
    needs=("data",),
)
def _(r):
    return value_rule(
        float(PAPER_TOP_GRADES[ML]),
        Estimate.exact(float(r["data"]["top_grades"])),
        TOP_GRADES_MARGIN,
        label="our per cent of ratings above 4",
    )


@LEDGER.claim(
    "valcarce2020.s6-2.librarything-top-grades",
    statement=f"LibraryThing has more grades higher than 4 ({PAPER_TOP_GRADES['LibraryThing']} "
    f"%) than ML-1M ({PAPER_TOP_GRADES[ML]} %) and BeerAdvocate "
    f"({PAPER_TOP_GRADES['BeerAdvocate']} %)",
    source="§6.2",
    rule="not run here",
    paper_value=f"{PAPER_TOP_GRADES['LibraryThing']} % > {PAPER_TOP_GRADES['BeerAdvocate']} %",
    paper_dataset="LibraryThing, BeerAdvocate",
)
def _(r):
    return not_reproduced(NO_DATA["LibraryThing"] + "; nor is BeerAdvocate")
