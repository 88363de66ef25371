"""Valcarce et al. (2018), §7: the claims about choosing a metric (Figs. 5–8, Table 3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ...ledger import (
    Estimate,
    Outcome,
    all_of,
    every_sign,
    not_reproduced,
    rank_rule,
    sign_rule,
    some,
    value_rule,
)
from ...metaeval.agreement import offdiag
from .claims import DP_NEEDS, LEDGER, NO_DATA, degenerate_outcome, level_on, usable
from .claims_cutoffs import TAU_VALUE_RULE
from .estimates import (
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
    group_rule,
    with_note,
    worded_order,
)
from .values import (
    DP_MARGIN,
    LABELS,
    METRICS,
    PAPER_DATASETS,
    PAPER_FIG5,
    PAPER_FIG5_LOW,
    PAPER_HALF_SPARSITY,
    PAPER_PAIRS,
    PAPER_TABLE3,
    TAU_MARGIN,
)


# ---- §7, Fig. 5: agreement among metrics ----------------------------------------------------
def _metric_tau_value(a: str, b: str) -> tuple[float, Callable[[Mapping[str, Any]], Outcome]]:
    paper = float(PAPER_FIG5["ML-1M"].at[a, b])

    def evaluate(r: Mapping[str, Any]) -> Outcome:
        skip = degenerate_outcome(r, a, b)
        if skip is not None:
            return skip
        d = r["deep"]
        (est,) = tau_estimates(
            r, [(f"{a}@{d}", f"{b}@{d}")], f"τ({LABELS[a]}@{d}, {LABELS[b]}@{d})"
        )
        return value_rule(paper, est, TAU_MARGIN)

    return paper, evaluate


for _a, _b, _why in (
    ("AP", "nDCG", "MAP and nDCG agree strongly"),
    ("P", "RR", "the lowest τ of Fig. 5a"),
    ("AP", "infAP", "infAP estimates MAP"),
):
    _paper, _fn = _metric_tau_value(_a, _b)
    LEDGER.claim(
        f"valcarce2018.fig5.{_a.lower()}-{_b.lower()}",
        statement=f"Kendall τ between {LABELS[_a]}@100 and {LABELS[_b]}@100 ({_why})",
        source="§7, Fig. 5a",
        paper_value=_paper,
        paper_dataset="ML-1M",
        rule=TAU_VALUE_RULE,
        needs=("system_means", "boot_means", "measures", "deep", "degenerate"),
    )(_fn)


@LEDGER.claim(
    "valcarce2018.fig5.mrr-apart",
    statement="MRR orders the systems least like the other metrics",
    source="§7, Fig. 5",
    paper_value="MRR",
    paper_dataset="ML-1M, LibraryThing",
    rule=(
        "order rule on each metric's mean τ with the others at @100 (lowest first; bootstrap "
        "intervals)"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    ms = [f"{m}@{r['deep']}" for m in metrics]
    mats = tau_matrices(r, ms)
    ests = {
        LABELS[m]: tau_stat_estimate(
            r,
            partial(mean_with_others_at, i),
            ms,
            f"mean τ of {LABELS[m]} with the other metrics",
            mats,
        )
        for i, m in enumerate(metrics)
    }
    return with_note(
        worded_order(ests, "MRR", higher_is_better=False, best="furthest from the others"), note
    )


@LEDGER.claim(
    "valcarce2018.fig5.some-below-0.8",
    statement="Some metrics at @100 correlate below 0.8",
    source="§7, Fig. 5",
    paper_value=PAPER_FIG5_LOW,
    paper_dataset="ML-1M, BeerAdvocate",
    rule=(
        "some rule: at least one pair of metrics has τ below 0.8 (one-sided sign tests on "
        "bootstrap replicates over users, Holm across the pairs; not an interval of the smallest "
        "τ, which is biased low, towards this claim); a level of ML-1M and BeerAdvocate, graded "
        "on those data only"
    ),
    needs=("system_means", "boot_means", "measures", "metrics", "deep", "degenerate", "dataset"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    ms = [f"{m}@{r['deep']}" for m in metrics]
    pairs = tau_pair_parts(r, ms, [LABELS[m] for m in metrics], "τ between two metrics")
    low = {k: sign_part(d, PAPER_FIG5_LOW) for k, d in pairs.items()}
    out = some(
        {k: p.estimate for k, p in low.items()},
        {k: p.p_negative for k, p in low.items()},  # expected: τ below 0.8
        {k: p.p_positive for k, p in low.items()},
        what=f"pairs of metrics shown below τ = {PAPER_FIG5_LOW:g}",
    )
    return level_on("ML-1M, BeerAdvocate", r, with_note(out, note))


@LEDGER.claim(
    "valcarce2018.fig5b.all-above-0.9",
    statement="On LibraryThing every τ between two metrics is above 0.9",
    source="§7, Fig. 5b",
    paper_value=float(offdiag(PAPER_FIG5["LibraryThing"].to_numpy()).min()),
    paper_dataset="LibraryThing",
    rule="not reproduced: no such data",
)
def _(r):
    return not_reproduced(NO_DATA["LibraryThing"])


@LEDGER.claim(
    "valcarce2018.fig5c.bpref-map",
    statement="On BeerAdvocate bpref correlates poorly with MAP",
    source="§7, Fig. 5c",
    paper_value=float(PAPER_FIG5["BeerAdvocate"].at["bpref", "AP"]),
    paper_dataset="BeerAdvocate",
    rule="not reproduced: no such data",
)
def _(r):
    return not_reproduced(NO_DATA["BeerAdvocate"])


# ---- §7, Figs. 6–7: robustness among metrics --------------------------------------------------
def _robust_estimates(
    r: Mapping[str, Any], bias: str, metrics: Sequence[str]
) -> dict[str, Estimate]:
    d = r["deep"]
    return {LABELS[m]: robustness_estimate(r, bias, f"{m}@{d}") for m in metrics}


@LEDGER.claim(
    "valcarce2018.fig6.half-above-0.9",
    statement="Every metric at @100 keeps τ above 0.9 with half of the test ratings removed",
    source="§7, Fig. 6",
    paper_value=PAPER_HALF_SPARSITY,
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule=(
        "every metric's mean τ at 50 % minus 0.9 is positive (one-sided sign tests on the "
        "two-level bootstrap over users and random masks), Holm's correction across the metrics"
    ),
    needs=("sparsity", "sparsity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    if not np.isclose(r["sparsity"]["share"], 0.5).any():
        return not_reproduced("the sparsity grid of this run has no share of 50 %")
    parts = {
        LABELS[m]: sign_part(
            robustness_draws(r, "sparsity", f"{m}@{r['deep']}", share=0.5), PAPER_HALF_SPARSITY
        )
        for m in metrics
    }
    out = every_sign(parts, "positive", label=f"τ at 50 % minus {PAPER_HALF_SPARSITY}")
    return with_note(out, note)


@LEDGER.claim(
    "valcarce2018.fig6.p-ndcg-lead",
    statement="Precision and nDCG are the two metrics most robust to the sparsity bias",
    source="§7, Fig. 6",
    paper_value="P, nDCG",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule="group rule on the mean τ over shares (two-level bootstrap over users and random masks)",
    needs=("sparsity", "sparsity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(group_rule(_robust_estimates(r, "sparsity", metrics), ["P", "nDCG"]), note)


@LEDGER.claim(
    "valcarce2018.s7.p-most-robust",
    statement="Precision is the metric most robust to the sparsity bias",
    source="§7, §8",
    paper_value="P",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule="order rule on the mean τ over shares (two-level bootstrap over users and random masks)",
    needs=("sparsity", "sparsity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        worded_order(_robust_estimates(r, "sparsity", metrics), "P", best="most robust"), note
    )


@LEDGER.claim(
    "valcarce2018.fig6.bpref-least",
    statement="bpref is the metric least robust to the sparsity bias (infAP and MRR next)",
    source="§7, Fig. 6",
    paper_value="bpref",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule=(
        "rank rule on the mean τ over shares (two-level bootstrap over users and random masks): "
        "bpref last, and infAP and MRR the two places above it; both parts must agree"
    ),
    needs=("sparsity", "sparsity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    skip = degenerate_outcome(r, "bpref", "infAP")
    if skip is not None:
        return skip
    metrics, note = usable(r, r["metrics"])
    ests = _robust_estimates(r, "sparsity", metrics)
    n = len(ests)
    parts = {
        "bpref last": worded_order(ests, "bpref", higher_is_better=False, best="least robust"),
        "infAP and MRR next": rank_rule(ests, ["infAP", "MRR"], n - 2, n - 1),
    }
    out = all_of(parts)
    return with_note(replace(out, detail=parts["bpref last"].detail), note)


@LEDGER.claim(
    "valcarce2018.fig6.map-beats-bpref-infap",
    statement=(
        "MAP is more robust to sparsity than bpref and infAP on LibraryThing and BeerAdvocate"
    ),
    source="§7, Fig. 6b–c",
    paper_value="MAP > bpref, infAP",
    paper_dataset="LibraryThing, BeerAdvocate",
    rule="not reproduced: no such data",
)
def _(r):
    return not_reproduced(NO_DATA["LibraryThing"].split(" (")[0] + " or BeerAdvocate data")


@LEDGER.claim(
    "valcarce2018.fig7.p-most-robust",
    statement="Precision is the metric most robust to the popularity bias",
    source="§7, Fig. 7",
    paper_value="P",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule="order rule on the mean τ over shares (bootstrap intervals over users)",
    needs=("popularity", "popularity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        worded_order(_robust_estimates(r, "popularity", metrics), "P", best="most robust"), note
    )


@LEDGER.claim(
    "valcarce2018.fig7.mrr-least",
    statement="MRR is the metric least robust to the popularity bias",
    source="§7, Fig. 7",
    paper_value="MRR",
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule="order rule on the mean τ over shares, lowest first (bootstrap intervals over users)",
    needs=("popularity", "popularity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        worded_order(
            _robust_estimates(r, "popularity", metrics),
            "MRR",
            higher_is_better=False,
            best="least robust",
        ),
        note,
    )


#: §7 and §8 call nDCG's robustness to popularity "good" and "moderate", below precision's: the
#: reading tested is the more robust half of the metrics, not the top
NDCG_POPULARITY_HALF = "the more robust half"


def upper_half_rule(estimates: Mapping[str, Estimate], member: str) -> Outcome:
    """ "``member`` is among the more robust half": :func:`rank_rule` over ranks
    1..⌈n/2⌉ (1–4 of seven metrics), with the member's estimate as ours."""
    half = -(-len(estimates) // 2)
    return rank_rule(estimates, [member], 1, half, value=estimates[member])


@LEDGER.claim(
    "valcarce2018.s7.ndcg-popularity-good",
    statement=(
        'nDCG also shows good robustness to the popularity bias ("moderate" in §8), below '
        "precision's: it ranks among the more robust half of the metrics"
    ),
    source="§7, Fig. 7; §8",
    paper_value=NDCG_POPULARITY_HALF,
    paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
    rule=(
        "rank rule on the mean τ over shares (bootstrap intervals over users): nDCG within ranks "
        '1 to ⌈n/2⌉ (1–4 of seven); "good" beside precision, the best, and "moderate" in '
        "§8 read as the upper half, not the top"
    ),
    needs=("popularity", "popularity_boot", "measures", "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    if "nDCG" not in metrics:
        return not_reproduced("nDCG is not among this run's metrics")
    return with_note(upper_half_rule(_robust_estimates(r, "popularity", metrics), "nDCG"), note)


@LEDGER.claim(
    "valcarce2018.fig7c.negative",
    statement="On BeerAdvocate τ drops quickly under the popularity bias, even below 0",
    source="§7, Fig. 7c",
    paper_value="τ < 0",
    paper_dataset="BeerAdvocate",
    rule="not reproduced: no such data",
)
def _(r):
    return not_reproduced(NO_DATA["BeerAdvocate"])


def _no_data(dataset: str, r: Mapping[str, Any]) -> Outcome:
    return not_reproduced(NO_DATA[dataset])


# ---- §7, Fig. 8 and Table 3: discriminative power among metrics --------------------------------
def _table3_value(metric: str) -> tuple[float, Callable[[Mapping[str, Any]], Outcome]]:
    paper = float(PAPER_TABLE3.at["ML-1M", metric])

    def evaluate(r: Mapping[str, Any]) -> Outcome:
        skip = degenerate_outcome(r, metric)
        if skip is not None:
            return skip
        scale = PAPER_PAIRS / r["n_pairs"]
        est = dp_estimate(
            r,
            f"{metric}@{r['deep']}",
            f"DP of {LABELS[metric]}@{r['deep']} rescaled from "
            f"{r['n_pairs']} to {PAPER_PAIRS} pairs",
            scale=scale,
            floor=0.0,
        )
        return value_rule(paper, est, DP_MARGIN)

    return paper, evaluate


for _m in METRICS:
    _paper, _fn = _table3_value(_m)
    LEDGER.claim(
        f"valcarce2018.tab3.ml1m.{_m.lower()}",
        statement=f"DP of {LABELS[_m]}@100 (sum of p-values; ours rescaled to 210 pairs)",
        source="§7, Table 3",
        paper_value=_paper,
        paper_dataset="ML-1M",
        rule=(
            "value rule (equivalence): our bootstrap interval wholly inside the paper's value ± "
            f"{DP_MARGIN.total:g} (rounding {DP_MARGIN.rounding:g} + {DP_MARGIN.substantive:g})"
        ),
        needs=(*DP_NEEDS, "deep", "n_pairs", "degenerate"),
    )(_fn)

for _ds in PAPER_DATASETS[1:]:
    LEDGER.claim(
        f"valcarce2018.tab3.{_ds.lower()}",
        statement=f"DP of the seven metrics at @100 on {_ds}",
        source="§7, Table 3",
        paper_value=", ".join(f"{LABELS[m]} {PAPER_TABLE3.at[_ds, m]:g}" for m in METRICS),
        paper_dataset=_ds,
        rule="not reproduced: no such data",
    )(partial(_no_data, _ds))


def _dp_estimates(r: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, Estimate]:
    d = r["deep"]
    return {LABELS[m]: dp_estimate(r, f"{m}@{d}", floor=0.0) for m in metrics}


@LEDGER.claim(
    "valcarce2018.tab3.ndcg-best",
    statement="nDCG is the most discriminative metric (lowest DP)",
    source="§7, Fig. 8, Table 3; abstract",
    paper_value="nDCG",
    paper_dataset="ML-1M, LibraryThing",
    rule="order rule on DP at @100, lowest first (bootstrap intervals)",
    needs=(*DP_NEEDS, "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        worded_order(
            _dp_estimates(r, metrics), "nDCG", higher_is_better=False, best="most discriminative"
        ),
        note,
    )


@LEDGER.claim(
    "valcarce2018.tab3.ndcg-p-lead",
    statement="nDCG and precision are the two most discriminative metrics",
    source="§7, Table 3",
    paper_value="nDCG, P",
    paper_dataset="ML-1M, LibraryThing",
    rule="group rule on DP at @100, lowest first (bootstrap intervals)",
    needs=(*DP_NEEDS, "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        group_rule(_dp_estimates(r, metrics), ["nDCG", "P"], higher_is_better=False), note
    )


def _above_median(metric: str, r: Mapping[str, Any]) -> Outcome:
    skip = degenerate_outcome(r, metric)
    if skip is not None:
        return skip
    metrics, note = usable(r, r["metrics"])
    d = r["deep"]
    est = dp_estimate(
        r,
        lambda s: s[f"{metric}@{d}"] - float(np.median([s[f"{m}@{d}"] for m in metrics])),
        f"DP of {LABELS[metric]} minus the median DP of the metrics",
    )
    return with_note(sign_rule(est, "positive", label="the gap"), note)


@LEDGER.claim(
    "valcarce2018.tab3.bpref-poor",
    statement="bpref discriminates poorly: its DP lies above the median of the seven metrics",
    source="§7, Table 3; §8",
    paper_value=(
        f"{PAPER_TABLE3.at['ML-1M', 'bpref']:g} > median {PAPER_TABLE3.loc['ML-1M'].median():g}"
    ),
    paper_dataset="ML-1M (also LibraryThing, BeerAdvocate)",
    rule="sign rule on DP(bpref) minus the median DP (bootstrap over users)",
    needs=(*DP_NEEDS, "metrics", "deep", "degenerate"),
)
def _(r):
    return _above_median("bpref", r)


@LEDGER.claim(
    "valcarce2018.tab3.infap-poor",
    statement="infAP discriminates poorly: its DP lies above the median of the seven metrics",
    source="§7, Table 3; §8",
    paper_value=(
        f"{PAPER_TABLE3.at['ML-1M', 'infAP']:g} > median {PAPER_TABLE3.loc['ML-1M'].median():g}"
    ),
    paper_dataset="ML-1M (also LibraryThing)",
    rule="sign rule on DP(infAP) minus the median DP (bootstrap over users)",
    needs=(*DP_NEEDS, "metrics", "deep", "degenerate"),
)
def _(r):
    return _above_median("infAP", r)


@LEDGER.claim(
    "valcarce2018.tab3.mrr-worst",
    statement="MRR is the least discriminative metric (highest DP)",
    source="§7, Table 3; §8",
    paper_value="MRR",
    paper_dataset="ML-1M",
    rule="order rule on DP at @100, highest first (bootstrap intervals)",
    needs=(*DP_NEEDS, "metrics", "deep", "degenerate"),
)
def _(r):
    metrics, note = usable(r, r["metrics"])
    return with_note(
        worded_order(
            _dp_estimates(r, metrics), "MRR", higher_is_better=True, best="least discriminative"
        ),
        note,
    )
