r"""The ledger of the assessing-ranking-metrics chapter: Valcarce, Bellogín, Parapar & Castells
(2020).

*Assessing ranking metrics in top-N recommendation* (Information Retrieval Journal 23,
pp. 411–448) studies nine metrics at cut-off 100 — P, Recall, F1, MAP, nDCG, MRR, ERR, bpref,
infAP — for discriminative power (sum of permutation-test p-values over all system pairs, DP)
and robustness (Kendall's τ between the system orderings on incomplete and full test sets)
under five incompleteness schemes, with arithmetic and geometric means, on MovieLens 1M,
LibraryThing and BeerAdvocate. This module holds its claims, one per figure, table and
conclusion, with the values the paper prints as constants; each claim's evaluate function
reads the chapter's results (:meth:`~.study.Results.ledger_inputs`) through :mod:`.estimates`.

Readings, stated once:

- *Robustness* of a metric under a scheme is the area under its τ curve (mean τ over the
  shares, trapezoid rule). Its interval is the BC interval of a two-level bootstrap
  (:mod:`.uncertainty`): the users resampled, and for the random schemes the masks of each
  share too; the deterministic schemes (popular items, largest users) resample the users, as
  the chapter on Valcarce et al. (2018) does for the same scheme.
- "Every ..." over several signs is :func:`recmeta.ledger.every` (Holm across the parts);
  "some ..." is :func:`recmeta.ledger.some`. A claim on a smallest or largest value is tested
  part by part in this way, never by a percentile bootstrap of the minimum (biased low, hence
  towards "some τ is below").
- "X, Y and Z are the most robust" means ranks 1 to 3 of 9; "... among the least robust"
  ranks 7 to 9 (the bottom third) unless the paper names more metrics. A rank is established
  only where the intervals do not overlap (:func:`recmeta.ledger.rank_range`), as for
  :func:`recmeta.ledger.order_rule`.
- DP comes from permutation tests on users (each user's scores averaged over the folds); its
  interval is a bootstrap over users (:func:`~.bootstrap.dp_estimate`).
- Figures 1–14 are images: the paper prints no numbers for them, so their claims are the
  paper's sentences about them. Table 3 (DP values) is not legible in the text available to
  us, and its claim says so; Table 2 (dataset statistics) is held against the ML-1M release's
  counts (:mod:`.claims_definitions`), its other rows describe data we do not have.

The claims of §6.3 are declared in :mod:`.claims_incompleteness`, those of §7 and §8 in
:mod:`.claims_means`, and the definitions (eqs. 1–11) and datasets (Table 2) in
:mod:`.claims_definitions`, on the same :data:`LEDGER` (the package imports the four modules
in turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from ...ledger import (
    DERIVED,
    Estimate,
    Ledger,
    Margin,
    Outcome,
    all_of,
    every,
    format_number,
    not_reproduced,
    order_rule,
    rank_rule,
    sign_rule,
    some,
    value_rule,
)
from ...metaeval.bootstrap import sign_pvalues
from ...metaeval.significance import monte_carlo_se
from .. import register
from .estimates import (
    area_replicates,
    boot_estimate,
    boot_how,
    bulk_tau,
    dp_of,
    metric_label,
    offdiag,
    signs,
    tau_stat,
    with_note,
)

__all__ = [
    "CHAPTER",
    "CUTOFF",
    "JUDGED_SHARE",
    "LEDGER",
    "MC_ERROR",
    "N_FOLDS",
    "N_PAIRS",
    "N_PERMUTATIONS",
    "N_SAMPLES",
    "N_SYSTEMS",
    "PAPER",
    "TAU_ARITH_GEO",
    "TAU_HALF_RATINGS",
    "TAU_LIBRARYTHING",
    "TAU_SOME_BELOW",
    "THRESHOLD",
]

CHAPTER = "assessing-ranking-metrics"
PAPER = "valcarce2020assessing"

# ---- the paper's printed values (section of Valcarce et al. 2020) -----------------------------
#: §5.3: 21 recommenders, so 210 system pairs (§6.2)
N_SYSTEMS = 21
N_PAIRS = 210
#: §5.1: 5-fold cross-validation; §4.2.1: 50 random samples per test size; §6: cut-off 100
N_FOLDS = 5
N_SAMPLES = 50
CUTOFF = 100
#: §3.2, §5.2: ratings >= 4 are relevant
THRESHOLD = 4
#: §4.1: Monte-Carlo permutations per test, and the error they print for two p-values
N_PERMUTATIONS = 100_000
MC_ERROR: dict[float, float] = {0.05: 0.001, 0.01: 0.00045}
#: §6.3.1: average test rating coverage of the systems' top 100 (MovieLens 1M, LT, BA)
JUDGED_SHARE: dict[str, float] = {"ML-1M": 0.05, "LibraryThing": 0.022, "BeerAdvocate": 0.014}
#: §6.3.1: "the correlation is above 0.9 even when removing half of the test set"
TAU_HALF_RATINGS = 0.9
HALF = 0.5
#: §6.1: "on the other two datasets [ML-1M, BA] ... some correlations below 0.8"
TAU_SOME_BELOW = 0.8
#: §6.1: "on the LibraryThing collection, all correlations are above 0.9"
TAU_LIBRARYTHING = 0.9
#: §7.1: τ between the arithmetic and geometric orderings on MovieLens 1M
TAU_ARITH_GEO: dict[str, float] = {"AP": 0.92, "F1": 0.42}


#: the paper's datasets as its claims name them, and its random incompleteness schemes
ML = "ML-1M"
ALL_DATASETS = "ML-1M, LibraryThing, BeerAdvocate"
RANDOM_SCHEMES = ("ratings", "items", "users")
#: what each family of claims reads from :meth:`~.study.Results.ledger_inputs`
ROBUST_NEEDS = ("curves", "curve_reps", "metrics", "n_systems")
#: one swapped pair among the paper's 21 systems: the smallest change of τ its figures show
PAPER_TAU_STEP = 2 / N_PAIRS
TAU_NEEDS = ("tau_among",)
DP_NEEDS = ("dp", "dp_reps", "dp_base", "dp_mc")

LEDGER = register(
    Ledger(CHAPTER, paper=PAPER, title="Assessing ranking metrics (Valcarce et al. 2020)")
)


# ---- §1 and §4.1 -------------------------------------------------------------------------------

#: the schemes of the arithmetic-mean conclusions (§1, §8): all but the largest users
ARITH_SCHEMES = ("ratings", "items", "popular", "users")


@LEDGER.claim(
    "valcarce2020.s1.precision-most-robust",
    statement="Precision offers the best robustness figures",
    source="§1, §8",
    rule="order rule on the mean of the areas under the τ curves of four schemes "
    "(random ratings, items and users, popular items; arithmetic means; two-level bootstrap, "
    "each replicate's mean of the four areas)",
    paper_value="P",
    paper_dataset=ALL_DATASETS,
    needs=ROBUST_NEEDS,
)
def _(r):
    est = {}
    for m in r["metrics"]:
        parts = [area_replicates(r, s, "mean", m) for s in ARITH_SCHEMES]
        value = float(np.mean([p for p, _ in parts]))
        reps = np.mean([rep for _, rep in parts], axis=0)
        est[metric_label(m)] = boot_estimate(
            value, reps, "mean of four schemes' areas", boot_how(r, *ARITH_SCHEMES)
        )
    return order_rule(est, "P")


def _mc_error(p: float, r: Mapping[str, Any]) -> Outcome:
    printed = MC_ERROR[p]
    # a two-sided p-value estimated as twice the one-sided share of B permutations
    se = float(monte_carlo_se(p, N_PERMUTATIONS, doubled=True))
    out = value_rule(
        printed,
        Estimate.exact(se, "standard error of a two-sided p-value, √(p(2−p)/B)"),
        Margin.printed(
            printed, 0.0, "an exact formula: only the rounding of the printed figure is allowed"
        ),
    )
    one = float(monte_carlo_se(p, N_PERMUTATIONS))
    return with_note(
        out,
        f"the share of B permutations as a one-sided p-value has standard error √(p(1−p)/B) "
        f"= {format_number(one, 2)}, which the printed figure is not",
    )


for _p, _printed in MC_ERROR.items():
    LEDGER.claim(
        f"valcarce2020.s4-1.mc-error-p{str(_p)[2:]}",
        statement=f"{N_PERMUTATIONS:,} permutations estimate a two-sided p-value of {_p:g} "
        f"with an error of ±{_printed:g}",
        source="§4.1",
        rule="ours: the standard error of a two-sided p-value estimated as twice a one-sided "
        "share of B permutations, √(p(2−p)/B), exact; equivalence within the rounding of the "
        "printed figure",
        paper_value=_printed,
        paper_dataset=DERIVED,
    )(partial(_mc_error, _p))


# ---- §6.1 correlation among metrics (Fig. 1) ----------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s6-1.mrr-err-apart",
    statement="MRR and ERR differ noticeably from the rest of the metrics",
    source="§6.1, Fig. 1",
    rule="rank rule on each metric's mean τ with the seven metrics other than MRR "
    "and ERR (bootstrap over users): MRR and ERR rank 8–9 of 9",
    paper_value="MRR, ERR lowest",
    paper_dataset="ML-1M, LibraryThing",
    needs=TAU_NEEDS,
)
def _(r):
    return rank_rule(bulk_tau(r["tau_among"], "mean", {"RR", "ERR"}), ["MRR", "ERR"], 8, 9)


@LEDGER.claim(
    "valcarce2020.s6-1.mrr-err-together",
    statement="MRR and ERR are correlated with each other",
    source="§6.1, Fig. 1",
    rule="every rule: τ(MRR, ERR) exceeds τ of MRR and of ERR with each of the other seven "
    "metrics (14 sign tests on bootstrap replicates over users, Holm)",
    paper_value="τ(MRR, ERR) high",
    paper_dataset=ALL_DATASETS,
    needs=TAU_NEEDS,
)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("RR"), tb.metrics.index("ERR")
    parts = {}
    for k, m in enumerate(tb.metrics):
        if k in (i, j):
            continue
        for a, name in ((i, "MRR"), (j, "ERR")):
            what = f"τ(MRR, ERR) − τ({name}, {metric_label(m)})"
            reps = tb.reps["mean"][:, i, j] - tb.reps["mean"][:, a, k]
            point = float(tb.point["mean"][i, j] - tb.point["mean"][a, k])
            parts[what] = (boot_estimate(point, reps, what), reps)
    outs, p_exp, p_opp = signs(parts, "positive", lambda k: k)
    return every(outs, p_exp, p_opp)


@LEDGER.claim(
    "valcarce2020.s6-1.map-ndcg-strong",
    statement="MAP is strongly correlated with nDCG",
    source="§6.1, Fig. 1",
    rule="sign rule: τ(MAP, nDCG) minus the median τ of the 36 metric pairs is "
    "positive (bootstrap over users)",
    paper_value="τ(MAP, nDCG) high",
    paper_dataset=ALL_DATASETS,
    needs=TAU_NEEDS,
)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("AP"), tb.metrics.index("nDCG")

    def gap(t: np.ndarray) -> np.ndarray:
        return t[..., i, j] - np.median(offdiag(t), axis=-1)

    return sign_rule(
        tau_stat(tb, "mean", gap, "τ(MAP, nDCG) − median τ"),
        "positive",
        label="τ(MAP, nDCG) minus the median τ",
    )


@LEDGER.claim(
    "valcarce2020.s6-1.some-below-08",
    statement=f"Some correlations among metrics fall below {TAU_SOME_BELOW:g}",
    source="§6.1, Fig. 1",
    rule=f"some rule: at least one of the 36 pairs of metrics has τ below {TAU_SOME_BELOW:g} "
    "(one-sided sign tests on bootstrap replicates over users, Holm across the pairs; not a "
    "bootstrap of the smallest τ, which is biased low)",
    paper_value=TAU_SOME_BELOW,
    paper_dataset="ML-1M, BeerAdvocate",
    needs=TAU_NEEDS,
)
def _(r):
    tb = r["tau_among"]
    names = [metric_label(m) for m in tb.metrics]
    iu, ju = np.triu_indices(len(names), 1)
    parts, p_exp, p_opp = {}, {}, {}
    for a, b in zip(iu, ju, strict=True):
        key = f"{TAU_SOME_BELOW:g} − τ({names[a]}, {names[b]})"
        reps = TAU_SOME_BELOW - tb.reps["mean"][:, a, b]
        reps = reps[np.isfinite(reps)]
        parts[key] = boot_estimate(TAU_SOME_BELOW - float(tb.point["mean"][a, b]), reps, key)
        below, above = sign_pvalues(reps, point=parts[key].value)
        p_exp[key], p_opp[key] = below, above
    return some(parts, p_exp, p_opp, what=f"pairs of metrics shown below τ = {TAU_SOME_BELOW:g}")


@LEDGER.claim(
    "valcarce2020.s6-1.librarything-above-09",
    statement=f"On LibraryThing all correlations among metrics exceed {TAU_LIBRARYTHING:g}",
    source="§6.1, Fig. 1",
    rule="not run here",
    paper_value=TAU_LIBRARYTHING,
    paper_dataset="LibraryThing",
)
def _(r):
    return not_reproduced("LibraryThing is not available here")


@LEDGER.claim(
    "valcarce2020.s6-1.beeradvocate-bpref-map",
    statement="On BeerAdvocate bpref correlates poorly with MAP",
    source="§6.1, Fig. 1",
    rule="not run here",
    paper_value="low τ(bpref, MAP)",
    paper_dataset="BeerAdvocate",
)
def _(r):
    return not_reproduced("BeerAdvocate is not available here")


# ---- §6.2 discriminative power (Fig. 2, Table 3) ------------------------------------------------


@LEDGER.claim(
    "valcarce2020.s6-2.ndcg-most-discriminative",
    statement="nDCG shows the highest discriminative power (the lowest DP)",
    source="§1, §6.2, Fig. 2, Table 3, §8",
    rule="order rule on DP, lower is better (permutation tests on "
    "users; bootstrap interval over users): nDCG's interval clear of every other metric's",
    paper_value="nDCG",
    paper_dataset="ML-1M, LibraryThing",
    needs=DP_NEEDS + ("metrics",),
)
def _(r):
    # "the lowest DP" is read from each metric's own interval (no bootstrap of the minimum):
    # nDCG must lie clear of every other metric, which a wider interval only makes harder
    return order_rule(
        {metric_label(m): dp_of(r, m) for m in r["metrics"]}, "nDCG", higher_is_better=False
    )


@LEDGER.claim(
    "valcarce2020.s6-2.table3",
    statement="DP values of the nine metrics",
    source="§6.2, Table 3",
    rule="not run here",
    paper_value="not legible",
    paper_dataset=ALL_DATASETS,
)
def _(r):
    return not_reproduced(
        "the table's values are not legible in the text available to us; and DP compares "
        "systems on one dataset only (§4.1): a sum of p-values over the pairs of one set of "
        "systems, it has no meaning across datasets or rosters, so the chapter grades only "
        "how the metrics' DP compare on the same users and systems"
    )


@LEDGER.claim(
    "valcarce2020.s6-2.map-beats-p",
    statement="MAP shows a slightly higher discriminative power than precision",
    source="§6.2",
    rule="sign rule on DP(P) − DP(MAP), expected positive (paired bootstrap over users)",
    paper_value="DP(MAP) < DP(P)",
    paper_dataset="ML-1M, LibraryThing",
    needs=DP_NEEDS,
)
def _(r):
    return sign_rule(dp_of(r, "P", "AP"), "positive", label="DP(P) − DP(MAP)")


@LEDGER.claim(
    "valcarce2020.s6-2.bpref-below-map-ndcg",
    statement="bpref discriminates slightly less than MAP and nDCG",
    source="§6.2",
    rule="sign rule on DP(bpref) − DP(MAP) and DP(bpref) − DP(nDCG), both expected positive",
    paper_value="DP(bpref) > DP(MAP), DP(nDCG)",
    paper_dataset=ALL_DATASETS,
    needs=DP_NEEDS,
)
def _(r):
    return all_of(
        {
            f"DP(bpref) − DP({metric_label(m)})": sign_rule(
                dp_of(r, "bpref", m), "positive", label=f"DP(bpref) − DP({metric_label(m)})"
            )
            for m in ("AP", "nDCG")
        }
    )


@LEDGER.claim(
    "valcarce2020.s6-2.folds-stable",
    statement="Other random 5-fold splits give very similar DP values",
    source="§6.2",
    rule="not run here",
    paper_value="small differences",
    paper_dataset=ALL_DATASETS,
)
def _(r):
    return not_reproduced(
        "the chapter runs one seeded 5-fold split; it does not repeat the study on other folds"
    )


@LEDGER.claim(
    "valcarce2020.s6-2.graded-hard-users",
    statement="The graded metrics (nDCG and ERR) discriminate better, against the binary ones, "
    "among hard users (small test profiles)",
    source="§6.2",
    rule="sign rule on c(hard) − c(easy), expected negative: c = log(mean DP of nDCG and ERR ÷ "
    "mean DP of the seven binary metrics) on the users below (hard) and above (easy) the "
    "median test profile, equal halves (paired t-test DP, each p-value floored at 1/(B + 1) "
    "for the chapter's B permutations; BC interval of a bootstrap of the users within "
    "each half). The paper compares collections; the chapter compares the users of one",
    paper_value="graded metrics gain with more hard users",
    paper_dataset=ALL_DATASETS,
    needs=("hard_users",),
)
def _(r):
    h = r["hard_users"]
    est = boot_estimate(h.point, h.reps, "c(hard) − c(easy)")
    out = sign_rule(est, "negative", label="c(hard) − c(easy)")
    return with_note(
        out,
        f"two halves of {h.users} users, median test profiles {h.sizes['hard']:g} and "
        f"{h.sizes['easy']:g} ratings",
    )


def _average_dp(metric: str, r: Mapping[str, Any]) -> Outcome:
    return rank_rule(
        {metric_label(m): dp_of(r, m) for m in r["metrics"]},
        [metric_label(metric)],
        3,
        7,
        higher_is_better=False,
    )


for _m in ("bpref", "infAP"):
    LEDGER.claim(
        f"valcarce2020.s6-2.{_m.lower()}-average",
        statement=f"{metric_label(_m)} has an overall average behaviour in discriminative power",
        source="§6.2",
        rule=f"rank rule on DP (lower is better; bootstrap intervals over users): "
        f"{metric_label(_m)} ranks 3–7 of 9, neither among the two best nor the two worst",
        paper_value=f"{metric_label(_m)} mid-pack",
        paper_dataset=ALL_DATASETS,
        needs=DP_NEEDS + ("metrics",),
    )(partial(_average_dp, _m))


@LEDGER.claim(
    "valcarce2020.s6-2.map-recall-mrr-erratic",
    statement="MAP, Recall and MRR discriminate erratically: their DP ranks move from one "
    "dataset to another",
    source="§6.2",
    rule="not run here",
    paper_value="erratic across ML-1M, LT, BA",
    paper_dataset="LibraryThing, BeerAdvocate",
)
def _(r):
    return not_reproduced(
        "LibraryThing and BeerAdvocate are not available here, and the statement compares the "
        "DP ranks of the paper's three datasets with one another"
    )


@LEDGER.claim(
    "valcarce2020.s6-2.bpref-beeradvocate-loss",
    statement="bpref loses some discriminative power on BeerAdvocate",
    source="§6.2",
    rule="not run here",
    paper_value="bpref lower on BA",
    paper_dataset="BeerAdvocate",
)
def _(r):
    return not_reproduced("BeerAdvocate is not available here")
