"""The ledger's claims on the corrections (Krichene & Rendle 2020, §6.3, Fig. 6, Table 4) and
on several relevant items per user (§8).

The claims read ``results["real"]`` (a :class:`~.movielens.RealStudy`), ``results["real_order"]``
(its order study), ``results["real_multi"]`` and ``results["settings"]``; see :mod:`.claims`.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from ...ledger import Estimate, Outcome, Verdict, sign_rule
from . import claims_movielens  # noqa: F401  (its claims come first in the ledger)
from .claims import (
    LEDGER,
    combine,
    mc_estimate,
    needs_xyz,
    order_signs,
    rep_diff,
    wilson,
)
from .movielens_tables import exact_means, repetitions_wide, shares
from .paper import PAPER, TOP_HEAVY

__all__: list[str] = []


# §6.3: corrections


@LEDGER.claim(
    "krichene2020.s6.3.all-closer",
    statement="Every correction is closer to the exact metric than the uncorrected sampled metric",
    source="§6.3, Table 3",
    paper_value="all closer",
    paper_dataset="ML-1M",
    rule="per system, top-heavy metric and correction: t interval over repetitions of |bias "
    "uncorrected| − |bias corrected| (same draws) above 0",
    needs=("real", "settings"),
)
def _all_closer(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    ex = exact_means(st)
    parts = {}
    for metric in TOP_HEAVY:
        raw = repetitions_wide(st, metric, "sampled")
        for est in st.estimators:
            if est == "sampled":
                continue
            w = repetitions_wide(st, metric, est)
            for sys_ in st.systems:
                d = np.abs(raw[sys_] - ex.loc[metric, sys_]) - np.abs(
                    w[sys_] - ex.loc[metric, sys_]
                )
                parts[f"bias reduction by {est}, {metric} {sys_}"] = mc_estimate(
                    d.to_numpy(), s.level, "|bias| uncorrected − corrected"
                )
    out = combine(order_signs(parts))
    agrees = sum(sign_rule(e, "positive").verdict == Verdict.AGREES for e in parts.values())
    return Outcome(out.verdict, out.ours, out.reason, f"{agrees} of {len(parts)} closer")


@LEDGER.claim(
    "krichene2020.s6.3.low-bias",
    statement="CLS and BV with low γ have values close to the exact metric",
    source="§6.3, Table 3",
    paper_value="CLS, BV 0.01, BV 0.001 close",
    paper_dataset="ML-1M",
    rule="the largest relative bias (over systems and top-heavy metrics) of CLS, BV 0.01 and BV "
    "0.001 is below that of the rank estimate and of BV 1",
    needs=("real",),
)
def _low_bias(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    ex = exact_means(st)

    def worst(est: str) -> float:
        return max(
            abs(float(repetitions_wide(st, m, est)[sy].mean()) / ex.loc[m, sy] - 1)
            for m in TOP_HEAVY
            for sy in st.systems
        )

    low = [e for e in ("cls", "BV 0.01", "BV 0.001") if e in st.estimators]
    high = [e for e in ("rank-estimate", "BV 1") if e in st.estimators]
    if not low or not high:
        return Outcome(Verdict.NOT_REPRODUCED, None, "the chapter did not run these corrections")
    wl, wh = {e: worst(e) for e in low}, {e: worst(e) for e in high}
    ok = max(wl.values()) < min(wh.values())
    text = ", ".join(f"{e}: {v * 100:.0f} %" for e, v in {**wl, **wh}.items())
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.point(max(wl.values()), "largest relative bias"),
        f"largest relative bias — {text}",
    )


@LEDGER.claim(
    "krichene2020.s6.3.z-first",
    statement="Every correction places Z first on Recall@10, NDCG@10 and AP",
    source="§6.3, Table 3",
    paper_value="Z first",
    paper_dataset="ML-1M",
    rule="t intervals over repetitions of Z − X and Z − Y, positive for every correction and "
    "metric",
    needs=("real", "settings"),
)
def _z_first(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {
        f"{e} {m} Z − {o}": rep_diff(st, m, e, "Z", o, s.level)
        for e in st.estimators
        if e != "sampled"
        for m in TOP_HEAVY
        for o in "XY"
    }
    return combine(order_signs(parts))


@LEDGER.claim(
    "krichene2020.s6.3.low-gamma-xy",
    statement="BV with low γ also orders X and Y correctly",
    source="§6.3, Table 3",
    paper_value="Y > X with BV 0.01, 0.001",
    paper_dataset="ML-1M",
    rule="for BV 0.01 and BV 0.001 on Recall@10, NDCG@10 and AP, the t interval of the sampled "
    "difference lies on the side of the exact one",
    needs=("real", "settings"),
)
def _low_gamma(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    ex = exact_means(st)
    parts = {}
    for e in ("BV 0.01", "BV 0.001"):
        if e not in st.estimators:
            continue
        for m in TOP_HEAVY:
            hi, lo = ("Y", "X") if ex.loc[m, "Y"] >= ex.loc[m, "X"] else ("X", "Y")
            parts[f"{e} {m} {hi} − {lo}"] = rep_diff(st, m, e, hi, lo, s.level)
    return combine(order_signs(parts))


@LEDGER.claim(
    "krichene2020.s6.3.rank-estimate-recall-ndcg",
    statement="Under the rank estimate Recall@10 and NDCG@10 are identical",
    source="§6.3, Tables 3–4",
    paper_value="identical",
    paper_dataset="ML-1M",
    rule="largest |Recall@10 − NDCG@10| over systems and repetitions is 0 (both built for one n)",
    needs=("real",),
)
def _re_equal(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    a, b = (
        repetitions_wide(st, "Recall@10", "rank-estimate"),
        repetitions_wide(st, "NDCG@10", "rank-estimate"),
    )
    gap = float(np.abs(a.to_numpy() - b.to_numpy()).max())
    return Outcome(
        Verdict.AGREES if gap <= 1e-12 else Verdict.DIFFERS,
        Estimate.exact(gap, "exact"),
        f"largest gap {gap:.1e} with n = {st.n_fit:,}, m = {st.m}",
    )


@LEDGER.claim(
    "krichene2020.s6.3.variance-grows",
    statement="The lower γ, the higher the variance of the corrected metric",
    source="§6.3, §7, Table 3",
    paper_value="sd grows as γ falls",
    paper_dataset="ML-1M",
    rule="standard deviation over repetitions grows at every step BV 1 → 0.1 → 0.01 → 0.001, for "
    "every system and top-heavy metric",
    needs=("real",),
)
def _var_grows(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    steps = [e for e in ("BV 1", "BV 0.1", "BV 0.01", "BV 0.001") if e in st.estimators]
    if len(steps) < 2 or st.repetitions < 2:
        return Outcome(Verdict.NOT_REPRODUCED, None, "needs two BV corrections and two repetitions")
    good = total = 0
    for m in TOP_HEAVY:
        sds = [repetitions_wide(st, m, e).std(ddof=1) for e in steps]
        for sy in st.systems:
            seq = [float(x[sy]) for x in sds]
            total += 1
            good += all(a < b for a, b in pairwise(seq))
    return Outcome(
        Verdict.AGREES if good == total else Verdict.DIFFERS,
        Estimate.exact(good, "count"),
        f"the sd grows at every step for {good} of {total} system–metric pairs",
        f"{good}/{total}",
    )


# Fig. 6 and Table 4: orders of pairs


def _order_row(order: pd.DataFrame, m: int, pair: str, metric: str, est: str) -> pd.Series | None:
    sel = order[
        (order["m"] == m)
        & (order["pair"] == pair)
        & (order["metric"] == metric)
        & (order["estimator"] == est)
    ]
    return None if sel.empty else sel.iloc[0]


def _fig6(
    r: Mapping[str, Any], est: str, paper_m: int, expected: Literal["positive", "negative"]
) -> Outcome:
    st, order, s = r["real"], r["real_order"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    m = max(1, round(paper_m * float(st.standing.n.mean()) / PAPER["n"]))
    row = _order_row(order, m, "X vs Y", "Recall@10", est)
    if row is None:
        return Outcome(
            Verdict.NOT_REPRODUCED, None, f"the order study did not run m = {m} with {est}"
        )
    t = stats.norm.ppf(0.5 + s.level / 2)
    est_ = Estimate(
        row["mean"],
        row["mean"] - t * row["se"],
        row["mean"] + t * row["se"],
        f"expected sampled Recall@10 X vs Y at m = {m} (the paper's rate), signed by the exact "
        "order: "
        f"mean ± {t:.2f} Monte-Carlo se",
    )
    return sign_rule(est_, expected, label=f"signed difference at m = {m}")


@LEDGER.claim(
    "krichene2020.fig6.uncorrected",
    statement="Uncorrected Recall@10 needs more than 1,000 of 3,706 negatives (27 %) to order X "
    "and Y correctly in expectation",
    source="§6.3, Fig. 6",
    paper_value="more than 1000 of 3706",
    paper_dataset="ML-1M",
    rule="at the same sampling rate on our data, the expected difference signed by the exact "
    "order is still negative (t interval over repetitions)",
    needs=("real", "real_order", "settings"),
)
def _fig6_raw(r: Mapping[str, Any]) -> Outcome:
    return _fig6(r, "sampled", PAPER["fig6_uncorrected"], "negative")


@LEDGER.claim(
    "krichene2020.fig6.bv",
    statement="BV 0.1 orders X and Y correctly in expectation with fewer than 60 negatives (under "
    "2 %)",
    source="§6.3, Fig. 6",
    paper_value="fewer than 60 of 3706",
    paper_dataset="ML-1M",
    rule="at the same sampling rate on our data, the expected difference signed by the exact "
    "order is positive (t interval over repetitions)",
    needs=("real", "real_order", "settings"),
)
def _fig6_bv(r: Mapping[str, Any]) -> Outcome:
    return _fig6(r, f"BV {PAPER['fig6_bv_gamma']:g}", PAPER["fig6_bv"], "positive")


@LEDGER.claim(
    "krichene2020.table4.bv",
    statement="BV 0.1 gets the order right with more than 90 % chance in all but one comparison",
    source="§6.3, Table 4",
    paper_value="11 of 12",
    paper_dataset="ML-1M",
    rule="per pair and metric, the Wilson interval of the share of correct repetitions: above 0.9 "
    "counts, below does not, across unclear; agrees if at least 11 count even when the unclear "
    "fail",
    needs=("real", "settings"),
)
def _table4_bv(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    est = f"BV {PAPER['fig6_bv_gamma']:g}"
    if est not in st.estimators:
        return Outcome(Verdict.NOT_REPRODUCED, None, f"{est} was not run")
    sh = shares(st)
    sh = sh[sh["estimator"] == est].dropna(subset=["agreement"])
    R = st.repetitions
    sure = unclear = 0
    for a in sh["agreement"]:
        lo, hi = wilson(a * R, R, s.level)
        sure += lo > PAPER["table4_bv_level"]
        unclear += lo <= PAPER["table4_bv_level"] < hi
    need = len(sh) - PAPER["table4_bv_misses"]
    if sure >= need:
        verdict = Verdict.AGREES
    elif sure + unclear < need:
        verdict = Verdict.DIFFERS
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(
        verdict,
        Estimate(sure, sure, sure + unclear, "comparisons above 0.9: sure, and with the unclear"),
        f"{sure} of {len(sh)} comparisons are above 0.9 beyond doubt, {unclear} unclear ({R} "
        "repetitions)",
        f"{sure} (+{unclear} unclear) of {len(sh)}",
    )


@LEDGER.claim(
    "krichene2020.table4.rank-estimate",
    statement="The rank estimate is better than the uncorrected metric in every comparison (§6.3 "
    "says strictly; its own Table 4 has ties at 100)",
    source="§6.3, Table 4",
    paper_value="never worse, better in 7 of 12",
    paper_dataset="ML-1M",
    rule="per pair and metric, the share of correct repetitions of the rank estimate is never "
    "below the uncorrected one's by more than sampling noise (two-proportion z > 2), and above it "
    "somewhere",
    needs=("real",),
)
def _table4_re(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    sh = shares(st).pivot_table(index=["pair", "metric"], columns="estimator", values="agreement")
    if "rank-estimate" not in sh:
        return Outcome(Verdict.NOT_REPRODUCED, None, "the rank estimate was not run")
    R = st.repetitions
    a, b = sh["rank-estimate"], sh["sampled"]
    se = np.sqrt(np.maximum(a * (1 - a) + b * (1 - b), 1.0 / R) / R)
    worse = int(((b - a) / se > 2).sum())
    better = int(((a - b) / se > 2).sum())
    if worse:
        verdict = Verdict.DIFFERS
    elif better:
        verdict = Verdict.AGREES
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(
        verdict,
        Estimate.exact(better, "comparisons clearly better"),
        f"clearly better in {better}, clearly worse in {worse} of {len(sh)} comparisons",
        f"better {better}, worse {worse} of {len(sh)}",
    )


# §8: several relevant items


@LEDGER.claim(
    "krichene2020.s8.several-items",
    statement="With several relevant items, per-item corrections under the independence "
    "approximation still bring the sampled metric closer to the exact one",
    source="§8",
    paper_value="suggested, not tested",
    paper_dataset="—",
    rule="for every system and metric of the several-items study, the t interval over repetitions "
    "of |bias uncorrected| − |bias BV| (same draws) lies above 0",
    needs=("real_multi", "settings"),
)
def _several(r: Mapping[str, Any]) -> Outcome:
    mu, s = r["real_multi"], r["settings"]
    sim = mu.sim
    ests = [e for e in sim["estimator"].unique() if str(e).startswith("BV")]
    if not ests:
        return Outcome(Verdict.NOT_REPRODUCED, None, "no BV correction in the several-items study")
    est = ests[0]
    parts = {}
    for metric in sim["metric"].unique():
        if metric == "AUC":
            continue  # unbiased already
        for sy in mu.standing.systems:
            exact = float(mu.exact[(sy, metric)].mean())
            raw = sim[
                (sim["metric"] == metric) & (sim["estimator"] == "sampled") & (sim["system"] == sy)
            ]["value"]
            cor = sim[
                (sim["metric"] == metric) & (sim["estimator"] == est) & (sim["system"] == sy)
            ]["value"]
            d = np.abs(raw.to_numpy() - exact) - np.abs(cor.to_numpy() - exact)
            parts[f"bias reduction by {est}, {metric} {sy}"] = mc_estimate(
                d, s.level, "|bias| uncorrected − corrected"
            )
    return combine(order_signs(parts))
