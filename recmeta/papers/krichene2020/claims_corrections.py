"""The ledger's claims on the corrections (Krichene & Rendle 2020, §6.3, Fig. 6, Table 4) and
on several relevant items per user (§8).

The claims read ``results["real"]`` (a :class:`~.movielens.RealStudy`), ``results["real_order"]``
(its order study), ``results["real_multi"]`` and ``results["settings"]``; see :mod:`.claims`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

import numpy as np
from scipy import stats

from ...ledger import DERIVED, Estimate, Outcome, SignPart, Verdict, every_sign, not_reproduced
from ...ledger.every import holm_reject
from ...metaeval.significance import normal_sign_pvalues
from . import claims_movielens  # noqa: F401  (its claims come first in the ledger)
from .claims import LEDGER, mc_part, needs_xyz, rep_part, wilson
from .claims_movielens import ML1M
from .movielens_tables import exact_means, repetitions_wide, shares
from .paper import PAPER, TOP_HEAVY

__all__: list[str] = []


# §6.3: corrections


@LEDGER.claim(
    "krichene2020.s6.3.all-closer",
    statement="Every correction is closer to the exact metric than the uncorrected sampled metric",
    source="§6.3, Table 3",
    paper_value="all closer",
    paper_dataset=ML1M,
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
                parts[f"bias reduction by {est}, {metric} {sys_}"] = mc_part(
                    d.to_numpy(), s.level, "|bias| uncorrected − corrected"
                )
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.3.low-bias",
    statement="CLS and BV with low γ have values close to the exact metric",
    source="§6.3, Table 3",
    paper_value="CLS, BV 0.01, BV 0.001 close",
    paper_dataset=ML1M,
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
        return not_reproduced("the chapter did not run these corrections")
    wl, wh = {e: worst(e) for e in low}, {e: worst(e) for e in high}
    ok = max(wl.values()) < min(wh.values())
    text = ", ".join(f"{e}: {v * 100:.0f} %" for e, v in {**wl, **wh}.items())
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.point(max(wl.values()), "largest relative bias"),
        f"largest relative bias — {text}",
        rule="comparison",
    )


@LEDGER.claim(
    "krichene2020.s6.3.z-first",
    statement="Every correction places Z first on Recall@10, NDCG@10 and AP",
    source="§6.3, Table 3",
    paper_value="Z first",
    paper_dataset=ML1M,
    rule="t intervals over repetitions of Z − X and Z − Y, positive for every correction and "
    "metric",
    needs=("real", "settings"),
)
def _z_first(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {
        f"{e} {m} Z − {o}": rep_part(st, m, e, "Z", o, s.level)
        for e in st.estimators
        if e != "sampled"
        for m in TOP_HEAVY
        for o in "XY"
    }
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.3.low-gamma-xy",
    statement="BV with low γ also orders X and Y correctly",
    source="§6.3, Table 3",
    paper_value="Y > X with BV 0.01, 0.001",
    paper_dataset=ML1M,
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
            parts[f"{e} {m} {hi} − {lo}"] = rep_part(st, m, e, hi, lo, s.level)
    if not parts:
        return not_reproduced("BV 0.01 and BV 0.001 were not run")
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.s6.3.rank-estimate-recall-ndcg",
    statement="Under the rank estimate Recall@10 and NDCG@10 are identical",
    source="§6.3, Tables 3–4",
    paper_value="identical",
    paper_dataset=DERIVED,
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
        rule="identity",
    )


@LEDGER.claim(
    "krichene2020.s6.3.variance-grows",
    statement="The lower γ, the higher the variance of the corrected metric",
    source="§6.3, §7, Table 3",
    paper_value="sd grows as γ falls",
    paper_dataset=ML1M,
    rule="log ratio of the standard deviations over repetitions at each step BV 1 → 0.1 → 0.01 → "
    "0.001, for every system and top-heavy metric, positive at every step: bootstrap over "
    "repetitions (paired across estimators), Holm across the steps",
    needs=("real", "settings"),
)
def _var_grows(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    steps = [e for e in ("BV 1", "BV 0.1", "BV 0.01", "BV 0.001") if e in st.estimators]
    if len(steps) < 2 or st.repetitions < 3:
        return not_reproduced("needs two BV corrections and three repetitions")
    rng = np.random.default_rng(s.seed)
    parts = {}
    for m in TOP_HEAVY:
        wide = [repetitions_wide(st, m, e) for e in steps]
        idx = rng.integers(0, len(wide[0]), size=(s.n_resamples, len(wide[0])))
        for sy in st.systems:
            v = np.stack([w[sy].to_numpy() for w in wide])  # steps × repetitions
            sd = v.std(axis=1, ddof=1)
            boot = v[:, idx].std(axis=2, ddof=1)  # steps × resamples
            for k, (a, b) in enumerate(pairwise(steps)):
                with np.errstate(divide="ignore", invalid="ignore"):
                    reps = np.log(boot[k + 1] / boot[k])
                    value = float(np.log(sd[k + 1] / sd[k]))
                if not np.isfinite(value) or not np.isfinite(reps).all():
                    return not_reproduced(f"a standard deviation of {sy} on {m} is 0")
                est = Estimate.from_replicates(
                    value,
                    reps,
                    s.level,
                    method=f"log sd ratio, BC bootstrap over {v.shape[1]} repetitions",
                )
                parts[f"{m} {sy} {a} → {b}"] = SignPart.from_replicates(est, reps)
    return every_sign(parts, "positive", alpha=1 - s.level)


# Fig. 6 and Table 4: orders of pairs


def paper_rate(paper_m: int, study: Any) -> float:
    """The paper's ``paper_m`` of 3,706 items at the same sampling rate on the study's data."""
    return paper_m * float(study.standing.n.mean()) / PAPER["n"]


def fig6_parts(r: Mapping[str, Any], est: str, keep: Callable[[int], bool]) -> dict[str, SignPart]:
    """Per m of the order study that ``keep`` selects: the expected sampled Recall@10 difference
    of X and Y with ``est``, signed by the exact order (> 0: the correct order), with its
    interval and one-sided p-values from the normal law of the mean over repetitions."""
    order, s = r["real_order"], r["settings"]
    z = stats.norm.ppf(0.5 + s.level / 2)
    sel = order[
        (order["pair"] == "X vs Y") & (order["metric"] == "Recall@10") & (order["estimator"] == est)
    ]
    parts = {}
    for row in sel.sort_values("m").itertuples():
        if not keep(int(row.m)) or not np.isfinite(row.mean):
            continue
        se = float(row.se)
        if np.isfinite(se) and se > 0:
            p_pos, p_neg = normal_sign_pvalues(float(row.mean), se)
            est_ = Estimate(
                row.mean,
                row.mean - z * se,
                row.mean + z * se,
                f"expected sampled Recall@10 ({est}), X vs Y signed by the exact order: "
                f"mean ± {z:.2f} Monte-Carlo se",
            )
        else:
            p_pos = p_neg = 1.0
            est_ = Estimate.point(row.mean, "one repetition, no interval")
        parts[f"m = {int(row.m)}"] = SignPart(est_, p_pos, p_neg)
    return parts


@LEDGER.claim(
    "krichene2020.fig6.uncorrected",
    statement="Uncorrected Recall@10 needs more than 1,000 of 3,706 negatives (27 %) to order X "
    "and Y correctly in expectation",
    source="§6.3, Fig. 6",
    paper_value="more than 1000 of 3706",
    paper_dataset=ML1M,
    rule="below the threshold, away from the crossover (every m of the order study up to half the "
    "paper's sampling rate, 500 of 3,706): the expected difference signed by the exact order is "
    "negative at every such m, Holm across them",
    needs=("real", "real_order", "settings"),
)
def _fig6_raw(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    top = paper_rate(PAPER["fig6_uncorrected"], st) / 2
    parts = fig6_parts(r, "sampled", lambda m: m <= top)
    if not parts:
        return not_reproduced(f"the order study ran no m up to {top:.0f} without correction")
    return every_sign(parts, "negative", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.fig6.bv",
    statement="BV 0.1 orders X and Y correctly in expectation with fewer than 60 negatives (under "
    "2 %)",
    source="§6.3, Fig. 6",
    paper_value="fewer than 60 of 3706",
    paper_dataset=ML1M,
    rule="from the paper's sampling rate on (every m of the order study at or above 60 of 3,706 "
    "at our n): the expected difference signed by the exact order is positive at every such m, "
    "Holm across them",
    needs=("real", "real_order", "settings"),
)
def _fig6_bv(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    est = f"BV {PAPER['fig6_bv_gamma']:g}"
    low = round(paper_rate(PAPER["fig6_bv"], st))
    parts = fig6_parts(r, est, lambda m: m >= low)
    if not parts:
        return not_reproduced(f"the order study ran no m from {low} on with {est}")
    return every_sign(parts, "positive", alpha=1 - s.level)


@LEDGER.claim(
    "krichene2020.table4.bv",
    statement="BV 0.1 gets the order right with more than 90 % chance in all but one comparison",
    source="§6.3, Table 4",
    paper_value="11 of 12",
    paper_dataset=ML1M,
    rule="per pair and metric, the Wilson interval of the share of correct repetitions: above 0.9 "
    "counts, below does not, across unclear; agrees if at least 11 count even when the unclear "
    "fail",
    needs=("real", "settings"),
)
def _table4_bv(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    est = f"BV {PAPER['fig6_bv_gamma']:g}"
    if est not in st.estimators:
        return not_reproduced(f"{est} was not run")
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
        rule="count",
    )


@LEDGER.claim(
    "krichene2020.table4.rank-estimate",
    statement="The rank estimate is better than the uncorrected metric in every comparison (§6.3 "
    "says strictly; its own Table 4 has ties at 100)",
    source="§6.3, Table 4",
    paper_value="never worse, better in 7 of 12",
    paper_dataset=ML1M,
    rule="per pair and metric, one-sided two-proportion z tests of the shares of correct "
    "repetitions, Holm across the comparisons: differs if some comparison is worse, agrees if "
    "none is and some is better",
    needs=("real", "settings"),
)
def _table4_re(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    sh = shares(st).pivot_table(index=["pair", "metric"], columns="estimator", values="agreement")
    if "rank-estimate" not in sh:
        return not_reproduced("the rank estimate was not run")
    R = st.repetitions
    a, b = sh["rank-estimate"], sh["sampled"]
    se = np.sqrt(np.maximum(a * (1 - a) + b * (1 - b), 1.0 / R) / R)
    alpha = 1 - s.level
    worse = int(holm_reject(stats.norm.sf((b - a) / se), alpha).sum())
    better = int(holm_reject(stats.norm.sf((a - b) / se), alpha).sum())
    if worse:
        verdict = Verdict.DIFFERS
    elif better:
        verdict = Verdict.AGREES
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(
        verdict,
        Estimate.exact(better, "comparisons better after Holm's correction"),
        f"better in {better}, worse in {worse} of {len(sh)} comparisons after Holm's correction "
        f"(α = {alpha:g}, {R} repetitions)",
        f"better {better}, worse {worse} of {len(sh)}",
        rule="count",
    )


# §8: several relevant items


@LEDGER.claim(
    "krichene2020.s8.several-items",
    statement="With several relevant items, per-item corrections under the independence "
    "approximation still bring the sampled metric closer to the exact one",
    source="§8",
    paper_value="suggested, not tested",
    paper_dataset=ML1M,
    rule="for every system and metric of the several-items study, the t interval over repetitions "
    "of |bias uncorrected| − |bias BV| (same draws) lies above 0",
    needs=("real_multi", "settings"),
)
def _several(r: Mapping[str, Any]) -> Outcome:
    mu, s = r["real_multi"], r["settings"]
    sim = mu.sim
    ests = [e for e in sim["estimator"].unique() if str(e).startswith("BV")]
    if not ests:
        return not_reproduced("no BV correction in the several-items study")
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
            parts[f"bias reduction by {est}, {metric} {sy}"] = mc_part(
                d, s.level, "|bias| uncorrected − corrected"
            )
    return every_sign(parts, "positive", alpha=1 - s.level)
