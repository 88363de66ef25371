"""The ledger's claims on the sparsity bias's formulas (Bellogín, Castells & Cantador 2017,
§4: eqs. 3–5, Fig. 4 and the §4.2 remarks on recall and nDCG), registered on
:data:`recmeta.papers.bellogin2017.claims.LEDGER` after the claims of §3.

A formula's claim grades its relative error against the measurement it predicts on the same
splits (``paper_value`` 0, margin :data:`FORMULA`): the paper states the formulas for any data,
so these are graded on every dataset (``data_free``), while eq. 5, exact for a random ranking,
is a derivation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    DERIVED,
    Estimate,
    Margin,
    Outcome,
    Verdict,
    format_estimate,
    format_number,
    format_order,
    sign_rule,
    value_rule,
)
from .claims import LEDGER
from .evidence import (
    Getter,
    append_reason,
    boot,
    join_verdicts,
    mean_difference,
    over_splits,
    settings_of,
    system_mean,
    systems_in,
    user_table,
)
from .settings import ML1M

__all__ = ["FORMULA", "LEDGER", "formula_margin"]

#: the margin of a formula's relative error against the measurement it predicts (a tenth)
FORMULA = 0.1


def _at_sigma(r: Mapping[str, Any], frame: pd.DataFrame) -> pd.DataFrame:
    return frame.loc[np.isclose(frame["sigma"], settings_of(r).sigma)]


_EQ = (
    "eq. 4 is stated for any data, so its relative error against the measurement it predicts "
    "does not depend on the dataset"
)


def formula_margin(what: str) -> Margin:
    """A tenth of the predicted value (:data:`FORMULA`), for ``what`` the formula explains."""
    return Margin(0.0, FORMULA, f"{what} differ by factors of two or more; a tenth changes none")


@LEDGER.claim(
    "bellogin2017.eq4.monte-carlo",
    statement="random AR precision matches σδ (eq. 4)",
    source="§4.1–4.2, eq. 4",
    paper_value=0.0,
    paper_dataset=ML1M,
    data_free=_EQ,
    rule="value rule (equivalence) on random's AR TI-AN P@n over all users over eq. 4 on the same "
    "split, minus 1 (t interval over the check splits), against 0 with a margin of 0.1",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq4_mc(r):
    c = _at_sigma(r, r["ar_checks"])
    out = value_rule(
        0.0,
        over_splits(c["random"] / c["eq4"] - 1),
        formula_margin("the designs' random precisions eq. 4 explains"),
        label="random P@n / eq. 4 − 1",
    )
    return append_reason(out, f"eq. 4 gives {format_number(float(c['eq4'].mean()))}")


@LEDGER.claim(
    "bellogin2017.eq4.exact",
    statement="eq. 4 gives the expected precision ρ of a random ranking",
    source="§4.1–4.2, eq. 4",
    paper_value=0.0,
    paper_dataset=ML1M,
    data_free=_EQ,
    rule="value rule (equivalence) on ρ/σδ − 1 (ρ exact per split, t interval over the check "
    "splits) against 0 with a margin of 0.1",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq4_exact(r):
    c = _at_sigma(r, r["ar_checks"])
    out = value_rule(
        0.0,
        over_splits(c["rho"] / c["eq4"] - 1),
        formula_margin("the designs' random precisions eq. 4 explains"),
        label="ρ/σδ − 1",
    )
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
    paper_value=0.0,
    paper_dataset=DERIVED,
    rule="value rule (equivalence) on random's 1R TI-NN P@n over 1/t of the same split, minus 1 "
    "(t interval over the check splits), against 0 with a margin of 0.1",
    needs=("dataset", "settings", "eq5"),
)
def _eq5(r):
    c = _at_sigma(r, r["eq5"])
    out = value_rule(
        0.0,
        over_splits(c["P"] / c["formula"] - 1),
        formula_margin("the 1R designs' random precisions eq. 5 explains"),
        label="random 1R P@n · t − 1",
    )
    return append_reason(out, f"1/t = {format_number(float(c['formula'].mean()))}")


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
    paper_value=0.0,
    paper_dataset=ML1M,
    data_free="eq. 4 makes AR precision proportional to the test ratings left on any data",
    rule="value rule (equivalence) on popularity's P@n(largest removed share)/P@n(none) over "
    "(1 − removed share), minus 1 (bootstrap over users), against 0 with a margin of 0.1",
    needs=("settings", "dataset", "ar_removal"),
)
def _fig4_ar(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    t = user_table({str(v): (f.loc[f["removed"] == v], ["popularity"]) for v in (lo, hi)})
    est = boot(
        r, t, lambda get: get(str(hi), "popularity") / get(str(lo), "popularity") / (1 - hi) - 1
    )
    return value_rule(
        0.0,
        est,
        formula_margin("the sparsity levels of Fig. 4"),
        label=f"ratio / {1 - hi:g} − 1",
    )


@LEDGER.claim(
    "bellogin2017.fig4.1r-flat",
    statement="1R precision does not depend on the amount of test ratings",
    source="§4.2, Fig. 4 centre",
    paper_value=1.0,
    paper_dataset=ML1M,
    data_free="the paper's reading of eq. 5: 1R values do not move with test sparsity, on any data",
    rule="value rule (equivalence) on popularity's 1R P@n(largest removed share)/1R P@n(none) "
    "(bootstrap over users) against 1 with a margin of 0.1",
    needs=("settings", "dataset", "lemma_removal"),
)
def _fig4_1r(r):
    f = r["lemma_removal"]
    return value_rule(
        1.0,
        _ratio(r, f, "removed", "popularity", f["removed"].min(), f["removed"].max()),
        Margin(0.0, FORMULA, "'flat' beside AR's fall to 1 − removed share: within a tenth"),
        label="ratio",
    )


@LEDGER.claim(
    "bellogin2017.fig4.1r-size",
    statement="1R precision is inversely proportional to the target-set "
    "size t, for popularity as for random",
    source="§4.2, Fig. 4 right",
    paper_value=1.0,
    paper_dataset=ML1M,
    data_free="eq. 5 makes 1R precision inversely proportional to t on any data",
    rule="value rule (equivalence) on popularity's t·P@n at the largest |T_u| over t·P@n at the "
    "smallest (bootstrap over users) against 1 with a margin of 0.1",
    needs=("settings", "dataset", "lemma_size"),
)
def _fig4_size(r):
    f = r["lemma_size"]
    t = f.groupby("size")["t"].mean()
    return value_rule(
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
        formula_margin("the target-set sizes of Fig. 4"),
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
    ests = {v: {sy: boot(r, t, system_mean(str(v), sy)) for sy in systems} for v in (lo, hi)}
    detail = "; ".join(f"removed {v:g}: {format_order(ests[v])}" for v in (lo, hi))
    swapped, firm = [], []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            if (means[lo][a] - means[lo][b]) * (means[hi][a] - means[hi][b]) < 0:
                swapped.append((a, b))
                diffs = [boot(r, t, mean_difference(str(v), a, b)) for v in (lo, hi)]
                if all(d.reach[0] > 0 or d.reach[1] < 0 for d in diffs):
                    firm.append((a, b))
    ours = Estimate.exact(float(len(swapped)), method="number of swapped pairs")
    if not swapped:
        return Outcome(
            Verdict.AGREES, ours, "no pair of systems changes order", detail, rule="order"
        )
    names = ", ".join(f"{a}/{b}" for a, b in swapped)
    if firm:
        return Outcome(
            Verdict.DIFFERS,
            ours,
            f"{names} swap, with intervals excluding a tie",
            detail,
            rule="order",
        )
    return Outcome(
        Verdict.INCONCLUSIVE,
        ours,
        f"{names} swap, but their intervals allow a tie",
        detail,
        rule="order",
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
    data_free="removing test ratings at random takes hits and relevant items in proportion, "
    "on any data",
    rule="value rule (equivalence) on popularity's recall@n(largest removed share)/recall@n(none), "
    "AR TI-AN, metric engine, users with a relevant test item (bootstrap over users), against 1 "
    "with a margin of 0.1",
    needs=("settings", "dataset", "ar_removal"),
)
def _recall(r):
    return value_rule(
        1.0,
        _removal_ratio(r, "recall"),
        Margin(0.0, FORMULA, "'quite unaffected' beside P's fall to 1 − removed: within a tenth"),
        label="recall ratio",
    )


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
    return Outcome(
        join_verdicts([falls, slower]), est, f"{falls.reason}; {slower.reason}", rule="sign"
    )


@LEDGER.claim(
    "bellogin2017.eq3.popularity",
    statement="a non-personalised system's AR precision follows eq. 3",
    source="§4.1, §5.1, eq. 3",
    paper_value=0.0,
    paper_dataset=ML1M,
    data_free="eq. 3 is stated for any data, so its relative error against the measurement "
    "does not depend on the dataset",
    rule="value rule (equivalence) on popularity's AR TI-AN P@n over all users over eq. 3 "
    "(evaluated with the items each user's list shows) on the same split, minus 1 (t interval "
    "over the check splits), against 0 with a margin of 0.1",
    needs=("dataset", "settings", "ar_checks"),
)
def _eq3(r):
    c = _at_sigma(r, r["ar_checks"]).dropna(subset=["popularity"])
    out = value_rule(
        0.0,
        over_splits(c["popularity"] / c["eq3"] - 1),
        formula_margin("the non-personalised precisions eq. 3 explains"),
        label="popularity P@n / eq. 3 − 1",
    )
    return append_reason(
        out,
        f"eq. 3 gives {format_number(float(c['eq3'].mean()))}, the per-item conditional "
        f"form {format_number(float(c['conditional'].mean()))}, the exact expectation of "
        f"the ranking by |R(i)| {format_number(float(c['exact'].mean()))}",
    )
