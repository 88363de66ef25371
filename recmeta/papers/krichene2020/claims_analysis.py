"""The ledger's claims on the paper's equations, Figs. 1 and 3, §5.5 and the abstract
(Krichene & Rendle 2020, §3–5), and §6.1's "Z is the best in the top 10".

The derivations set a direct transcription of each equation (:mod:`.analysis`) against the
package on a hand case and at the running example's n and m; the analysis claims read the
expected sampled metrics at the paper's catalogue size. All but the last read ``results["toy"]``
only for n, m and the γ of the chapter; they cost a few seconds in all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from ... import sampled
from ...ledger import (
    DERIVED,
    Estimate,
    Margin,
    Outcome,
    Verdict,
    every_sign,
    format_number,
    value_rule,
)
from . import (
    analysis as an,
    claims_corrections,  # noqa: F401  (its claims come first in the ledger)
)
from .claims import LEDGER, exact_part, needs_xyz, ruled
from .claims_example import ANALYSIS_FREE, TOY, TOY_FREE
from .claims_movielens import ML1M
from .example import toy_exact, toy_expected
from .paper import order_key, order_text

__all__ = ["ANALYSIS", "SHAPE_METRICS", "identity"]

#: the setting of the analysis claims: the paper's Fig. 1 and Fig. 3 catalogue
ANALYSIS = "analysis (n = 10,000, uniform prior)"
#: the top-heavy metrics whose shape under sampling Fig. 3 and §5.5 describe
SHAPE_METRICS = ("AP", "NDCG", "Recall@10")
_N = 10_000
#: a gap a floating-point identity may leave
_TOL = 1e-9


def identity(gaps: Mapping[str, float], tol: float = _TOL, what: str = "") -> Outcome:
    """Holds when every gap is at most ``tol``; the largest gap is our value."""
    worst_key = max(gaps, key=lambda k: gaps[k])
    worst = gaps[worst_key]
    shown = ", ".join(f"{k} {v:.1e}" for k, v in gaps.items())
    return Outcome(
        Verdict.AGREES if worst <= tol else Verdict.DIFFERS,
        Estimate.exact(worst, "largest gap, exact computation"),
        f"largest gaps{what}: {shown} (allowed {tol:.0e})",
        rule="identity",
    )


def _all_ranks(toy: Any) -> list[int]:
    return sorted({int(x) for v in toy.ranks.values() for x in v})


@LEDGER.claim(
    "krichene2020.s3.eqs2-13.metrics",
    statement="With one relevant item, AUC, Prec@k, Recall@k, AP@k and NDCG@k (eqs. 2–6) reduce "
    "to eqs. 7–13, and RR = AP, HR@k = Recall@k, accuracy = Recall@1 = Prec@1",
    source="§3, §3.1, eqs. 2–13",
    paper_value="eqs. 7–13",
    paper_dataset=DERIVED,
    rule="eqs. 2–6 transcribed for a set R, on R = {r}, against eqs. 7–13 and the package, every "
    "r of a 60-item list and the example's ranks among 10,000 (k = 10), gaps at most 1e-9",
    needs=("toy",),
)
def _metrics(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    small = an.metric_gaps(range(1, 61), 60, 10)
    big = an.metric_gaps(_all_ranks(toy), toy.n, 10)
    return identity({k: max(small[k], big[k]) for k in small})


@LEDGER.claim(
    "krichene2020.fig1.rank-one-worth",
    statement="Rank 1 is worth 1.58 times rank 2 under NDCG and twice under AP; under AUC moving "
    "from 101 to 100 is worth as much as from 2 to 1",
    source="§3.1, Fig. 1",
    paper_value=1.58,
    paper_dataset=DERIVED,
    rule="NDCG(1)/NDCG(2) against 1.58 ± 0.005 (its printed digits), AP(1)/AP(2) = 2 and "
    "AUC(100) − AUC(101) = AUC(1) − AUC(2) within 1e-12",
    needs=("toy",),
)
def _rank_one(r: Mapping[str, Any]) -> Outcome:
    n = r["toy"].n
    ranks = np.array([1, 2, 100, 101])
    ndcg, ap, auc = (sampled.metric_value(m, ranks, n) for m in ("NDCG", "AP", "AUC"))
    ratio = Estimate.exact(float(ndcg[0] / ndcg[1]), "exact")
    out = value_rule(
        1.58,
        ratio,
        Margin(0.005, 0.0, "printed to two decimals; an identity leaves no other margin"),
        label="NDCG(1)/NDCG(2)",
    )
    steps = abs((auc[2] - auc[3]) - (auc[0] - auc[1]))
    if abs(ap[0] / ap[1] - 2) > 1e-12 or steps > 1e-12:
        return Outcome(
            Verdict.DIFFERS,
            ratio,
            f"AP(1)/AP(2) = {ap[0] / ap[1]:.6g}, AUC's steps differ by {steps:.1e}",
            rule="value",
            margin=out.margin,
        )
    return out


@LEDGER.claim(
    "krichene2020.fig1.top-heavy",
    statement="All metrics besides AUC are top heavy and almost completely ignore the tail "
    "(n = 10,000)",
    source="§3.1, Fig. 1",
    paper_value="top heavy, except AUC",
    paper_dataset=DERIVED,
    rule="share of each metric's decay M(1) − M(n) spent in the top 100 of 10,000 ranks: at least "
    "90 % (our reading of 'almost completely') for AP, NDCG and Recall@10; AUC's 99/9,999",
    needs=("toy",),
)
@ruled("threshold")
def _top_heavy(r: Mapping[str, Any]) -> Outcome:
    n = r["toy"].n
    share = {m: an.decay_share(m, n, 100) for m in (*SHAPE_METRICS, "AUC")}
    heavy = [m for m in SHAPE_METRICS if share[m] >= 0.9]
    auc_ok = abs(share["AUC"] - 99 / (n - 1)) <= 1e-12
    shown = ", ".join(f"{m} {share[m]:.1%}" for m in share)
    return Outcome(
        Verdict.AGREES if len(heavy) == len(SHAPE_METRICS) and auc_ok else Verdict.DIFFERS,
        Estimate.exact(min(share[m] for m in SHAPE_METRICS), "smallest share, exact"),
        f"share of the decay in the top 100 ranks: {shown}",
    )


@LEDGER.claim(
    "krichene2020.s4.3.eqs15-16.law",
    statement="A sampled item lies above the relevant one with probability (r − 1)/(n − 1), so "
    "r̃ − 1 is binomial (hypergeometric without replacement) and E[M(r̃)] sums over that law",
    source="§4.3, eqs. 15–16",
    paper_value="eqs. 15–16",
    paper_dataset=DERIVED,
    rule="the package's law against every draw enumerated (n = 7, m = 3, both laws, every r) and "
    "against scipy's laws at the example's n and m for its ranks, gaps at most 1e-9",
    needs=("toy",),
)
def _law(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    return identity(an.law_gaps(7, 3, _all_ranks(toy), toy.n, toy.m))


@LEDGER.claim(
    "krichene2020.s4.4.2.eq18",
    statement="Expected sampled Recall@k is the distribution function of the law at k − 1 (eq. "
    "18), for any sampling law",
    source="§4.4.2, eq. 18",
    paper_value="eq. 18",
    paper_dataset=DERIVED,
    rule="the package's expectation against scipy's binomial and hypergeometric CDF, every r of "
    "the example's catalogue, k = 1 and 10, gaps at most 1e-9",
    needs=("toy",),
)
def _eq18(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    return identity({"E[Recall@k] − CDF": an.recall_cdf_gap(toy.n, toy.m, (1, 10))})


@LEDGER.claim(
    "krichene2020.s5.1.eq20",
    statement="The rank estimate r̂ = 1 + (n − 1)(r̃ − 1)/m is unbiased, and the correction "
    "scores r̃ with M(⌊r̂⌋) (eq. 20)",
    source="§5.1, eq. 20",
    paper_value="eq. 20",
    paper_dataset=DERIVED,
    rule="max |E[r̂ | r] − r| over every r (binomial law) at most 1e-9 relative to n, and the "
    "package's vector equal to M(⌊r̂⌋) for AP and NDCG at the example's n and m",
    needs=("toy",),
)
def _eq20(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    gaps = [an.rank_estimate_gaps(m, toy.n, toy.m) for m in ("AP", "NDCG")]
    return identity(
        {
            "vector": max(g["vector"] for g in gaps),
            "E[r̂] − r (over n)": gaps[0]["unbiased"] / toy.n,
        }
    )


@LEDGER.claim(
    "krichene2020.s5.2.eqs21-23",
    statement="Minimal-bias correction: eq. 21's objective is ‖A M̂ − b‖² and its minimiser "
    "(AᵀA)⁻¹Aᵀb (eqs. 22–23)",
    source="§5.2, eqs. 21–23",
    paper_value="eqs. 21–23",
    paper_dataset=DERIVED,
    rule="at n = 40, m = 5 (well conditioned): eq. 21 summed directly against ‖A M̂ − b‖² on random "
    "M̂ and the package's solution against the normal equations, relative gaps at most 1e-9, "
    "with A_{r,r̃} = √p(r) p(r̃|r)",
    needs=("toy",),
)
def _eqs21_23(r: Mapping[str, Any]) -> Outcome:
    checks = an.least_squares_checks("AP", 40, 5)
    out = identity({k: checks[k] for k in ("objective", "solution")})
    return Outcome(
        out.verdict,
        out.ours,
        f"{out.reason}; A_{{r,r̃}} = √(p(r) p(r̃)) as our copy of eq. 23 reads misses the "
        f"objective by {format_number(checks['as printed'])} of its size",
        rule="identity",
    )


@LEDGER.claim(
    "krichene2020.s5.2.underdetermined",
    statement="The least-squares problem is under-determined for m + 1 < n: no correction is "
    "unbiased for every r; more samples lower its minimum",
    source="§5.2, eqs. 21–23; §5.5",
    paper_value="biased for m + 1 < n",
    paper_dataset=DERIVED,
    rule="minimum of eq. 21 for AP at n = 12: above 1e-9 for m = 1, 3, 6, falling at every step, "
    "and at most 1e-20 at m = 11 (m + 1 = n)",
    needs=("toy",),
)
@ruled("identity")
def _underdetermined(r: Mapping[str, Any]) -> Outcome:
    floor = an.least_squares_floor("AP", 12, (1, 3, 6, 11))
    vals = list(floor.values())
    ok = all(v > _TOL for v in vals[:-1]) and vals[-1] <= 1e-20
    ok = ok and all(a > b for a, b in pairwise(vals))
    shown = ", ".join(f"m = {m}: {v:.1e}" for m, v in floor.items())
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.exact(vals[-2], "minimum at m = 6, exact"),
        f"weighted squared bias of the best correction: {shown}",
    )


@LEDGER.claim(
    "krichene2020.s5.3.eq25",
    statement="The bias–variance correction (eq. 24) is solved by ((1 − γ)AᵀA + γ diag(c))⁻¹Aᵀb "
    "with c_r̃ = Σ_r p(r) p(r̃|r) (eq. 25)",
    source="§5.3, eqs. 24–25",
    paper_value="eq. 25",
    paper_dataset=DERIVED,
    rule="the package's BV vector against eq. 25 solved directly (n = 40, m = 5, and the "
    "example's n with m = 100, each γ of the chapter), relative gap at most 1e-9, and eq. 24 "
    "summed directly rising when the solution moves",
    needs=("toy",),
)
def _eq25(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    runs = [an.bv_checks("AP", 40, 5, g) for g in toy.gammas]
    runs += [an.bv_checks("AP", toy.n, 100, g) for g in (max(toy.gammas), min(toy.gammas))]
    out = identity({"solution": max(x["solution"] for x in runs)})
    rise = min(x["rise"] for x in runs)
    if rise <= 0:
        return Outcome(
            Verdict.DIFFERS,
            out.ours,
            f"moving the solution lowers eq. 24 ({rise:.1e})",
            rule="identity",
        )
    return Outcome(
        out.verdict, out.ours, f"{out.reason}; every move raises eq. 24", rule="identity"
    )


def _falls(values: Sequence[float]) -> bool:
    return all(a > b for a, b in pairwise(values))


def _bias_shape(
    estimators: Sequence[str], grid: Sequence[tuple[int, int]], what: str, rising: bool
) -> Outcome:
    """Agrees when the weighted squared bias of every metric and estimator moves the stated way
    at every step of ``grid`` ((n, m) pairs)."""
    bad, shown = [], []
    for est in estimators:
        for metric in SHAPE_METRICS:
            vals = [an.weighted_bias(metric, n, m, est) for n, m in grid]
            if not _falls(vals[::-1] if rising else vals):
                bad.append(f"{metric} ({est})")
            shown.append(f"{metric} ({est}) {format_number(vals[0])} → {format_number(vals[-1])}")
    return Outcome(
        Verdict.AGREES if not bad else Verdict.DIFFERS,
        None,
        (f"{what} at every step" if not bad else f"not at every step for {', '.join(bad)}")
        + f"; {'; '.join(shown)}",
        rule="shape",
    )


_M_GRID = (10, 30, 100)
_N_GRID = (1_000, 3_706, 10_000)


@LEDGER.claim(
    "krichene2020.s5.5.m-reduces-bias",
    statement="Increasing the sample size m reduces the bias of the sampled metrics, and of the "
    "corrected ones",
    source="§5.5, Fig. 3",
    paper_value="bias falls with m",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="weighted squared bias (uniform prior) of AP, NDCG and Recall@10, uncorrected and BV "
    "0.1, at n = 10,000 falls at every step of m = 10, 30, 100",
    needs=("toy",),
)
def _m_bias(r: Mapping[str, Any]) -> Outcome:
    return _bias_shape(("sampled", "BV 0.1"), [(_N, m) for m in _M_GRID], "falls with m", False)


@LEDGER.claim(
    "krichene2020.s5.5.n-raises-bias",
    statement="Increasing the number of items n has the opposite effect: more bias (sampled "
    "metrics)",
    source="§5.5",
    paper_value="bias grows with n",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="weighted squared bias (uniform prior) of uncorrected AP, NDCG and Recall@10 at m = 100 "
    "rises at every step of n = 1,000, 3,706, 10,000",
    needs=("toy",),
)
def _n_bias(r: Mapping[str, Any]) -> Outcome:
    return _bias_shape(("sampled",), [(n, 100) for n in _N_GRID], "rises with n", True)


@LEDGER.claim(
    "krichene2020.s5.5.n-raises-corrected-bias",
    statement="Increasing the number of items n has the opposite effect: more bias (corrected "
    "metrics)",
    source="§5.5",
    paper_value="bias grows with n",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="weighted squared bias (uniform prior) of BV 0.1 for AP, NDCG and Recall@10 at m = 100 "
    "rises at every step of n = 1,000, 3,706, 10,000",
    needs=("toy",),
)
def _n_bias_bv(r: Mapping[str, Any]) -> Outcome:
    return _bias_shape(("BV 0.1",), [(n, 100) for n in _N_GRID], "rises with n", True)


@LEDGER.claim(
    "krichene2020.fig3.m1000-biased",
    statement="Even m = 1,000 samples of n = 10,000 items leave a large bias in sampled AP, NDCG "
    "and Recall; AUC is unchanged",
    source="§4.3, Fig. 3",
    paper_value="large bias at m = 1,000",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="largest |E[M(r̃) | r] − M(r)| over the top 1,000 ranks (the figure's zoom) at least 0.1 "
    "(our reading of 'large', a tenth of the metric's range) for AP, NDCG and Recall@10, at most "
    "1e-9 for AUC",
    needs=("toy",),
)
@ruled("threshold")
def _fig3_bias(r: Mapping[str, Any]) -> Outcome:
    ranks = np.arange(1, 1001)
    gap = {
        m: float(
            np.max(
                np.abs(
                    sampled.expected_metric(m, ranks, _N, 1000) - sampled.metric_value(m, ranks, _N)
                )
            )
        )
        for m in (*SHAPE_METRICS, "AUC")
    }
    ok = all(gap[m] >= 0.1 for m in SHAPE_METRICS) and gap["AUC"] <= _TOL
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.exact(min(gap[m] for m in SHAPE_METRICS), "smallest of the largest gaps"),
        "largest bias over the top 1,000 ranks: "
        + ", ".join(f"{m} {format_number(v)}" for m, v in gap.items()),
    )


_LINEAR_MS = (1000, 100, 10)


@LEDGER.claim(
    "krichene2020.fig3.towards-linear",
    statement="Sampled AP, NDCG and Recall become smooth, less top heavy, and converge to a "
    "linear function in the small-sample limit, as AUC is",
    source="§4.3, Fig. 3; §4.4.4",
    paper_value="linear as m → 1",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="largest residual of a line through E[M(r̃) | r], r = 1..10,000, over its range: below "
    "the exact metric's at m = 1,000, 100 and 10, at most 1e-9 at m = 1, for AP, NDCG and "
    "Recall@10",
    needs=("toy",),
)
@ruled("shape")
def _linear(r: Mapping[str, Any]) -> Outcome:
    bad, shown = [], []
    for metric in SHAPE_METRICS:
        exact = an.linearity(metric, _N, None)
        vals = [an.linearity(metric, _N, m) for m in _LINEAR_MS]
        one = an.linearity(metric, _N, 1)
        if not (all(v < exact for v in vals) and one <= _TOL):
            bad.append(metric)
        shown.append(
            f"{metric} exact {exact:.2f}, m = "
            + ", ".join(f"{m}: {v:.2f}" for m, v in zip(_LINEAR_MS, vals, strict=True))
            + f", 1: {one:.0e}"
        )
    return Outcome(
        Verdict.AGREES if not bad else Verdict.DIFFERS,
        None,
        (
            "closer to a line than the exact metric, linear at m = 1"
            if not bad
            else f"not for {', '.join(bad)}"
        )
        + f"; {'; '.join(shown)}",
    )


_SPREAD_MS = (1000, 100, 10, 1)


@LEDGER.claim(
    "krichene2020.abstract.metrics-alike",
    statement="The smaller the sampling size, the less difference between metrics; for very "
    "small sampling sizes all metrics collapse to AUC",
    source="Abstract; §1; §4.4.4",
    paper_value="difference shrinks with m",
    paper_dataset=ANALYSIS,
    data_free=ANALYSIS_FREE,
    rule="largest distance between the expected sampled curves of AUC, AP and NDCG over the true "
    "rank (each rescaled from 1 at r = 1 to 0 at r = n, n = 10,000) falls at every step of "
    "m = 1,000, 100, 10, 1 and is at most 1e-9 at m = 1",
    needs=("toy",),
)
@ruled("shape")
def _alike(r: Mapping[str, Any]) -> Outcome:
    spread = [an.metric_spread(("AUC", "AP", "NDCG"), _N, m) for m in _SPREAD_MS]
    ok = _falls(spread) and spread[-1] <= _TOL
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.exact(spread[-2], "distance at m = 10"),
        "largest distance between rescaled curves: "
        + ", ".join(f"m = {m}: {v:.2g}" for m, v in zip(_SPREAD_MS, spread, strict=True)),
    )


def _ndcg_orders(toy: Any) -> dict[int, str]:
    grid = sorted({1, 10, 30, toy.m, 200, 500, 1000, 2000, 5000, toy.n - 1})
    return {
        m: order_text(toy_expected(toy, m, ["NDCG"]).loc["NDCG"].to_dict(), 0.0005) for m in grid
    }


@LEDGER.claim(
    "krichene2020.s4.2.ndcg-order-changes",
    statement="As for AP, the order of A, B, C under sampled NDCG changes with the number of "
    "samples (similar observations for NDCG)",
    source="§4.2, Fig. 2",
    paper_value="order changes with m",
    paper_dataset=TOY,
    data_free=TOY_FREE,
    rule="expected sampled NDCG on a grid of m from 1 to n − 1 (ties within 0.0005): at least two "
    "orders, the order at the example's m differs from the exact NDCG order",
    needs=("toy",),
)
@ruled("order")
def _ndcg_orders_claim(r: Mapping[str, Any]) -> Outcome:
    toy = r["toy"]
    orders = _ndcg_orders(toy)
    exact = order_text(toy_exact(toy, ["NDCG"]).loc["NDCG"].to_dict(), 0.0005)
    kinds = {order_key(o) for o in orders.values()}
    ok = len(kinds) >= 2 and order_key(orders[toy.m]) != order_key(exact)
    shown = "; ".join(f"m = {m}: {o}" for m, o in orders.items())
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        None,
        f"{len(kinds)} orders over m (exact NDCG: {exact}); {shown}",
        f"{len(kinds)} orders",
    )


@LEDGER.claim(
    "krichene2020.s6.1.z-top10",
    statement="Z is the best in the top 10: it places more held-out items in the top 10 than "
    "X and Y",
    source="§6.1, Fig. 5",
    paper_value="Z best in the top 10",
    paper_dataset=ML1M,
    rule="shares of users whose item ranks in the top 10 (exact Recall@10 under the chapter's tie "
    "rule): Z − Y and Z − X positive, paired bootstrap p-values over users, Holm at 1 − level",
    needs=("real", "settings"),
)
def _z_top10(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {f"Z − {o} (top-10 share)": exact_part(st, "Recall@10", "Z", o, s) for o in "YX"}
    return every_sign(parts, "positive", alpha=1 - s.level)
