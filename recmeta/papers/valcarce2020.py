r"""The ledger of the assessing-ranking-metrics chapter: Valcarce, Bellogín, Parapar & Castells (2020).

*Assessing ranking metrics in top-N recommendation* (Information Retrieval Journal 23,
pp. 411–448) studies nine metrics at cut-off 100 — P, Recall, F1, MAP, nDCG, MRR, ERR, bpref,
infAP — for discriminative power (sum of permutation-test p-values over all system pairs, DP)
and robustness (Kendall's τ between the system orderings on incomplete and full test sets)
under five incompleteness schemes, with arithmetic and geometric means, on MovieLens 1M,
LibraryThing and BeerAdvocate. This module holds its claims, one per figure, table and
conclusion, with the values the paper prints as constants, and the rules that compare them
with the chapter's results (:meth:`recmeta.assessing.Results.ledger_inputs`).

Readings, stated once:

- *Robustness* of a metric under a scheme is the area under its τ curve (mean τ over the
  shares, trapezoid rule; :func:`recmeta.assessing.area_estimate`). Random schemes carry a
  Monte-Carlo band over their masks; the deterministic ones (popular items, largest users) a
  band of ± one half of a swapped system pair's τ step, so that metrics closer than one swapped
  pair tie.
- "X, Y and Z are the most robust" means ranks 1 to 3 of 9; "... among the least robust"
  ranks 7 to 9 (the bottom third) unless the paper names more metrics. A rank is established
  only where the intervals do not overlap (:func:`rank_range`), as for :func:`order_rule`.
- DP comes from permutation tests on users (each user's scores averaged over the folds); its
  interval is a bootstrap over users (:func:`recmeta.assessing.dp_estimate`).
- Figures 1–14 are images: the paper prints no numbers for them, so their claims are the
  paper's sentences about them. Table 3 (DP values) is not legible in the text available to
  us, and its claim says so; Table 2 (dataset statistics) describes data we do not have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from . import register

if TYPE_CHECKING:
    from ..costs import Plan, Size
from ..ledger import (
    Estimate,
    Ledger,
    Outcome,
    Verdict,
    format_estimate,
    format_number,
    not_reproduced,
    order_rule,
    rank_range,
    rank_rule,
    sign_rule,
    value_rule,
)

__all__ = [
    "cost_plan",
    "LEDGER",
    "CHAPTER",
    "PAPER",
    "N_PERMUTATIONS",
    "MC_ERROR",
    "JUDGED_SHARE",
    "TAU_HALF_RATINGS",
    "TAU_SOME_BELOW",
    "TAU_LIBRARYTHING",
    "TAU_ARITH_GEO",
    "N_SYSTEMS",
    "N_PAIRS",
    "N_FOLDS",
    "N_SAMPLES",
    "CUTOFF",
    "THRESHOLD",
    "rank_range",
    "rank_rule",
    "all_of",
    "equivalence_rule",
    "half_unit",
    "judged_estimate",
]


def cost_plan(size: Size, systems: list[str], *, folds: list[int], shares: Mapping[str, list[float]],
              n_samples: int, n_permutations: int, metrics: Iterable[str] | None = None) -> Plan:
    """The expensive steps of :func:`recmeta.assessing.run` on a dataset of ``size``
    (:mod:`recmeta.costs`): the runs of ``systems`` on each of ``folds``; one compiled pass per
    incomplete test set of the five schemes (``n_samples`` masks per share for the random
    schemes, one per share for the deterministic ones); and the permutation tests of every pair
    for every metric, on users and on (fold, user) topics."""
    from ..assessing import METRICS
    from ..costs import Plan

    metrics = list(metrics or METRICS)
    n_sys, n_m = len(systems), len(metrics)
    deterministic = {"popular", "large-users"}
    sets = sum(len(v) * (1 if k in deterministic else n_samples) for k, v in shares.items())
    pairs = n_sys * (n_sys - 1) // 2 * n_m
    # each fold adds its own lists (users × systems) and test rows: as many incomplete test
    # sets and topics as one holdout per fold
    f = len(folds)
    return (Plan(size).runs(systems, splits=f)
            .subsets(sets * f, n_sys, n_m, label=f"{sets:,} incomplete test sets × {f} folds × "
                     f"{n_sys} systems × {n_m} metrics")
            .tests(pairs, n_permutations, label=f"permutation tests on users: {pairs:,} pairs")
            .tests(pairs, n_permutations, repeats=f,
                   label=f"permutation tests on (fold, user) topics: {pairs:,} pairs")
            .unmodelled("the bootstrap intervals of the ledger"))


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
_METRICS = ("P", "R", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP")
_LABELS = {"P": "P", "R": "Recall", "F1": "F1", "AP": "MAP", "nDCG": "nDCG", "RR": "MRR",
           "ERR": "ERR", "bpref": "bpref", "infAP": "infAP"}
_RANDOM = ("ratings", "items", "users")
_LEVEL = 0.95

LEDGER = register(Ledger(CHAPTER, paper=PAPER,
                         title="Assessing ranking metrics (Valcarce et al. 2020)"))


def _label(metric: str, aggregate: str = "mean") -> str:
    return ("G" if aggregate == "gmean" else "") + _LABELS.get(metric, metric)


# ---- rules beyond the ledger's ------------------------------------------------------------------


def all_of(outcomes: Mapping[str, Outcome]) -> Outcome:
    """A claim made for several cases at once: **differs** if any case differs, **agrees** if
    all agree, else **inconclusive** (not reproduced when no case could be evaluated)."""
    if not outcomes:
        raise ValueError("all_of needs at least one outcome")
    verdicts = {k: o.verdict for k, o in outcomes.items()}
    detail = "; ".join(f"{k}: {o.detail or format_estimate(o.ours)}" for k, o in outcomes.items())
    tally = ", ".join(f"{k} {v.value}" for k, v in verdicts.items())
    if all(v is Verdict.NOT_REPRODUCED for v in verdicts.values()):
        return not_reproduced("; ".join(o.reason for o in outcomes.values()))
    bad = [k for k, v in verdicts.items() if v is Verdict.DIFFERS]
    if bad:
        return Outcome(Verdict.DIFFERS, None, f"{tally} ({bad[0]}: {outcomes[bad[0]].reason})", detail)
    if all(v is Verdict.AGREES for v in verdicts.values()):
        return Outcome(Verdict.AGREES, None, f"holds in every case: {tally}", detail)
    return Outcome(Verdict.INCONCLUSIVE, None, tally, detail)


def equivalence_rule(ours: Estimate, margin: float, *, label: str = "the difference") -> Outcome:
    """"A is comparable to B": ``ours`` (A − B) within ± ``margin``.

    The interval inside ``[-margin, margin]`` → **agrees**; wholly outside → **differs**;
    otherwise (or without interval) → **inconclusive**.
    """
    if not margin > 0:
        raise ValueError(f"margin must be positive, got {margin!r}")
    text = f"{label} {format_estimate(ours)}"
    m = format_number(margin)
    if ours.low is None or ours.high is None:
        return Outcome(Verdict.INCONCLUSIVE, ours, f"{text} has no interval to compare with ± {m}")
    if -margin <= ours.low and ours.high <= margin:
        return Outcome(Verdict.AGREES, ours, f"{text} lies within ± {m}")
    if ours.low > margin or ours.high < -margin:
        return Outcome(Verdict.DIFFERS, ours, f"{text} lies wholly beyond ± {m}")
    return Outcome(Verdict.INCONCLUSIVE, ours, f"{text} straddles ± {m}")


def half_unit(printed: float) -> float:
    """Half a unit of the last digit the paper prints: 0.001 → 0.0005, 0.00045 → 0.000005."""
    from decimal import Decimal

    exponent = Decimal(str(printed)).normalize().as_tuple().exponent
    return 0.5 * 10.0 ** int(exponent)


def judged_estimate(judged: Any) -> Estimate:
    """Mean over users of the judged share of their ranked positions
    (:func:`recmeta.assessing.judged_share`), with a BCa bootstrap interval over users."""
    return Estimate.bootstrap_mean(np.asarray(judged, dtype=float), _LEVEL, seed=0, n_resamples=2000)


def _with(out: Outcome, note: str) -> Outcome:
    return Outcome(out.verdict, out.ours, f"{out.reason}; {note}", out.detail)


# ---- estimates from the chapter's results ------------------------------------------------------


def _boot(point: float, reps: np.ndarray, what: str) -> Estimate:
    """The point value with the percentile interval of bootstrap replicates over users."""
    r = np.asarray(reps, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size < 2:
        return Estimate.point(point, f"{what}: too few finite bootstrap replicates for an interval")
    return Estimate.from_samples(r, _LEVEL, value=float(point),
                                 method=f"{what}: percentile interval of {r.size} bootstrap "
                                        f"replicates over users, {_LEVEL:.0%}")


_SUMMARY: list[tuple[Any, dict[tuple[str, str], dict[str, Estimate]]]] = []  # the last few


def _areas(r: Mapping[str, Any], scheme: str, aggregate: str = "mean") -> dict[str, Estimate]:
    """Area under each metric's τ curve with its band, keyed by the paper's label.

    :func:`recmeta.assessing.robustness_summary` of the results' curves (the rule of
    :func:`recmeta.assessing.area_estimate`), computed once per curves frame.
    """
    from ..assessing import robustness_summary

    curves = r["curves"]
    table = next((t for frame, t in _SUMMARY if frame is curves), None)
    if table is None:
        s = robustness_summary(curves, n_systems=r["n_systems"])
        det = curves.groupby(["scheme", "aggregate"])["samples"].max() == 1
        table = {}
        for (sch, agg), part in s.groupby(["scheme", "aggregate"], sort=False):
            how = ("deterministic masks, ± half a swapped pair's τ step" if det[(sch, agg)]
                   else "t interval over the random masks (Welch–Satterthwaite df), 95 %")
            table[(sch, agg)] = {
                _label(row.metric, agg): Estimate(row.mean_tau, row.low, row.high, f"area of {sch}/{agg}: {how}")
                for row in part.itertuples()}
        _SUMMARY.insert(0, (curves, table))
        del _SUMMARY[4:]
    if (scheme, aggregate) not in table:
        raise KeyError(f"no robustness curves for scheme {scheme!r}, aggregate {aggregate!r}")
    est = table[(scheme, aggregate)]
    return {_label(m, aggregate): est[_label(m, aggregate)] for m in r["metrics"]}


def _area_diff(r: Mapping[str, Any], a: Mapping[str, str | None], b: Mapping[str, str | None]) -> Estimate:
    from ..assessing import area_estimate

    return area_estimate(r["taus"], scheme=a["scheme"], aggregate=a.get("aggregate", "mean"),
                         metric=a.get("metric"), minus=b, n_systems=r["n_systems"])


def _step(r: Mapping[str, Any]) -> float:
    """One swapped system pair's change of Kendall's τ: 2 / C(S, 2)."""
    from ..assessing import tau_resolution

    return 2 * tau_resolution(r["n_systems"])


def _bulk_tau(tb, aggregate: str, exclude: Iterable[str]) -> dict[str, Estimate]:
    """Per metric: mean τ with the metrics outside ``exclude`` (and itself), bootstrap band."""
    names = list(tb.metrics)
    ex = set(exclude)

    def mean_with_rest(t: np.ndarray) -> np.ndarray:
        out = []
        for i, m in enumerate(names):
            cols = [j for j, n in enumerate(names) if n not in ex and n != m]
            out.append(t[..., i, cols].mean(axis=-1))
        return np.stack(out, axis=-1)

    point = mean_with_rest(tb.point[aggregate])
    reps = mean_with_rest(tb.reps[aggregate])
    return {_label(m, aggregate): _boot(point[i], reps[:, i], f"mean τ of {_label(m, aggregate)} with the others")
            for i, m in enumerate(names)}


def _tau_of(tb, aggregate: str, fn: Callable[[np.ndarray], np.ndarray], what: str) -> Estimate:
    return _boot(float(fn(tb.point[aggregate][None])[0]), fn(tb.reps[aggregate]), what)


def _offdiag(t: np.ndarray) -> np.ndarray:
    """The (..., M(M−1)/2) upper off-diagonal τ of (..., M, M) matrices."""
    i, j = np.triu_indices(t.shape[-1], 1)
    return t[..., i, j]


def _dp(r: Mapping[str, Any], metric: str, minus: str | None = None) -> Estimate:
    from ..assessing import dp_estimate

    return dp_estimate(r["dp"], r["dp_reps"], r["dp_base"], r["dp_mc"], metric, minus)


def _half_share(r: Mapping[str, Any]) -> float | None:
    """The share of the ratings grid closest to one half (excluding the full test set)."""
    a = r["absolute"]
    s = np.unique(a.loc[(a["scheme"] == "ratings") & (a["share"] < 1), "share"].to_numpy())
    if s.size == 0:
        return None
    return float(s[np.argmin(np.abs(s - HALF))])


def _fig4(r: Mapping[str, Any], transform: Callable[[float, float, float], float]) -> tuple[float, dict[str, Estimate]]:
    """Fig. 4 at the share nearest one half: per metric, ``|transform(value, full, share)|``
    with a t band over the masks of that share (the full value is exact)."""
    from scipy import stats

    p = _half_share(r)
    if p is None:
        raise ValueError("the ratings scheme has no share below 1")
    a = r["absolute"]
    a = a[(a["scheme"] == "ratings") & (a["aggregate"] == "mean") & np.isclose(a["share"], p)]
    out = {}
    for row in a.itertuples():
        full = float(r["full_values"][row.metric])
        mid = transform(row.value, full, p)
        if row.samples > 1 and np.isfinite(row.sd):
            half = stats.t.ppf(0.5 + _LEVEL / 2, row.samples - 1) * row.sd / math.sqrt(row.samples)
            ends = sorted((transform(row.value - half, full, p), transform(row.value + half, full, p)))
            lo, hi = (0.0, max(abs(ends[0]), abs(ends[1]))) if ends[0] <= 0 <= ends[1] else \
                (min(abs(ends[0]), abs(ends[1])), max(abs(ends[0]), abs(ends[1])))
            est = Estimate(abs(mid), lo, hi, f"t interval over {int(row.samples)} masks at share {p:g}, "
                                             f"{_LEVEL:.0%}")
        else:
            est = Estimate.point(abs(mid), f"one mask at share {p:g}")
        out[_label(row.metric)] = est
    return p, out


_ROBUST = ("taus", "curves", "metrics", "n_systems")
_TAU = ("tau_among",)
_DP = ("dp", "dp_reps", "dp_base", "dp_mc")


def _claim(id: str, statement: str, source: str, rule: str, paper_value: Any = None,
           paper_dataset: str | None = _ML, needs: Iterable[str] = ()):
    return LEDGER.claim(f"valcarce2020.{id}", statement=statement, source=source, rule=rule,
                        paper_value=paper_value, paper_dataset=paper_dataset, needs=tuple(needs))


def _na(id: str, statement: str, source: str, reason: str, paper_value: Any, paper_dataset: str) -> None:
    @_claim(id, statement, source, "not run here", paper_value, paper_dataset)
    def _(r):
        return not_reproduced(reason)


# ---- §1 and §4.1 -------------------------------------------------------------------------------

_SCHEMES_ARITH = ("ratings", "items", "popular", "users")


@_claim("s1.precision-most-robust",
        "Precision offers the best robustness figures",
        "§1, §8", "order rule on the mean of the areas under the τ curves of four schemes "
        "(random ratings, items and users, popular items; arithmetic means)",
        "P", _ALL, _ROBUST)
def _(r):
    per = {s: _areas(r, s) for s in _SCHEMES_ARITH}
    est = {}
    for m in per[_SCHEMES_ARITH[0]]:
        parts = [per[s][m] for s in _SCHEMES_ARITH]
        value = float(np.mean([e.value for e in parts]))
        half = math.sqrt(sum(((e.high - e.low) / 2) ** 2 for e in parts)) / len(parts)
        est[m] = Estimate(value, value - half, value + half,
                          "mean of four schemes' areas, half-widths combined as independent")
    return order_rule(est, "P")


def _mc_claim(p: float) -> None:
    printed = MC_ERROR[p]

    @_claim(f"s4-1.mc-error-p{str(p)[2:]}",
            f"{N_PERMUTATIONS:,} permutations estimate a p-value of {p:g} within ±{printed:g}",
            "§4.1", "ours: the binomial standard error √(p(1−p)/B) at the paper's B, exact; agrees "
            "within half a unit of the paper's last printed digit", printed, None)
    def _(r):
        se = math.sqrt(p * (1 - p) / N_PERMUTATIONS)
        out = value_rule(printed, Estimate.exact(se, "binomial standard error √(p(1−p)/B)"),
                         tolerance=half_unit(printed))
        alt = math.sqrt(2 * p * (1 - p) / N_PERMUTATIONS)
        return _with(out, f"√(2p(1−p)/B) = {format_number(alt, 2)}, √2 times the standard error, "
                          "matches the printed figure")


for _p in MC_ERROR:
    _mc_claim(_p)


# ---- §6.1 correlation among metrics (Fig. 1) ----------------------------------------------------


@_claim("s6-1.mrr-err-apart",
        "MRR and ERR differ noticeably from the rest of the metrics",
        "§6.1, Fig. 1", "rank rule on each metric's mean τ with the seven metrics other than MRR "
        "and ERR (bootstrap over users): MRR and ERR rank 8–9 of 9",
        "MRR, ERR lowest", "ML-1M, LibraryThing", _TAU)
def _(r):
    return rank_rule(_bulk_tau(r["tau_among"], "mean", {"RR", "ERR"}), ["MRR", "ERR"], 8, 9)


@_claim("s6-1.mrr-err-together",
        "MRR and ERR are correlated with each other",
        "§6.1, Fig. 1", "sign rule: τ(MRR, ERR) minus the largest τ of either with another metric "
        "is positive (bootstrap over users)", "τ(MRR, ERR) high", _ALL, _TAU)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("RR"), tb.metrics.index("ERR")
    rest = [k for k in range(len(tb.metrics)) if k not in (i, j)]

    def gap(t: np.ndarray) -> np.ndarray:
        return t[..., i, j] - np.maximum(t[..., i, rest].max(axis=-1), t[..., j, rest].max(axis=-1))

    return sign_rule(_tau_of(tb, "mean", gap, "τ(MRR, ERR) − max τ with the others"), "positive",
                     label="τ(MRR, ERR) minus the largest τ with another metric")


@_claim("s6-1.map-ndcg-strong",
        "MAP is strongly correlated with nDCG",
        "§6.1, Fig. 1", "sign rule: τ(MAP, nDCG) minus the median τ of the 36 metric pairs is "
        "positive (bootstrap over users)", "τ(MAP, nDCG) high", _ALL, _TAU)
def _(r):
    tb = r["tau_among"]
    i, j = tb.metrics.index("AP"), tb.metrics.index("nDCG")

    def gap(t: np.ndarray) -> np.ndarray:
        return t[..., i, j] - np.median(_offdiag(t), axis=-1)

    return sign_rule(_tau_of(tb, "mean", gap, "τ(MAP, nDCG) − median τ"), "positive",
                     label="τ(MAP, nDCG) minus the median τ")


@_claim("s6-1.some-below-08",
        f"Some correlations among metrics fall below {TAU_SOME_BELOW:g}",
        "§6.1, Fig. 1", f"sign rule: {TAU_SOME_BELOW:g} minus the smallest τ between two metrics is "
        "positive (bootstrap over users)", TAU_SOME_BELOW, "ML-1M, BeerAdvocate", _TAU)
def _(r):
    tb = r["tau_among"]
    est = _tau_of(tb, "mean", lambda t: TAU_SOME_BELOW - _offdiag(t).min(axis=-1),
                  f"{TAU_SOME_BELOW:g} − min τ")
    return sign_rule(est, "positive", label=f"{TAU_SOME_BELOW:g} minus the smallest τ")


_na("s6-1.librarything-above-09", f"On LibraryThing all correlations among metrics exceed {TAU_LIBRARYTHING:g}",
    "§6.1, Fig. 1", "LibraryThing is not available here", TAU_LIBRARYTHING, "LibraryThing")
_na("s6-1.beeradvocate-bpref-map", "On BeerAdvocate bpref correlates poorly with MAP",
    "§6.1, Fig. 1", "BeerAdvocate is not available here", "low τ(bpref, MAP)", "BeerAdvocate")


# ---- §6.2 discriminative power (Fig. 2, Table 3) ------------------------------------------------


@_claim("s6-2.ndcg-most-discriminative",
        "nDCG shows the highest discriminative power (the lowest DP)",
        "§1, §6.2, Fig. 2, Table 3, §8", "order rule on DP, lower is better (permutation tests on "
        "users; bootstrap interval over users)", "nDCG", "ML-1M, LibraryThing", _DP + ("metrics",))
def _(r):
    return order_rule({_label(m): _dp(r, m) for m in r["metrics"]}, "nDCG", higher_is_better=False)


_na("s6-2.table3", "DP values of the nine metrics", "§6.2, Table 3",
    "the table's values are not legible in the text available to us, and DP depends on the systems "
    "and the dataset (§4.1), so the paper's values are not comparable with ours", "not legible", _ALL)


@_claim("s6-2.map-beats-p",
        "MAP shows a slightly higher discriminative power than precision",
        "§6.2", "sign rule on DP(P) − DP(MAP), expected positive (paired bootstrap over users)",
        "DP(MAP) < DP(P)", "ML-1M, LibraryThing", _DP)
def _(r):
    return sign_rule(_dp(r, "P", "AP"), "positive", label="DP(P) − DP(MAP)")


@_claim("s6-2.bpref-below-map-ndcg",
        "bpref discriminates slightly less than MAP and nDCG",
        "§6.2", "sign rule on DP(bpref) − DP(MAP) and DP(bpref) − DP(nDCG), both expected positive",
        "DP(bpref) > DP(MAP), DP(nDCG)", _ALL, _DP)
def _(r):
    return all_of({f"DP(bpref) − DP({_label(m)})": sign_rule(_dp(r, "bpref", m), "positive",
                                                           label=f"DP(bpref) − DP({_label(m)})")
                   for m in ("AP", "nDCG")})


_na("s6-2.folds-stable", "Other random 5-fold splits give very similar DP values", "§6.2",
    "the chapter runs one seeded 5-fold split; it does not repeat the study on other folds",
    "small differences", _ALL)


# ---- §6.3.1 rating incompleteness (Figs. 3, 4) --------------------------------------------------


@_claim("s6-3-1.judged-share",
        "The systems' top-100 lists carry a test rating at about one position in twenty",
        "§6.3.1", "value rule: the paper's share within our bootstrap interval (mean over users "
        "of the judged share of their ranked positions), widened by half a unit of its last digit",
        JUDGED_SHARE["ML-1M"], _ML, ("judged",))
def _(r):
    est = judged_estimate(r["judged"])
    out = value_rule(JUDGED_SHARE["ML-1M"], est, tolerance=half_unit(JUDGED_SHARE["ML-1M"]))
    return _with(out, "the share depends on the dataset's density and on the systems, and "
                      "ML-1M is not available here")


@_claim("s6-3-1.half-above-09",
        f"Every metric keeps τ above {TAU_HALF_RATINGS:g} with half of the test ratings removed",
        "§6.3.1, Fig. 3", f"sign rule on τ − {TAU_HALF_RATINGS:g} at half of the ratings for every "
        "metric (t band over the masks)", TAU_HALF_RATINGS, _ALL, ("curves", "metrics"))
def _(r):
    from ..assessing import curve_point

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
        outs[_label(m)] = sign_rule(shifted, "positive", label=f"τ − {TAU_HALF_RATINGS:g}")
    worst = min(outs, key=lambda k: outs[k].ours.value)
    out = all_of(outs)
    return Outcome(out.verdict, outs[worst].ours, out.reason,
                   f"lowest: {worst}, τ − {TAU_HALF_RATINGS:g} = {format_estimate(outs[worst].ours)}")


@_claim("s6-3-1.p-f1-ndcg-most-robust",
        "Precision, F1 and nDCG are the most robust metrics to missing ratings",
        "§6.3.1, Fig. 3", "rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
        "P, F1, nDCG", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "ratings"), ["P", "F1", "nDCG"], 1, 3)


@_claim("s6-3-1.five-least-robust",
        "ERR, bpref, infAP, Recall and MRR show poor robustness to missing ratings",
        "§6.3.1, Fig. 3", "rank rule on the area under the τ curve: the five rank 5–9 of 9",
        "ERR, bpref, infAP, Recall, MRR", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "ratings"), ["ERR", "bpref", "infAP", "Recall", "MRR"], 5, 9)


@_claim("s6-3-1.p-proportional",
        "Precision falls linearly with the share of ratings kept; the other metrics do not",
        "§6.3.1, Fig. 4", "order rule on |mean/full − share| at the share nearest one half, lower "
        "is better (t band over the masks)", "P", _ALL, ("absolute", "full_values"))
def _(r):
    p, est = _fig4(r, lambda v, full, s: v / full - s)
    return _with(order_rule(est, "P", higher_is_better=False),
                 f"deviation from proportionality at share {p:g}")


@_claim("s6-3-1.p-changes-least",
        "Precision's absolute value decreases slowly while the other metrics decrease much faster",
        "§6.3.1, Fig. 4", "order rule on the absolute change of the mean value from the full test "
        "set to the share nearest one half, lower is better", "P", _ALL, ("absolute", "full_values"))
def _(r):
    p, est = _fig4(r, lambda v, full, s: v - full)
    return _with(order_rule(est, "P", higher_is_better=False), f"absolute change at share {p:g}")


@_claim("s6-3-1.bpref-like-map",
        "On MovieLens, bpref is comparable to MAP in robustness to missing ratings",
        "§6.3.1, Fig. 3", "equivalence rule: area(bpref) − area(MAP), paired by mask, within ± one "
        "swapped system pair's τ step", "comparable", _ML, _ROBUST)
def _(r):
    d = _area_diff(r, {"scheme": "ratings", "metric": "bpref"}, {"metric": "AP"})
    return equivalence_rule(d, _step(r), label="area(bpref) − area(MAP)")


@_claim("s6-3-1.infap-above-map",
        "On MovieLens, infAP is slightly more robust than MAP to missing ratings",
        "§6.3.1, Fig. 3", "sign rule on area(infAP) − area(MAP), paired by mask, expected positive",
        "infAP > MAP", _ML, _ROBUST)
def _(r):
    d = _area_diff(r, {"scheme": "ratings", "metric": "infAP"}, {"metric": "AP"})
    return sign_rule(d, "positive", label="area(infAP) − area(MAP)")


_na("s6-3-1.map-beats-bpref-infap", "MAP is more robust than bpref and infAP on LibraryThing and BeerAdvocate",
    "§6.3.1, §8", "LibraryThing and BeerAdvocate are not available here; on MovieLens the paper "
    "itself finds bpref comparable to MAP and infAP slightly better (claims above)",
    "MAP > bpref, infAP", "LibraryThing, BeerAdvocate")


# ---- §6.3.2 item incompleteness (Figs. 5, 6) ----------------------------------------------------


@_claim("s6-3-2.items-drop-more",
        "Removing whole items lowers τ more than removing single ratings",
        "§6.3.2, Figs. 3 and 5", "sign rule on area(ratings) − area(items), each averaged over the "
        "nine metrics (independent masks), expected positive", "items < ratings", _ALL, _ROBUST)
def _(r):
    d = _area_diff(r, {"scheme": "ratings", "metric": None}, {"scheme": "items", "metric": None})
    return sign_rule(d, "positive", label="area(ratings) − area(items)")


@_claim("s6-3-2.items-like-ratings",
        "Random items removed: the same picture as random ratings (P, F1 and nDCG most robust)",
        "§6.3.2, Fig. 5", "rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
        "P, F1, nDCG", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "items"), ["P", "F1", "nDCG"], 1, 3)


@_claim("s6-3-2.p-most-robust-popular",
        "Precision is the most robust metric when the most popular items are removed",
        "§6.3.2, Fig. 6, §8", "order rule on the area under the τ curve (deterministic masks: "
        "closer than one swapped pair is a tie)", "P", _ALL, _ROBUST)
def _(r):
    return order_rule(_areas(r, "popular"), "P")


@_claim("s6-3-2.mrr-err-worst-popular",
        "MRR and ERR are the least robust metrics when the most popular items are removed",
        "§6.3.2, Fig. 6", "rank rule on the area under the τ curve: MRR and ERR rank 8–9 of 9",
        "MRR, ERR", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "popular"), ["MRR", "ERR"], 8, 9)


@_claim("s6-3-2.f1-ndcg-good-popular",
        "F1 and nDCG are moderately robust when the most popular items are removed",
        "§6.3.2, Fig. 6, §8", "rank rule on the area under the τ curve: F1 and nDCG rank 2–5 of 9 "
        "(upper half, after precision)", "F1, nDCG upper half", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "popular"), ["F1", "nDCG"], 2, 5)


_na("s6-3-2.beeradvocate-negative", "On BeerAdvocate τ turns negative after removing a few popular items",
    "§6.3.2, Fig. 6", "BeerAdvocate is not available here", "τ < 0", "BeerAdvocate")


# ---- §6.3.3 user incompleteness (Figs. 7, 8) ----------------------------------------------------


@_claim("s6-3-3.users-smoother",
        "Removing random users lowers τ much less than removing random ratings",
        "§6.3.3, Figs. 3 and 7", "sign rule on area(users) − area(ratings), each averaged over the "
        "nine metrics (independent masks), expected positive", "users > ratings", _ALL, _ROBUST)
def _(r):
    d = _area_diff(r, {"scheme": "users", "metric": None}, {"scheme": "ratings", "metric": None})
    return sign_rule(d, "positive", label="area(users) − area(ratings)")


@_claim("s6-3-3.users-like-ratings",
        "Random users removed: the same picture as random ratings (P, F1 and nDCG most robust)",
        "§6.3.3, Fig. 7", "rank rule on the area under the τ curve: P, F1 and nDCG rank 1–3 of 9",
        "P, F1, nDCG", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "users"), ["P", "F1", "nDCG"], 1, 3)


@_claim("s6-3-3.mrr-err-large-users",
        "MRR and ERR are the most robust metrics when the largest users are removed",
        "§6.3.3, Fig. 8", "rank rule on the area under the τ curve: MRR and ERR rank 1–2 of 9",
        "MRR, ERR", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "large-users"), ["MRR", "ERR"], 1, 2)


@_claim("s6-3-3.infap-bpref-large-users",
        "infAP and bpref come next when the largest users are removed",
        "§6.3.3, Fig. 8", "rank rule on the area under the τ curve: infAP and bpref rank 3–4 of 9",
        "infAP, bpref", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "large-users"), ["infAP", "bpref"], 3, 4)


@_claim("s6-3-3.p-f1-ndcg-lose-large-users",
        "Precision, F1 and nDCG lose their robustness when the largest users are removed",
        "§6.3.3, Fig. 8", "rank rule on the area under the τ curve: P, F1 and nDCG rank 5–9 of 9",
        "P, F1, nDCG lower", _ALL, _ROBUST)
def _(r):
    return rank_rule(_areas(r, "large-users"), ["P", "F1", "nDCG"], 5, 9)


_na("s6-3-3.librarything-flatter", "The large-user effect is less clear on LibraryThing (flatter profiles)",
    "§6.3.3, Fig. 8", "LibraryThing is not available here", "less clear", "LibraryThing")


# ---- §7.1 geometric means: correlation (Fig. 9) -------------------------------------------------


@_claim("s7-1.gf1-gmrr-apart",
        "With geometric means, GF1 and GMRR correlate poorly with every other metric",
        "§7.1, Fig. 9", "rank rule on each metric's mean τ with the seven metrics other than GF1 and "
        "GMRR (bootstrap over users): GF1 and GMRR rank 8–9 of 9", "GF1, GMRR lowest", _ALL, _TAU)
def _(r):
    return rank_rule(_bulk_tau(r["tau_among"], "gmean", {"F1", "RR"}), ["GF1", "GMRR"], 8, 9)


def _tau_ag_claim(metric: str) -> None:
    printed = TAU_ARITH_GEO[metric]
    lab = _label(metric)

    @_claim(f"s7-1.tau-{lab.lower()}-g{lab.lower()}",
            f"τ between {lab} and G{lab} is {printed:g}",
            "§7.1", "value rule: the paper's τ within our bootstrap interval over users, widened by "
            "half a unit of its last digit", printed, _ML, _TAU)
    def _(r):
        tb = r["tau_among"]
        i = tb.metrics.index(metric)
        est = _boot(float(tb.arith_geo[i]), tb.arith_geo_reps[:, i], f"τ({lab}, G{lab})")
        return value_rule(printed, est, tolerance=half_unit(printed))


for _m in TAU_ARITH_GEO:
    _tau_ag_claim(_m)


@_claim("s7-1.f1-mrr-change-most",
        "F1 and MRR change most when averaged geometrically",
        "§7.1", "rank rule on τ(arithmetic, geometric) per metric (bootstrap over users): F1 and "
        "MRR rank 8–9 of 9", "F1, MRR lowest", _ALL, _TAU)
def _(r):
    tb = r["tau_among"]
    est = {_label(m): _boot(float(tb.arith_geo[i]), tb.arith_geo_reps[:, i], f"τ({_label(m)}, G{_label(m)})")
           for i, m in enumerate(tb.metrics)}
    return rank_rule(est, ["F1", "MRR"], 8, 9)


_na("s7-1.librarything-gf1-negative", "On LibraryThing GF1 correlates negatively with all metrics but GMRR",
    "§7.1, Fig. 9", "LibraryThing is not available here", "τ < 0", "LibraryThing")


# ---- §7.2 geometric means: robustness (Figs. 10–14) ---------------------------------------------


@_claim("s7-2.gf1-gmrr-least-robust",
        "In all five schemes GF1 and GMRR are the least robust geometric metrics",
        "§7.2, Figs. 10–14", "rank rule on the area under the τ curve of each scheme: GF1 and GMRR "
        "rank 8–9 of 9 in every one", "GF1, GMRR", _ALL, _ROBUST)
def _(r):
    from ..assessing import SCHEMES

    return all_of({s: rank_rule(_areas(r, s, "gmean"), ["GF1", "GMRR"], 8, 9) for s in SCHEMES})


@_claim("s7-2.gp-gndcg-robust",
        "GP and GnDCG are robust under random ratings, items and users",
        "§7.2, Figs. 10, 11 and 13", "rank rule on the area under the τ curve of each random "
        "scheme: GP and GnDCG rank 1–3 of 9 in every one", "GP, GnDCG", _ALL, _ROBUST)
def _(r):
    return all_of({s: rank_rule(_areas(r, s, "gmean"), ["GP", "GnDCG"], 1, 3) for s in _RANDOM})


def _geo_beats_arith(metric: str) -> None:
    lab = _label(metric)

    @_claim(f"s7-2.g{metric.lower()}-beats-{metric.lower()}-large-users",
            f"G{lab} is more robust than {lab} when the largest users are removed",
            "§7.2, Figs. 8 and 14, §8", f"sign rule on area(G{lab}) − area({lab}), same masks, "
            "expected positive (a difference within one swapped pair is a tie)",
            f"G{lab} > {lab}", _ALL, _ROBUST)
    def _(r):
        d = _area_diff(r, {"scheme": "large-users", "aggregate": "gmean", "metric": metric},
                       {"aggregate": "mean"})
        return sign_rule(d, "positive", label=f"area(G{lab}) − area({lab})")


for _m in ("P", "nDCG"):
    _geo_beats_arith(_m)


# ---- §8 conclusions ------------------------------------------------------------------------------


@_claim("s8.mrr-err-least-robust",
        "MRR and ERR rank among the least robust metrics",
        "§6.3.1, §7, §8", "rank rule on the area under the τ curve under random ratings, items "
        "and users and popular items: MRR and ERR rank 7–9 of 9 in every one",
        "MRR, ERR", "ML-1M, BeerAdvocate", _ROBUST)
def _(r):
    return all_of({s: rank_rule(_areas(r, s), ["MRR", "ERR"], 7, 9) for s in _SCHEMES_ARITH})


@_claim("s8.p-mid-pack",
        "Precision is a mid-packer in discriminative power",
        "§6.2, §8", "rank rule on DP (lower is better): P ranks 3–7 of 9", "P ranks mid-pack", _ALL,
        _DP + ("metrics",))
def _(r):
    return rank_rule({_label(m): _dp(r, m) for m in r["metrics"]}, ["P"], 3, 7, higher_is_better=False)
