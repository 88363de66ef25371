"""The sentences the chapter prints, built from its results: every number and every direction
in them is computed, so a re-run on other data cannot leave a false sentence behind.

A claim is cited through the ledger's one renderer (:func:`recmeta.ledger.sentence` of
:meth:`Ledger.row`); sentences that quote a claim's value inline take it from the same row
(:func:`recmeta.ledger.ours_text`). Functions that read claims take the chapter's
:class:`~recmeta.papers.scheel2011.settings.Settings` for the dataset and profile of the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from scipy.stats import norm

from ...ledger import Kind, Verdict, ours_text, sentence, tally_by_kind, to_markdown
from .claims import (
    LEDGER,
    PAPER_ITEMS,
    PAPER_MAX_SWAPS,
    PAPER_REPETITIONS,
    SYNTHETIC_RESULTS,
)
from .claims_artificial import level_settings
from .claims_real import many_levels
from .examples import doubling_moves
from .measures import PAPER_METRICS, top_level_share
from .scales import closest_pair_gap, order_agreement, rating_scale, relative_changes
from .settings import Settings
from .swaps import PAPER_LEVELS, study_reference
from .virtual import levels_per_user, levels_used, virtual_judgments

__all__ = [
    "ARTIFICIAL",
    "cite",
    "describe_levels_effect",
    "describe_one_swap",
    "describe_rating_scale",
    "describe_reordering",
    "describe_run",
    "describe_virtual_users",
    "doubling_text",
    "gain_or_levels",
    "holdout_text",
    "ledger_counts",
    "ledger_tables",
    "levels_used_text",
    "nonuniform_levels_text",
    "one_swap_text",
    "rating_scales_text",
    "run_text",
    "scale_changes_text",
    "scale_text",
    "uniform_levels_text",
    "virtual_users_text",
]


#: what a claim on artificial data only is said to be measured on
ARTIFICIAL = "artificial data"

#: the kinds of claim as the tallies name them
KIND_PLURAL = {
    Kind.DERIVATION.value: "derivations",
    Kind.REPLICATION.value: "replications",
    Kind.TRANSFER.value: "transfers",
}


def _row(results: Mapping[str, Any], settings: Settings, claim: str) -> dict[str, Any]:
    """The ledger's row of ``claim`` (id without the ``scheel2011.`` prefix) on ``results``;
    a claim that reads only artificial results is labelled :data:`ARTIFICIAL`, not with the
    chapter's dataset, since its value does not depend on it."""
    key = f"scheel2011.{claim}"
    artificial = set(LEDGER[key].needs) <= set(SYNTHETIC_RESULTS)
    return LEDGER.row(
        key,
        results,
        dataset=ARTIFICIAL if artificial else settings.dataset,
        profile=settings.profile,
    )


def cite(results: Mapping[str, Any], settings: Settings, *claims: str) -> str:
    """The ledger's sentences for ``claims`` (ids without the ``scheel2011.`` prefix) on
    ``results``, as a Markdown list: statement, the paper's value, ours with its uncertainty,
    the verdict and its reason (:func:`recmeta.ledger.sentence`)."""
    if not claims:
        raise ValueError("name at least one claim to cite")
    return "\n".join(f"- {sentence(_row(results, settings, c))}" for c in claims)


# ---------------------------------------------------------------------- the artificial study
def describe_run(settings: Settings) -> str:
    """The sizes of this run's artificial study beside the paper's."""
    s = settings
    same = (
        s.n_items == PAPER_ITEMS
        and tuple(s.levels) == tuple(PAPER_LEVELS)
        and s.max_swaps == PAPER_MAX_SWAPS
        and s.repetitions == PAPER_REPETITIONS
    )
    ours = (
        f"{s.n_items} items, {', '.join(map(str, s.levels))} levels, 0 to {s.max_swaps} "
        f"swaps, {s.repetitions} rankings per swap count"
    )
    paper = (
        f"{PAPER_ITEMS} items, {', '.join(map(str, PAPER_LEVELS))} levels, 0 to "
        f"{PAPER_MAX_SWAPS} swaps, {PAPER_REPETITIONS} rankings per swap count"
    )
    if same:
        return f"This run uses the paper's sizes for the artificial study: {ours}."
    return f"This run's artificial study uses {ours}; the paper used {paper}."


def describe_levels_effect(
    results: Mapping[str, Any], settings: Settings, distribution: str
) -> str:
    """The three measures' curves with the fewest and the most levels, averaged over the swap
    counts, and the verdicts of the corresponding claims."""
    study = results["swap_study"]
    few, many = level_settings(study, distribution)
    s = study[
        (study["distribution"] == distribution) & (study["swaps"] >= 1) & study["threshold"].isna()
    ]
    mean = s.groupby(["metric", "levels"])["value"].mean()
    fig = "fig4" if distribution == "uniform" else "fig5"
    parts = [f"Averaged over the swap counts ≥ 1, with {distribution} level counts:"]
    for metric, claim in (
        ("nDCG(gain=exp)", "ndcg-falls-with-levels"),
        ("muAP", "muap-stable-across-levels"),
        ("NDCNG", "ndcng-stable-across-levels"),
    ):
        row = _row(results, settings, f"{fig}.{claim}")
        parts.append(
            f"{PAPER_METRICS[metric]} scores {mean[(metric, few)]:.3f} with {few} levels "
            f"and {mean[(metric, many)]:.3f} with {many}, a difference of "
            f"{ours_text(row)} (paper: “{row['paper_value']}”; verdict: "
            f"**{row['verdict']}**)."
        )
    return " ".join(parts)


def run_text(results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`describe_run`, and the claim on the reference rankings' levels (Figs. 2–3)."""
    return describe_run(settings) + "\n\n" + cite(results, settings, "fig2-3.level-distributions")


def uniform_levels_text(results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`describe_levels_effect` for the uniform references, the share of the gain that the
    top level holds with the most uniform integer levels, and the claim that the size of the
    gains, not the number of levels, lowers NDCG."""
    top = max(settings.levels)
    share = top_level_share(study_reference("uniform", top, settings.n_items, settings.seed))
    return (
        describe_levels_effect(results, settings, "uniform")
        + f" With {top} uniform integer levels, the top level holds {share:.0%} of all the "
        "gain.\n\n" + cite(results, settings, "fig4.gain-size-not-level-count")
    )


def nonuniform_levels_text(results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`describe_levels_effect` for the non-uniform references, and the claims of
    Figs. 4–5 on the number of levels and of sec. 2 on the swaps."""
    return (
        describe_levels_effect(results, settings, "non-uniform")
        + "\n\n"
        + cite(
            results,
            settings,
            "fig4.ndcg-falls-with-levels",
            "fig5.ndcg-falls-with-levels",
            "fig5.muap-stable-across-levels",
            "fig5.ndcng-stable-across-levels",
            "sec2.1.performance-falls-with-swaps",
            "sec2.ideal-scores-one",
        )
    )


def describe_one_swap(
    check: pd.DataFrame, bound: float = 3.0, labels: Mapping[str, str] = PAPER_METRICS
) -> str:
    """Sentences on a :func:`~recmeta.papers.scheel2011.swaps.one_swap_check` frame: the largest
    ``|z|``, how many exceed ``bound``, and how many would by chance (two-sided normal tail
    ``p`` per comparison)."""
    if check.empty:
        raise ValueError("the check is empty")
    z = check["z"].abs()
    worst = check.loc[z.idxmax()]
    over = int((z > bound).sum())
    n = len(check)
    p = 2 * norm.sf(bound)
    head = (
        f"Over the {n} comparisons (settings × measures, {int(worst['draws'])} draws each), "
        f"the largest |z| is {z.max():.2f} ({labels.get(worst['metric'], worst['metric'])}, "
        f"{worst['distribution']}, {int(worst['levels'])} levels); {over} exceed {bound:g}, "
        f"where chance alone would give {n * p:.2f} on average."
    )
    if over == 0:
        return head + (
            f" The sampler and the scoring agree with the exact expectation within "
            f"{bound:g} standard errors."
        )
    return head + (
        " Not every simulated mean lies within that bound of the exact one: look at "
        "the settings above before trusting the curves."
    )


def one_swap_text(check: pd.DataFrame, results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`describe_one_swap`, and the claim that a swap's cost depends on the distance of
    the two levels (from ``results["single_swaps"]``)."""
    return (
        describe_one_swap(check)
        + "\n\n"
        + cite(results, settings, "sec2.1.cost-depends-on-distance")
    )


def doubling_text(table: pd.DataFrame) -> str:
    """How NDCG (exp. gain) moves on the doubled scale for each toy list of
    :func:`~recmeta.papers.scheel2011.examples.toy_scale_table`, against the paper's
    direction."""
    moves = doubling_moves(table)
    return (
        " ".join(
            f"On the doubled scale, the list “{what}” gets an NDCG "
            f"{'lower' if d < 0 else 'higher'} by {abs(d):.4f}"
            f"{', as in the paper' if d < 0 else ', against the paper'}."
            for what, d in moves.items()
        )
        + " The three other columns do not move."
    )


# ---------------------------------------------------------------------- rating scales
def describe_rating_scale(name: str, ratings: pd.DataFrame, column: str = "rating") -> str:
    """One sentence on a dataset's rating scale and what µAP's lowest threshold makes relevant
    (see :func:`~recmeta.papers.scheel2011.scales.rating_scale`)."""
    f = rating_scale(ratings, column)
    return (
        f"**{name}**: ratings from {f['lowest']:g} to {f['highest']:g} in steps of "
        f"{f['step']:g} ({f['levels']} distinct values), hence grades from 0 to "
        f"{f['highest'] - f['lowest']:g}; at µAP's lowest threshold every rating of "
        f"{f['lowest_relevant']:g} or more counts as relevant."
    )


def rating_scales_text(frames: Mapping[str, pd.DataFrame]) -> str:
    """:func:`describe_rating_scale` of every dataset, as a Markdown list."""
    return "\n".join(f"- {describe_rating_scale(name, frame)}" for name, frame in frames.items())


def holdout_text(settings: Settings) -> str:
    """How the real-data sections make their lists and judgments."""
    s = settings
    return (
        f"The book's recommenders (see the roster) rank the {s.depth} training items they "
        f"score highest for every user of a per-user holdout of {s.test_fraction:.0%} of the "
        f"ratings; the test ratings are the judgments, and the measures read the whole list "
        f"of {s.depth}."
    )


def scale_changes_text(summary: pd.DataFrame) -> str:
    """Per dataset, how much the doubled and the squared scale move each measure at most, from
    :func:`~recmeta.papers.scheel2011.scales.largest_changes`."""
    parts = []
    for name in summary.index.get_level_values("dataset").unique():
        doubled = summary.loc[(name, "doubled")]
        squared = summary.loc[(name, "squared")]
        parts.append(
            f"On {name}, the doubled scale moves µAP by at most {doubled['µAP']:.2g}, NDCNG by "
            f"{doubled['NDCNG']:.2g}, linear-gain NDCG by {doubled['NDCG (linear)']:.2g} and "
            f"NDCG with exponential gain by up to {doubled['NDCG']:.2%}; the squared scale moves "
            f"µAP by up to {squared['µAP']:.2%} and NDCNG by up to {squared['NDCNG']:.2%}."
        )
    return "\n\n".join(parts)


def scale_text(summary: pd.DataFrame, results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`scale_changes_text`, and the claims of Table 2 on the chapter's dataset."""
    return (
        scale_changes_text(summary)
        + "\n\n"
        + cite(
            results,
            settings,
            "tab2.doubling-lowers-ndcg",
            "tab2.ndcng-scale-free",
            "tab2.muap-scale-free",
        )
    )


def describe_reordering(
    results: pd.DataFrame,
    metric: str = "nDCG(gain=exp)",
    scale: str = "doubled",
    labels: Mapping[str, str] = PAPER_METRICS,
) -> str:
    """Whether a change of scale reorders the systems, per dataset, with the size of the change
    of ``metric`` on ``scale`` beside the smallest relative gap between two systems on the
    native scale. ``results``: scale-study means with a ``dataset`` column."""
    taus = order_agreement(results)
    changes = relative_changes(results)
    parts = []
    for ds, part in results.groupby("dataset", sort=False):
        ch = changes[
            (changes["dataset"] == ds) & (changes["metric"] == metric) & (changes["scale"] == scale)
        ]
        native = part[(part["scale"] == "native") & (part["metric"] == metric)].set_index("system")[
            "value"
        ]
        gap, low, high = closest_pair_gap(native)
        largest = float(ch["relative_change"].abs().max())
        moved = taus[(taus["dataset"] == ds) & (taus["tau"] < 1 - 1e-12)]
        size = "smaller" if largest < gap else "larger"
        text = (
            f"On {ds}, the {scale} scale changes {labels.get(metric, metric)} by at most "
            f"{largest:.1%}, {size} than the smallest gap between two systems on the native "
            f"scale ({low} and {high}, {gap:.1%} apart); "
        )
        if moved.empty:
            text += "no change of scale reorders the systems under any measure."
        else:
            which = "; ".join(
                f"{labels.get(r.metric, r.metric)} on the {r.scale} scale (τ = {r.tau:.3f})"
                for r in moved.itertuples()
            )
            text += f"the order of the systems changes under {which}."
        parts.append(text)
    return " ".join(parts)


# ---------------------------------------------------------------------- virtual users
def levels_used_text(results: Mapping[str, Any], settings: Settings) -> str:
    """How many of the ordinal levels a user's candidates use, cut per user and globally
    (:func:`~recmeta.papers.scheel2011.virtual.levels_used` of ``candidate_scores``)."""
    n = settings.ordinal_levels
    used = levels_used(results["candidate_scores"], results["virtual_reference"], n)
    return (
        f"With {n} levels cut per user, a user's candidates use {used['user']:.1f} of the "
        f"{n} levels on average; cut once over all users, as the paper's are, they would "
        f"use {used['global']:.1f}."
    )


def describe_virtual_users(results: Mapping[str, Any], settings: Settings) -> str:
    """The ordinal and the real-valued virtual users against the 9-level one, measure by
    measure, with the verdicts of the Fig. 8 claims (split by kind of grade)."""
    v, ref = results["virtual_per_user"], results["virtual_reference"]
    nine = int(results["ordinal_levels"])
    many = many_levels(results)
    others = v[(v["system"] != ref) & v["metric"].isin(list(PAPER_METRICS))]
    mean = others.groupby(["metric", "levels"])["value"].mean()
    parts = []
    for kind, n, what in (
        ("ordinal", many, f"{many} ordinal levels"),
        ("real-valued", -1, "the raw scores"),
    ):
        items = []
        for metric, claim in (
            ("nDCG(gain=exp)", "ndcg-lower"),
            ("muAP", "muap-stable"),
            ("NDCNG", "ndcng-stable"),
        ):
            row = _row(results, settings, f"fig8.{kind}.{claim}")
            items.append(
                f"{PAPER_METRICS[metric]} {mean[(metric, nine)]:.3f} → "
                f"{mean[(metric, n)]:.3f} (difference {ours_text(row)}: "
                f"**{row['verdict']}**)"
            )
        parts.append(
            f"From {nine} levels to {what}, the other systems' mean moves: "
            + "; ".join(items)
            + "."
        )
    return " ".join(parts)


def gain_or_levels(results: Mapping[str, Any], settings: Settings) -> str:
    """Whether NDCG reacts to the size of the gains or to the number of levels, from two pairs of
    experiments that separate them: integer against unit levels in the swap study (same level
    counts, different gains), and, when the virtual users are in ``results``, many ordinal
    levels against the raw scores (both with many levels; large against small top gains)."""
    agrees = Verdict.AGREES.value
    ints = _row(results, settings, "fig4.ndcg-falls-with-levels")
    unit = _row(results, settings, "fig4.gain-size-not-level-count")
    parts = [
        (
            f"In the swap study, NDCG's drop from the fewest to the most levels is "
            f"{ours_text(ints)} on integer levels and {ours_text(unit)} on the same levels "
            f"spread over [0, 1]."
        )
    ]
    swap_says = ints["verdict"] == agrees and unit["verdict"] == agrees
    virtual_says = True
    if "virtual_per_user" in results:
        nine, many = int(results["ordinal_levels"]), many_levels(results)
        c = results["candidate_scores"]
        ref = c[c["system"] == results["virtual_reference"]]
        used_many = float(levels_per_user(virtual_judgments(ref, many)).mean())
        raw = virtual_judgments(ref, None)
        used_raw = float(levels_per_user(raw).mean())
        top_raw = float(raw.groupby("user")["rating"].max().mean())
        fewer = _row(results, settings, "fig8.ordinal.ndcg-lower")
        rawer = _row(results, settings, "fig8.real-valued.ndcg-lower")
        parts.append(
            f"Against the virtual users, NDCG moves by {ours_text(fewer)} from {nine} to "
            f"{many} ordinal levels and by {ours_text(rawer)} from {nine} levels to the raw "
            f"scores. A user's candidates use {used_many:.1f} distinct levels on average with "
            f"{many} ordinal levels and {used_raw:.1f} with the raw scores; the top grade is "
            f"{many - 1} in the first case (gain {2.0 ** (many - 1) - 1:.3g}) and {top_raw:.2f} "
            f"on average in the second (gain {2.0**top_raw - 1:.3g})."
        )
        virtual_says = (
            fewer["verdict"] == agrees and rawer["verdict"] != agrees and used_raw >= used_many
        )
    if swap_says and virtual_says:
        parts.append(
            "Both comparisons point the same way: NDCG reacts to the size of the gains, "
            "not to the number of levels; many levels lower it only when they make the "
            "top gains large."
        )
    else:
        parts.append(
            "In this run the comparisons do not separate the size of the gains from "
            "the number of levels cleanly; see the verdicts in the table of claims."
        )
    return " ".join(parts)


def virtual_users_text(results: Mapping[str, Any], settings: Settings) -> str:
    """:func:`describe_virtual_users`, the Fig. 8 claims on NDCG, and :func:`gain_or_levels`."""
    return "\n\n".join(
        [
            describe_virtual_users(results, settings),
            cite(results, settings, "fig8.real-valued.ndcg-lower", "fig8.ordinal.ndcg-lower"),
            gain_or_levels(results, settings),
        ]
    )


# ---------------------------------------------------------------------- the ledger
def ledger_counts(ledgers: Mapping[str, pd.DataFrame]) -> str:
    """The number of claims per kind and verdict of each dataset's evaluated ledger
    (:func:`recmeta.ledger.tally_by_kind`; verdicts that no claim has are left out)."""
    parts = []
    for name, frame in ledgers.items():
        tally = tally_by_kind(frame)
        kinds = [
            f"{KIND_PLURAL.get(str(kind), str(kind))}: "
            + ", ".join(f"{n} {v}" for v, n in row.items() if n)
            for kind, row in tally.iterrows()
        ]
        parts.append(f"On {name}: " + "; ".join(kinds) + ".")
    return " ".join(parts)


def ledger_tables(ledgers: Mapping[str, pd.DataFrame]) -> str:
    """Each dataset's evaluated ledger as Markdown under the dataset's name: the paper's claims
    (replications and transfers), then the derivations in a table of their own, then
    :func:`ledger_counts`."""
    blocks = []
    for name, frame in ledgers.items():
        derived = frame["kind"] == Kind.DERIVATION.value
        blocks.append(f"**{name}**: the paper's claims\n\n{to_markdown(frame[~derived])}")
        if derived.any():
            blocks.append(
                f"**{name}**: derivations (verified identities and constructions, never "
                f"counted as replications)\n\n{to_markdown(frame[derived])}"
            )
    return "\n\n".join([*blocks, ledger_counts(ledgers)])
