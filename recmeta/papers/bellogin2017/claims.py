"""The ledger of the statistical-biases chapter (Bellogín, Castells & Cantador 2017): the paper's
claims on the sparsity bias (§3–§4: eqs. 1–5, Figs. 2–4), with the printed value, how ours is
computed from the results of :class:`~recmeta.papers.bellogin2017.study.Study`, and the rule.
The claims on eqs. 3–5 and Fig. 4 (§4) follow in
:mod:`~recmeta.papers.bellogin2017.claims_sparsity`, those on the popularity bias (§5–§7) in
:mod:`~recmeta.papers.bellogin2017.claims_popularity`.

The paper's values are the numbers printed in its text (its figures are bar charts whose values
cannot be read reliably, so none is taken from them).

Every claim declares its setting: ``paper_dataset=DERIVED`` for what the book verifies as
mathematics (eq. 1's bound, eq. 2, eq. 5, the proof's step), ``ML1M`` for what the paper measured
on MovieLens 1M (a replication on ML-1M, a transfer elsewhere, where its magnitudes are shown and
not graded), and ``data_free`` with the reason where the quantity graded is one the paper's
argument fixes on any data (the relative error of a formula against the measurement it predicts).
Value claims are equivalence tests with a declared :class:`~recmeta.ledger.Margin`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    DERIVED,
    Estimate,
    Ledger,
    Margin,
    Outcome,
    Verdict,
    every,
    format_estimate,
    format_number,
    not_reproduced,
    order_rule,
    sign_rule,
    value_rule,
)
from ...metaeval.bootstrap import sign_pvalues
from .. import register
from .evidence import (
    append_reason,
    boot_replicates,
    design_rows,
    exact_bound,
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

__all__ = ["LEDGER", "most", "outcome"]

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
    paper_dataset=DERIVED,
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
    paper_value=0.0,
    paper_dataset=ML1M,
    rule="value rule (equivalence) on ρ(TI-AN)/ρ(AI-AN) − 1, the relative change of random AR "
    "precision (exact per split, t interval over splits), against 0 with a margin of 0.05",
    needs=("settings", "dataset", "coverage"),
)
def _ai_ti(r):
    c = r["coverage"]
    gap = c["rho TI-AN"] / c["rho AI-AN"] - 1
    margin = Margin(0.0, 0.05, "'almost the same': a change of random precision under 5 %")
    out = value_rule(0.0, over_splits(gap), margin, label="ρ(TI)/ρ(AI) − 1")
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
    rule="value rule (equivalence) on popularity's AR TI-AN P@n (bootstrap over users), margin "
    "0.005 (the printed digit) + 0.01; a magnitude of ML-1M, shown and not graded elsewhere (the "
    "paper itself finds 0.08 on MovieLens and 0.35 on Last.fm)",
    needs=("dataset", "settings", "fig2"),
)
def _pop_ar(r):
    est = protocol_estimate(design_rows(r["fig2"], "AR TI-AN"), "popularity", settings_of(r))
    margin = Margin.printed(
        PAPER["popularity_ar"], 0.01, "a quarter of the 0.04 grid of Fig. 2, read to one digit"
    )
    return value_rule(PAPER["popularity_ar"], est, margin, label="popularity")


@LEDGER.claim(
    "bellogin2017.fig2.popularity-beats-random",
    statement="popularity, a non-personalised system, "
    "fares far better than random in every design of Fig. 2",
    source="§3.3, Fig. 2",
    paper_value="popularity ≫ random",
    paper_dataset=ML1M,
    rule="every: sign rule on popularity − random P@n (paired bootstrap over users) in each "
    "design that ran, one-sided bootstrap p-values under Holm's correction (α = 0.05)",
    needs=("dataset", "settings", "fig2"),
)
def _pop_random(r):
    parts, ests, p_pos, p_neg = {}, {}, {}, {}
    for d in [d for d in FIG2_DESIGNS if d in set(pd.unique(r["fig2"]["design"]))]:
        t = user_table({d: (design_rows(r["fig2"], d), ["popularity", "random"])})
        ests[d], reps = boot_replicates(r, t, mean_difference(d, "popularity", "random"))
        parts[d] = sign_rule(ests[d], "positive", label=f"popularity − random under {d}")
        p_pos[d], p_neg[d] = sign_pvalues(reps, point=ests[d].value)
    if not parts:
        raise ValueError(f"the fig2 results hold none of the designs {', '.join(FIG2_DESIGNS)}")
    # shown: the design with the smallest lower bound (an open lower end is the smallest)
    low = min(ests, key=lambda d: ests[d].reach[0])
    return replace(every(parts, p_pos, p_neg), ours=ests[low])


@LEDGER.claim(
    "bellogin2017.fig2.plsa-best",
    statement="pLSA performs best in most designs of Fig. 2",
    source="§3.3, Fig. 2",
    paper_value="pLSA",
    paper_dataset=ML1M,
    rule="order rule (bootstrap intervals over users) in each design of Fig. 2 that ran, on the "
    "splits every system ran on; 'most': agrees when more than half of the designs agree, "
    "differs when more than half differ, else inconclusive",
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
    return most(outs)


def most(outs: Mapping[str, Outcome]) -> Outcome:
    """ "In most cases": agrees when more than half of the cases agree, differs when more than
    half differ, else inconclusive."""
    if not outs:
        raise ValueError("most needs at least one case")
    verdicts = [o.verdict for o in outs.values()]
    half = len(verdicts) / 2
    verdict = (
        Verdict.AGREES
        if verdicts.count(Verdict.AGREES) > half
        else Verdict.DIFFERS
        if verdicts.count(Verdict.DIFFERS) > half
        else Verdict.INCONCLUSIVE
    )
    rules = {o.rule for o in outs.values()}
    return Outcome(
        verdict,
        next(iter(outs.values())).ours,
        f"most of {len(verdicts)} cases: "
        + "; ".join(f"{d}: {o.verdict}" for d, o in outs.items()),
        "; ".join(f"{d}: {o.detail}" for d, o in outs.items()),
        rule=f"most {rules.pop()}" if len(rules) == 1 else "most",
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
        rule="p-value",
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
    paper_dataset=DERIVED,
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
    statement="the proof's second step, in the direction the bound needs: "
    "τ(i, T_u) ≤ τ(i, T_u^r) + |PR_test(u)| − 1 for every 1R set (the paper prints it reversed)",
    source="§3.4, proof of eq. 2",
    paper_value="τ(i, T_u) ≤ τ(i, T_u^r) + |PR_test(u)| − 1",
    paper_dataset=DERIVED,
    rule="exact: the share of 1R sets (shared sample, every system, one split) where the step "
    "fails must be 0; the share where the printed reversed step holds is reported",
    needs=("settings", "dataset", "proof_step"),
)
def _proof(r):
    p = r["proof_step"]
    w = p["sets"] / p["sets"].sum()
    printed = float((p["printed: own >= union + |PR|-1"] * w).sum())
    failing = round(1.0 - float((p["union <= own + |PR|-1"] * w).sum()), 12) + 0.0
    out = exact_bound(failing, 0.0, f"the share of {int(p['sets'].sum())} sets where it fails")
    return append_reason(
        out,
        f"the step as printed, τ(i, T_u^r) ≥ τ(i, T_u) + |PR_test(u)| − 1, holds in a share "
        f"{format_number(printed)} of them",
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
