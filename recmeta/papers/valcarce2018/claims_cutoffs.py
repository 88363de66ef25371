"""Valcarce et al. (2018), §§4 and 6: the claims about choosing a cut-off (Figs. 1–4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...ledger import (
    Estimate,
    Outcome,
    Verdict,
    format_estimate,
    legacy_value_rule,
    not_reproduced,
    sign_rule,
)
from ...metaeval.agreement import offdiag
from .claims import DP_NEEDS, LEDGER, cut_pair, usable
from .estimates import (
    boot_estimate,
    dp_estimate,
    mean_with_others_at,
    robustness_estimate,
    tau_estimates,
    tau_matrices,
    tau_stat_estimate,
)
from .rules import (
    majority_rule,
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
    PAPER_NDCG_CUTOFF_MIN,
    TAU_TOLERANCE,
    tau_tolerance,
)


# ---- §6, Fig. 1: agreement among cut-offs --------------------------------------------------
@LEDGER.claim(
    "valcarce2018.fig1.ndcg-min",
    statement="Every Kendall τ between two cut-offs of nDCG is at least 0.9",
    source="§6, Fig. 1",
    paper_value=PAPER_NDCG_CUTOFF_MIN,
    paper_dataset="ML-1M",
    rule=(
        "the smallest τ among nDCG's cut-offs, minus 0.895, lies wholly above 0 (bootstrap over "
        "users)"
    ),
    needs=("system_means", "boot_means", "measures", "systems", "cutoffs"),
)
def _(r):
    ms = [f"nDCG@{k}" for k in r["cutoffs"]]
    est = tau_stat_estimate(r, lambda t: offdiag(t).min(), ms, "smallest τ among nDCG's cut-offs")
    return threshold_rule(est, PAPER_NDCG_CUTOFF_MIN - TAU_TOLERANCE, "above", "the smallest τ")


@LEDGER.claim(
    "valcarce2018.fig1.ndcg-5-100",
    statement="Kendall τ between nDCG@5 and nDCG@100",
    source="§6, Fig. 1",
    paper_value=float(PAPER_FIG1.at["@5", "@100"]),
    paper_dataset="ML-1M",
    rule=(
        "value rule: the paper's value within our bootstrap interval widened by the tolerance "
        "(0.005, or half the step of τ among our systems)"
    ),
    needs=("system_means", "boot_means", "measures", "cutoffs", "deep", "n_pairs"),
)
def _(r):
    lo, hi = cut_pair(r["deep"], r["cutoffs"])
    (est,) = tau_estimates(r, [(f"nDCG@{lo}", f"nDCG@{hi}")], f"τ(nDCG@{lo}, nDCG@{hi})")
    return legacy_value_rule(float(PAPER_FIG1.at["@5", "@100"]), est, tau_tolerance(r["n_pairs"]))


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
        return legacy_value_rule(PAPER_CUTOFF_LOWEST, est, tau_tolerance(r["n_pairs"]))

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
        out = worded_order(named, f"@{min(cut)}–@{max(cut)}", higher_is_better=False, best="lowest")
        top = (out.detail or "").split(" < ")[0].split(" ≈ ")
        if len(top) > 4:  # name the expected pair and count the others tied with it
            reason = (
                f"{len(top)} pairs of cut-offs tie at the bottom (overlapping intervals), "
                f"{'including' if f'@{min(cut)}–@{max(cut)}' in top else 'but not'} "
                f"@{min(cut)}–@{max(cut)}"
            )
            out = Outcome(
                out.verdict, out.ours, reason, f"lowest: {top[0]} ≈ {len(top) - 1} other pairs"
            )
        return short_order(out)

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
        rule=(
            "value rule: the paper's value within our bootstrap interval widened by the tolerance "
            "(0.005, or half the step of τ among our systems)"
        ),
        needs=("system_means", "boot_means", "measures", "cutoffs", "deep", "n_pairs"),
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
        "the share of pairs of cut-offs (all metrics) with τ > 0.85, minus 0.5, lies wholly above 0"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate"),
)
def _(r):
    est, note = _cutoff_share(
        r, r["cutoffs"], PAPER_CUTOFF_MOST, "share of pairs of cut-offs with τ > 0.85"
    )
    return with_note(threshold_rule(est, 0.5, "above", "the share"), note)


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
        "the share of pairs of cut-offs ≥ 20 (all metrics) with τ > 0.895, minus 0.9, lies wholly "
        "above 0"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate"),
)
def _(r):
    cut = [k for k in r["cutoffs"] if k >= 20]
    if len(cut) < 2:
        return not_reproduced("fewer than two cut-offs of 20 or more in this run")
    est, note = _cutoff_share(
        r, cut, PAPER_CUTOFF_DEEP - TAU_TOLERANCE, "share of pairs of cut-offs ≥ 20 with τ > 0.895"
    )
    return with_note(threshold_rule(est, 0.9, "above", "the share"), note)


# ---- §6, Figs. 2–3: robustness among cut-offs ----------------------------------------------
def _deeper_robust(bias: str, metric: str, r: Mapping[str, Any]) -> Outcome:
    lo, hi = cut_pair(r["deep"], r["cutoffs"])
    est = robustness_estimate(r, bias, lambda v: v[f"{metric}@{hi}"] - v[f"{metric}@{lo}"])
    return sign_rule(est, "positive", label=f"mean τ of {LABELS[metric]}@{hi} minus @{lo}")


def _all_deeper_robust(bias: str, r: Mapping[str, Any]) -> Outcome:
    return with_note(
        majority_rule(
            {LABELS[m]: _deeper_robust(bias, m, r) for m in usable(r, r["metrics"])[0]},
            "metrics more robust at @100",
        ),
        usable(r, r["metrics"])[1],
    )


for _bias, _fig in (("sparsity", "fig2"), ("popularity", "fig3")):
    _how = "t interval over the random samples" if _bias == "sparsity" else "bootstrap over users"
    LEDGER.claim(
        f"valcarce2018.{_fig}.ndcg-deeper-robust",
        statement=f"nDCG is more robust to the {_bias} bias at @100 than at @5",
        source=f"§6, Fig. {_fig[-1]}",
        paper_value="deeper is more robust",
        paper_dataset="ML-1M",
        rule=f"sign rule on the mean τ over shares at @100 minus @5 ({_how})",
        needs=(_bias, "popularity_boot", "measures", "cutoffs", "deep"),
    )(partial(_deeper_robust, _bias, "nDCG"))
    LEDGER.claim(
        f"valcarce2018.{_fig}.all-deeper-robust",
        statement=(
            f"Every metric, not only nDCG, is more robust to the {_bias} bias at @100 than at @5"
        ),
        source="§6",
        paper_value="also the other metrics",
        paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule=f"majority of the metrics' own sign rules (@100 minus @5, {_how})",
        needs=(_bias, "popularity_boot", "measures", "metrics", "cutoffs", "deep", "degenerate"),
    )(partial(_all_deeper_robust, _bias))


# ---- §4 and §6, Fig. 4: discriminative power among cut-offs ---------------------------------
@LEDGER.claim(
    "valcarce2018.s4.monte-carlo",
    statement=(
        "The Monte-Carlo permutation test estimates the exact p-value within its sampling error"
    ),
    source="§4",
    paper_value="±0.001 at p = 0.05 (100,000 permutations)",
    paper_dataset=None,
    rule="value rule: 0 within (Monte-Carlo p − exact p) ± 1.96 standard errors √(p(1−p)/B)",
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
    return Outcome(Verdict.AGREES if inside else Verdict.DIFFERS, est, text)


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
        "sign rule on min DP over cut-offs ≤ 50 minus max DP over cut-offs > 50 (bootstrap over "
        "users)"
    ),
    needs=(*DP_NEEDS, "cutoffs"),
)
def _(r):
    low = [k for k in r["cutoffs"] if k <= PAPER_DEEP_DP]
    high = [k for k in r["cutoffs"] if k > PAPER_DEEP_DP]
    if not low or not high:
        return not_reproduced("the cut-offs of this run do not straddle 50")
    est = dp_estimate(
        r,
        lambda s: min(s[f"nDCG@{k}"] for k in low) - max(s[f"nDCG@{k}"] for k in high),
        "smallest DP up to @50 minus largest DP above @50 (nDCG)",
    )
    return sign_rule(est, "positive", label="the gap")


@LEDGER.claim(
    "valcarce2018.fig4.all-deeper-dp",
    statement="Every metric, not only nDCG, discriminates more at @100 than at @5",
    source="§6",
    paper_value="similar results for the other metrics",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule="majority of the metrics' own sign rules (DP@5 minus DP@100, bootstrap over users)",
    needs=(*DP_NEEDS, "metrics", "cutoffs", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        majority_rule(
            {LABELS[m]: _deeper_dp(m, r) for m in metrics}, "metrics more discriminative at @100"
        ),
        note,
    )
