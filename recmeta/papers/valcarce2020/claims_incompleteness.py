"""The ledger of Valcarce et al. (2020), §6.3: robustness to missing ratings, items and users.

Declared on :data:`~.claims.LEDGER` after the claims of :mod:`.claims`, in the paper's order.
"""

from __future__ import annotations

from dataclasses import replace

from ...ledger import (
    Margin,
    equivalence_rule,
    every,
    format_number,
    not_reproduced,
    order_rule,
    rank_rule,
    sign_rule,
    value_rule,
)
from .claims import (
    ALL_DATASETS,
    HALF,
    JUDGED_SHARE,
    LEDGER,
    ML,
    PAPER_TAU_STEP,
    ROBUST_NEEDS,
    TAU_HALF_RATINGS,
)
from .estimates import (
    area_diff,
    areas,
    boot_estimate,
    boot_how,
    fig4,
    judged_estimate,
    metric_label,
    signs,
    with_note,
)

#: §6.3.1's "about one position in twenty": one in 17 to one in 25 reads the same
JUDGED_MARGIN = Margin.printed(
    JUDGED_SHARE["ML-1M"],
    0.005,
    "the paper uses the share only as 'about one position in twenty'; one in 17 to one in 25 "
    "reads the same",
)

# ---- §6.3.1 rating incompleteness (Figs. 3, 4) --------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s6-3-1.judged-share",
    statement="The systems' top-100 lists carry a test rating at about one position in twenty",
    source="§6.3.1",
    rule="value rule (equivalence): our bootstrap interval over users (mean over users of the "
    "judged share of their ranked positions) inside the paper's share ± (half a unit of its "
    "last digit + 0.005); a magnitude measured on ML-1M, shown and not graded on other data",
    paper_value=JUDGED_SHARE["ML-1M"],
    paper_dataset=ML,
    needs=("judged",),
)
def _(r):
    out = value_rule(JUDGED_SHARE["ML-1M"], judged_estimate(r["judged"]), JUDGED_MARGIN)
    return with_note(out, f"margin: {JUDGED_MARGIN.reason}")


@LEDGER.claim(
    "valcarce2020.s6-3-1.half-above-09",
    statement=f"Every metric keeps τ above {TAU_HALF_RATINGS:g} with half of the test ratings "
    "removed",
    source="§6.3.1, Fig. 3",
    rule=f"every rule: τ − {TAU_HALF_RATINGS:g} at half of the ratings is positive for each of "
    "the nine metrics (two-level bootstrap of users and masks; one-sided sign tests, Holm; "
    "not a bootstrap of the smallest τ)",
    paper_value=TAU_HALF_RATINGS,
    paper_dataset=ALL_DATASETS,
    needs=("curves", "curve_reps", "metrics"),
)
def _(r):
    cr, cv = r["curve_reps"], r["curves"]
    reps = cr.at("ratings", HALF)
    if reps is None:
        return not_reproduced("the grid of shares has no point at one half")
    point = cv[(cv["scheme"] == "ratings") & (cv["aggregate"] == "mean")]
    point = point[point["share"].sub(HALF).abs() < 1e-9].set_index("metric")["tau"]
    parts = {}
    for k, m in enumerate(cr.metrics):
        lab = metric_label(m)
        what = f"τ({lab}) − {TAU_HALF_RATINGS:g} at half of the ratings"
        shifted = reps[:, k] - TAU_HALF_RATINGS
        est = boot_estimate(
            float(point[m]) - TAU_HALF_RATINGS, shifted, what, boot_how(r, "ratings")
        )
        parts[lab] = (est, shifted)
    outs, p_exp, p_opp = signs(parts, "positive", lambda k: f"τ({k}) − {TAU_HALF_RATINGS:g}")
    out = every(outs, p_exp, p_opp)
    worst = min(outs, key=lambda k: parts[k][0].value)
    return replace(out, ours=parts[worst][0])


@LEDGER.claim(
    "valcarce2020.s6-3-1.p-f1-ndcg-most-robust",
    statement="Precision, F1 and nDCG are the most robust metrics to missing ratings",
    source="§6.3.1, Fig. 3",
    rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
    paper_value="P, F1, nDCG",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "ratings"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim(
    "valcarce2020.s6-3-1.five-least-robust",
    statement="ERR, bpref, infAP, Recall and MRR show poor robustness to missing ratings",
    source="§6.3.1, Fig. 3",
    rule="rank rule on the area under the τ curve: the five rank 5–9 of 9",
    paper_value="ERR, bpref, infAP, Recall, MRR",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "ratings"), ["ERR", "bpref", "infAP", "Recall", "MRR"], 5, 9)


@LEDGER.claim(
    "valcarce2020.s6-3-1.p-proportional",
    statement="Precision falls linearly with the share of ratings kept; the other metrics do not",
    source="§6.3.1, Fig. 4",
    rule="order rule on |mean/full − share| at the share nearest one half, lower "
    "is better (two-level bootstrap of users and masks)",
    paper_value="P",
    paper_dataset=ALL_DATASETS,
    needs=("absolute", "full_values", "curve_reps"),
)
def _(r):
    p, est = fig4(r, lambda v, full, s: v / full - s)
    return with_note(
        order_rule(est, "P", higher_is_better=False),
        f"deviation from proportionality at share {p:g}",
    )


@LEDGER.claim(
    "valcarce2020.s6-3-1.p-changes-least",
    statement="Precision's absolute value decreases slowly while the other metrics decrease "
    "much faster",
    source="§6.3.1, Fig. 4",
    rule="order rule on the absolute change of the mean value from the full test "
    "set to the share nearest one half, lower is better (two-level bootstrap of users and "
    "masks)",
    paper_value="P",
    paper_dataset=ALL_DATASETS,
    needs=("absolute", "full_values", "curve_reps"),
)
def _(r):
    p, est = fig4(r, lambda v, full, s: v - full)
    return with_note(
        order_rule(est, "P", higher_is_better=False), f"absolute change at share {p:g}"
    )


@LEDGER.claim(
    "valcarce2020.s6-3-1.bpref-like-map",
    statement="On MovieLens, bpref is comparable to MAP in robustness to missing ratings",
    source="§6.3.1, Fig. 3",
    rule="equivalence rule: area(bpref) − area(MAP) (paired two-level bootstrap of users and "
    "masks) within ± 2/210, one swapped pair among the paper's 21 systems: the smallest "
    "difference of τ its Fig. 3 can show",
    paper_value="comparable",
    paper_dataset=ML,
    needs=ROBUST_NEEDS,
)
def _(r):
    d, _ = area_diff(r, {"scheme": "ratings", "metric": "bpref"}, {"metric": "AP"})
    out = equivalence_rule(d, PAPER_TAU_STEP, label="area(bpref) − area(MAP)")
    return with_note(
        out,
        f"margin {format_number(PAPER_TAU_STEP)}: one swapped pair among the paper's 21 "
        "systems, the smallest difference of τ its Fig. 3 can show",
    )


@LEDGER.claim(
    "valcarce2020.s6-3-1.infap-above-map",
    statement="On MovieLens, infAP is slightly more robust than MAP to missing ratings",
    source="§6.3.1, Fig. 3",
    rule="sign rule on area(infAP) − area(MAP), paired by users and masks, expected positive",
    paper_value="infAP > MAP",
    paper_dataset=ML,
    needs=ROBUST_NEEDS,
)
def _(r):
    d, _ = area_diff(r, {"scheme": "ratings", "metric": "infAP"}, {"metric": "AP"})
    return sign_rule(d, "positive", label="area(infAP) − area(MAP)")


@LEDGER.claim(
    "valcarce2020.s6-3-1.map-beats-bpref-infap",
    statement="MAP is more robust than bpref and infAP on LibraryThing and BeerAdvocate",
    source="§6.3.1, §8",
    rule="not run here",
    paper_value="MAP > bpref, infAP",
    paper_dataset="LibraryThing, BeerAdvocate",
)
def _(r):
    return not_reproduced(
        "LibraryThing and BeerAdvocate are not available here; on MovieLens "
        "the paper itself finds bpref comparable to MAP and infAP slightly "
        "better (claims above)"
    )


# ---- §6.3.2 item incompleteness (Figs. 5, 6) ----------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s6-3-2.items-drop-more",
    statement="Removing whole items lowers τ more than removing single ratings",
    source="§6.3.2, Figs. 3 and 5",
    rule="sign rule on area(ratings) − area(items), each averaged over the "
    "nine metrics (the same users, independent masks), expected positive",
    paper_value="items < ratings",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    d, _ = area_diff(r, {"scheme": "ratings", "metric": None}, {"scheme": "items", "metric": None})
    return sign_rule(d, "positive", label="area(ratings) − area(items)")


@LEDGER.claim(
    "valcarce2020.s6-3-2.items-like-ratings",
    statement="Random items removed: the same picture as random ratings (P, F1 and nDCG most "
    "robust)",
    source="§6.3.2, Fig. 5",
    rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
    paper_value="P, F1, nDCG",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "items"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim(
    "valcarce2020.s6-3-2.p-most-robust-popular",
    statement="Precision is the most robust metric when the most popular items are removed",
    source="§6.3.2, Fig. 6, §8",
    rule="order rule on the area under the τ curve (deterministic masks: bootstrap over users)",
    paper_value="P",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return order_rule(areas(r, "popular"), "P")


@LEDGER.claim(
    "valcarce2020.s6-3-2.mrr-err-worst-popular",
    statement="MRR and ERR are the least robust metrics when the most popular items are removed",
    source="§6.3.2, Fig. 6",
    rule="rank rule on the area under the τ curve: MRR and ERR rank 8–9 of 9",
    paper_value="MRR, ERR",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "popular"), ["MRR", "ERR"], 8, 9)


@LEDGER.claim(
    "valcarce2020.s6-3-2.f1-ndcg-good-popular",
    statement="F1 and nDCG are moderately robust when the most popular items are removed",
    source="§6.3.2, Fig. 6, §8",
    rule="rank rule on the area under the τ curve: F1 and nDCG rank 2–5 of 9 "
    "(upper half, after precision)",
    paper_value="F1, nDCG upper half",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "popular"), ["F1", "nDCG"], 2, 5)


@LEDGER.claim(
    "valcarce2020.s6-3-2.beeradvocate-negative",
    statement="On BeerAdvocate τ turns negative after removing a few popular items",
    source="§6.3.2, Fig. 6",
    rule="not run here",
    paper_value="τ < 0",
    paper_dataset="BeerAdvocate",
)
def _(r):
    return not_reproduced("BeerAdvocate is not available here")


# ---- §6.3.3 user incompleteness (Figs. 7, 8) ----------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s6-3-3.users-smoother",
    statement="Removing random users lowers τ much less than removing random ratings",
    source="§6.3.3, Figs. 3 and 7",
    rule="sign rule on area(users) − area(ratings), each averaged over the "
    "nine metrics (the same users, independent masks), expected positive",
    paper_value="users > ratings",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    d, _ = area_diff(r, {"scheme": "users", "metric": None}, {"scheme": "ratings", "metric": None})
    return sign_rule(d, "positive", label="area(users) − area(ratings)")


@LEDGER.claim(
    "valcarce2020.s6-3-3.users-like-ratings",
    statement="Random users removed: the same picture as random ratings (P, F1 and nDCG most "
    "robust)",
    source="§6.3.3, Fig. 7",
    rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
    paper_value="P, F1, nDCG",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "users"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim(
    "valcarce2020.s6-3-3.mrr-err-large-users",
    statement="MRR and ERR are the most robust metrics when the largest users are removed",
    source="§6.3.3, Fig. 8",
    rule="rank rule on the area under the τ curve: MRR and ERR rank 1–2 of 9",
    paper_value="MRR, ERR",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "large-users"), ["MRR", "ERR"], 1, 2)


@LEDGER.claim(
    "valcarce2020.s6-3-3.infap-bpref-large-users",
    statement="infAP and bpref come next when the largest users are removed",
    source="§6.3.3, Fig. 8",
    rule="rank rule on the area under the τ curve: infAP and bpref rank 3–4 of 9",
    paper_value="infAP, bpref",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "large-users"), ["infAP", "bpref"], 3, 4)


@LEDGER.claim(
    "valcarce2020.s6-3-3.p-f1-ndcg-lose-large-users",
    statement="Precision, F1 and nDCG lose their robustness when the largest users are removed",
    source="§6.3.3, Fig. 8",
    rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 5–9 of 9",
    paper_value="P, F1, nDCG lower",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    return rank_rule(areas(r, "large-users"), ["P", "F1", "nDCG"], 5, 9)


@LEDGER.claim(
    "valcarce2020.s6-3-3.librarything-flatter",
    statement="The large-user effect is less clear on LibraryThing (flatter profiles)",
    source="§6.3.3, Fig. 8",
    rule="not run here",
    paper_value="less clear",
    paper_dataset="LibraryThing",
)
def _(r):
    return not_reproduced("LibraryThing is not available here")
