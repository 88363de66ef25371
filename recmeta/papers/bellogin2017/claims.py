"""The ledger of the statistical-biases chapter (Bellogín, Castells & Cantador 2017): the paper's
claims on the sparsity bias (§3–§4: eqs. 1–5, Figs. 2–4), with the printed value, how ours is
computed from the results of :class:`~recmeta.papers.bellogin2017.study.Study`, and the rule.
The claims on the popularity bias (§5–§7) follow in
:mod:`~recmeta.papers.bellogin2017.claims_popularity`.

The paper's values are the numbers printed in its text (its figures are bar charts whose values
cannot be read reliably, so none is taken from them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    Estimate,
    Ledger,
    Outcome,
    Verdict,
    format_estimate,
    format_number,
    legacy_value_rule,
    not_reproduced,
    order_rule,
    sign_rule,
)
from .. import register
from .evidence import (
    Getter,
    append_reason,
    boot,
    design_rows,
    exact_bound,
    interval,
    join_verdicts,
    mean_difference,
    missing_roles,
    order_in,
    over_splits,
    protocol_estimate,
    settings_of,
    systems_in,
    user_table,
)
from .settings import CHAPTER, FIG2_DESIGNS, ML1M, PAPER
from .trials import summarise

__all__ = ["LEDGER", "outcome"]

LEDGER = register(
    Ledger(
        CHAPTER,
        paper="bellogin2017statistical",
        title="Statistical biases (Bellogín, Castells & Cantador 2017)",
    )
)


def outcome(claim_id: str, results: Mapping[str, Any]) -> Outcome:
    """The outcome of one claim of :data:`LEDGER` on ``results``."""
    return LEDGER[claim_id].outcome(results)


@LEDGER.claim(
    "bellogin2017.eq1.bound",
    statement="1R precision never exceeds 1/n",
    source="§3.2–3.3, eq. 1",
    paper_value=PAPER["one_r_bound"],
    paper_dataset="any (n = 10)",
    rule="exact: the largest 1R P@n of every 1R run of the chapter must be ≤ 1/n",
    needs=("dataset", "settings", "fig2", "lemma_removal", "lemma_size", "fig8"),
)
def _eq1(r):
    n = settings_of(r).n
    one_r = [
        summarise(design_rows(r["fig2"], "1R TI-NN"))["P"],
        summarise(r["lemma_removal"])["P"],
        summarise(r["lemma_size"], by=["size"])["P"],
        summarise(
            r["fig8"].loc[~r["fig8"]["design"].isin(["AR TI-NN", "UAR", "AI-UAR"])], by=["design"]
        )["P"],
    ]
    top = float(pd.concat(one_r).max())
    return exact_bound(top, 1 / n, f"the largest 1R P@{n} over all runs")


@LEDGER.claim(
    "bellogin2017.fig2.ai-ti",
    statement="AI and TI candidates give almost the same results, because "
    "nearly every item has a test rating",
    source="§3.3, Fig. 2",
    paper_value="AI ≈ TI",
    paper_dataset=ML1M,
    rule="value rule on ρ(TI-AN)/ρ(AI-AN) − 1, the relative change of random AR precision "
    "(exact per split, t interval over splits), against 0 with a tolerance of 0.05",
    needs=("settings", "dataset", "coverage"),
)
def _ai_ti(r):
    c = r["coverage"]
    gap = c["rho TI-AN"] / c["rho AI-AN"] - 1
    out = legacy_value_rule(0.0, over_splits(gap), 0.05, label="ρ(TI)/ρ(AI) − 1")
    share = float(r["coverage"]["no test rating"].mean())
    return append_reason(
        out,
        f"{share:.1%} of the items have no test rating in our splits, so TI drops them "
        "from every target set",
    )


@LEDGER.claim(
    "bellogin2017.fig2.popularity-ar",
    statement="popularity's AR P@10 is about 0.08 on MovieLens",
    source="§3.3, Fig. 2",
    paper_value=PAPER["popularity_ar"],
    paper_dataset=ML1M,
    rule="value rule on popularity's AR TI-AN P@n (bootstrap over users), tolerance 0.005 "
    "(half a unit of the printed digit)",
    needs=("dataset", "settings", "fig2"),
)
def _pop_ar(r):
    est = protocol_estimate(design_rows(r["fig2"], "AR TI-AN"), "popularity", settings_of(r))
    return legacy_value_rule(PAPER["popularity_ar"], est, 0.005, label="popularity")


@LEDGER.claim(
    "bellogin2017.fig2.popularity-beats-random",
    statement="popularity, a non-personalised system, "
    "fares far better than random in every design of Fig. 2",
    source="§3.3, Fig. 2",
    paper_value="popularity ≫ random",
    paper_dataset=ML1M,
    rule="sign rule on popularity − random P@n (paired bootstrap over users) in each design; "
    "the design with the smallest lower bound decides",
    needs=("dataset", "settings", "fig2"),
)
def _pop_random(r):
    worst: tuple[str, Estimate] | None = None
    for d in [d for d in FIG2_DESIGNS if d in set(pd.unique(r["fig2"]["design"]))]:
        t = user_table({d: (design_rows(r["fig2"], d), ["popularity", "random"])})
        est = boot(r, t, mean_difference(d, "popularity", "random"))
        if worst is None or interval(est)[0] < interval(worst[1])[0]:
            worst = (d, est)
    if worst is None:
        raise ValueError(f"the fig2 results hold none of the designs {', '.join(FIG2_DESIGNS)}")
    d, est = worst
    return sign_rule(est, "positive", label=f"popularity − random under {d}")


@LEDGER.claim(
    "bellogin2017.fig2.plsa-best",
    statement="pLSA performs best in most designs of Fig. 2",
    source="§3.3, Fig. 2",
    paper_value="pLSA",
    paper_dataset=ML1M,
    rule="order rule (bootstrap intervals over users) in each design of Fig. 2, on the splits "
    "every system ran on; most designs decide",
    needs=("dataset", "settings", "fig2"),
)
def _plsa(r):
    f = r["fig2"]
    why = missing_roles(["pLSA"], f)
    if why:
        return not_reproduced(why)
    outs = {
        d: order_rule(order_in(r, design_rows(f, d), systems_in(design_rows(f, d))), "pLSA")
        for d in FIG2_DESIGNS
        if d in set(pd.unique(f["design"]))
    }
    votes = pd.Series([o.verdict for o in outs.values()]).value_counts()
    verdict = votes.index[0] if votes.iloc[0] >= 2 else Verdict.INCONCLUSIVE
    detail = "; ".join(f"{d}: {o.detail}" for d, o in outs.items())
    return Outcome(
        verdict,
        next(iter(outs.values())).ours,
        "; ".join(f"{d}: {o.verdict}" for d, o in outs.items()),
        detail,
    )


@LEDGER.claim(
    "bellogin2017.fig2.wilcoxon",
    statement="every pairwise difference between the systems of Fig. 2 "
    "(1R, |T_u| = 100) is significant, Wilcoxon p ≪ 0.001",
    source="§3.3",
    paper_value="p ≪ 0.001",
    paper_dataset=ML1M,
    rule="the largest two-sided Wilcoxon signed-rank p-value over pairs of systems (per-user 1R "
    "P@n) must be below 0.001",
    needs=("settings", "dataset", "wilcoxon"),
)
def _wilcoxon(r):
    w = r["wilcoxon"]
    worst = w.loc[w["p"].idxmax()] if w["p"].notna().any() else w.iloc[0]
    p = float(worst["p"])
    ours = Estimate.point(
        p,
        method=f"Wilcoxon signed-rank test over {int(worst['users'])} users, "
        f"largest p of {len(w)} pairs",
    )
    ok = p < PAPER["wilcoxon_p"]
    text = f"the largest p, {worst['a']} against {worst['b']}, is {p:.2g}"
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS,
        ours,
        text + (" (below 0.001)" if ok else " (not below 0.001)"),
    )


def _lemma_rows(r: Mapping[str, Any]) -> pd.DataFrame:
    a = summarise(r["lemma_removal"])
    b = summarise(r["lemma_size"], by=["size"])
    return pd.concat([a, b], ignore_index=True)


@LEDGER.claim(
    "bellogin2017.eq2.bounds",
    statement="with one non-relevant sample per user, 1R precision lies "
    "between the AR bounds of the lemma",
    source="§3.4, eq. 2",
    paper_value="lower ≤ 1R-P@n ≤ upper",
    paper_dataset="any",
    rule="exact: the smallest margin min(1R-P − lower, upper − 1R-P) over every run must be ≥ 0",
    needs=("settings", "dataset", "lemma_removal", "lemma_size"),
)
def _eq2(r):
    rows = _lemma_rows(r)
    margin = (
        round(float(np.minimum(rows["P"] - rows["lower"], rows["upper"] - rows["P"]).min()), 12)
        + 0.0
    )
    return exact_bound(margin, 0.0, f"the smallest margin over {len(rows)} runs", below=False)


@LEDGER.claim(
    "bellogin2017.eq2.proof-step",
    statement="the proof's second step: τ(i, T_u^r) ≥ τ(i, T_u) + "
    "|PR_test(u)| − 1 for every 1R set",
    source="§3.4, proof of eq. 2",
    paper_value=1.0,
    paper_dataset="any",
    rule="exact: share of 1R sets (shared sample, every system, one split) where the printed "
    "inequality holds, against 1",
    needs=("settings", "dataset", "proof_step"),
)
def _proof(r):
    p = r["proof_step"]
    w = p["sets"] / p["sets"].sum()
    printed = float((p["printed: own >= union + |PR|-1"] * w).sum())
    needed = float((p["union <= own + |PR|-1"] * w).sum())
    out = legacy_value_rule(1.0, Estimate.exact(printed), label="share of sets")
    return append_reason(
        out,
        f"the reversed step the bound needs, τ(i, T_u) ≤ τ(i, T_u^r) + |PR_test(u)| − 1, "
        f"holds in a share {format_number(needed)} of them",
    )


def _band(frame: pd.DataFrame, x: str, relative: bool = False) -> Estimate:
    """Band upper − lower (or over 1R-P) at the largest x minus at the smallest.

    Over (system, split)."""
    rows = summarise(frame, by=[x] if x != "removed" else [])
    rows["band"] = rows["upper"] - rows["lower"]
    if relative:
        rows["band"] /= rows["P"]
    lo, hi = rows[x].min(), rows[x].max()
    wide = rows.pivot_table(index=["system", "seed"], columns=x, values="band")
    d = (wide[hi] - wide[lo]).dropna()
    return over_splits(d, "(system, split) pairs")


def _band_outcome(frame: pd.DataFrame, x: str) -> Outcome:
    out = sign_rule(_band(frame, x), "negative", label="change of the band")
    rel = _band(frame, x, relative=True)
    return append_reason(out, f"relative to 1R-P@n the band changes by {format_estimate(rel)}")


@LEDGER.claim(
    "bellogin2017.fig3.band-sparsity",
    statement="the lemma's band narrows as test ratings are removed",
    source="§3.4, Fig. 3 left",
    paper_value="narrows",
    paper_dataset=ML1M,
    rule="sign rule on the band upper − lower at the largest removed share minus at none "
    "(t interval over systems and splits)",
    needs=("settings", "dataset", "lemma_removal"),
)
def _band_sparsity(r):
    return _band_outcome(r["lemma_removal"], "removed")


@LEDGER.claim(
    "bellogin2017.fig3.band-size",
    statement="the lemma's band narrows as the target sets grow",
    source="§3.4, Fig. 3 right",
    paper_value="narrows",
    paper_dataset=ML1M,
    rule="sign rule on the band upper − lower at the largest |T_u| minus at the smallest "
    "(t interval over systems and splits)",
    needs=("settings", "dataset", "lemma_size"),
)
def _band_size(r):
    return _band_outcome(r["lemma_size"], "size")


def _at_sigma(r: Mapping[str, Any], frame: pd.DataFrame) -> pd.DataFrame:
    return frame.loc[np.isclose(frame["sigma"], settings_of(r).sigma)]


@LEDGER.claim(
    "bellogin2017.eq4.monte-carlo",
    statement="random AR precision matches σδ (eq. 4)",
    source="§4.1–4.2, eq. 4",
    paper_value="σδ",
    paper_dataset=ML1M,
    rule="value rule: random's AR TI-AN P@n over all users (t interval over the check splits) "
    "against eq. 4 on the same splits; an interval wider than eq. 4's value is too wide to tell",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq4_mc(r):
    c = _at_sigma(r, r["ar_checks"])
    f = float(c["eq4"].mean())
    out = legacy_value_rule(f, over_splits(c["random"]), label="random P@n", max_width=f)
    return append_reason(out, f"eq. 4 gives {format_number(float(c['eq4'].mean()))}")


@LEDGER.claim(
    "bellogin2017.eq4.exact",
    statement="eq. 4 gives the expected precision ρ of a random ranking",
    source="§4.1–4.2, eq. 4",
    paper_value="ρ ≈ σδ",
    paper_dataset=ML1M,
    rule="value rule on ρ/σδ − 1 (ρ exact per split, t interval over the check splits) against 0",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq4_exact(r):
    c = _at_sigma(r, r["ar_checks"])
    out = legacy_value_rule(0.0, over_splits(c["rho"] / c["eq4"] - 1), label="ρ/σδ − 1")
    cov = over_splits(c["cov"] / c["eq4"])
    split = float((c["split"] / c["eq4"]).mean())
    return append_reason(
        out,
        f"the covariance of |PR_test(u)| and 1/|T_u| alone adds {format_estimate(cov)} "
        f"of eq. 4, the split's own |PR_test| {format_number(split)} on average",
    )


@LEDGER.claim(
    "bellogin2017.eq5.random-1r",
    statement="random 1R precision is 1/t (eq. 5)",
    source="§4.1, eq. 5",
    paper_value="1/t",
    paper_dataset="any",
    rule="value rule: random's 1R TI-NN P@n (t interval over the check splits) against 1/t; an "
    "interval wider than 1/t is too wide to tell",
    needs=("dataset", "settings", "eq5"),
)
def _eq5(r):
    c = _at_sigma(r, r["eq5"])
    f = float(c["formula"].mean())
    return legacy_value_rule(f, over_splits(c["P"]), label="random 1R P@n", max_width=f)


def _ratio(
    r: Mapping[str, Any],
    frame: pd.DataFrame,
    x: str,
    system: str,
    lo: Any,
    hi: Any,
    scale: Callable[[Any], float] = lambda v: 1.0,
    metric: str = "P",
) -> Estimate:
    parts = {str(v): (frame.loc[frame[x] == v], [system]) for v in (lo, hi)}
    t = user_table(parts, metric)
    return boot(
        r, t, lambda get: get(str(hi), system) * scale(hi) / (get(str(lo), system) * scale(lo))
    )


@LEDGER.claim(
    "bellogin2017.fig4.ar-linear",
    statement="AR precision falls in proportion to the test ratings left "
    "(linear in δ), for popularity as for random",
    source="§4.2, Fig. 4 left",
    paper_value="P ∝ 1 − removed",
    paper_dataset=ML1M,
    rule="value rule on popularity's P@n(largest removed share)/P@n(none) (bootstrap over users) "
    "against 1 − removed share",
    needs=("settings", "dataset", "ar_removal"),
)
def _fig4_ar(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    return legacy_value_rule(1 - hi, _ratio(r, f, "removed", "popularity", lo, hi), label="ratio")


@LEDGER.claim(
    "bellogin2017.fig4.1r-flat",
    statement="1R precision does not depend on the amount of test ratings",
    source="§4.2, Fig. 4 centre",
    paper_value=1.0,
    paper_dataset=ML1M,
    rule="value rule on popularity's 1R P@n(largest removed share)/1R P@n(none) (bootstrap over "
    "users) against 1",
    needs=("settings", "dataset", "lemma_removal"),
)
def _fig4_1r(r):
    f = r["lemma_removal"]
    return legacy_value_rule(
        1.0,
        _ratio(r, f, "removed", "popularity", f["removed"].min(), f["removed"].max()),
        label="ratio",
    )


@LEDGER.claim(
    "bellogin2017.fig4.1r-size",
    statement="1R precision is inversely proportional to the target-set "
    "size t, for popularity as for random",
    source="§4.2, Fig. 4 right",
    paper_value=1.0,
    paper_dataset=ML1M,
    rule="value rule on popularity's t·P@n at the largest |T_u| over t·P@n at the smallest "
    "(bootstrap over users) against 1",
    needs=("settings", "dataset", "lemma_size"),
)
def _fig4_size(r):
    f = r["lemma_size"]
    t = f.groupby("size")["t"].mean()
    return legacy_value_rule(
        1.0,
        _ratio(
            r,
            f,
            "size",
            "popularity",
            f["size"].min(),
            f["size"].max(),
            scale=lambda v: float(t[v]),
        ),
        label="t·P ratio",
    )


@LEDGER.claim(
    "bellogin2017.fig4.order",
    statement="test sparsity does not change how the systems compare",
    source="§4.2, Fig. 4 left",
    paper_value="same order",
    paper_dataset=ML1M,
    rule="the order of the systems by AR P@n at no removal and at the largest removed share: the "
    "same → agrees; a swap of two systems whose paired bootstrap intervals exclude 0 at both "
    "ends → differs; any other swap → inconclusive",
    needs=("settings", "dataset", "ar_removal"),
)
def _fig4_order(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    systems = systems_in(f)
    parts = {f"{v}": (f.loc[f["removed"] == v], systems) for v in (lo, hi)}
    t = user_table(parts)
    means = {
        v: {sy: float(t[f"{v}|{sy}"].sum() / t[f"{v}|w"].sum()) for sy in systems} for v in (lo, hi)
    }
    orders = {v: sorted(systems, key=lambda sy: -means[v][sy]) for v in (lo, hi)}
    detail = f"removed {lo:g}: {' > '.join(orders[lo])}; removed {hi:g}: {' > '.join(orders[hi])}"
    swapped, firm = [], []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            if (means[lo][a] - means[lo][b]) * (means[hi][a] - means[hi][b]) < 0:
                swapped.append((a, b))
                ests = [boot(r, t, mean_difference(str(v), a, b)) for v in (lo, hi)]
                if all(low > 0 or high < 0 for low, high in map(interval, ests)):
                    firm.append((a, b))
    ours = Estimate.exact(float(len(swapped)), method="number of swapped pairs")
    if not swapped:
        return Outcome(Verdict.AGREES, ours, "no pair of systems changes order", detail)
    names = ", ".join(f"{a}/{b}" for a, b in swapped)
    if firm:
        return Outcome(
            Verdict.DIFFERS, ours, f"{names} swap, with intervals excluding a tie", detail
        )
    return Outcome(
        Verdict.INCONCLUSIVE, ours, f"{names} swap, but their intervals allow a tie", detail
    )


def _removal_ratio(r: Mapping[str, Any], metric: str) -> Estimate:
    f = r["ar_removal"].dropna(subset=[metric])
    return _ratio(
        r, f, "removed", "popularity", f["removed"].min(), f["removed"].max(), metric=metric
    )


@LEDGER.claim(
    "bellogin2017.sec4.2.recall",
    statement="recall is quite unaffected by test sparsity",
    source="§4.2",
    paper_value=1.0,
    paper_dataset=ML1M,
    rule="value rule on popularity's recall@n(largest removed share)/recall@n(none), AR TI-AN, "
    "metric engine, users with a relevant test item (bootstrap over users), against 1",
    needs=("settings", "dataset", "ar_removal"),
)
def _recall(r):
    return legacy_value_rule(1.0, _removal_ratio(r, "recall"), label="recall ratio")


@LEDGER.claim(
    "bellogin2017.sec4.2.ndcg",
    statement="nDCG@n falls with test sparsity too, a little less steeply than P@n",
    source="§4.2",
    paper_value="P ratio < nDCG ratio < 1",
    paper_dataset=ML1M,
    rule="popularity's AR TI-AN nDCG@n ratio (largest removed share over none) must lie below 1 "
    "and above the P@n ratio: sign rules on 1 − ratio and on the difference of the ratios "
    "(bootstrap over users)",
    needs=("settings", "dataset", "ar_removal"),
)
def _ndcg(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    parts = {
        f"{m}{v}": (f.loc[f["removed"] == v].assign(value=f[m]), ["popularity"])
        for m in ("P", "nDCG")
        for v in (lo, hi)
    }
    t = user_table(parts, "value")

    def ratio(get: Getter, m: str) -> np.ndarray:
        return get(f"{m}{hi}", "popularity") / get(f"{m}{lo}", "popularity")

    falls = sign_rule(
        boot(r, t, lambda get: 1 - ratio(get, "nDCG")), "positive", label="1 − nDCG ratio"
    )
    slower = sign_rule(
        boot(r, t, lambda get: ratio(get, "nDCG") - ratio(get, "P")),
        "positive",
        label="nDCG ratio − P ratio",
    )
    est = boot(r, t, lambda get: ratio(get, "nDCG"))
    return Outcome(join_verdicts([falls, slower]), est, f"{falls.reason}; {slower.reason}")


@LEDGER.claim(
    "bellogin2017.eq3.popularity",
    statement="a non-personalised system's AR precision follows eq. 3",
    source="§4.1, §5.1, eq. 3",
    paper_value="eq. 3",
    paper_dataset=ML1M,
    rule="value rule: popularity's AR TI-AN P@n over all users (t interval over the check splits) "
    "against eq. 3 evaluated with the items each user's list shows",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq3(r):
    c = _at_sigma(r, r["ar_checks"]).dropna(subset=["popularity"])
    out = legacy_value_rule(
        float(c["eq3"].mean()), over_splits(c["popularity"]), label="popularity P@n"
    )
    return append_reason(
        out,
        f"eq. 3 gives {format_number(float(c['eq3'].mean()))}, the per-item conditional "
        f"form {format_number(float(c['conditional'].mean()))}, the exact expectation of "
        f"the ranking by |R(i)| {format_number(float(c['exact'].mean()))}",
    )
