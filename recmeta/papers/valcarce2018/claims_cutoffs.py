"""Valcarce et al. (2018), §§4 and 6: the claims about choosing a cut-off (Figs. 1–4).

A statement about a minimum over cut-offs ("every τ at least 0.9", "every cut-off above 50
lower than every one up to 50") and "every metric" claims are conjunctions part by part under
Holm's correction (:func:`recmeta.ledger.every_sign`, p-values from the bootstrap replicates),
not an interval of the minimum: the minimum of noisy parts is biased low and its bootstrap is no
valid interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ...ledger import (
    DERIVED,
    Estimate,
    Margin,
    Outcome,
    Verdict,
    every_sign,
    format_estimate,
    format_number,
    not_reproduced,
    order_groups,
    sign_rule,
    value_rule,
)
from ...metaeval.significance import monte_carlo_se
from .claims import DP_NEEDS, LEDGER, cut_pair, level_on, usable
from .estimates import (
    boot_estimate,
    dp_draws,
    dp_estimate,
    mean_with_others_at,
    robustness_draws,
    robustness_estimate,
    sign_part,
    tau_estimates,
    tau_matrices,
    tau_pair_parts,
    tau_stat_estimate,
)
from .rules import (
    short_order,
    threshold_rule,
    with_note,
    worded_order,
)
from .values import (
    LABELS,
    PAPER_CUTOFF_DEEP,
    PAPER_CUTOFF_LOWEST,
    PAPER_CUTOFF_MOST,
    PAPER_DEEP_DP,
    PAPER_FIG1,
    PAPER_MC_ERROR,
    PAPER_NDCG_CUTOFF_MIN,
    PAPER_PERMUTATIONS,
    TAU_MARGIN,
    TAU_ROUNDING,
)

#: how a value claim on τ is read, for the ledger's rule column
TAU_VALUE_RULE = (
    "value rule (equivalence): our bootstrap interval wholly inside the paper's value ± "
    f"{TAU_MARGIN.total:g} (rounding {TAU_MARGIN.rounding:g} + {TAU_MARGIN.substantive:g})"
)


# ---- §6, Fig. 1: agreement among cut-offs --------------------------------------------------
@LEDGER.claim(
    "valcarce2018.fig1.ndcg-min",
    statement="Every Kendall τ between two cut-offs of nDCG is at least 0.9",
    source="§6, Fig. 1",
    paper_value=PAPER_NDCG_CUTOFF_MIN,
    paper_dataset="ML-1M",
    rule=(
        "every rule: τ of every pair of nDCG's cut-offs, minus 0.895 (0.90 less its rounding), "
        "is positive (one-sided sign tests on bootstrap replicates over users, Holm across the "
        "pairs; not an interval of the smallest τ, which is biased low); a level of ML-1M, "
        "graded on ML-1M only"
    ),
    needs=("system_means", "boot_means", "measures", "systems", "cutoffs", "dataset"),
)
def _(r):
    ms = [f"nDCG@{k}" for k in r["cutoffs"]]
    pairs = tau_pair_parts(r, ms, [f"@{k}" for k in r["cutoffs"]], "τ between two cut-offs")
    shift = PAPER_NDCG_CUTOFF_MIN - TAU_ROUNDING
    parts = {k: sign_part(d, shift) for k, d in pairs.items()}
    out = every_sign(parts, "positive", label=f"τ minus {shift:g}")
    return level_on("ML-1M", r, out)


@LEDGER.claim(
    "valcarce2018.fig1.ndcg-5-100",
    statement="Kendall τ between nDCG@5 and nDCG@100",
    source="§6, Fig. 1",
    paper_value=float(PAPER_FIG1.at["@5", "@100"]),
    paper_dataset="ML-1M",
    rule=TAU_VALUE_RULE,
    needs=("system_means", "boot_means", "measures", "cutoffs", "deep"),
)
def _(r):
    lo, hi = cut_pair(r["deep"], r["cutoffs"])
    (est,) = tau_estimates(r, [(f"nDCG@{lo}", f"nDCG@{hi}")], f"τ(nDCG@{lo}, nDCG@{hi})")
    return value_rule(float(PAPER_FIG1.at["@5", "@100"]), est, TAU_MARGIN)


@LEDGER.claim(
    "valcarce2018.fig1.ndcg-5-apart",
    statement="The largest discrepancy among nDCG's cut-offs is between @5 and the rest",
    source="§6, Fig. 1",
    paper_value="@5",
    paper_dataset="ML-1M",
    rule="order rule on each cut-off's mean τ with the others (lowest first; bootstrap intervals)",
    needs=("system_means", "boot_means", "measures", "cutoffs"),
)
def _(r):
    ms = [f"nDCG@{k}" for k in r["cutoffs"]]
    mats = tau_matrices(r, ms)
    ests = {
        f"@{k}": tau_stat_estimate(
            r,
            partial(mean_with_others_at, i),
            ms,
            f"mean τ of nDCG@{k} with the other cut-offs",
            mats,
        )
        for i, k in enumerate(r["cutoffs"])
    }
    return worded_order(
        ests, f"@{min(r['cutoffs'])}", higher_is_better=False, best="furthest from the rest"
    )


def _lowest_pair_value(metric: str) -> Callable[[Mapping[str, Any]], Outcome]:
    def evaluate(r: Mapping[str, Any]) -> Outcome:
        lo, hi = cut_pair(r["deep"], r["cutoffs"])
        (est,) = tau_estimates(
            r,
            [(f"{metric}@{lo}", f"{metric}@{hi}")],
            f"τ({LABELS[metric]}@{lo}, {LABELS[metric]}@{hi})",
        )
        return value_rule(PAPER_CUTOFF_LOWEST, est, TAU_MARGIN)

    return evaluate


def _lowest_pair_order(metric: str) -> Callable[[Mapping[str, Any]], Outcome]:
    def evaluate(r: Mapping[str, Any]) -> Outcome:
        cut = list(r["cutoffs"])
        value, reps = tau_matrices(r, [f"{metric}@{k}" for k in cut])
        what = f"τ between two cut-offs of {LABELS[metric]}"
        named = {
            f"@{a}–@{b}": boot_estimate(float(value[i, j]), reps[:, i, j], what)
            for i, a in enumerate(cut)
            for j, b in enumerate(cut)
            if j > i
        }
        pair = f"@{min(cut)}–@{max(cut)}"
        out = worded_order(named, pair, higher_is_better=False, best="lowest")
        top = order_groups(named, descending=False)[0]
        if len(top) > 4:  # name the expected pair and count the others tied with it
            reason = (
                f"{len(top)} pairs of cut-offs tie at the bottom (overlapping intervals), "
                f"{'including' if pair in top else 'but not'} {pair}"
            )
            return replace(
                out, reason=reason, detail=f"lowest: {top[0]} ≈ {len(top) - 1} other pairs"
            )
        return short_order(out, named, descending=False)

    return evaluate


for _m in ("P", "R"):
    LEDGER.claim(
        f"valcarce2018.s6.{_m.lower()}-5-100",
        statement=(
            f"Kendall τ between {LABELS[_m]}@5 and {LABELS[_m]}@100 (the lowest among cut-offs on "
            "ML-1M)"
        ),
        source="§6",
        paper_value=PAPER_CUTOFF_LOWEST,
        paper_dataset="ML-1M",
        rule=TAU_VALUE_RULE,
        needs=("system_means", "boot_means", "measures", "cutoffs", "deep"),
    )(_lowest_pair_value(_m))
    LEDGER.claim(
        f"valcarce2018.s6.{_m.lower()}-lowest-pair",
        statement=f"Of all pairs of cut-offs of {LABELS[_m]}, @5 and @100 agree least",
        source="§6",
        paper_value="@5–@100",
        paper_dataset="ML-1M",
        rule="order rule on τ of every pair of cut-offs (lowest first; bootstrap intervals)",
        needs=("system_means", "boot_means", "measures", "cutoffs"),
    )(_lowest_pair_order(_m))


def _cutoff_share(
    r: Mapping[str, Any], cutoffs: Sequence[int], threshold: float, what: str
) -> tuple[Estimate, str]:
    """Share of the pairs of cut-offs (within each usable metric) whose τ exceeds ``threshold``."""
    metrics, note = usable(r, r["metrics"])
    pos = np.array([list(r["cutoffs"]).index(k) for k in cutoffs])
    iu = np.triu_indices(len(cutoffs), 1)
    rows, cols = pos[iu[0]], pos[iu[1]]
    values, reps = [], []
    for m in metrics:  # slices of each metric's matrix among all cut-offs
        v, b = tau_matrices(r, [f"{m}@{k}" for k in r["cutoffs"]])
        values.append(v[rows, cols])
        reps.append(b[:, rows, cols])
    value = float(np.mean(np.concatenate(values) > threshold))
    boot = np.concatenate(reps, axis=1)
    shares = np.where(np.isfinite(boot).all(axis=1), np.mean(boot > threshold, axis=1), np.nan)
    return boot_estimate(value, shares, what), note


@LEDGER.claim(
    "valcarce2018.s6.most-above-0.85",
    statement="Most τ between two cut-offs of the same metric are above 0.85",
    source="§6",
    paper_value=PAPER_CUTOFF_MOST,
    paper_dataset="ML-1M",
    rule=(
        "threshold rule (most): the share of pairs of cut-offs (all metrics) with τ > 0.85, minus "
        "0.5, lies wholly above 0 (BC bootstrap interval over users); a level of ML-1M, "
        "graded on ML-1M only"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate", "dataset"),
)
def _(r):
    est, note = _cutoff_share(
        r, r["cutoffs"], PAPER_CUTOFF_MOST, "share of pairs of cut-offs with τ > 0.85"
    )
    return level_on("ML-1M", r, with_note(threshold_rule(est, 0.5, "above", "the share"), note))


@LEDGER.claim(
    "valcarce2018.s6.deep-above-0.9",
    statement=(
        "Among cut-offs of 20 and more, τ between two cut-offs of a metric is almost always above "
        "0.9"
    ),
    source="§6",
    paper_value=PAPER_CUTOFF_DEEP,
    paper_dataset="LibraryThing, BeerAdvocate",
    rule=(
        "not reproduced: the paper states this level for LibraryThing and BeerAdvocate only (on "
        "ML-1M it reads most τ above 0.85), and a level of τ is a magnitude of those data; our "
        "share of pairs of cut-offs ≥ 20 with τ > 0.895 is shown"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate"),
)
def _(r):
    cut = [k for k in r["cutoffs"] if k >= 20]
    if len(cut) < 2:
        return not_reproduced("fewer than two cut-offs of 20 or more in this run")
    est, note = _cutoff_share(
        r, cut, PAPER_CUTOFF_DEEP - TAU_ROUNDING, "share of pairs of cut-offs ≥ 20 with τ > 0.895"
    )
    why = (
        "the paper states this for LibraryThing and BeerAdvocate, and this book has no "
        "LibraryThing or BeerAdvocate data; a level of τ measured there is not graded on other "
        "data (our share is shown)"
    )
    return Outcome(Verdict.NOT_REPRODUCED, est, f"{why}; {note}" if note else why, rule="none")


# ---- §6, Figs. 2–3: robustness among cut-offs ----------------------------------------------
def _deeper_robust(bias: str, metric: str, r: Mapping[str, Any]) -> Outcome:
    lo, hi = cut_pair(r["deep"], r["cutoffs"])
    est = robustness_estimate(r, bias, lambda v: v[f"{metric}@{hi}"] - v[f"{metric}@{lo}"])
    return sign_rule(est, "positive", label=f"mean τ of {LABELS[metric]}@{hi} minus @{lo}")


def _all_deeper_robust(bias: str, r: Mapping[str, Any]) -> Outcome:
    metrics, note = usable(r, r["metrics"])
    lo, hi = cut_pair(r["deep"], r["cutoffs"])

    def gap(m: str) -> Any:
        return lambda v: v[f"{m}@{hi}"] - v[f"{m}@{lo}"]

    parts = {LABELS[m]: sign_part(robustness_draws(r, bias, gap(m))) for m in metrics}
    out = every_sign(parts, "positive", label=f"mean τ at @{hi} minus @{lo}")
    return with_note(out, note)


for _bias, _fig in (("sparsity", "fig2"), ("popularity", "fig3")):
    _how = (
        "two-level bootstrap over users and random masks"
        if _bias == "sparsity"
        else "bootstrap over users"
    )
    LEDGER.claim(
        f"valcarce2018.{_fig}.ndcg-deeper-robust",
        statement=f"nDCG is more robust to the {_bias} bias at @100 than at @5",
        source=f"§6, Fig. {_fig[-1]}",
        paper_value="deeper is more robust",
        paper_dataset="ML-1M",
        rule=f"sign rule on the mean τ over shares at @100 minus @5 ({_how})",
        needs=(_bias, f"{_bias}_boot", "measures", "cutoffs", "deep"),
    )(partial(_deeper_robust, _bias, "nDCG"))
    LEDGER.claim(
        f"valcarce2018.{_fig}.all-deeper-robust",
        statement=(
            f"Every metric, not only nDCG, is more robust to the {_bias} bias at @100 than at @5"
        ),
        source="§6",
        paper_value="also the other metrics",
        paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule=(
            f"every metric's sign rule (@100 minus @5, {_how}), Holm's correction across the "
            "metrics (one-sided p-values from the same draws)"
        ),
        needs=(_bias, f"{_bias}_boot", "measures", "metrics", "cutoffs", "deep", "degenerate"),
    )(partial(_all_deeper_robust, _bias))


# ---- §4 and §6, Fig. 4: discriminative power among cut-offs ---------------------------------
@LEDGER.claim(
    "valcarce2018.s4.monte-carlo",
    statement=(
        "The Monte-Carlo permutation test estimates the exact p-value within its sampling error"
    ),
    source="§4",
    paper_value="the exact p within the Monte-Carlo sampling error",
    paper_dataset=DERIVED,
    rule=(
        "simulation check: 0 within (Monte-Carlo p − exact p) ± 1.96 standard errors √(p(1−p)/B) "
        "(plus one step 1/(B + 1))"
    ),
    needs=("mc_check",),
)
def _(r):
    c = r["mc_check"]
    diff = c["mc"] - c["exact"]
    half = 1.96 * c["se"] + 1.0 / (c["n_permutations"] + 1)
    est = Estimate(
        diff,
        diff - half,
        diff + half,
        f"Monte-Carlo minus exact p of {c['a']} vs {c['b']} on {c['users']} users, "
        f"±1.96 standard errors with B = {c['n_permutations']:,}",
    )
    assert est.low is not None and est.high is not None  # built with both ends just above
    inside = est.low <= 0.0 <= est.high
    text = (
        f"Monte-Carlo p {c['mc']:.5f} against exact {c['exact']:.5f}: the difference "
        f"{format_estimate(est)} {'contains' if inside else 'excludes'} 0"
    )
    return Outcome(Verdict.AGREES if inside else Verdict.DIFFERS, est, text, rule="simulation")


def _mc_error(p: float, r: Mapping[str, Any]) -> Outcome:
    """The paper's quoted error against the standard error of a two-sided Monte-Carlo p-value
    taken as twice a one-sided share of B permutations, √(p(2−p)/B)
    (:func:`recmeta.metaeval.significance.monte_carlo_se`), within the printed rounding."""
    printed = PAPER_MC_ERROR[p]
    b = PAPER_PERMUTATIONS
    se = float(monte_carlo_se(p, b, doubled=True))
    out = value_rule(
        printed,
        Estimate.exact(se, f"standard error √(p(2−p)/B) of a two-sided p = {p:g}, B = {b:,}"),
        Margin.printed(
            printed, 0.0, "an exact formula: only the rounding of the printed figure is allowed"
        ),
        label="√(p(2−p)/B) =",
    )
    one = float(monte_carlo_se(p, b))
    return with_note(
        out,
        f"the share of B permutations as a p-value has standard error √(p(1−p)/B) = "
        f"{format_number(one, 2)}, which the printed figure is not",
    )


for _p, _printed in PAPER_MC_ERROR.items():
    LEDGER.claim(
        f"valcarce2018.s4.mc-error-p{str(_p)[2:]}",
        statement=(
            f"{PAPER_PERMUTATIONS:,} permutations estimate a two-sided p-value of {_p:g} within "
            f"±{_printed:g}"
        ),
        source="§4",
        paper_value=_printed,
        paper_dataset=DERIVED,
        rule=(
            "value rule (equivalence): the standard error of a two-sided p-value estimated as "
            "twice a one-sided share of B permutations, √(p(2−p)/B), exact, inside the paper's "
            "value ± half a unit of its last printed digit"
        ),
    )(partial(_mc_error, _p))


def _deeper_dp(metric: str, r: Mapping[str, Any]) -> Outcome:
    lo, hi = cut_pair(r["deep"], r["cutoffs"])
    est = dp_estimate(
        r,
        lambda s: s[f"{metric}@{lo}"] - s[f"{metric}@{hi}"],
        f"DP of {LABELS[metric]}@{lo} minus @{hi}",
    )
    return sign_rule(est, "positive", label=f"DP @{lo} minus @{hi}")


@LEDGER.claim(
    "valcarce2018.fig4.ndcg-deeper-dp",
    statement="nDCG discriminates more pairs of systems at @100 than at @5 (lower DP)",
    source="§6, Fig. 4",
    paper_value="deeper is more discriminative",
    paper_dataset="ML-1M",
    rule="sign rule on DP@5 minus DP@100 (bootstrap over users)",
    needs=(*DP_NEEDS, "cutoffs", "deep"),
)
def _(r):
    return _deeper_dp("nDCG", r)


@LEDGER.claim(
    "valcarce2018.fig4.ndcg-above-50",
    statement="Every cut-off of nDCG above 50 has a lower DP than every cut-off up to 50",
    source="§6, Fig. 4",
    paper_value="cut-offs above 50 consistently better",
    paper_dataset="ML-1M",
    rule=(
        "every rule: DP@a minus DP@b is positive for every cut-off a ≤ 50 and b > 50 (one-sided "
        "sign tests on bootstrap replicates over users, Holm across the pairs; not an interval "
        "of the smallest gap, which is biased low)"
    ),
    needs=(*DP_NEEDS, "cutoffs"),
)
def _(r):
    low = [k for k in r["cutoffs"] if k <= PAPER_DEEP_DP]
    high = [k for k in r["cutoffs"] if k > PAPER_DEEP_DP]
    if not low or not high:
        return not_reproduced("the cut-offs of this run do not straddle 50")

    def gap(a: int, b: int) -> Callable[[Mapping[str, float]], float]:
        return lambda s: s[f"nDCG@{a}"] - s[f"nDCG@{b}"]

    parts = {
        f"@{a} − @{b}": sign_part(dp_draws(r, gap(a, b), f"DP of nDCG@{a} minus @{b}"))
        for a in low
        for b in high
    }
    return every_sign(parts, "positive", label="the DP gap")


@LEDGER.claim(
    "valcarce2018.fig4.all-deeper-dp",
    statement="Every metric, not only nDCG, discriminates more at @100 than at @5",
    source="§6",
    paper_value="similar results for the other metrics",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule=(
        "every metric's sign rule (DP@5 minus DP@100, bootstrap over users), Holm's correction "
        "across the metrics (one-sided bootstrap p-values)"
    ),
    needs=(*DP_NEEDS, "metrics", "cutoffs", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    lo, hi = cut_pair(r["deep"], r["cutoffs"])

    def gap(m: str) -> Any:
        return lambda s: s[f"{m}@{lo}"] - s[f"{m}@{hi}"]

    parts = {
        LABELS[m]: sign_part(dp_draws(r, gap(m), f"DP of {LABELS[m]}@{lo} minus @{hi}"))
        for m in metrics
    }
    return with_note(every_sign(parts, "positive", label=f"DP @{lo} minus @{hi}"), note)
