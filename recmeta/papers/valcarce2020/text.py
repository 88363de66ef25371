"""The sentences of the assessing-ranking-metrics chapter, built from its computed values.

Each function takes results of the study (or the chapter's settings) and returns Markdown; the
chapter displays it. Claims are cited through :func:`recmeta.ledger.sentence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import Estimate, format_estimate, format_order, sentence, tally_by_kind
from ...metrics import Subsets
from . import claims as c
from .estimates import bulk_tau, judged_estimate
from .folds import LABELS, SCHEMES, Study, judged_share, label, overall_judged_share
from .study import Results, Settings
from .tables import INFAP_GAP, dp_estimates, middle_share

__all__ = [
    "arith_geo",
    "causes",
    "datasets",
    "differences",
    "discriminative_power",
    "half_ratings",
    "judged",
    "precision_line",
    "profile_note",
    "rating_removal",
    "scorer_check",
    "second_tally",
    "tally",
    "verdict_changes",
]

#: the weak baselines of the roster (random, popularity, rating prediction)
WEAK = ("random", "pop", "bias", "biasedmf-50", "funksvd-50", "biasedsvd-50")


def profile_note(s: Settings) -> str:
    """What the page ran (systems, folds, shares, masks, permutations, resamples) against the
    paper's design."""
    shares, popular = s.shares, s.popular_shares
    return (
        f"This page ran the **{s.profile}** profile: {len(s.systems)} systems, fold(s) "
        f"{', '.join(map(str, s.folds))} of {s.k}; {len(shares)} shares from {max(shares):.0%} "
        f"down to {min(shares):.0%} for random ratings, items and users and for the largest "
        f"users, {len(popular)} shares of items from {max(popular):.0%} down to "
        f"{min(popular):.0%} when the most popular items go; {s.n_samples} random masks per "
        f"share; {s.n_permutations:,} permutations per test; {s.n_boot} bootstrap resamples of "
        f"users. The paper used {c.N_SYSTEMS} systems, {c.N_FOLDS} folds, {c.N_SAMPLES} samples "
        f"per share and {c.N_PERMUTATIONS:,} permutations; the full profile follows it, the "
        "quick profile (what the book's continuous integration runs) keeps only a few fast "
        "systems so that the whole page runs quickly, and its ledger says where that is too "
        "small to decide."
    )


def scorer_check(gaps: pd.DataFrame, share: float) -> str:
    """The largest gap of :func:`~.tables.scorer_check` over the metrics, and infAP against AP."""
    return (
        f"Largest absolute difference, over all systems and topics, between the pass over "
        f"judged positions and the pass over whole lists on the full test sets and on a random "
        f"{share:.0%} of the ratings: {gaps.drop(columns=INFAP_GAP).to_numpy().max():.1e} over "
        f"the nine metrics; the engine's infAP differs from its AP by at most "
        f"{gaps[INFAP_GAP].max():.1e}."
    )


def judged(study: Study, subsets: Subsets, cutoff: int) -> str:
    """The study's size and the judged share of the lists, overall and per user, against the
    paper's (§6.3.1). ``subsets`` is the study's scorer (:func:`~.folds.scorer`)."""
    share = overall_judged_share(study, subsets, cutoff)
    est = judged_estimate(judged_share(study, cutoff))
    j = c.JUDGED_SHARE
    return (
        f"{len(study.topics):,} topics ({study.topics['user'].nunique():,} users over "
        f"{study.n_folds} fold(s)), {len(study.test):,} test ratings. Of all ranked positions in "
        f"the top {cutoff}, a share of {share:.3f} carry a test rating; averaged over users, "
        f"{format_estimate(est)} (bootstrap over users). The paper reports "
        f"{j['ML-1M']:g} on ML-1M, {j['LibraryThing']:g} on LibraryThing and "
        f"{j['BeerAdvocate']:g} on BeerAdvocate (§6.3.1)."
    )


def arith_geo(results: Results, inputs: Mapping[str, Any]) -> str:
    """τ between arithmetic and geometric orderings of MAP and F1 against the paper's (§7.1),
    and how GF1 relates to the other geometric metrics here."""
    tb = inputs["tau_among"]
    est = {
        m: Estimate.from_replicates(
            tb.arith_geo[i], tb.arith_geo_reps[:, i][np.isfinite(tb.arith_geo_reps[:, i])]
        )
        for i, m in enumerate(tb.metrics)
    }
    cutoff = results.cutoff
    gp_gf1 = results.tau("gmean").loc[f"P@{cutoff}", f"F1@{cutoff}"]
    return (
        f"Between each metric's arithmetic and geometric orderings, τ(MAP, GMAP) = "
        f"{format_estimate(est['AP'])} and τ(F1, GF1) = {format_estimate(est['F1'])} "
        f"here (bootstrap over users, {tb.n_boot} resamples); the paper reports "
        f"{c.TAU_ARITH_GEO['AP']:g} and {c.TAU_ARITH_GEO['F1']:g} on ML-1M (§7.1). "
        f"Our τ(GP, GF1) is {gp_gf1:.2f}. By the identity of the metrics section, "
        "$\\log F_1@n = \\log P@n + \\log\\frac{2n}{n + |R_u|}$ on every topic with a hit, and "
        "the last term does not depend on the system, while a topic without a hit is floored at "
        "$10^{-5}$ in both: GF1 and GP can order two systems differently only when the systems "
        "hit different sets of topics. " + gf1_apart(inputs)
    )


def gf1_apart(inputs: Mapping[str, Any]) -> str:
    """Whether GF1 stands apart from the geometric metrics here, as in the paper's Fig. 9: its
    mean τ with the seven metrics other than GF1 and GMRR against theirs, in the groups of
    :func:`recmeta.ledger.format_order` (the order the ledger's claim reads)."""
    est = bulk_tau(inputs["tau_among"], "gmean", {"F1", "RR"})
    groups = format_order(est, descending=False)
    first = groups.split(" < ")[0].split(" ≈ ")
    if len(first) == len(est):
        where = "the intervals separate no metric from the others"
    elif first == ["GF1"]:
        where = "GF1 is alone at the bottom, as in the paper's Fig. 9"
    elif "GF1" in first:
        others = ", ".join(g for g in first if g != "GF1")
        where = f"GF1 is among the lowest, with {others} (intervals overlapping)"
    else:
        where = (
            "GF1 is not among the lowest, unlike the paper's Fig. 9, where it correlates poorly "
            "with every geometric metric but GMRR (§7.1); the paper does not say how its GF1 "
            "handled zero or undefined values"
        )
    return (
        f"Mean τ of each geometric metric with the seven other than GF1 and GMRR, lowest first "
        f"(bootstrap intervals): {groups}. Here {where}."
    )


def discriminative_power(results: Results, inputs: Mapping[str, Any]) -> str:
    """The number of pairs, the metrics in order of DP (:func:`dp_order`), and what testing on
    (fold, user) topics changes."""
    n = results.n_systems
    moved = int((results.dp_topics.rank(method="min") != results.dp.rank(method="min")).sum())
    lower = int((results.dp_topics < results.dp).sum())
    return (
        f"{n * (n - 1) // 2} system pairs (the paper: {c.N_PAIRS}). *DP* is the sum of the "
        "p-values over all pairs (lower discriminates more), on users; its interval is a "
        "bootstrap over users widened by the Monte-Carlo error of the p-values. "
        + dp_order(dp_estimates(inputs))
        + " Testing on (fold, user) topics instead, as if each user's folds were independent "
        f"users, lowers DP for {lower} of the {len(results.dp)} metrics and changes the rank of "
        f"{moved}."
    )


def dp_order(estimates: Mapping[str, Estimate]) -> str:
    """The metrics ordered by DP, lowest first, as groups whose intervals overlap
    (:func:`recmeta.ledger.format_order`, the order the ledger's claims read): "<" only where
    the intervals separate the groups. Keys are short names or the paper's labels."""
    named = {LABELS.get(m, m): e for m, e in estimates.items()}
    return (
        "Ordered by DP, lowest first (≈: intervals overlapping; <: separated): "
        f"{format_order(named, descending=False)}."
    )


def rating_removal(change: pd.DataFrame, shares: Sequence[float]) -> str:
    """How the metrics' means change from the full test set to the middle share of ratings
    (:func:`~.tables.change_table`), and which end above their full value."""
    mid, low = middle_share(shares), min(shares)
    rising = change.index[change[f"{low:.0%} kept"] > change["full"]].tolist()
    rel = change["relative change at the middle share"]
    return (
        f"From the full test set to {mid:.0%} of the ratings, mean precision changes by "
        f"{rel['P']:+.1%}, recall by {rel['Recall']:+.1%}, MRR by {rel['MRR']:+.1%}, ERR by "
        f"{rel['ERR']:+.1%} and nDCG by {rel['nDCG']:+.1%}. "
        + (
            f"At {low:.0%}, the mean of {', '.join(rising)} is *above* its full value."
            if rising
            else f"No metric's mean ends above its full value at {low:.0%}."
        )
        + (
            " For bpref a likely reason: fewer judged non-relevant items above a relevant one "
            "mean a smaller penalty, and the topics still evaluated tend to be those with the "
            "larger profiles."
            if "bpref" in rising
            else ""
        )
    )


def precision_line(ep: pd.DataFrame) -> str:
    """The observed precision ratio at the smallest share against the naive line and the
    expectation with dropping topics (:meth:`~.study.Results.expected_precision`)."""
    banded = ep[ep["share"] < 1]
    inside = int(
        ((banded["low"] <= banded["expected"]) & (banded["expected"] <= banded["high"])).sum()
    )
    naive_in = int(((banded["low"] <= banded["share"]) & (banded["share"] <= banded["high"])).sum())
    last = ep.iloc[-1]
    return (
        f"At {last['share']:.0%} of the ratings the observed ratio is {last['observed']:.3f} "
        f"[{last['low']:.3f}, {last['high']:.3f}], the naive line gives {last['share']:.3f} and "
        f"the expectation with dropping topics {last['expected']:.3f}. Over the {len(banded)} "
        f"shares below the full test set, the band contains the corrected expectation at "
        f"{inside} and the naive line at {naive_in}."
    )


def half_ratings(results: Results) -> str:
    """The lowest mean τ with half of the test ratings removed, against the paper's bound."""
    cv = results.curves
    half = cv[np.isclose(cv.share, 0.5) & (cv.scheme == "ratings") & (cv["aggregate"] == "mean")]
    if not len(half):
        return "The grid of shares has no point at one half."
    below = [label(m) for m in half.loc[half.tau <= c.TAU_HALF_RATINGS, "metric"]]
    return (
        f"Lowest mean τ with half of the test ratings removed (arithmetic means): "
        f"{half.tau.min():.3f} ({label(half.loc[half.tau.idxmin(), 'metric'])}); the paper "
        f"finds every metric above {c.TAU_HALF_RATINGS:g} there; here "
        + (
            f"{len(below)} of {len(half)} mean τ lie at or below it ({', '.join(below)})."
            if below
            else "every mean τ lies above it (the ledger tests each against the users' and "
            "masks' spread)."
        )
    )


def tally(ledger: pd.DataFrame, dataset: str, profile: str) -> str:
    """The claims per kind of evidence and verdict (:func:`tally_text`)."""
    return f"On {dataset} ({profile} profile), of {len(ledger)} claims: {tally_text(ledger)}."


def tally_text(ledger: pd.DataFrame) -> str:
    """Claims per kind (derivation, replication, transfer) and verdict, from
    :func:`recmeta.ledger.tally_by_kind`, every non-zero count named."""
    t = tally_by_kind(ledger)
    plural = {"derivation": "derivations", "replication": "replications", "transfer": "transfers"}
    verb = {"agrees": "agree", "differs": "differ", "holds": "hold", "fails": "fail"}
    parts = []
    for kind, row in t.iterrows():
        said = ", ".join(f"{int(v)} {verb.get(str(k), k)}" for k, v in row.items() if v)
        parts.append(f"{plural.get(str(kind), str(kind))} ({int(row.sum())}): {said}")
    return "; ".join(parts)


def differences(ledger: pd.DataFrame) -> str:
    """The claims our results contradict (a claim that differs, a derivation that fails), each
    with the ledger's reason."""
    rows = [r for r in ledger.to_dict("records") if r["verdict"] in ("differs", "fails")]
    if not rows:
        return "No claim is contradicted by our results."
    return "The claims our results contradict, with the ledger's reason:\n\n" + "\n".join(
        "- " + sentence(r, parts=("statement", "verdict", "reason")) for r in rows
    )


def causes(
    systems: Sequence[str], dataset: str, quick: bool, curves: pd.DataFrame | None = None
) -> str:
    """The choices of ours that can move the verdicts, as a Markdown list; ``curves`` (the
    study's robustness curves) gives the lowest mean τ observed beside the floor that the weak
    baselines' pairs would set."""
    weak = [s for s in WEAK if s in systems]
    n = len(systems)
    pairs = n * (n - 1) // 2
    cross = len(weak) * (n - len(weak))
    floor = (2 * cross - pairs) / pairs if pairs else float("nan")
    lowest = ""
    if curves is not None and len(curves):
        row = curves.loc[curves["tau"].idxmin()]
        lowest = (
            f" The lowest mean τ of any curve here is {row['tau']:.3f} "
            f"({label(row['metric'], row['aggregate'])}, {SCHEMES[row['scheme']]}, "
            f"{row['share']:.0%} kept)."
        )
    out = [
        (
            "- **infAP.** With trec_eval's reading on plain qrels, infAP is MAP (the check table "
            'above gives the gap), and "infAP is less robust than MAP" could not hold or fail. '
            "We use the paper's eq. 11, where unrated items are an unjudged part of the pool."
        ),
        (
            f"- **Systems.** Our {n} systems include weak baselines ({', '.join(weak)}: "
            "random, popularity or rating prediction). If the "
            f"{cross} pairs of a weak baseline and another system all kept their order on an "
            f"incomplete test set, τ there could not fall below (2·{cross} − {pairs})/{pairs} "
            f"= {floor:.2f}; the differences between metrics would then come from the other "
            f"pairs.{lowest} "
            if weak
            else f"- **Systems.** Our {n} systems differ from the paper's.{lowest} "
        )
        + f"The paper's {c.N_SYSTEMS} systems were mostly competitive top-N methods.",
        (
            f"- **Dataset.** ML-1M, the paper's MovieLens, is not available here; {dataset} is run "
            "instead. The paper blames the instability of bpref and infAP on how far apart the "
            "judged items lie in the lists, which the judged share of the lists (above) "
            "measures."
        ),
        (
            "- **Pooling.** The paper does not say how folds are pooled; we average over (fold, "
            "user) topics for the scores and test on users. The DP table shows how much testing on "
            "topics would change."
        ),
    ]
    if quick:
        out.append(
            f"- **The quick profile** runs {n} systems, where a single swapped pair moves "
            f"τ by {2 / (n * (n - 1) / 2):.2f}: its ledger shows the machinery runs, and its "
            "intervals say where that is too small to decide."
        )
    return "\n".join(out)


def datasets(table: pd.DataFrame, dataset: str, second: str) -> str:
    """How the second dataset compares with the first (:func:`~.tables.dataset_table`)."""
    col, oth = table[str(dataset)], table[str(second)]
    a, b = col["ratings per user"], oth["ratings per user"]
    ta, tb = col["test ratings per user and fold"], oth["test ratings per user and fold"]
    da, db = col["density"], oth["density"]
    return (
        f"{second} has {'more' if b > a else 'fewer'} ratings per user than {dataset} "
        f"({b:,.0f} against {a:,.0f}), {'more' if tb > ta else 'fewer'} test ratings per user "
        f"in each fold ({tb:,.1f} against {ta:,.1f}) and is {'denser' if db > da else 'sparser'} "
        f"({db:.2%} against {da:.2%} of the user–item pairs rated)."
    )


def second_tally(ledger: pd.DataFrame, second: str, s: Settings) -> str:
    """The second dataset's design and its ledger's tally."""
    return (
        f"On {second} ({len(s.second_systems)} systems, fold(s) "
        f"{', '.join(map(str, s.second_folds))}, {s.second_samples} masks per share), of "
        f"{len(ledger)} claims: {tally_text(ledger)}."
    )


def verdict_changes(side: pd.DataFrame) -> str:
    """The claims whose verdict differs between the two datasets
    (:func:`~.tables.verdicts_side_by_side`)."""
    first, second = side.columns[2], side.columns[3]
    changed = side[side[first] != side[second]]
    return (
        f"The verdict changes between the two datasets for {len(changed)} of {len(side)} "
        "claims"
        + (
            ": " + "; ".join(f"{r.claim} ({r[3]} → {r[4]})" for r in changed.itertuples()) + "."
            if len(changed)
            else "."
        )
    )
