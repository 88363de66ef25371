"""The sentences the statistical-biases chapter prints from computed values, as Markdown.

Every function takes a :class:`~recmeta.papers.bellogin2017.study.Study` whose experiments
have run (or the evaluated ledgers) and returns the text; claims are cited through the one
renderer, :func:`recmeta.ledger.sentence`, so a re-run on other data cannot leave a number or a
direction behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...data.popularity import item_counts
from ...ledger import Kind, Verdict, format_number, format_order, sentence, tally_by_kind
from ...protocols import relevance_density
from .claims import LEDGER
from .evidence import order_in
from .settings import FIG2_DESIGNS, PAPER
from .study import Study
from .tables import ai_ti_table, fig8_table
from .trials import summarise

__all__ = [
    "CLAIMS",
    "ai_ti_text",
    "cite",
    "claims",
    "covariance_text",
    "direction",
    "eq3_text",
    "fig2_orders",
    "fig2_text",
    "fig4_text",
    "fig5_text",
    "fig8_text",
    "fig9_text",
    "fit_line",
    "formula_text",
    "p1r_text",
    "popularity_gap_text",
    "positive_shares_text",
    "proof_step_text",
    "summary",
    "target_sets_text",
    "verdicts_text",
]

_B = "bellogin2017."

#: the claims each part of the chapter cites, in the order it cites them
CLAIMS: dict[str, tuple[str, ...]] = {
    "fig2": (
        "fig2.popularity-ar",
        "fig2.popularity-beats-random",
        "fig2.plsa-best",
        "fig2.ai-ti",
        "fig2.wilcoxon",
        "sec3.3.mf-knn",
    ),
    "tab3": ("tab3.definitions", "fig1.toy"),
    "lemma": ("eq2.bounds", "fig3.band-sparsity", "fig3.band-size"),
    "formulas": ("eq4.monte-carlo", "eq4.exact", "eq5.random-1r"),
    "fig4": ("fig4.ar-linear", "fig4.1r-flat", "fig4.1r-size", "fig4.order"),
    "sec4.2": ("sec4.2.recall", "sec4.2.ndcg"),
    "sec5.1": ("sec5.1.popularity-best",),
    "fig5": (
        "fig5.random-alpha0",
        "fig5.popularity-alpha0",
        "fig5.below-random",
        "fig5.rises",
        "fig5.cf-near-random",
        "fig5.plsa-tracks",
        "fig5.alpha",
    ),
    "sec5.3": ("sec5.3.fewer-single-than-trec", "sec5.3.top-above-trec"),
    "fig7": ("fig7.ratio-grows",),
    "fig6": ("fig6.percentiles", "fig6.uniform-split"),
    "sec6.2": ("sec6.2.uniform-size",),
    "fig8": (
        "fig8.u1r",
        "fig8.p1r",
        "fig8.head",
        "fig8.uar",
        "fig8.ai-uar",
        "fig8.uar-knn",
        "fig8.plsa-best",
        "fig8.p1r-random",
        "fig8.u1r-random",
        "fig8.more-effective-1r",
        "fig8.ndcg-patterns",
    ),
    "sec6.3": ("sec6.3.map-mrr", "sec6.3.grades"),
    "fig9": (
        "fig9.bpref",
        "fig9.infap",
        "fig9.srecall",
        "fig9.bpref-1r",
        "fig9.bpref-drags-plsa",
        "fig9.infap-drags-plsa",
    ),
}


def _row(study: Study, claim: str) -> dict[str, Any]:
    return LEDGER.row(_B + claim, study.results, dataset=study.dataset, profile=study.s.profile)


def _verdict(study: Study, claim: str) -> Verdict:
    """The rule's own verdict on the chapter's data, before the kind's reading (a magnitude on
    other data is still held against the paper's margin here, to choose the words)."""
    return LEDGER[_B + claim].outcome(study.results).verdict


def _graded_here(study: Study, claim: str) -> bool:
    """Whether the claim's magnitude is graded on the chapter's data (replication, data-free)."""
    c = LEDGER[_B + claim]
    return c.kind(study.dataset) is not Kind.TRANSFER or bool(c.data_free)


def _splits(k: int) -> str:
    return f"{k} split" + ("s" if k != 1 else "")


def cite(study: Study, claim: str) -> str:
    """One claim (``"fig2.wilcoxon"`` or its full id) as a sentence: statement, the paper's value,
    ours with its method, verdict and reason (:func:`recmeta.ledger.sentence`)."""
    return sentence(_row(study, claim.removeprefix(_B)))


def claims(study: Study, part: str) -> str:
    """The claims of one part of the chapter (a key of :data:`CLAIMS`) as a Markdown list."""
    if part not in CLAIMS:
        raise KeyError(f"no part {part!r}; parts: {', '.join(CLAIMS)}")
    return "\n".join(f"* {cite(study, c)}" for c in CLAIMS[part])


def direction(
    value: float, up: str = "rises", down: str = "falls", flat: str = "stays level"
) -> str:
    """A word for the sign of ``value``."""
    return up if value > 0 else down if value < 0 else flat


def summary(study: Study) -> str:
    """The dataset and the profile's sizes, in one line."""
    r, s = study.ratings, study.s
    return (
        f"{study.dataset}: {r['user'].nunique():,} users, {r['item'].nunique():,} items, "
        f"{len(r):,} ratings, {(r['rating'] >= s.threshold).mean():.1%} of them relevant; "
        f"profile {s.profile}, {len(s.seeds)} splits per configuration, roster systems: "
        f"{', '.join(s.roster) or 'none'}"
    )


def target_sets_text(study: Study) -> str:
    """How much Table 3's designs move popularity's precision and ρ, and why AI ≠ TI here."""
    table3, coverage, n = study.results["table3"], study.results["coverage"], study.s.n
    pcol = table3[f"popularity P@{n}"]
    no_test = coverage["no test rating"].mean()
    size_ratio = table3.loc["TI-AN AR", "mean |T|"] / table3.loc["AI-AN AR", "mean |T|"]
    coincide = (
        f"AI and TI give the same sets here: every item of {study.dataset} has a test rating in "
        "every split."
        if no_test == 0
        else f"AI and TI differ here to the extent that items lack test ratings: on average "
        f"{no_test:.1%} of the items of {study.dataset} have no test rating in a split, so TI "
        f"leaves them out, and a TI-AN set holds {size_ratio:.0%} of the items of the AI-AN set "
        "of the same user."
    )
    return (
        f"The same system on the same split scores from {pcol.min():.4f} ({pcol.idxmin()}) to "
        f"{pcol.max():.4f} ({pcol.idxmax()}), depending only on how the target sets were built, "
        f"and the random baseline $\\rho$ moves with the size of the sets, from "
        f"{table3['rho'].min():.4f} to {table3['rho'].max():.4f}. {coincide} The paper's remark "
        "that AI and TI nearly coincide rests on nearly every item having a test rating, which "
        "it reports for MovieLens 1M."
    )


def fig2_orders(study: Study) -> dict[str, str]:
    """Per design of Fig. 2 that ran, the systems in order of P@n as groups the bootstrap
    intervals over users separate (:func:`recmeta.ledger.format_order`), on the splits every
    system ran on."""
    f = study.results["fig2"]
    out = {}
    for d in (d for d in FIG2_DESIGNS if d in set(pd.unique(f["design"]))):
        g = f.loc[f["design"] == d]
        systems = [s for s in study.order if s in set(pd.unique(g["system"]))]
        out[d] = format_order(order_in(study.results, g, systems))
    return out


def ai_ti_text(study: Study) -> str:
    """AI-AN against TI-AN, read from :func:`~.tables.ai_ti_table` (the splits it names)."""
    table = ai_ti_table(study)
    if table.empty:
        return ""
    k = int(table["splits"].min())
    moved = table.index[table["change"].abs() > 0.05]
    return (
        f"On the {_splits(k)} both AR designs ran on (the table below; the Fig. 2 table "
        "averages each design over its own splits), P@n changes from AI-AN to TI-AN by "
        + ", ".join(f"{v:+.1%} for {s}" for s, v in table["change"].items())
        + "; "
        + (
            f"the system(s) moving by more than five per cent: {', '.join(moved)} — the items "
            "TI removes are never relevant, and these systems place some of them in their top n."
            if len(moved)
            else "no system moves by more than five per cent."
        )
    )


def fig2_text(study: Study) -> str:
    """The order of the systems per design of Fig. 2 and popularity over random."""
    fig2_split = summarise(study.results["fig2"], by=["design"])
    means = fig2_split.groupby(["design", "system"])["P"].mean().unstack("system")
    lift2 = means["popularity"] / means["random"]
    orders = fig2_orders(study)
    text = (
        "By P@n, with the bootstrap intervals over users (≈ joins the systems they do not "
        "separate): "
        + "; ".join(f"{o} under {d}" for d, o in orders.items())
        + ". Popularity, which knows nothing about the user, scores "
        + ", ".join(f"{lift2[d]:.1f} times random under {d}" for d in orders)
        + " (the table's means). "
    )
    text += (
        f"1R values cannot exceed $1/n = {1 / study.s.n:g}$, while AR values depend on how "
        "many relevant items the users have. The paper's claims on this figure:\n\n"
    )
    return text + claims(study, "fig2")


def popularity_gap_text(study: Study) -> str:
    """Popularity's AR precision beside the paper's, and the two quantities that set it."""
    row = _row(study, "fig2.popularity-ar")
    verdict = _verdict(study, "fig2.popularity-ar")
    side = "lower" if row["ours"] < PAPER["popularity_ar"] else "higher"
    d, n = study.dataset, study.s.n
    paper = f"the paper's MovieLens 1M value {PAPER['popularity_ar']:g} ± {row['margin']:.3g}"
    opening = {
        Verdict.AGREES: f"Popularity's AR precision on {d} lies inside {paper}.",
        Verdict.DIFFERS: f"Popularity's AR precision on {d} is {side} than {paper} allows.",
    }.get(
        verdict,
        f"Popularity's AR precision on {d} reaches across the edge of {paper}: neither inside "
        "nor outside.",
    )
    fig2_split = summarise(study.results["fig2"], by=["design"])
    ar_sets_t = fig2_split.loc[fig2_split["design"] == "AR TI-AN", "t"].mean()
    n_users = study.ratings["user"].nunique()
    delta = relevance_density(int(study.positive.sum()), n_users, ar_sets_t)
    top = study.positive.sort_values(ascending=False).iloc[: study.s.n] / n_users
    return (
        f"{opening} The paper itself finds {PAPER['popularity_ar']:g} on MovieLens and "
        f"{PAPER['popularity_ar_lastfm']:g} on Last.fm: a magnitude of one dataset, which the "
        + (
            "ledger grades here, on the paper's data."
            if _graded_here(study, "fig2.popularity-ar")
            else "ledger shows beside ours and does not grade."
        )
        + f" On {d} the density of relevance in the "
        f"AR TI-AN target sets is $\\delta$ = {delta:.4f}, and the {n} most liked items are "
        f"liked by {top.mean():.1%} of the users on average — the two quantities that set a "
        f"popularity list's precision (eqs. 3–4 below). The paper prints neither for MovieLens "
        f"1M (only that its single most liked item is liked by {PAPER['top_liked']:.1%} of the "
        f"users), so a comparison of the two datasets cannot go further here."
    )


def proof_step_text(study: Study) -> str:
    """The proof-step claim and the share of sets where the printed step holds trivially."""
    proof = study.results["proof_step"]
    return (
        "* "
        + cite(study, "eq2.proof-step")
        + f" The printed inequality holds exactly for the users with a single relevant test "
        f"item (a share {proof['one relevant item'].mean():.4f} of the sets), whose two sets "
        f"coincide."
    )


def covariance_text(study: Study) -> str:
    """How far the exact ρ lies from eq. 4 on the chapter's data, and the covariance's share."""
    c = study.results["ar_checks"]
    c = c.loc[np.isclose(c["sigma"], study.s.sigma)]
    gap = float((c["rho"] / c["eq4"] - 1).mean())
    cov = float((c["cov"] / c["eq4"]).mean())
    where = direction(gap, "exceeds", "falls below", "equals")
    return (
        f"On {study.dataset} (σ = {study.s.sigma:g}, {_splits(len(c))}) the exact $\\rho$ "
        f"{where} eq. 4 by {abs(gap):.1%} of eq. 4 on average; the covariance part alone "
        f"{direction(cov, 'adds', 'takes away', 'adds nothing')}"
        + (f" {abs(cov):.1%}" if cov else "")
        + "."
    )


def formula_text(study: Study) -> str:
    """The claims on eqs. 4–5, and a note when the Monte-Carlo and exact checks of eq. 4 part:
    the widths that make them part, computed."""
    mc, exact = (_row(study, c) for c in ("eq4.monte-carlo", "eq4.exact"))
    note = ""
    if mc["verdict"] != exact["verdict"]:
        half = {r["claim"]: (r["high"] - r["low"]) / 2 for r in (mc, exact)}
        wide = half[mc["claim"]] > half[exact["claim"]]
        note = (
            f"\n\nOn the same splits the Monte-Carlo check of eq. 4 *{mc['verdict']}* while the "
            f"exact $\\rho$ *{exact['verdict']}*: the Monte-Carlo interval reaches "
            f"± {format_number(half[mc['claim']])} of eq. 4 around its mean, the exact one "
            f"± {format_number(half[exact['claim']])}, so "
            + (
                "the spread of a random system's precision over a few splits, not eq. 4's own "
                "error, decides the first."
                if wide
                else "the two part by their means, not by the width of their intervals."
            )
        )
    return claims(study, "formulas") + note


def fig4_text(study: Study) -> str:
    """Fig. 4's claims, and how removing test ratings changes 1R TI-NN's candidates."""
    cand = (
        summarise(study.results["lemma_removal"])
        .groupby("removed")[["candidates", "nonrelevant popularity"]]
        .mean()
    )
    lo, hi = cand.index.min(), cand.index.max()
    pop_lo, pop_hi = cand.loc[lo, "nonrelevant popularity"], cand.loc[hi, "nonrelevant popularity"]
    return (
        claims(study, "fig4")
        + f"\n\nUnder 1R TI-NN the candidates are the items with a test rating: removing a share "
        f"{hi:g} of the test ratings takes them from {cand.loc[lo, 'candidates']:,.0f} to "
        f"{cand.loc[hi, 'candidates']:,.0f} items, and the mean number of ratings of the sampled "
        f"non-relevant items {direction(pop_hi - pop_lo, 'rises', 'falls')} from {pop_lo:.0f} "
        f"to {pop_hi:.0f}: the non-relevant items a popularity list must beat change with the "
        "test data, while the random baseline $1/t$ does not."
    )


def eq3_text(study: Study) -> str:
    """Eq. 3 against its conditional form and the exact expectation of a fixed ranking."""
    ratings, s = study.ratings, study.s
    ar_checks = study.results["ar_checks"]
    eq3 = ar_checks.dropna(subset=["popularity"])
    top_item_share = item_counts(ratings).iloc[0] / ratings["user"].nunique()
    shown = 1 - (1 - s.sigma) * top_item_share
    t_over_c = (1 / ar_checks["inv_t"] / ar_checks["candidates"]).mean()
    m = eq3[["popularity", "eq3", "conditional", "exact"]].mean()
    se = eq3["popularity"].std(ddof=1) / np.sqrt(len(eq3)) if len(eq3) > 1 else np.nan
    closes = abs(m["exact"] - m["popularity"]) <= 3 * se
    return (
        f"The most rated item of {study.dataset} is rated by {top_item_share:.0%} of the users, "
        f"so it is in the target sets of a share {shown:.2f} of them, where eq. 3 assumes "
        f"{t_over_c:.2f} for every item. Conditioning item by item takes the prediction from "
        f"{m['eq3']:.4f} to {m['conditional']:.4f}, and the exact per-user expectation to "
        f"{m['exact']:.4f}, against {m['popularity']:.4f} measured"
        + (
            " (within three standard errors over the splits): the gap of eq. 3 comes from the "
            "conditioning on $i \\notin R_\\text{train}(u)$, not from the items the lists skip."
            if closes
            else " (more than three standard errors over the splits away): the conditioning "
            "explains part of the gap of eq. 3, and the rest — the ranking learnt from training "
            "counts "
            "instead of the fixed one, or the TI candidates — stays open here."
        )
        + f"\n\n* {cite(study, 'eq3.popularity')}"
    )


def fit_line(study: Study) -> str:
    """The shifted power law fitted to the dataset's popularity (Fig. 5)."""
    fit = study.results["fit"]
    return (
        f"fit on {study.dataset}: c1 = {fit.c1:.3g}, c2 = {fit.c2:.1f}, "
        f"beta = {fit.beta:.3g}, alpha = {fit.alpha:.2f}"
    )


def fig5_text(study: Study) -> str:
    """Fig. 5's claims, and how the MF system fares at the steepest simulated skew."""
    sim_split = summarise(study.results["simulation"], by=["alpha"])
    mf_note = ""
    top_alpha = sim_split["alpha"].max()
    at_top = sim_split[sim_split["alpha"] == top_alpha].groupby("system")["P"].mean()
    if "MF" in at_top.index:
        mf_note = (
            f" At α = {top_alpha:g} our MF scores {at_top['MF'] / at_top['random']:.1f} "
            f"times random and {at_top['MF'] / at_top['popularity']:.2f} times "
            "popularity. It is implicit-feedback ALS, which learns from *which* items "
            "were rated — on these data, popularity and nothing else."
        )
    below = _verdict(study, "fig5.below-random")
    dip = (
        "Our popularity falls below random at α = 0, as the paper's does. "
        if below is Verdict.AGREES
        else "Our popularity rises above random at α = 0, against the paper's dip. "
        if below is Verdict.DIFFERS
        else "Our intervals do not separate popularity from random at α = 0. "
        if below is Verdict.INCONCLUSIVE
        else ""
    )
    return (
        claims(study, "fig5")
        + f"\n\n{dip}The paper's explanation of its dip: with uniform popularity, the items "
        "with the most training ratings are those with the fewest test ratings. The simulated "
        f"data copy the sizes and the popularity fit of {study.dataset}, as the paper's copy "
        "MovieLens 1M: "
        + (
            "here they are the paper's setting, and its magnitudes at α = 0 are graded."
            if _graded_here(study, "fig5.popularity-alpha0")
            else "Fig. 5's claims are a transfer here (a replication on ML-1M), and the "
            "magnitudes at α = 0 are shown beside the paper's, not graded."
        )
        + mf_note
    )


def positive_shares_text(study: Study, second: Study | None = None) -> str:
    """How concentrated the positive ratings are on each dataset, beside the paper's item."""
    rows = [study] + ([second] if second is not None else [])
    shares = [(st.dataset, st.results["positive_shares"]) for st in rows]
    return (
        "; ".join(
            f"on {d} the most liked item is liked by {x['top_liked']:.1%} of the users, "
            f"and {x['single']:.1%} of the liked items are liked by a single user"
            for d, x in shares
        )
        + f". The paper reports {PAPER['top_liked']:.1%} for its MovieLens item, against at most "
        "a few per cent of the queries for any TREC document.\n\n"
        + f"* {cite(study, 'fig5.top-liked')}\n"
        + claims(study, "sec5.3")
    )


def fig8_text(study: Study) -> str:
    """Where popularity's advantage over random is smallest and largest among the designs of
    Fig. 8 that ran, the claims, and P1R with AI candidates."""
    lift8 = fig8_table(study)["popularity / random"]
    return (
        "Popularity's advantage over random (the ratio in the last column) is smallest under "
        f"{lift8.idxmin()} and largest under {lift8.idxmax()}. The paper's claims on this "
        "figure:\n\n"
        + claims(study, "fig8")
        + (
            "\n\nWith AI candidates P1R gives popularity a ratio of "
            f"{lift8['P1R (AI)']:.2f}, against {lift8['P1R']:.2f} with TI."
            if "P1R (AI)" in lift8.index
            else ""
        )
    )


def p1r_text(study: Study) -> str:
    """How unevenly P1R's percentiles hold target sets."""
    fig8 = study.results["fig8"]
    p1r = (
        fig8.loc[(fig8["design"] == "P1R") & (fig8["system"] == "random")].groupby("stratum").size()
    )
    head, tail = int(p1r.iloc[0]), int(p1r.iloc[-1])
    few, many = int(p1r.min()), int(p1r.max())
    rests = (
        f"Its value rests on fewer sets in the tail than in the head ({head / tail:,.1f} times "
        "fewer), and the intervals of the ledger carry that."
        if tail < head
        else "The tail holds at least as many sets as the head here."
    )
    return (
        f"P1R weighs every percentile the same; its percentiles hold from {few:,} to {many:,} "
        f"target sets: {head:,} in the most popular one against {tail:,} in the least popular, "
        f"over the splits of this design. {rests}"
    )


def fig9_text(study: Study) -> str:
    """Popularity over random by each metric of Fig. 9, and the claims."""
    fig9 = study.results["fig9"]
    m9 = fig9.groupby(["design", "metric", "system"])["value"].mean().unstack("metric")
    ar9 = m9.loc["AR TI-AN"]
    lifts9 = ar9.loc["popularity"] / ar9.loc["random"]
    return (
        "Under AR TI-AN popularity scores "
        + ", ".join(
            f"{lifts9[k]:.1f} times random by {k}" for k in ["P", "bpref", "infAP", "SRecall"]
        )
        + f". The engine's P@n here ({ar9.loc['popularity', 'P']:.4f} for popularity) averages "
        "over the users with a relevant test item only, so it is not the AR value of Figure 2, "
        "which "
        "counts the others as zero.\n\n" + claims(study, "fig9") + "\n\n" + bpref_1r_text(study)
    )


def bpref_1r_text(study: Study) -> str:
    """bpref in 1R: with the relevant item alone judged (the paper's sets, a derivation), and with
    the judged non-relevant items our 1R sets sample (Fig. 9's run)."""
    text = (
        "The paper's 1R sets keep no judged non-relevant item, so bpref is one for every system; "
        f"on our 1R sets with only the relevant item judged that {_verdict_word(study)}. "
    )
    fig9 = study.results.get("fig9")
    if fig9 is None:
        return text
    one_r = fig9.loc[(fig9["design"] == "1R TI-NN") & (fig9["metric"] == "bpref")]
    b = one_r.groupby("system")["value"].mean()
    return text + (
        "Our Fig. 9 run judges the rated non-relevant items its 1R sets sample, and there bpref "
        f"ranges from {b.min():.3f} ({b.idxmin()}) to {b.max():.3f} ({b.idxmax()})."
    )


def _verdict_word(study: Study) -> str:
    v = _verdict(study, "fig9.bpref-1r")
    return {Verdict.AGREES: "holds", Verdict.DIFFERS: "fails"}.get(v, f"is {v.value}")


def verdicts_text(frames: Mapping[str, pd.DataFrame]) -> str:
    """The verdict counts per kind of the evaluated ledgers (dataset → frame), and which claims
    get a different verdict on the first two datasets."""

    def per_kind(frame: pd.DataFrame) -> str:
        t = tally_by_kind(frame)
        return "; ".join(
            f"{k}s: " + ", ".join(f"{int(c)} {v}" for v, c in t.loc[k].items() if c)
            for k in t.index
        )

    text = " — ".join(f"on {d}, {per_kind(f)}" for d, f in frames.items())
    both = ""
    if len(frames) > 1:
        first, second = list(frames.values())[:2]
        j = (
            first.set_index("claim")["verdict"]
            .to_frame("a")
            .join(second.set_index("claim")["verdict"].rename("b"))
        )
        ungraded = [Verdict.NOT_REPRODUCED.value, Verdict.NOT_GRADED.value]
        j = j[~j["a"].isin(ungraded) & ~j["b"].isin(ungraded)]
        same = int((j["a"] == j["b"]).sum())
        changed = ", ".join(j.index[j["a"] != j["b"]].str.replace(_B, "", regex=False))
        both = (
            f" Of the {len(j)} claims judged on both datasets, {same} get the same verdict "
            "on both" + (f"; the others: {changed}." if same < len(j) else ".")
        )
    first_frame = next(iter(frames.values()))
    return f"**Verdicts.** {len(first_frame)} claims — {text}.{both}"
