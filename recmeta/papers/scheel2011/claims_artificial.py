"""The ledger's claims on artificial data: the worked examples, eq. 4's identities and the swap
study (Scheel et al., secs. 2.1, 3.1, 4, 5; Figs. 1–5; Table 1; eqs. 1–4), in the paper's order.

Uncertainty: a normal interval from the spread over the repetitions
(:func:`~recmeta.papers.scheel2011.swaps.curve_difference`); exact values for enumerations and
identities.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ...ledger import (
    DERIVED,
    Estimate,
    Outcome,
    SignPart,
    Verdict,
    equivalence_rule,
    every_sign,
    format_estimate,
    sign_rule,
)
from ...metaeval.significance import normal_sign_pvalues as normal_pvalues
from .claims import (
    EQ4_EXAMPLE_LEVELS,
    EQ4_EXAMPLE_WEIGHTS,
    EXACT,
    LEDGER,
    STABLE,
    STABLE_REASON,
    exact_value,
    exact_zero,
    normal_interval,
    with_reason,
)
from .measures import PAPER_METRICS, level_weights
from .swaps import curve_difference

__all__ = ["level_settings", "normal_pvalues"]

#: why the artificial-ranking claims replicate on any run: they use no data
ARTIFICIAL = "artificial rankings generated from the paper's stated design; no dataset is read"


def level_settings(study: pd.DataFrame, distribution: str) -> tuple[int, int]:
    """The fewest and the most levels of a swap study's references of ``distribution``."""
    levels = sorted(study.loc[study["distribution"] == distribution, "levels"].unique())
    if len(levels) < 2:
        raise ValueError(f"the study has fewer than two level counts for {distribution!r}")
    return int(levels[0]), int(levels[-1])


def _level_gap(study: pd.DataFrame, distribution: str, metric: str) -> tuple[Estimate, int, int]:
    few, many = level_settings(study, distribution)
    value, se = curve_difference(
        study,
        {"distribution": distribution, "levels": few, "metric": metric},
        {"distribution": distribution, "levels": many, "metric": metric},
    )
    reps = int(study["n"].iloc[0])
    est = normal_interval(value, se, f"{reps} rankings per swap count")
    return est, few, many


def _falls(study: pd.DataFrame, distribution: str, metric: str) -> Outcome:
    est, few, many = _level_gap(study, distribution, metric)
    name = PAPER_METRICS[metric]
    out = sign_rule(est, "positive", label=f"mean {name}({few} levels) − {name}({many} levels)")
    return with_reason(out, "averaged over every swap count ≥ 1")


def _falls_of(r: Mapping[str, Any], *, distribution: str, metric: str) -> Outcome:
    return _falls(r["swap_study"], distribution, metric)


def _stable_of(r: Mapping[str, Any], *, distribution: str, metric: str) -> Outcome:
    return _stable(r["swap_study"], distribution, metric)


def _stable(study: pd.DataFrame, distribution: str, metric: str) -> Outcome:
    est, few, many = _level_gap(study, distribution, metric)
    out = equivalence_rule(
        est,
        STABLE,
        label=f"mean {PAPER_METRICS[metric]}({few} levels) − "
        f"{PAPER_METRICS[metric]}({many} levels)",
    )
    return replace(with_reason(out, STABLE_REASON), margin=STABLE)


# --------------------------------------------------------------------------------------------
# the claims, in the paper's order


@LEDGER.claim(
    "scheel2011.sec2.ideal-scores-one",
    statement="The ideal ranking (no swap) scores 1 on every measure",
    source="§2",
    paper_value=1.0,
    paper_dataset=DERIVED,
    rule="identity: the unswapped rankings of both swap studies, every measure; holds within 1e-9",
    needs=("swap_study", "swap_study_unit"),
)
def _(r):
    rows = pd.concat([r["swap_study"], r["swap_study_unit"]])
    values = rows.loc[rows["swaps"] == 0, "value"].to_numpy()
    worst = float(values[np.argmax(np.abs(values - 1.0))])
    return exact_value(
        1.0, worst, "the unswapped score farthest from 1", "exact (every unswapped ranking)"
    )


@LEDGER.claim(
    "scheel2011.tab1.threshold-changes-ap",
    statement="The threshold t that makes grades binary strongly affects AP (t = 0 makes every "
    "item relevant, a t above the top grade none)",
    source="§3.1, Table 1; eqs. 1–2",
    paper_value="AP differs across t (Table 1's values are not legible in our copy)",
    paper_dataset=DERIVED,
    rule="construction: range of AP^t over the positive grades of our own 8-item list; "
    "holds if > 0",
    needs=("threshold_ap",),
)
def _(r):
    ap = pd.Series(r["threshold_ap"], dtype=float)
    lo, hi = ap.idxmin(), ap.idxmax()
    est = Estimate.exact(float(ap.max() - ap.min()), "exact (max − min of AP over the thresholds)")
    out = sign_rule(est, "positive", label="range of AP^t")
    return with_reason(
        out,
        f"AP^t runs from {ap.min():.3f} (t = {lo:g}) to {ap.max():.3f} "
        f"(t = {hi:g}) on our own list, since the paper's is not legible",
    )


@LEDGER.claim(
    "scheel2011.eq4.example-weights",
    statement=f"With levels {', '.join(f'{x:g}' for x in EQ4_EXAMPLE_LEVELS)}, µAP weighs the "
    f"thresholds {EQ4_EXAMPLE_LEVELS[1]:g} and {EQ4_EXAMPLE_LEVELS[2]:g} by "
    f"{EQ4_EXAMPLE_WEIGHTS[0]:g} and {EQ4_EXAMPLE_WEIGHTS[1]:g}",
    source="§3.1, eq. 4",
    paper_value=", ".join(f"{w:g}" for w in EQ4_EXAMPLE_WEIGHTS),
    paper_dataset=DERIVED,
    rule="identity: both weights of level_weights equal the paper's within 1e-9",
    needs=("weights_example",),
)
def _(r):
    w = pd.Series(r["weights_example"], dtype=float)
    ours = w.to_numpy()
    paper = np.asarray(EQ4_EXAMPLE_WEIGHTS)
    text = ", ".join(f"{x:g}" for x in ours)
    est = Estimate.exact(float(ours[-1]), "exact (eq. 4)")
    same = ours.shape == paper.shape and np.allclose(ours, paper, rtol=0, atol=EXACT)
    verdict, word = (Verdict.AGREES, "equal") if same else (Verdict.DIFFERS, "differ from")
    return Outcome(
        verdict, est, f"our weights {text} {word} the paper's", text, rule="identity", margin=EXACT
    )


@LEDGER.claim(
    "scheel2011.sec5.two-levels-equal-ap",
    statement="With two relevance levels µAP equals AP (µMAP equals MAP)",
    source="§5; eq. 4",
    paper_value="identical",
    paper_dataset=DERIVED,
    rule="identity: largest |µMAP − MAP| over the two-level swap studies; agrees within 1e-9",
    needs=("swap_study",),
)
def _(r):
    s = r["swap_study"]
    two = s[s["levels"] == 2]
    if two.empty:
        raise ValueError("the swap study has no two-level reference")
    mu = two[two["metric"] == "muAP"].set_index(["distribution", "swaps"])["value"]
    ap = two[two["metric"] == "MAP"].set_index(["distribution", "swaps"])["value"]
    gap = float((mu - ap.reindex(mu.index)).abs().max())
    return exact_zero(gap, "largest |µMAP − MAP|")


@LEDGER.claim(
    "scheel2011.sec4.mu-map-mean-of-thresholds",
    statement="µMAP is the distance-weighted mean of the MAP at each threshold (OHSUMED: t = 1 "
    "and t = 2; the 9-level virtual user: 8 MAP values)",
    source="§4 (Figs. 6–7); eq. 4",
    paper_value="weighted mean",
    paper_dataset=DERIVED,
    rule="identity: largest |µMAP − Σ_t w_t MAP^t| over every setting of the swap study; "
    "holds within 1e-9",
    needs=("swap_study",),
)
def _(r):
    s = r["swap_study"]
    worst = 0.0
    for _, part in s.groupby(["distribution", "levels"]):
        maps = part[part["metric"] == "MAP"].pivot(
            index="swaps", columns="threshold", values="value"
        )
        mu = part[part["metric"] == "muAP"].set_index("swaps")["value"].reindex(maps.index)
        w = level_weights(maps.columns.to_numpy())
        worst = max(worst, float(np.abs(maps.to_numpy() @ w.to_numpy() - mu.to_numpy()).max()))
    return exact_zero(worst, "largest |µMAP − Σ w_t MAP^t|")


@LEDGER.claim(
    "scheel2011.sec2.1.performance-falls-with-swaps",
    statement="Every measure falls as the number of random swaps grows",
    source="§2.1, Fig. 1; §4, Fig. 4",
    paper_value="decreases",
    paper_dataset="artificial rankings",
    data_free=ARTIFICIAL,
    rule="every: the drop 1 − mean(at the most swaps) of each setting and measure is positive, "
    "Holm across them (one-sided p-values from the normal interval over the repetitions)",
    needs=("swap_study",),
)
def _(r):
    s = r["swap_study"]
    s = s[s["threshold"].isna() & s["metric"].isin(list(PAPER_METRICS))]
    top = s["swaps"].max()
    keys = ["distribution", "levels", "metric"]
    start = s[s["swaps"] == 0].set_index(keys)["value"]
    end = s[s["swaps"] == top].set_index(keys)
    drop = start.reindex(end.index) - end["value"]
    se = end["sd"] / np.sqrt(end["n"])
    parts: dict[str, SignPart] = {}
    for (dist, levels, metric), d in drop.items():
        name = f"{PAPER_METRICS[metric]} ({dist}, {levels} levels)"
        e = float(se.loc[(dist, levels, metric)])
        n = int(end.loc[(dist, levels, metric), "n"])
        parts[name] = SignPart(
            normal_interval(float(d), e, f"{n} rankings"), *normal_pvalues(float(d), e)
        )
    out = every_sign(parts, "positive", label=f"drop after {top} swaps")
    least = min(parts, key=lambda k: parts[k].estimate.value)
    return replace(
        out,
        detail=f"smallest drop after {top} swaps: {least}, {format_estimate(out.ours)}",
    )


@LEDGER.claim(
    "scheel2011.sec2.1.cost-depends-on-distance",
    statement="How much a swap costs depends on the distance between the levels of the two items",
    source="§2.1",
    paper_value="depends on the distance",
    paper_dataset=DERIVED,
    rule="enumeration: Spearman's ρ between level distance and loss 1 − score over every "
    "single swap of a uniform reference, the smallest over the three measures; holds if > 0",
    needs=("single_swaps",),
)
def _(r):
    sw = r["single_swaps"]
    rho = {
        m: float(spearmanr(sw["distance"], 1.0 - sw[m]).statistic) for m in PAPER_METRICS if m in sw
    }
    if not rho:
        raise ValueError("single_swaps holds none of the paper's measures")
    low = min(rho, key=rho.__getitem__)
    est = Estimate.exact(rho[low], f"exact (all {len(sw)} single swaps)")
    out = sign_rule(est, "positive", label=f"Spearman ρ of {PAPER_METRICS[low]}")
    detail = ", ".join(f"{PAPER_METRICS[m]} {v:.3f}" for m, v in rho.items())
    return with_reason(out, f"ρ per measure: {detail}")


@LEDGER.claim(
    "scheel2011.fig2-3.level-distributions",
    statement="Uniform references spread their items evenly over the levels; non-uniform ones "
    "draw level probabilities at random, so that some levels may stay unused",
    source="§2.1, Figs. 2–3",
    paper_value="some levels unused (non-uniform)",
    paper_dataset=DERIVED,
    rule="construction: uniform counts differ by at most one item; count the empty levels of the "
    "non-uniform references (agrees if at least one)",
    needs=("level_counts",),
)
def _(r):
    c = r["level_counts"]
    uni = (
        c[c["distribution"] == "uniform"]
        .groupby("levels")["items"]
        .agg(lambda x: x.max() - x.min())
    )
    empty = int((c.loc[c["distribution"] == "non-uniform", "items"] == 0).sum())
    est = Estimate.exact(empty, "exact (count)")
    even = bool((uni <= 1).all())
    if even and empty > 0:
        return Outcome(
            Verdict.AGREES,
            est,
            f"uniform references are even; the non-uniform ones leave {empty} levels empty",
            rule="count",
        )
    if not even:
        return Outcome(Verdict.DIFFERS, est, "a uniform reference is not even", rule="count")
    return Outcome(
        Verdict.INCONCLUSIVE,
        est,
        "no level of the non-uniform references is empty "
        "in this draw (the paper says levels *may* stay "
        "unused)",
        rule="count",
    )


# Figs. 4 and 5: NDCG falls with more levels, µAP and NDCNG do not; the remark of §5 on Fig. 4
# (the size of the gains, not the number of levels) follows Fig. 4's claims
for _fig, _dist in (("fig4", "uniform"), ("fig5", "non-uniform")):
    LEDGER.claim(
        f"scheel2011.{_fig}.ndcg-falls-with-levels",
        statement=f"NDCG is lower with more relevance levels ({_dist} levels, integer levels)",
        source=f"§4, {_fig.replace('fig', 'Fig. ')}; §5",
        paper_value="lower with more levels",
        paper_dataset="artificial rankings",
        data_free=ARTIFICIAL,
        rule="sign rule on mean NDCG(fewest levels) − NDCG(most levels) over the swap counts "
        "(normal interval over the repetitions)",
        needs=("swap_study",),
    )(partial(_falls_of, distribution=_dist, metric="nDCG(gain=exp)"))
    for _metric, _key in (("muAP", "muap"), ("NDCNG", "ndcng")):
        _name = PAPER_METRICS[_metric]
        LEDGER.claim(
            f"scheel2011.{_fig}.{_key}-stable-across-levels",
            statement=f"{_name} hardly depends on the number of levels ({_dist} levels)",
            source=f"§4, {_fig.replace('fig', 'Fig. ')}; §5",
            paper_value="almost independent of the number of levels",
            paper_dataset="artificial rankings",
            data_free=ARTIFICIAL,
            rule=f"equivalence: mean {_name}(fewest) − {_name}(most levels) "
            f"inside ±{STABLE:g} (normal interval over the repetitions)",
            needs=("swap_study",),
        )(partial(_stable_of, distribution=_dist, metric=_metric))
    if _fig == "fig4":
        LEDGER.claim(
            "scheel2011.fig4.gain-size-not-level-count",
            statement="The low NDCG with many levels comes from their high gains: on levels "
            "spread over [0, 1], NDCG hardly depends on the number of levels",
            source="§5 (on Fig. 4)",
            paper_value="high gains cause the low NDCG",
            paper_dataset="artificial rankings (level values not given)",
            data_free=ARTIFICIAL,
            rule=f"equivalence: mean NDCG(fewest) − NDCG(most levels), uniform levels on "
            f"[0, 1], inside ±{STABLE:g} (normal interval over the repetitions)",
            needs=("swap_study_unit",),
        )(lambda r: _stable(r["swap_study_unit"], "uniform", "nDCG(gain=exp)"))
del _fig, _dist, _metric, _key, _name
