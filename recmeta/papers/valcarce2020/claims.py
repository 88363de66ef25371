r"""The ledger of the assessing-ranking-metrics chapter: Valcarce, Bellogín, Parapar & Castells (2020).

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
  shares, trapezoid rule; :func:`~.curves.area_estimate`). Random schemes carry a
  Monte-Carlo band over their masks; the deterministic ones (popular items, largest users) a
  band of ± one half of a swapped system pair's τ step, so that metrics closer than one swapped
  pair tie.
- "X, Y and Z are the most robust" means ranks 1 to 3 of 9; "... among the least robust"
  ranks 7 to 9 (the bottom third) unless the paper names more metrics. A rank is established
  only where the intervals do not overlap (:func:`recmeta.ledger.rank_range`), as for
  :func:`recmeta.ledger.order_rule`.
- DP comes from permutation tests on users (each user's scores averaged over the folds); its
  interval is a bootstrap over users (:func:`~.bootstrap.dp_estimate`).
- Figures 1–14 are images: the paper prints no numbers for them, so their claims are the
  paper's sentences about them. Table 3 (DP values) is not legible in the text available to
  us, and its claim says so; Table 2 (dataset statistics) describes data we do not have.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from ...ledger import (
    Estimate,
    Ledger,
    Outcome,
    all_of,
    equivalence_rule,
    format_estimate,
    format_number,
    half_unit,
    not_reproduced,
    order_rule,
    rank_rule,
    sign_rule,
    value_rule,
)
from .. import register
from .curves import curve_point
from .estimates import (
    area_diff,
    areas,
    boot_estimate,
    bulk_tau,
    dp_of,
    fig4,
    judged_estimate,
    metric_label,
    offdiag,
    tau_stat,
    tau_step,
    with_note,
)
from .folds import SCHEMES

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


_ML = "ML-1M"
_ALL = "ML-1M, LibraryThing, BeerAdvocate"
_RANDOM = ("ratings", "items", "users")
#: what each family of claims reads from :meth:`~.study.Results.ledger_inputs`
_ROBUST = ("taus", "curves", "metrics", "n_systems")
_TAU = ("tau_among",)
_DP = ("dp", "dp_reps", "dp_base", "dp_mc")

LEDGER = register(Ledger(CHAPTER, paper=PAPER,
                         title="Assessing ranking metrics (Valcarce et al. 2020)"))


# ---- §1 and §4.1 -------------------------------------------------------------------------------

_SCHEMES_ARITH = ("ratings", "items", "popular", "users")


@LEDGER.claim("valcarce2020.s1.precision-most-robust",
              statement="Precision offers the best robustness figures", source="§1, §8",
              rule="order rule on the mean of the areas under the τ curves of four schemes "
                   "(random ratings, items and users, popular items; arithmetic means)",
              paper_value="P", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    per = {s: areas(r, s) for s in _SCHEMES_ARITH}
    est = {}
    for m in per[_SCHEMES_ARITH[0]]:
        parts = [per[s][m] for s in _SCHEMES_ARITH]
        value = float(np.mean([e.value for e in parts]))
        half = math.sqrt(sum(((e.high - e.low) / 2) ** 2 for e in parts)) / len(parts)
        est[m] = Estimate(value, value - half, value + half,
                          "mean of four schemes' areas, half-widths combined as independent")
    return order_rule(est, "P")


def _mc_error(p: float, r: Mapping[str, Any]) -> Outcome:
    printed = MC_ERROR[p]
    se = math.sqrt(p * (1 - p) / N_PERMUTATIONS)
    out = value_rule(printed, Estimate.exact(se, "binomial standard error √(p(1−p)/B)"),
                     tolerance=half_unit(printed))
    alt = math.sqrt(2 * p * (1 - p) / N_PERMUTATIONS)
    return with_note(out, f"√(2p(1−p)/B) = {format_number(alt, 2)}, √2 times the standard "
                          "error, matches the printed figure")


for _p, _printed in MC_ERROR.items():
    LEDGER.claim(f"valcarce2020.s4-1.mc-error-p{str(_p)[2:]}",
                 statement=f"{N_PERMUTATIONS:,} permutations estimate a p-value of {_p:g} "
                           f"within ±{_printed:g}",
                 source="§4.1",
                 rule="ours: the binomial standard error √(p(1−p)/B) at the paper's B, exact; "
                      "agrees within half a unit of the paper's last printed digit",
                 paper_value=_printed)(partial(_mc_error, _p))


# ---- §6.1 correlation among metrics (Fig. 1) ----------------------------------------------------


@LEDGER.claim("valcarce2020.s6-1.mrr-err-apart",
              statement="MRR and ERR differ noticeably from the rest of the metrics",
              source="§6.1, Fig. 1",
              rule="rank rule on each metric's mean τ with the seven metrics other than MRR "
                   "and ERR (bootstrap over users): MRR and ERR rank 8–9 of 9",
              paper_value="MRR, ERR lowest", paper_dataset="ML-1M, LibraryThing", needs=_TAU)
def _(r):
    return rank_rule(bulk_tau(r["tau_among"], "mean", {"RR", "ERR"}), ["MRR", "ERR"], 8, 9)


@LEDGER.claim("valcarce2020.s6-1.mrr-err-together",
              statement="MRR and ERR are correlated with each other", source="§6.1, Fig. 1",
              rule="sign rule: τ(MRR, ERR) minus the largest τ of either with another metric "
                   "is positive (bootstrap over users)",
              paper_value="τ(MRR, ERR) high", paper_dataset=_ALL, needs=_TAU)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("RR"), tb.metrics.index("ERR")
    rest = [k for k in range(len(tb.metrics)) if k not in (i, j)]

    def gap(t: np.ndarray) -> np.ndarray:
        return t[..., i, j] - np.maximum(t[..., i, rest].max(axis=-1), t[..., j, rest].max(axis=-1))

    return sign_rule(tau_stat(tb, "mean", gap, "τ(MRR, ERR) − max τ with the others"), "positive",
                     label="τ(MRR, ERR) minus the largest τ with another metric")


@LEDGER.claim("valcarce2020.s6-1.map-ndcg-strong",
              statement="MAP is strongly correlated with nDCG", source="§6.1, Fig. 1",
              rule="sign rule: τ(MAP, nDCG) minus the median τ of the 36 metric pairs is "
                   "positive (bootstrap over users)",
              paper_value="τ(MAP, nDCG) high", paper_dataset=_ALL, needs=_TAU)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("AP"), tb.metrics.index("nDCG")

    def gap(t: np.ndarray) -> np.ndarray:
        return t[..., i, j] - np.median(offdiag(t), axis=-1)

    return sign_rule(tau_stat(tb, "mean", gap, "τ(MAP, nDCG) − median τ"), "positive",
                     label="τ(MAP, nDCG) minus the median τ")


@LEDGER.claim("valcarce2020.s6-1.some-below-08",
              statement=f"Some correlations among metrics fall below {TAU_SOME_BELOW:g}",
              source="§6.1, Fig. 1",
              rule=f"sign rule: {TAU_SOME_BELOW:g} minus the smallest τ between two metrics is "
                   "positive (bootstrap over users)",
              paper_value=TAU_SOME_BELOW, paper_dataset="ML-1M, BeerAdvocate", needs=_TAU)
def _(r):
    tb = r["tau_among"]
    est = tau_stat(tb, "mean", lambda t: TAU_SOME_BELOW - offdiag(t).min(axis=-1),
                  f"{TAU_SOME_BELOW:g} − min τ")
    return sign_rule(est, "positive", label=f"{TAU_SOME_BELOW:g} minus the smallest τ")


@LEDGER.claim("valcarce2020.s6-1.librarything-above-09",
              statement=f"On LibraryThing all correlations among metrics exceed {TAU_LIBRARYTHING:g}",
              source="§6.1, Fig. 1", rule="not run here", paper_value=TAU_LIBRARYTHING,
              paper_dataset="LibraryThing")
def _(r):
    return not_reproduced("LibraryThing is not available here")


@LEDGER.claim("valcarce2020.s6-1.beeradvocate-bpref-map",
              statement="On BeerAdvocate bpref correlates poorly with MAP", source="§6.1, Fig. 1",
              rule="not run here", paper_value="low τ(bpref, MAP)", paper_dataset="BeerAdvocate")
def _(r):
    return not_reproduced("BeerAdvocate is not available here")


# ---- §6.2 discriminative power (Fig. 2, Table 3) ------------------------------------------------


@LEDGER.claim("valcarce2020.s6-2.ndcg-most-discriminative",
              statement="nDCG shows the highest discriminative power (the lowest DP)",
              source="§1, §6.2, Fig. 2, Table 3, §8",
              rule="order rule on DP, lower is better (permutation tests on "
                   "users; bootstrap interval over users)",
              paper_value="nDCG", paper_dataset="ML-1M, LibraryThing", needs=_DP + ("metrics",))
def _(r):
    return order_rule({metric_label(m): dp_of(r, m) for m in r["metrics"]}, "nDCG", higher_is_better=False)


@LEDGER.claim("valcarce2020.s6-2.table3",
              statement="DP values of the nine metrics", source="§6.2, Table 3",
              rule="not run here", paper_value="not legible", paper_dataset=_ALL)
def _(r):
    return not_reproduced("the table's values are not legible in the text available to us, and DP depends on the systems "
                          "and the dataset (§4.1), so the paper's values are not comparable with ours")


@LEDGER.claim("valcarce2020.s6-2.map-beats-p",
              statement="MAP shows a slightly higher discriminative power than precision",
              source="§6.2",
              rule="sign rule on DP(P) − DP(MAP), expected positive (paired bootstrap over users)",
              paper_value="DP(MAP) < DP(P)", paper_dataset="ML-1M, LibraryThing", needs=_DP)
def _(r):
    return sign_rule(dp_of(r, "P", "AP"), "positive", label="DP(P) − DP(MAP)")


@LEDGER.claim("valcarce2020.s6-2.bpref-below-map-ndcg",
              statement="bpref discriminates slightly less than MAP and nDCG", source="§6.2",
              rule="sign rule on DP(bpref) − DP(MAP) and DP(bpref) − DP(nDCG), both expected positive",
              paper_value="DP(bpref) > DP(MAP), DP(nDCG)", paper_dataset=_ALL, needs=_DP)
def _(r):
    return all_of({f"DP(bpref) − DP({metric_label(m)})": sign_rule(dp_of(r, "bpref", m), "positive",
                                                           label=f"DP(bpref) − DP({metric_label(m)})")
                   for m in ("AP", "nDCG")})


@LEDGER.claim("valcarce2020.s6-2.folds-stable",
              statement="Other random 5-fold splits give very similar DP values", source="§6.2",
              rule="not run here", paper_value="small differences", paper_dataset=_ALL)
def _(r):
    return not_reproduced("the chapter runs one seeded 5-fold split; it does not repeat the study on other folds")


# ---- §6.3.1 rating incompleteness (Figs. 3, 4) --------------------------------------------------


@LEDGER.claim("valcarce2020.s6-3-1.judged-share",
              statement="The systems' top-100 lists carry a test rating at about one position in twenty",
              source="§6.3.1",
              rule="value rule: the paper's share within our bootstrap interval (mean over users "
                   "of the judged share of their ranked positions), widened by half a unit of its last digit",
              paper_value=JUDGED_SHARE["ML-1M"], paper_dataset=_ML, needs=("judged",))
def _(r):
    est = judged_estimate(r["judged"])
    out = value_rule(JUDGED_SHARE["ML-1M"], est, tolerance=half_unit(JUDGED_SHARE["ML-1M"]))
    return with_note(out, "the share depends on the dataset's density and on the systems, and "
                      "ML-1M is not available here")


@LEDGER.claim("valcarce2020.s6-3-1.half-above-09",
              statement=f"Every metric keeps τ above {TAU_HALF_RATINGS:g} with half of the test ratings removed",
              source="§6.3.1, Fig. 3",
              rule=f"sign rule on τ − {TAU_HALF_RATINGS:g} at half of the ratings for every "
                   "metric (t band over the masks)",
              paper_value=TAU_HALF_RATINGS, paper_dataset=_ALL, needs=("curves", "metrics"))
def _(r):
    outs = {}
    for m in r["metrics"]:
        e = curve_point(r["curves"], HALF, scheme="ratings", metric=m)
        if e is None:
            return not_reproduced("the grid of shares has no point at one half")
        if e.low is None or e.high is None:
            shifted = Estimate.point(e.value - TAU_HALF_RATINGS, e.method)
        else:
            shifted = Estimate(e.value - TAU_HALF_RATINGS, e.low - TAU_HALF_RATINGS,
                               e.high - TAU_HALF_RATINGS, e.method)
        outs[metric_label(m)] = sign_rule(shifted, "positive", label=f"τ − {TAU_HALF_RATINGS:g}")
    worst = min(outs, key=lambda k: outs[k].ours.value)
    out = all_of(outs)
    return Outcome(out.verdict, outs[worst].ours, out.reason,
                   f"lowest: {worst}, τ − {TAU_HALF_RATINGS:g} = {format_estimate(outs[worst].ours)}")


@LEDGER.claim("valcarce2020.s6-3-1.p-f1-ndcg-most-robust",
              statement="Precision, F1 and nDCG are the most robust metrics to missing ratings",
              source="§6.3.1, Fig. 3",
              rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
              paper_value="P, F1, nDCG", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "ratings"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim("valcarce2020.s6-3-1.five-least-robust",
              statement="ERR, bpref, infAP, Recall and MRR show poor robustness to missing ratings",
              source="§6.3.1, Fig. 3",
              rule="rank rule on the area under the τ curve: the five rank 5–9 of 9",
              paper_value="ERR, bpref, infAP, Recall, MRR", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "ratings"), ["ERR", "bpref", "infAP", "Recall", "MRR"], 5, 9)


@LEDGER.claim("valcarce2020.s6-3-1.p-proportional",
              statement="Precision falls linearly with the share of ratings kept; the other metrics do not",
              source="§6.3.1, Fig. 4",
              rule="order rule on |mean/full − share| at the share nearest one half, lower "
                   "is better (t band over the masks)",
              paper_value="P", paper_dataset=_ALL, needs=("absolute", "full_values"))
def _(r):
    p, est = fig4(r, lambda v, full, s: v / full - s)
    return with_note(order_rule(est, "P", higher_is_better=False),
                 f"deviation from proportionality at share {p:g}")


@LEDGER.claim("valcarce2020.s6-3-1.p-changes-least",
              statement="Precision's absolute value decreases slowly while the other metrics decrease much faster",
              source="§6.3.1, Fig. 4",
              rule="order rule on the absolute change of the mean value from the full test "
                   "set to the share nearest one half, lower is better",
              paper_value="P", paper_dataset=_ALL, needs=("absolute", "full_values"))
def _(r):
    p, est = fig4(r, lambda v, full, s: v - full)
    return with_note(order_rule(est, "P", higher_is_better=False), f"absolute change at share {p:g}")


@LEDGER.claim("valcarce2020.s6-3-1.bpref-like-map",
              statement="On MovieLens, bpref is comparable to MAP in robustness to missing ratings",
              source="§6.3.1, Fig. 3",
              rule="equivalence rule: area(bpref) − area(MAP), paired by mask, within ± one "
                   "swapped system pair's τ step",
              paper_value="comparable", paper_dataset=_ML, needs=_ROBUST)
def _(r):
    d = area_diff(r, {"scheme": "ratings", "metric": "bpref"}, {"metric": "AP"})
    return equivalence_rule(d, tau_step(r), label="area(bpref) − area(MAP)")


@LEDGER.claim("valcarce2020.s6-3-1.infap-above-map",
              statement="On MovieLens, infAP is slightly more robust than MAP to missing ratings",
              source="§6.3.1, Fig. 3",
              rule="sign rule on area(infAP) − area(MAP), paired by mask, expected positive",
              paper_value="infAP > MAP", paper_dataset=_ML, needs=_ROBUST)
def _(r):
    d = area_diff(r, {"scheme": "ratings", "metric": "infAP"}, {"metric": "AP"})
    return sign_rule(d, "positive", label="area(infAP) − area(MAP)")


@LEDGER.claim("valcarce2020.s6-3-1.map-beats-bpref-infap",
              statement="MAP is more robust than bpref and infAP on LibraryThing and BeerAdvocate",
              source="§6.3.1, §8", rule="not run here", paper_value="MAP > bpref, infAP",
              paper_dataset="LibraryThing, BeerAdvocate")
def _(r):
    return not_reproduced("LibraryThing and BeerAdvocate are not available here; on MovieLens the paper "
                          "itself finds bpref comparable to MAP and infAP slightly better (claims above)")


# ---- §6.3.2 item incompleteness (Figs. 5, 6) ----------------------------------------------------


@LEDGER.claim("valcarce2020.s6-3-2.items-drop-more",
              statement="Removing whole items lowers τ more than removing single ratings",
              source="§6.3.2, Figs. 3 and 5",
              rule="sign rule on area(ratings) − area(items), each averaged over the "
                   "nine metrics (independent masks), expected positive",
              paper_value="items < ratings", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    d = area_diff(r, {"scheme": "ratings", "metric": None}, {"scheme": "items", "metric": None})
    return sign_rule(d, "positive", label="area(ratings) − area(items)")


@LEDGER.claim("valcarce2020.s6-3-2.items-like-ratings",
              statement="Random items removed: the same picture as random ratings (P, F1 and nDCG most robust)",
              source="§6.3.2, Fig. 5",
              rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
              paper_value="P, F1, nDCG", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "items"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim("valcarce2020.s6-3-2.p-most-robust-popular",
              statement="Precision is the most robust metric when the most popular items are removed",
              source="§6.3.2, Fig. 6, §8",
              rule="order rule on the area under the τ curve (deterministic masks: "
                   "closer than one swapped pair is a tie)",
              paper_value="P", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return order_rule(areas(r, "popular"), "P")


@LEDGER.claim("valcarce2020.s6-3-2.mrr-err-worst-popular",
              statement="MRR and ERR are the least robust metrics when the most popular items are removed",
              source="§6.3.2, Fig. 6",
              rule="rank rule on the area under the τ curve: MRR and ERR rank 8–9 of 9",
              paper_value="MRR, ERR", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "popular"), ["MRR", "ERR"], 8, 9)


@LEDGER.claim("valcarce2020.s6-3-2.f1-ndcg-good-popular",
              statement="F1 and nDCG are moderately robust when the most popular items are removed",
              source="§6.3.2, Fig. 6, §8",
              rule="rank rule on the area under the τ curve: F1 and nDCG rank 2–5 of 9 "
                   "(upper half, after precision)",
              paper_value="F1, nDCG upper half", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "popular"), ["F1", "nDCG"], 2, 5)


@LEDGER.claim("valcarce2020.s6-3-2.beeradvocate-negative",
              statement="On BeerAdvocate τ turns negative after removing a few popular items",
              source="§6.3.2, Fig. 6", rule="not run here", paper_value="τ < 0",
              paper_dataset="BeerAdvocate")
def _(r):
    return not_reproduced("BeerAdvocate is not available here")


# ---- §6.3.3 user incompleteness (Figs. 7, 8) ----------------------------------------------------


@LEDGER.claim("valcarce2020.s6-3-3.users-smoother",
              statement="Removing random users lowers τ much less than removing random ratings",
              source="§6.3.3, Figs. 3 and 7",
              rule="sign rule on area(users) − area(ratings), each averaged over the "
                   "nine metrics (independent masks), expected positive",
              paper_value="users > ratings", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    d = area_diff(r, {"scheme": "users", "metric": None}, {"scheme": "ratings", "metric": None})
    return sign_rule(d, "positive", label="area(users) − area(ratings)")


@LEDGER.claim("valcarce2020.s6-3-3.users-like-ratings",
              statement="Random users removed: the same picture as random ratings (P, F1 and nDCG most robust)",
              source="§6.3.3, Fig. 7",
              rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
              paper_value="P, F1, nDCG", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "users"), ["P", "F1", "nDCG"], 1, 3)


@LEDGER.claim("valcarce2020.s6-3-3.mrr-err-large-users",
              statement="MRR and ERR are the most robust metrics when the largest users are removed",
              source="§6.3.3, Fig. 8",
              rule="rank rule on the area under the τ curve: MRR and ERR rank 1–2 of 9",
              paper_value="MRR, ERR", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "large-users"), ["MRR", "ERR"], 1, 2)


@LEDGER.claim("valcarce2020.s6-3-3.infap-bpref-large-users",
              statement="infAP and bpref come next when the largest users are removed",
              source="§6.3.3, Fig. 8",
              rule="rank rule on the area under the τ curve: infAP and bpref rank 3–4 of 9",
              paper_value="infAP, bpref", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "large-users"), ["infAP", "bpref"], 3, 4)


@LEDGER.claim("valcarce2020.s6-3-3.p-f1-ndcg-lose-large-users",
              statement="Precision, F1 and nDCG lose their robustness when the largest users are removed",
              source="§6.3.3, Fig. 8",
              rule="rank rule on the area under the τ curve: P, F1 and nDCG rank 5–9 of 9",
              paper_value="P, F1, nDCG lower", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return rank_rule(areas(r, "large-users"), ["P", "F1", "nDCG"], 5, 9)


@LEDGER.claim("valcarce2020.s6-3-3.librarything-flatter",
              statement="The large-user effect is less clear on LibraryThing (flatter profiles)",
              source="§6.3.3, Fig. 8", rule="not run here", paper_value="less clear",
              paper_dataset="LibraryThing")
def _(r):
    return not_reproduced("LibraryThing is not available here")


# ---- §7.1 geometric means: correlation (Fig. 9) -------------------------------------------------


@LEDGER.claim("valcarce2020.s7-1.gf1-gmrr-apart",
              statement="With geometric means, GF1 and GMRR correlate poorly with every other metric",
              source="§7.1, Fig. 9",
              rule="rank rule on each metric's mean τ with the seven metrics other than GF1 and "
                   "GMRR (bootstrap over users): GF1 and GMRR rank 8–9 of 9",
              paper_value="GF1, GMRR lowest", paper_dataset=_ALL, needs=_TAU)
def _(r):
    return rank_rule(bulk_tau(r["tau_among"], "gmean", {"F1", "RR"}), ["GF1", "GMRR"], 8, 9)


def _tau_arith_geo(metric: str, r: Mapping[str, Any]) -> Outcome:
    printed, lab = TAU_ARITH_GEO[metric], metric_label(metric)
    tb = r["tau_among"]
    i = tb.metrics.index(metric)
    est = boot_estimate(float(tb.arith_geo[i]), tb.arith_geo_reps[:, i], f"τ({lab}, G{lab})")
    return value_rule(printed, est, tolerance=half_unit(printed))


for _m, _printed in TAU_ARITH_GEO.items():
    _lab = metric_label(_m)
    LEDGER.claim(f"valcarce2020.s7-1.tau-{_lab.lower()}-g{_lab.lower()}",
                 statement=f"τ between {_lab} and G{_lab} is {_printed:g}", source="§7.1",
                 rule="value rule: the paper's τ within our bootstrap interval over users, "
                      "widened by half a unit of its last digit",
                 paper_value=_printed, paper_dataset=_ML, needs=_TAU)(partial(_tau_arith_geo, _m))


@LEDGER.claim("valcarce2020.s7-1.f1-mrr-change-most",
              statement="F1 and MRR change most when averaged geometrically", source="§7.1",
              rule="rank rule on τ(arithmetic, geometric) per metric (bootstrap over users): F1 and "
                   "MRR rank 8–9 of 9",
              paper_value="F1, MRR lowest", paper_dataset=_ALL, needs=_TAU)
def _(r):
    tb = r["tau_among"]
    est = {metric_label(m): boot_estimate(float(tb.arith_geo[i]), tb.arith_geo_reps[:, i], f"τ({metric_label(m)}, G{metric_label(m)})")
           for i, m in enumerate(tb.metrics)}
    return rank_rule(est, ["F1", "MRR"], 8, 9)


@LEDGER.claim("valcarce2020.s7-1.librarything-gf1-negative",
              statement="On LibraryThing GF1 correlates negatively with all metrics but GMRR",
              source="§7.1, Fig. 9", rule="not run here", paper_value="τ < 0",
              paper_dataset="LibraryThing")
def _(r):
    return not_reproduced("LibraryThing is not available here")


# ---- §7.2 geometric means: robustness (Figs. 10–14) ---------------------------------------------


@LEDGER.claim("valcarce2020.s7-2.gf1-gmrr-least-robust",
              statement="In all five schemes GF1 and GMRR are the least robust geometric metrics",
              source="§7.2, Figs. 10–14",
              rule="rank rule on the area under the τ curve of each scheme: GF1 and GMRR "
                   "rank 8–9 of 9 in every one",
              paper_value="GF1, GMRR", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return all_of({s: rank_rule(areas(r, s, "gmean"), ["GF1", "GMRR"], 8, 9) for s in SCHEMES})


@LEDGER.claim("valcarce2020.s7-2.gp-gndcg-robust",
              statement="GP and GnDCG are robust under random ratings, items and users",
              source="§7.2, Figs. 10, 11 and 13",
              rule="rank rule on the area under the τ curve of each random "
                   "scheme: GP and GnDCG rank 1–3 of 9 in every one",
              paper_value="GP, GnDCG", paper_dataset=_ALL, needs=_ROBUST)
def _(r):
    return all_of({s: rank_rule(areas(r, s, "gmean"), ["GP", "GnDCG"], 1, 3) for s in _RANDOM})


def _geo_beats_arith(metric: str, r: Mapping[str, Any]) -> Outcome:
    lab = metric_label(metric)
    d = area_diff(r, {"scheme": "large-users", "aggregate": "gmean", "metric": metric},
                  {"aggregate": "mean"})
    return sign_rule(d, "positive", label=f"area(G{lab}) − area({lab})")


for _m in ("P", "nDCG"):
    _lab = metric_label(_m)
    LEDGER.claim(f"valcarce2020.s7-2.g{_m.lower()}-beats-{_m.lower()}-large-users",
                 statement=f"G{_lab} is more robust than {_lab} when the largest users are removed",
                 source="§7.2, Figs. 8 and 14, §8",
                 rule=f"sign rule on area(G{_lab}) − area({_lab}), same masks, expected positive "
                      "(a difference within one swapped pair is a tie)",
                 paper_value=f"G{_lab} > {_lab}", paper_dataset=_ALL,
                 needs=_ROBUST)(partial(_geo_beats_arith, _m))


# ---- §8 conclusions ------------------------------------------------------------------------------


@LEDGER.claim("valcarce2020.s8.mrr-err-least-robust",
              statement="MRR and ERR rank among the least robust metrics", source="§6.3.1, §7, §8",
              rule="rank rule on the area under the τ curve under random ratings, items "
                   "and users and popular items: MRR and ERR rank 7–9 of 9 in every one",
              paper_value="MRR, ERR", paper_dataset="ML-1M, BeerAdvocate", needs=_ROBUST)
def _(r):
    return all_of({s: rank_rule(areas(r, s), ["MRR", "ERR"], 7, 9) for s in _SCHEMES_ARITH})


@LEDGER.claim("valcarce2020.s8.p-mid-pack",
              statement="Precision is a mid-packer in discriminative power", source="§6.2, §8",
              rule="rank rule on DP (lower is better): P ranks 3–7 of 9",
              paper_value="P ranks mid-pack", paper_dataset=_ALL, needs=_DP + ("metrics",))
def _(r):
    return rank_rule({metric_label(m): dp_of(r, m) for m in r["metrics"]}, ["P"], 3, 7, higher_is_better=False)
