"""The ledger of Valcarce et al. (2020), §7 and §8: geometric means and the conclusions.

Declared on :data:`~.claims.LEDGER` after those of :mod:`.claims_incompleteness`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    Margin,
    Outcome,
    all_of,
    every,
    not_reproduced,
    rank_rule,
    sign_rule,
    value_rule,
)
from .claims import (
    ALL_DATASETS,
    ARITH_SCHEMES,
    DP_NEEDS,
    LEDGER,
    ML,
    RANDOM_SCHEMES,
    ROBUST_NEEDS,
    TAU_ARITH_GEO,
    TAU_NEEDS,
)
from .estimates import (
    area_diff,
    areas,
    boot_estimate,
    boot_how,
    bulk_tau,
    dp_of,
    metric_label,
    signs,
)
from .folds import SCHEMES

# ---- §7.1 geometric means: correlation (Fig. 9) -------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s7-1.gf1-gmrr-apart",
    statement="With geometric means, GF1 and GMRR correlate poorly with every other metric",
    source="§7.1, Fig. 9",
    rule="rank rule on each metric's mean τ with the seven metrics other than GF1 and "
    "GMRR (bootstrap over users): GF1 and GMRR rank 8–9 of 9",
    paper_value="GF1, GMRR lowest",
    paper_dataset=ALL_DATASETS,
    needs=TAU_NEEDS,
)
def _(r):
    return rank_rule(bulk_tau(r["tau_among"], "gmean", {"F1", "RR"}), ["GF1", "GMRR"], 8, 9)


#: τ between orderings of the paper's 21 systems: five swapped pairs of 210
TAU_MARGIN = 0.05


def _tau_arith_geo(metric: str, r: Mapping[str, Any]) -> Outcome:
    printed, lab = TAU_ARITH_GEO[metric], metric_label(metric)
    tb = r["tau_among"]
    i = tb.metrics.index(metric)
    est = boot_estimate(float(tb.arith_geo[i]), tb.arith_geo_reps[:, i], f"τ({lab}, G{lab})")
    return value_rule(
        printed,
        est,
        Margin.printed(
            printed,
            TAU_MARGIN,
            "five of the paper's 210 system pairs swapped; its reading contrasts 0.92 "
            "('strong') with 0.42 ('not true'), ten times further apart",
        ),
    )


for _m, _printed in TAU_ARITH_GEO.items():
    _lab = metric_label(_m)
    LEDGER.claim(
        f"valcarce2020.s7-1.tau-{_lab.lower()}-g{_lab.lower()}",
        statement=f"τ between {_lab} and G{_lab} is {_printed:g}",
        source="§7.1",
        rule="value rule (equivalence): our bootstrap interval over users inside the paper's "
        f"value ± (half a unit of its last digit + {TAU_MARGIN:g}); a magnitude measured on "
        "ML-1M, shown and not graded on other data",
        paper_value=_printed,
        paper_dataset=ML,
        needs=TAU_NEEDS,
    )(partial(_tau_arith_geo, _m))


@LEDGER.claim(
    "valcarce2020.s7-1.f1-mrr-change-most",
    statement="F1 and MRR change most when averaged geometrically",
    source="§7.1",
    rule="rank rule on τ(arithmetic, geometric) per metric (bootstrap over users): F1 and "
    "MRR rank 8–9 of 9",
    paper_value="F1, MRR lowest",
    paper_dataset=ALL_DATASETS,
    needs=TAU_NEEDS,
)
def _(r):
    tb = r["tau_among"]
    est = {
        metric_label(m): boot_estimate(
            float(tb.arith_geo[i]),
            tb.arith_geo_reps[:, i],
            f"τ({metric_label(m)}, G{metric_label(m)})",
        )
        for i, m in enumerate(tb.metrics)
    }
    return rank_rule(est, ["F1", "MRR"], 8, 9)


@LEDGER.claim(
    "valcarce2020.s7-1.librarything-gf1-negative",
    statement="On LibraryThing GF1 correlates negatively with all metrics but GMRR",
    source="§7.1, Fig. 9",
    rule="not run here",
    paper_value="τ < 0",
    paper_dataset="LibraryThing",
)
def _(r):
    return not_reproduced("LibraryThing is not available here")


# ---- §7.2 geometric means: robustness (Figs. 10–14) ------------------------------------------


@LEDGER.claim(
    "valcarce2020.s7-2.gf1-gmrr-least-robust",
    statement="In all five schemes GF1 and GMRR are the least robust geometric metrics",
    source="§7.2, Figs. 10–14",
    rule="rank rule on the area under the τ curve of each scheme: GF1 and GMRR "
    "rank 8–9 of 9 in every one",
    paper_value="GF1, GMRR",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return all_of({s: rank_rule(areas(r, s, "gmean"), ["GF1", "GMRR"], 8, 9) for s in SCHEMES})


@LEDGER.claim(
    "valcarce2020.s7-2.gp-gndcg-robust",
    statement="GP and GnDCG are robust under random ratings, items and users",
    source="§7.2, Figs. 10, 11 and 13",
    rule="rank rule on the area under the τ curve of each random "
    "scheme: GP and GnDCG rank 1–3 of 9 in every one",
    paper_value="GP, GnDCG",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return all_of(
        {s: rank_rule(areas(r, s, "gmean"), ["GP", "GnDCG"], 1, 3) for s in RANDOM_SCHEMES}
    )


def _geo_beats_arith(metric: str, r: Mapping[str, Any]) -> Outcome:
    lab = metric_label(metric)
    d, _ = area_diff(
        r, {"scheme": "large-users", "aggregate": "gmean", "metric": metric}, {"aggregate": "mean"}
    )
    return sign_rule(d, "positive", label=f"area(G{lab}) − area({lab})")


for _m in ("P", "nDCG"):
    _lab = metric_label(_m)
    LEDGER.claim(
        f"valcarce2020.s7-2.g{_m.lower()}-beats-{_m.lower()}-large-users",
        statement=f"G{_lab} is more robust than {_lab} when the largest users are removed",
        source="§7.2, Figs. 8 and 14, §8",
        rule=f"sign rule on area(G{_lab}) − area({_lab}), expected positive (bootstrap over "
        "users, the same users for both means)",
        paper_value=f"G{_lab} > {_lab}",
        paper_dataset=ALL_DATASETS,
        needs=ROBUST_NEEDS,
    )(partial(_geo_beats_arith, _m))


# ---- §8 conclusions -------------------------------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s8.mrr-err-least-robust",
    statement="MRR and ERR rank among the least robust metrics",
    source="§6.3.1, §7, §8",
    rule="rank rule on the area under the τ curve under random ratings, items "
    "and users and popular items: MRR and ERR rank 7–9 of 9 in every one",
    paper_value="MRR, ERR",
    paper_dataset="ML-1M, BeerAdvocate",
    needs=ROBUST_NEEDS,
)
def _(r):
    return all_of({s: rank_rule(areas(r, s), ["MRR", "ERR"], 7, 9) for s in ARITH_SCHEMES})


@LEDGER.claim(
    "valcarce2020.s8.p-mid-pack",
    statement="Precision (a mid-packer), bpref and infAP have an overall average behaviour in "
    "discriminative power",
    source="§6.2, §8",
    rule="rank rule on DP (lower is better; bootstrap intervals over users): P, bpref and "
    "infAP each rank 3–7 of 9",
    paper_value="P, bpref, infAP mid-pack",
    paper_dataset=ALL_DATASETS,
    needs=DP_NEEDS + ("metrics",),
)
def _(r):
    return rank_rule(
        {metric_label(m): dp_of(r, m) for m in r["metrics"]},
        ["P", "bpref", "infAP"],
        3,
        7,
        higher_is_better=False,
    )


@LEDGER.claim(
    "valcarce2020.s7-2.popular-quick-drop",
    statement="With geometric means, the correlations drop quickly when the most popular items "
    "are removed",
    source="§7.2, Figs. 11–12",
    rule="every rule: for each of the nine geometric metrics, τ with at least as many items "
    "removed at random (Fig. 11) minus τ with the most popular items removed (Fig. 12), at the "
    "popular scheme's smallest share kept, is positive (two-level bootstrap, the same users "
    "for both schemes; one-sided sign tests, Holm). 'Quickly' is read against random removal",
    paper_value="quick drop",
    paper_dataset=ALL_DATASETS,
    needs=("curves", "curve_reps", "metrics"),
)
def _(r):
    cr, cv = r["curve_reps"], r["curves"]
    p = float(np.min(cr.shares["popular"]))
    below = cr.shares["items"][cr.shares["items"] <= p + 1e-9]
    if below.size == 0:
        return not_reproduced(
            f"the random-items grid has no share at or below {p:g}, the popular scheme's smallest"
        )
    q = float(below.max())
    rp, ri = cr.at("popular", p, "gmean"), cr.at("items", q, "gmean")

    def point(scheme: str, share: float) -> pd.Series:
        c = cv[(cv["scheme"] == scheme) & (cv["aggregate"] == "gmean")]
        return c[np.isclose(c["share"], share)].set_index("metric")["tau"]

    pp, pi = point("popular", p), point("items", q)
    parts = {}
    for k, m in enumerate(cr.metrics):
        lab = metric_label(m, "gmean")
        what = f"τ({lab}; {1 - q:.0%} random items out) − τ({lab}; {1 - p:.0%} popular out)"
        reps = ri[:, k] - rp[:, k]
        est = boot_estimate(float(pi[m] - pp[m]), reps, what, boot_how(r, "items", "popular"))
        parts[lab] = (est, reps)
    outs, p_exp, p_opp = signs(parts, "positive", lambda k: f"τ drop of {k}")
    out = every(outs, p_exp, p_opp)
    least = min(outs, key=lambda k: parts[k][0].value)
    return replace(out, ours=parts[least][0])
