"""The sentences of the chapter "Your own experiment", built from a :class:`Comparison`.

Each function takes the chapter's results and returns Markdown (or a plain line): the users
and relevance of step 1, the reference lines of step 2, the tests of step 3, the closest pair
of step 4, the sample sizes of step 5, the sampled candidates of step 6 and the filled-in
checklist. The levels they use (α, power, the correction) are read from the report's settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .experiment import Settings, closest_pair, interval_width_gap, order_agreement
from .report import Comparison

__all__ = [
    "checklist",
    "closest_pair_text",
    "coverage",
    "left_out",
    "pipeline_scorers",
    "power",
    "references",
    "sampled_levels",
    "sampled_orders",
    "significance",
    "unmodelled_pipelines",
    "unmodelled_tests",
]

_CORRECTED_BY = {
    "holm": "after Holm's correction",
    "bh": "after Benjamini–Hochberg's correction",
    "none": "without correction",
}


def unmodelled_pipelines(pipelines: Mapping[str, Any]) -> str:
    """The cost plan's line for the reader's own pipelines, which no benchmark measured."""
    return f"training your pipelines ({', '.join(pipelines)})"


def unmodelled_tests(settings: Settings) -> str:
    """The cost plan's line for the tests the benchmark did not time."""
    return (
        f"the randomised Tukey HSD test ({settings.n_tukey:,} permutations) and the bootstrap "
        f"intervals ({settings.n_bootstrap:,} resamples)"
    )


def left_out(systems: Sequence[str]) -> str:
    """The roster systems left out on implicit feedback ('' when none is)."""
    return f"Left out, they learn from rating values: {', '.join(systems)}" if systems else ""


def pipeline_scorers(pipes: Mapping[str, Any]) -> str:
    """Each trained pipeline's name with the class of its scorer."""
    return ", ".join(f"{name}: {type(p.component('scorer')).__name__}" for name, p in pipes.items())


def coverage(report: Comparison, test: pd.DataFrame, threshold: float | None) -> str:
    """Step 1: what is relevant, who is evaluated, and who is scored zero for a missing list."""
    n_test = test["user"].nunique()
    n_eval = len(report.users)
    relevance = (
        "every test interaction is relevant (implicit feedback)"
        if threshold is None
        else f"a test rating of at least {threshold:g} is relevant"
    )
    missing = report.coverage[report.coverage["empty_lists"] > 0]
    left = f"; the other {n_test - n_eval:,} are left out. " if n_test > n_eval else ". "
    if missing.empty:
        penalty = "No system leaves an evaluated user without a list, so the coverage penalty "
        penalty += "costs nothing here."
    else:
        listing = ", ".join(
            f"{s} {int(e):,}"
            for s, e in zip(missing["system"], missing["empty_lists"], strict=True)
        )
        penalty = f"Users without a list, scored zero: {listing}."
    return (
        f"Here {relevance}. {n_eval:,} of the {n_test:,} test users have a relevant test item "
        f"and enter every average{left}{penalty}"
    )


def references(report: Comparison, metrics: Sequence[str]) -> str:
    """Step 2: per metric, the reference lines and the systems above, below or level with
    the popularity ranking."""
    lines = []
    for m in metrics:
        s = report.summary[report.summary["metric"] == m].set_index("system")
        rnd, pop = report.reference(m, "random"), report.reference(m, "popularity")
        above = list(s.index[s["boot_low"] > pop])
        below = list(s.index[s["boot_high"] < pop])
        level = list(s.index[(s["boot_low"] <= pop) & (s["boot_high"] >= pop)])
        parts = [f"**{m}**: random {rnd:.4f}, popularity {pop:.3f};"]
        parts.append(f"interval above popularity: {', '.join(above) or 'none'};")
        if below:
            parts.append(f"below it: {', '.join(below)};")
        if level:
            parts.append(f"interval includes it: {', '.join(level)};")
        best = s["mean"].idxmax()
        parts.append(
            f"the best system, {best}, reaches {s.at[best, 'mean'] / rnd:,.0f} times the "
            "random expectation."
        )
        lines.append("- " + " ".join(parts))
    return "\n".join(lines)


def significance(report: Comparison, metrics: Sequence[str]) -> str:
    """Step 3: per metric, the pairs each test and correction calls significant."""
    alpha = report.settings["alpha"]
    lines = []
    for m in metrics:
        p = report.pairs[report.pairs["metric"] == m]
        raw = int((p["p_permutation"] <= alpha).sum())
        gap = (p["p_t"] - p["p_permutation"]).abs().max()
        lines.append(
            f"- **{m}**: of {len(p)} pairs, {raw} have a permutation p-value at most {alpha:g}; "
            f"{int((p['p_holm'] <= alpha).sum())} remain after Holm's correction, "
            f"{int((p['p_bh'] <= alpha).sum())} after Benjamini–Hochberg's, and the Tukey HSD "
            f"test finds {int((p['p_tukey'] <= alpha).sum())}. The t-test's p-values differ "
            f"from the permutation test's by at most {gap:.2g}."
        )
    return "\n".join(lines)


def closest_pair_text(report: Comparison, metric: str) -> str:
    """Step 4: the closest pair on ``metric``, its effect sizes and what the test concludes."""
    alpha = report.settings["alpha"]
    close = closest_pair(report, metric)
    a, b = close["a"], close["b"]
    if close["significant"]:
        verdict = f"the difference is significant: {a} beats {b}"
        if close["p_tukey"] > alpha:
            verdict += (
                ", although the Tukey HSD test, which guards all pairs at once, does not "
                f"confirm it (p = {close['p_tukey']:.2g})"
            )
    else:
        verdict = (
            "the test cannot tell the two apart, and the interval shows how large a difference "
            "the data still allow in either direction: the comparison is inconclusive"
        )
    return (
        f"The closest pair on {metric} is {a} against {b}: {a} is ahead by "
        f"{close['mean_diff']:.4f} (bootstrap interval {close['boot_low']:.4f} to "
        f"{close['boot_high']:.4f}), $d_z$ = {close['smd']:.3f} (interval "
        f"{close['smd_low']:.3f} to {close['smd_high']:.3f}); {verdict}. Over all pairs, the "
        f"bootstrap and t intervals differ in width by at most "
        f"{interval_width_gap(report, metric):.0%}."
    )


def power(report: Comparison, metrics: Sequence[str]) -> str:
    """Step 5: per metric, the detectable difference and the users a wanted one needs; then
    the users the closest pair of step 4 (on the first metric) would need."""
    alpha, wanted = report.settings["alpha"], report.settings["power"]
    pw = report.power.set_index("metric")
    lines = []
    for m in metrics:
        r = pw.loc[m]
        text = (
            f"- **{m}**: with {int(r['users']):,} users a paired test at level {alpha:g} "
            f"detects, with probability {wanted:g}, a difference of {r['detectable']:.4f} or more"
        )
        if np.isfinite(r["difference"]):
            times = (
                f"{r['users_needed'] / r['users']:.1f} times as many as there are"
                if r["users_needed"] > r["users"]
                else "no more than there are"
            )
            text += (
                f"; a difference of {r['difference']:g} needs {int(r['users_needed']):,} "
                f"users, {times}"
            )
        lines.append(text + ".")
    close = closest_pair(report, metrics[0])
    need = close["users_needed"]
    lines.append(
        f"- The closest pair of step 4 ({close['a']} and {close['b']}) would need "
        + (
            f"{int(need):,} users for its observed difference to be detected with that power."
            if np.isfinite(need)
            else "infinitely many users: its observed difference is zero."
        )
    )
    return "\n".join(lines)


def sampled_orders(
    side: pd.DataFrame, notes: Sequence[str], metrics: Sequence[str], estimator: str
) -> str:
    """Step 6: the report's note on sampling, then per metric how many pairs the sampled and
    corrected means order as the exact ones, and the range of each."""
    lines = [n for n in notes if n.startswith("Sampled candidates")]
    agree = order_agreement(side)
    for m in metrics:
        f = side[side["metric"] == m]
        a = agree.loc[m]
        lines.append(
            f"- **{m}**: the sampled metric orders {a['sampled']} of the {a['pairs']} pairs of "
            f"systems as the exact metric does, the {estimator} correction {a['corrected']}; "
            f"the exact means run from {f['exact'].min():.3f} to {f['exact'].max():.3f}, the "
            f"sampled ones from {f['sampled'].min():.3f} to {f['sampled'].max():.3f}."
        )
    return "\n\n".join(lines[:1]) + "\n\n" + "\n".join(lines[1:])


def sampled_levels(side: pd.DataFrame, metrics: Sequence[str]) -> str:
    """Step 6: per metric, the range over systems of the sampled and corrected means as
    multiples of the exact ones."""
    ratios = side.assign(
        sampled_ratio=side["sampled"] / side["exact"],
        corrected_ratio=side["corrected"] / side["exact"],
    )
    g = ratios.groupby("metric")[["sampled_ratio", "corrected_ratio"]].agg(["min", "max"])
    return "\n".join(
        f"- **{m}**: over the systems, the sampled mean is "
        f"{g.at[m, ('sampled_ratio', 'min')]:.2g} to {g.at[m, ('sampled_ratio', 'max')]:.2g} "
        f"times the exact one, the corrected mean {g.at[m, ('corrected_ratio', 'min')]:.2g} to "
        f"{g.at[m, ('corrected_ratio', 'max')]:.2g} times."
        for m in metrics
    )


def checklist(report: Comparison, side: pd.DataFrame, *, dataset: str, sampled_m: int) -> str:
    """The six steps filled in with this comparison's numbers (on its first metric)."""
    m0 = report.metrics[0]
    s0 = report.summary[report.summary["metric"] == m0].set_index("system")
    p0 = report.pairs[report.pairs["metric"] == m0]
    rnd0, pop0 = report.reference(m0, "random"), report.reference(m0, "popularity")
    n_sig = int(p0["significant"].sum())
    corrected_by = _CORRECTED_BY[report.settings["correction"]]
    detectable = report.power.set_index("metric").at[m0, "detectable"]
    agree = order_agreement(side)
    orders = ", ".join(
        f"{m} orders {row['sampled']} of {row['pairs']} pairs as the exact metric"
        for m, row in agree.iterrows()
    )
    users = len(report.users)
    return "\n".join(
        [
            f"On {dataset}, with {len(report.systems)} systems and {users:,} evaluated users:",
            "",
            f"1. **Users and relevance**: {users:,} users enter the averages; "
            f"{int(report.coverage['empty_lists'].sum()):,} (system, user) lists are missing "
            "and scored 0.",
            f"2. **Reference lines** ({m0}): {int((s0['mean'] > pop0).sum())} of "
            f"{len(s0)} systems score above the popularity ranking; the random expectation is "
            f"{rnd0:.4f}.",
            f"3. **Significance** ({m0}): {n_sig} of {len(p0)} pairs differ significantly "
            f"{corrected_by}.",
            f"4. **Effect sizes** ({m0}): the standardised differences run from "
            f"{p0['smd'].abs().min():.2f} to {p0['smd'].abs().max():.2f} in absolute value.",
            f"5. **Sample size** ({m0}): the {users:,} users detect differences of "
            f"{detectable:.4f} and more.",
            f"6. **Sampling**: with {sampled_m} sampled negatives, {orders}.",
        ]
    )
