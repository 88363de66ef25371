"""The ledger's claims on MovieLens (Krichene & Rendle 2020, §6.1–6.2): the rank distributions
of Fig. 5 and the exact against the uncorrected sampled metrics of Table 3.

The claims read ``results["real"]`` (a :class:`~.movielens.RealStudy`) and
``results["settings"]``; see :mod:`.claims`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from itertools import combinations, pairwise
from typing import Any, Literal

import numpy as np

from ...ledger import (
    Estimate,
    Margin,
    Outcome,
    Verdict,
    every_sign,
    format_estimate,
    format_number,
    not_reproduced,
    value_rule,
)
from . import claims_example  # noqa: F401  (its claims come first in the ledger)
from .claims import LEDGER, exact_part, needs_xyz, rep_part
from .movielens_tables import exact_means, repetitions_wide, worst_bucket
from .paper import PAPER, TOP_HEAVY

__all__: list[str] = []


# --------------------------------------------------------------------------------------------
# MovieLens (§6): rank distributions (Fig. 5)

#: the paper's data for every claim of §6 (binarised ML-1M, §6 and the appendix)
ML1M = "ML-1M"


def _count(hit: np.ndarray, s: Any, what: str) -> Estimate:
    """The share of our users with ``hit``, scaled to the paper's 6,040 users, with a BCa
    bootstrap interval over users (a share near 0 has skewed replicates)."""
    est = Estimate.bootstrap_mean(hit.astype(float), s.level, s.seed, s.n_resamples)
    k = PAPER["users"]
    return Estimate(
        est.value * k,
        est.low * k,
        est.high * k,
        f"{what}: share of users × {k:,} (the paper's users); {est.method}",
    )


#: a printed bound on a count of users is read literally; its only margin is the count's unit
BOUND_MARGIN = Margin(0.5, 0.0, "a bound on a count of users, read literally (half a user)")


def bound_rule(
    paper: float, ours: Estimate, side: Literal["over", "under"], *, label: str = "ours"
) -> Outcome:
    """ "Over (under) ``paper``": a bound on a magnitude, graded as a value
    (``rule="value"``, so a transfer shows it without a grade).

    - our whole interval lies beyond the bound on the stated side → **agrees**;
    - our whole interval lies on the other side of the bound ± :data:`BOUND_MARGIN` →
      **differs**;
    - otherwise, or without an interval → **inconclusive**.
    """
    m = BOUND_MARGIN.total
    text = f"{label} {format_estimate(ours)}"

    def out(v: Verdict, why: str) -> Outcome:
        return Outcome(v, ours, why, rule="value", margin=m)

    if ours.low is None or ours.high is None:
        return out(Verdict.INCONCLUSIVE, f"{text} has no interval to hold against {side} {paper:g}")
    beyond = ours.low > paper if side == "over" else ours.high < paper
    short = ours.high < paper - m if side == "over" else ours.low > paper + m
    if beyond:
        return out(Verdict.AGREES, f"{text} lies wholly {side} the paper's bound {paper:g}")
    if short:
        return out(Verdict.DIFFERS, f"{text} lies wholly on the wrong side of {side} {paper:g}")
    return out(Verdict.INCONCLUSIVE, f"{text} straddles the paper's bound {side} {paper:g}")


@LEDGER.claim(
    "krichene2020.fig5.z-worst",
    statement="Z puts many held-out items in the worst bucket: over 1,600 of 6,040 users",
    source="§6.1, Fig. 5",
    paper_value=PAPER["z_worst_bucket"],
    paper_dataset=ML1M,
    rule="users whose rank lies in the last tenth of their list, scaled to 6,040 users, "
    "bootstrap over users; the interval must lie above 1,600",
    needs=("real", "settings"),
)
def _fig5_z(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    hit = worst_bucket(st.ranks()["Z"], st.standing.n)
    ours = _count(hit, s, "Z in the worst tenth")
    return bound_rule(PAPER["z_worst_bucket"], ours, "over", label="our count")


#: Fig. 5's X-in-the-top-100 count: the spread of such a count over 6,040 users
X_TOP100_MARGIN = Margin(
    0.5,
    75.0,
    "two binomial sd of a count of 2,310 among 6,040 users (≈ 75): a smaller gap says nothing "
    "about X's balance",
)


@LEDGER.claim(
    "krichene2020.fig5.x-top100",
    statement="X ranks 2,310 of 6,040 held-out items in its top 100",
    source="§6.1, Fig. 5",
    paper_value=PAPER["x_top100"],
    paper_dataset=ML1M,
    rule="users with rank ≤ 100, scaled to 6,040 users, bootstrap over users; equivalence with "
    "2,310 ± 75.5 (graded on ML-1M; a magnitude on other data is shown, not graded)",
    needs=("real", "settings"),
)
def _fig5_x_top(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    ours = _count(st.ranks()["X"] <= 100, s, "X in the top 100")
    return value_rule(PAPER["x_top100"], ours, X_TOP100_MARGIN, label="our count")


@LEDGER.claim(
    "krichene2020.fig5.x-bottom",
    statement="X puts fewer than 300 of 6,040 held-out items in the bottom half",
    source="§6.1, Fig. 5",
    paper_value=PAPER["x_bottom_half"],
    paper_dataset=ML1M,
    rule="users with rank above n/2, scaled to 6,040 users, bootstrap over users; the interval "
    "must lie below 300",
    needs=("real", "settings"),
)
def _fig5_x_bottom(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    ours = _count(st.ranks()["X"] > st.standing.n / 2, s, "X in the bottom half")
    return bound_rule(PAPER["x_bottom_half"], ours, "under", label="our count")


@LEDGER.claim(
    "krichene2020.s6.1.y-profile",
    statement="Y is better than X in the top 10 but worse overall",
    source="§6.1, Fig. 5",
    paper_value="Y > X on Recall@10, Y < X on AUC",
    paper_dataset=ML1M,
    rule="paired bootstrap of exact Recall@10 (Y − X > 0) and exact AUC (X − Y > 0)",
    needs=("real", "settings"),
)
def _y_profile(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    return every_sign(
        {
            "Recall@10 Y − X": exact_part(st, "Recall@10", "Y", "X", s),
            "AUC X − Y": exact_part(st, "AUC", "X", "Y", s),
        },
        "positive",
        alpha=1 - s.level,
    )


# §6.2: exact and sampled metrics (Table 3)


def _exact_order(metric: str, r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {f"{a} − {b} ({metric})": exact_part(st, metric, a, b, s) for a, b in pairwise("ZYX")}
    return every_sign(parts, "positive", alpha=1 - s.level)


for _metric in TOP_HEAVY:
    LEDGER.claim(
        f"krichene2020.s6.2.exact-order.{_metric.split('@')[0].lower()}",
        statement=f"Exact {_metric} orders Z > Y > X",
        source="§6.2, Table 3",
        paper_value="Z > Y > X",
        paper_dataset=ML1M,
        rule="paired bootstrap over users of Z − Y and Y − X, both positive",
        needs=("real", "settings"),
    )(partial(_exact_order, _metric))


@LEDGER.claim(
    "krichene2020.s6.2.sampled-recall",
    statement="Uncorrected sampled Recall@10 orders X > Y > Z, the paper's exact order reversed",
    source="§6.2, Table 3",
    paper_value="X > Y > Z",
    paper_dataset=ML1M,
    rule="t interval over repetitions of X − Y and Y − Z (shared negatives), both positive",
    needs=("real", "settings"),
)
def _sampled_recall(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {
        f"{a} − {b} (Recall@10)": rep_part(st, "Recall@10", "sampled", a, b, s.level)
        for a, b in pairwise("XYZ")
    }
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.2.x-looks-best",
    statement="X, the worst on exact NDCG@10 and AP, looks best when sampled",
    source="§6.2, Table 3",
    paper_value="X best sampled",
    paper_dataset=ML1M,
    rule="X worst exactly (paired bootstrap) and best sampled (t interval over repetitions) on "
    "both metrics",
    needs=("real", "settings"),
)
def _x_best(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {}
    for metric in ("NDCG@10", "AP"):
        for other in "YZ":
            parts[f"exact {metric} {other} − X"] = exact_part(st, metric, other, "X", s)
            parts[f"sampled {metric} X − {other}"] = rep_part(
                st, metric, "sampled", "X", other, s.level
            )
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.2.zy-kept",
    statement="Sampled NDCG@10 and AP keep the exact order of the two better systems, Z > Y",
    source="§6.2, Table 3",
    paper_value="Z > Y",
    paper_dataset=ML1M,
    rule="t interval over repetitions of sampled Z − Y, positive on both metrics",
    needs=("real", "settings"),
)
def _zy(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {
        f"sampled {m} Z − Y": rep_part(st, m, "sampled", "Z", "Y", s.level)
        for m in ("NDCG@10", "AP")
    }
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.2.auc-consistent",
    statement="Sampled AUC orders every pair as exact AUC does",
    source="§6.2, Table 3",
    paper_value="consistent",
    paper_dataset=ML1M,
    rule="per pair, the t interval over repetitions of the sampled difference lies on the side of "
    "the exact difference",
    needs=("real", "settings"),
)
def _auc_consistent(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    ex = exact_means(st).loc["AUC"]
    parts = {}
    for a, b in combinations(st.systems, 2):
        hi, lo = (a, b) if ex[a] >= ex[b] else (b, a)
        parts[f"sampled AUC {hi} − {lo}"] = rep_part(st, "AUC", "sampled", hi, lo, s.level)
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.2.bias-not-variance",
    statement="The sampled metrics' standard deviations are small: the problem is bias, not "
    "variance",
    source="§6.2, Table 3",
    paper_value="low sd, large bias",
    paper_dataset=ML1M,
    rule="for every system and top-heavy metric, |mean sampled − exact| exceeds 3 standard "
    "deviations over repetitions",
    needs=("real",),
)
def _bias_not_var(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    ex = exact_means(st)
    ratios = []
    for metric in TOP_HEAVY:
        w = repetitions_wide(st, metric, "sampled")
        for sys_ in st.systems:
            sd = float(w[sys_].std(ddof=1)) if len(w) > 1 else float("nan")
            ratios.append(
                abs(float(w[sys_].mean()) - ex.loc[metric, sys_]) / sd if sd > 0 else float("inf")
            )
    if any(np.isnan(ratios)):
        return not_reproduced("one repetition has no standard deviation")
    worst = min(ratios)
    return Outcome(
        Verdict.AGREES if worst > 3 else Verdict.DIFFERS,
        Estimate.point(worst, "smallest |bias| / sd over systems and metrics"),
        f"the smallest bias is {format_number(worst)} standard deviations",
        rule="ratio",
    )
