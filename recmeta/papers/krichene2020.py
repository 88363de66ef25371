"""Krichene & Rendle (2020), *On Sampled Metrics for Item Recommendation*: the claims as code.

The ledger of the sampled-metrics chapter. It holds the paper's printed numbers (the running
example's Tables 1–2, the MovieLens Tables 3–4, the counts of Fig. 5, the thresholds of Figs. 2
and 6) and one :class:`~recmeta.ledger.Claim` per statement, each with a function
computing our value, its uncertainty and a verdict from the chapter's results:

- ``"toy"``: :class:`ToyInputs` (the running example and the chapter's sampling settings);
- ``"toy_sampled"``: the repetitions of :func:`recmeta.sampled.sampled_evaluation` on it (Table 2);
- ``"real"``: a :class:`recmeta.sampled.study.RealStudy` (Tables 3–4, Fig. 5), whose tie rule is
  the one the claims read;
- ``"real_order"``: its order study over a grid of m (Fig. 6), present for the chapter's tie rule;
- ``"real_multi"``: its study with several held-out items (§8's suggestion);
- ``"settings"``: :class:`Settings` (bootstrap resamples, confidence level, seed).

Uncertainty: the toy example's expectations are exact (the law of the sampled rank, no
simulation); its Monte-Carlo repetitions carry standard errors. Real-data exact metrics carry a
paired bootstrap over users (:meth:`Estimate.bootstrap_diff`); sampled metrics a t interval over
repetitions of one evaluation with shared negatives (:meth:`Estimate.mean_se`), so a claim on an
order of systems reads "inconclusive" when the interval of the difference contains 0.

The paper's text is known here through a text extraction; where a printed value could not be
read reliably it is not used (the bucket width of Fig. 5 is not stated in the text, so "the worst
bucket" is our reading, see :func:`worst_bucket`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import register
from ..ledger import Estimate, Ledger, Outcome, Verdict, format_number, sign_rule

if TYPE_CHECKING:
    from ..costs import Plan, Size

__all__ = [
    "cost_plan",
    "LEDGER", "ToyInputs", "Settings", "TOY_RANKS", "TOY_N", "TOY_M", "TOY_METRICS", "TABLE1", "TABLE2",
    "TABLE3", "TABLE4", "TABLE3_ESTIMATORS", "TABLE4_ESTIMATORS", "PAPER", "table3_frame", "table4_frame",
    "worst_bucket", "evaluate_under", "tie_dependence", "order_text", "recall_consistent_from", "bias_variance",
]


def cost_plan(size: Size, systems: list[str], *, repetitions: int, m: int) -> Plan:
    """The steps of the real-data part on a dataset of ``size`` that :mod:`recmeta.costs` can
    estimate: the runs of ``systems`` (estimated as top-100 runs; the chapter scores candidate
    items instead, which skips the top-100 selection)."""
    from ..costs import Plan

    return (Plan(size).runs(systems)
            .unmodelled(f"{repetitions} sampled evaluations with m = {m} negatives")
            .unmodelled("the simulations of the running example and of the formula checks "
                        "(they do not depend on the dataset)"))


# --------------------------------------------------------------------------------------------
# The paper's numbers

#: §3.2: n = 10,000 items; the true ranks of the relevant item of five users for A, B and C
TOY_N = 10_000
TOY_RANKS = {"A": (100, 100, 100, 100, 100), "B": (40, 40, 8437, 9266, 4482), "C": (212, 2, 743, 5342, 1548)}
#: §4.2: negatives per user in Table 2, and the repetitions behind its mean ± sd
TOY_M = 99
TOY_REPETITIONS = 1000
TOY_METRICS = ("AUC", "AP", "NDCG", "Recall@10")
#: Table 1 (exact metrics), three printed decimals
TABLE1 = {
    "A": (0.990, 0.010, 0.150, 0.000),
    "B": (0.555, 0.010, 0.122, 0.000),
    "C": (0.843, 0.101, 0.208, 0.200),
}
#: Table 2 (m = 99, 1,000 repetitions): mean and standard deviation
TABLE2 = {
    "A": ((0.990, 0.004), (0.630, 0.129), (0.724, 0.097), (1.000, 0.000)),
    "B": ((0.555, 0.014), (0.336, 0.073), (0.444, 0.054), (0.400, 0.000)),
    "C": ((0.843, 0.014), (0.325, 0.050), (0.460, 0.039), (0.567, 0.092)),
}
#: Table 3's columns (after "Exact") and Table 4's
TABLE3_ESTIMATORS = ("sampled", "rank-estimate", "cls", "BV 1", "BV 0.1", "BV 0.01", "BV 0.001")
TABLE4_ESTIMATORS = TABLE3_ESTIMATORS
#: Table 3 (ML-1M, percent): per metric and system, exact, then (mean, sd) per estimator
TABLE3: dict[str, dict[str, tuple]] = {
    "Recall@10": {
        "X": (7.60, (66.19, .25), (17.46, .32), (8.52, .16), (4.71, .07), (6.49, .25), (7.18, .59), (7.32, 1.17)),
        "Y": (8.84, (56.51, .22), (17.26, .28), (8.42, .14), (4.60, .07), (6.95, .21), (8.18, .51), (8.54, 1.07)),
        "Z": (9.42, (54.20, .22), (18.67, .32), (9.10, .15), (4.97, .07), (7.44, .24), (8.63, .59), (9.08, 1.20)),
    },
    "NDCG@10": {
        "X": (3.76, (39.21, .20), (17.46, .32), (3.99, .07), (2.16, .04), (3.00, .12), (3.34, .32), (3.41, .71)),
        "Y": (4.59, (34.82, .16), (17.26, .28), (3.94, .06), (2.12, .03), (3.24, .10), (3.85, .28), (4.03, .66)),
        "Z": (4.79, (35.34, .16), (18.67, .32), (4.27, .07), (2.29, .04), (3.46, .12), (4.05, .32), (4.31, .74)),
    },
    "AP": {
        "X": (3.75, (32.55, .21), (18.12, .31), (3.58, .06), (2.44, .03), (3.13, .09), (3.37, .21), (3.42, .49)),
        "Y": (4.32, (30.01, .20), (17.81, .28), (3.54, .06), (2.32, .03), (3.19, .07), (3.62, .18), (3.73, .45)),
        "Z": (4.44, (30.71, .21), (19.20, .31), (3.82, .06), (2.45, .03), (3.38, .08), (3.79, .21), (3.97, .51)),
    },
    "AUC": {
        "X": (89.13, (89.12, .04), (89.24, .04), (89.12, .04), (88.36, .04), (89.04, .04), (89.11, .04), (89.12, .04)),
        "Y": (85.33, (85.33, .04), (85.48, .04), (85.32, .04), (84.63, .04), (85.26, .04), (85.32, .04), (85.32, .04)),
        "Z": (74.73, (75.04, .23), (75.24, .20), (75.04, .21), (74.51, .23), (75.02, .20), (75.02, .24), (75.02, .23)),
    },
}
#: Table 4: of 100 repetitions, how many order the pair as the exact metric does, per estimator
TABLE4: dict[str, dict[str, tuple[int, ...]]] = {
    "X vs Y": {"Recall@10": (0, 31, 31, 11, 93, 91, 78), "NDCG@10": (0, 31, 31, 15, 93, 88, 76),
               "AP": (0, 24, 31, 0, 68, 79, 66), "AUC": (100,) * 7},
    "X vs Z": {"Recall@10": (0, 100, 100, 100, 100, 95, 86), "NDCG@10": (0, 100, 100, 100, 100, 95, 82),
               "AP": (0, 100, 100, 61, 99, 92, 81), "AUC": (100,) * 7},
    "Y vs Z": {"Recall@10": (0, 100, 100, 100, 95, 72, 68), "NDCG@10": (100, 100, 100, 100, 94, 70, 67),
               "AP": (100, 100, 100, 100, 98, 75, 68), "AUC": (100,) * 7},
}
#: other printed numbers: §6 (ML-1M, 6,040 users, 3,706 items, m = 100, 100 repetitions),
#: §6.1 (Fig. 5's counts), §6.3 (Fig. 6's thresholds), §4.2 (Fig. 2's)
PAPER = {
    "users": 6040, "n": 3706, "m": 100, "repetitions": 100,
    "z_worst_bucket": 1600, "x_top100": 2310, "x_bottom_half": 300,
    "fig6_uncorrected": 1000, "fig6_bv": 60, "fig6_bv_gamma": 0.1,
    "fig2_ap_small": 50, "fig2_ap_mid": 200, "fig2_ap_late": 500, "fig2_recall": 5000,
    "table4_bv_level": 0.9, "table4_bv_misses": 1,
    "fig4_m": 100,
}


@dataclass(frozen=True)
class ToyInputs:
    """The running example as the chapter samples it (true ranks, n, m, law, the γ of BV)."""

    ranks: Mapping[str, Sequence[int]]
    n: int
    m: int
    replace: bool
    gammas: tuple[float, ...] = (1.0, 0.1, 0.01, 0.001)

    def __post_init__(self) -> None:
        frozen = tuple((str(k), tuple(int(x) for x in v)) for k, v in dict(self.ranks).items())
        object.__setattr__(self, "ranks", _FrozenRanks(frozen))
        object.__setattr__(self, "gammas", tuple(float(g) for g in self.gammas))


class _FrozenRanks(Mapping):
    """A hashable mapping of system to true ranks (so toy computations can be memoised)."""

    def __init__(self, pairs: tuple) -> None:
        self._pairs = pairs
        self._d = dict(pairs)

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(self._pairs)

    def __eq__(self, other) -> bool:
        return isinstance(other, _FrozenRanks) and self._pairs == other._pairs


def _memo(fn):
    """Cache a pure function of hashable arguments (the toy claims are evaluated once per
    dataset and tie rule; their inputs do not change)."""
    import functools

    cached = functools.lru_cache(maxsize=64)(fn)

    @functools.wraps(fn)
    def wrapper(*args):
        return cached(*(tuple(a) if isinstance(a, list) else a for a in args))

    return wrapper


@dataclass(frozen=True)
class Settings:
    """How the claims estimate their uncertainty."""

    n_resamples: int = 9999
    level: float = 0.95
    seed: int = 0


LEDGER = register(Ledger("sampled-metrics", paper="krichene2020sampled",
                         title="Sampled metrics and their corrections"))
_P = "krichene2020."
TOP_HEAVY = ("Recall@10", "NDCG@10", "AP")


# --------------------------------------------------------------------------------------------
# Helpers


def _combine(parts: Sequence[tuple[str, Outcome]], ours: Estimate | None = None, detail: str | None = None) -> Outcome:
    """One verdict from several: *differs* if any part differs, *agrees* if all agree, else
    *inconclusive*; the reason lists the parts that decide it."""
    verdicts = [o.verdict for _, o in parts]
    if Verdict.NOT_REPRODUCED in verdicts:
        bad = [o.reason for _, o in parts if o.verdict == Verdict.NOT_REPRODUCED]
        return Outcome(Verdict.NOT_REPRODUCED, ours, "; ".join(bad), detail)
    if Verdict.DIFFERS in verdicts:
        verdict, show = Verdict.DIFFERS, [p for p in parts if p[1].verdict == Verdict.DIFFERS]
    elif all(v == Verdict.AGREES for v in verdicts):
        verdict, show = Verdict.AGREES, list(parts)
    else:
        verdict, show = Verdict.INCONCLUSIVE, [p for p in parts if p[1].verdict == Verdict.INCONCLUSIVE]
    if ours is None:
        ours = min((o.ours for _, o in show if o.ours is not None), key=lambda e: abs(e.value), default=None)
    reason = "; ".join(o.reason for _, o in show[:4])
    if len(show) > 4:
        reason += f"; and {len(show) - 4} more"
    return Outcome(verdict, ours, reason, detail)


def order_text(values: Mapping[str, float], tol: float = 0.0) -> str:
    """Systems from best to worst, ``=`` joining values within ``tol`` of the previous one
    (names inside a tie group in alphabetical order)."""
    items = sorted(values.items(), key=lambda kv: -kv[1])
    groups = [[items[0][0]]]
    for (_, prev), (name, v) in zip(items, items[1:]):
        if abs(prev - v) <= tol:
            groups[-1].append(name)
        else:
            groups.append([name])
    return ">".join("=".join(sorted(g)) for g in groups)


@_memo
def _toy_expected(toy: ToyInputs, m: int, metrics: Sequence[str]) -> pd.DataFrame:
    from ..sampled import expected_evaluation

    frame = expected_evaluation({k: np.asarray(v) for k, v in toy.ranks.items()}, toy.n, int(m), list(metrics),
                                ["sampled"], replace=toy.replace)
    return frame.pivot(index="metric", columns="system", values="value")


@_memo
def _toy_exact(toy: ToyInputs, metrics: Sequence[str]) -> pd.DataFrame:
    from ..sampled import exact_metrics

    frame = exact_metrics({k: np.asarray(v) for k, v in toy.ranks.items()}, toy.n, list(metrics))
    return frame.pivot(index="metric", columns="system", values="value")


_WIDE: dict[tuple, tuple[Any, Any]] = {}


def _by_identity(obj: Any, key: tuple, build: Callable[[], Any]) -> Any:
    """Cache ``build()`` for the object ``obj`` (kept alive and checked by identity)."""
    full = (id(obj), *key)
    hit = _WIDE.get(full)
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(_WIDE) > 64:
        _WIDE.clear()
    value = build()
    _WIDE[full] = (obj, value)
    return value


def _reps(study, metric: str, estimator: str, shared: bool = True) -> pd.DataFrame:
    """Repetitions × systems of one metric and estimator."""
    source = study.sim if shared else study.sim_independent

    def build() -> pd.DataFrame:
        return study.sampled(shared=shared).pivot_table(index=["metric", "estimator", "repetition"],
                                                         columns="system", values="value", sort=False)

    wide = _by_identity(source, ("wide", study.ties, shared), build)
    return wide.loc[(metric, estimator)][list(study.systems)]


def _exact_means(study) -> pd.DataFrame:
    return _by_identity(study.exact, ("means", study.ties), study.exact_means)


def _mc(values: np.ndarray, level: float, what: str) -> Estimate:
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return Estimate.point(float(v.mean()), f"{what}, one repetition (no interval)")
    return Estimate.mean_se(v, level, method=f"{what}: t interval over {v.size} repetitions, {level * 100:g} %")


def _rep_diff(study, metric: str, estimator: str, a: str, b: str, level: float) -> Estimate:
    """Expected sampled a − b: mean over repetitions (shared negatives) with its t interval."""
    w = _reps(study, metric, estimator)
    return _mc((w[a] - w[b]).to_numpy(), level, f"sampled {metric} ({estimator}) {a} − {b}")


def _exact_user(study, metric: str, system: str) -> np.ndarray:
    return study.exact[study.ties][(system, metric)]


def _exact_diff(study, metric: str, a: str, b: str, s: Settings) -> Estimate:
    """Exact a − b with a paired bootstrap over users (BCa)."""
    return Estimate.bootstrap_diff(_exact_user(study, metric, a), _exact_user(study, metric, b), s.level, s.seed,
                                   s.n_resamples,
                                   method=f"exact {metric} {a} − {b}: paired bootstrap over "
                                          f"{study.users} users (BCa, {s.n_resamples} resamples), {s.level * 100:g} %")


def _needs_xyz(study) -> Outcome | None:
    if not {"X", "Y", "Z"} <= set(study.systems):
        return Outcome(Verdict.NOT_REPRODUCED, None,
                       f"the claim is about the paper's recommenders X, Y, Z; this run has {', '.join(study.systems)}")
    return None


def _order_signs(diffs: Mapping[str, Estimate]) -> list[tuple[str, Outcome]]:
    return [(k, sign_rule(e, "positive", label=k)) for k, e in diffs.items()]


def _chain(study, metric: str, order: Sequence[str], diff: Callable[[str, str], Estimate]) -> list[tuple[str, Outcome]]:
    """Sign checks of consecutive pairs of ``order`` (best first)."""
    return _order_signs({f"{a} − {b} ({metric})": diff(a, b) for a, b in zip(order, order[1:])})


def worst_bucket(ranks: np.ndarray, n: np.ndarray, buckets: int = 10) -> np.ndarray:
    """Whether each rank lies in the last of ``buckets`` equal buckets of the user's list
    (relative rank above 1 − 1/buckets). Our reading of Fig. 5's "worst bucket", whose width
    the paper's text does not give."""
    return np.asarray(ranks, dtype=float) > (1.0 - 1.0 / buckets) * np.asarray(n, dtype=float)


# --------------------------------------------------------------------------------------------
# The running example (§3–5)


@LEDGER.claim(_P + "table1", statement="Exact metrics of the running example (Table 1): A, B, C on AUC, AP, NDCG, "
              "Recall@10", source="§3.2, Table 1", paper_value="12 values", paper_dataset="toy (n = 10,000)",
              rule="each of our 12 values rounds to the printed three decimals", needs=("toy",))
def _table1(r):
    ex = _toy_exact(r["toy"], TOY_METRICS)
    gaps = [abs(round(ex.loc[m, s], 3) - TABLE1[s][i]) for s in TABLE1 for i, m in enumerate(TOY_METRICS)]
    worst = max(abs(ex.loc[m, s] - TABLE1[s][i]) for s in TABLE1 for i, m in enumerate(TOY_METRICS))
    ok = sum(g < 1e-9 for g in gaps)
    est = Estimate.exact(worst, "largest |ours − printed|, exact")
    verdict = Verdict.AGREES if ok == len(gaps) else Verdict.DIFFERS
    return Outcome(verdict, est, f"{ok} of {len(gaps)} values round to the printed digits; the largest gap "
                   f"before rounding is {format_number(worst)}", f"{ok}/{len(gaps)} match")


@LEDGER.claim(_P + "example.best", statement="On exact AUC A is best; on the top-heavy AP, NDCG and Recall@10 C is",
              source="§3.2", paper_value="AUC: A; AP, NDCG, Recall: C", paper_dataset="toy (n = 10,000)",
              rule="the best system by exact value, per metric", needs=("toy",))
def _example_best(r):
    ex = _toy_exact(r["toy"], TOY_METRICS)
    best = {m: ex.loc[m].idxmax() for m in TOY_METRICS}
    want = {m: ("A" if m == "AUC" else "C") for m in TOY_METRICS}
    hits = [m for m in TOY_METRICS if best[m] == want[m]]
    text = ", ".join(f"{m}: {best[m]}" for m in TOY_METRICS)
    return Outcome(Verdict.AGREES if len(hits) == len(TOY_METRICS) else Verdict.DIFFERS, None,
                   f"best by exact value: {text}", text)


def _table2_parts(r) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    toy = r["toy"]
    sim = r["toy_sampled"]
    reps = int(sim["repetition"].nunique())
    g = sim.groupby(["metric", "system"])["value"]
    return _toy_expected(toy, toy.m, TOY_METRICS), pd.DataFrame({"mean": g.mean(), "sd": g.std()}), reps


@LEDGER.claim(_P + "table2.means", statement="Sampled metrics of the example with m = 99 (Table 2, means of 1,000 "
              "repetitions): our exact expectations", source="§4.2, Table 2", paper_value="12 means",
              paper_dataset="toy (n = 10,000)",
              rule="every expectation within 2 Monte-Carlo standard errors of the printed mean (sd/√1000, sd "
                   "widened by its rounding) plus the mean's rounding", needs=("toy", "toy_sampled"))
def _table2_means(r):
    expected, _, _ = _table2_parts(r)
    if r["toy"].m != TOY_M:
        return Outcome(Verdict.NOT_REPRODUCED, None, f"the chapter samples m = {r['toy'].m}, Table 2 m = {TOY_M}")
    zs = []
    for s, row in TABLE2.items():
        for i, metric in enumerate(TOY_METRICS):
            mean, sd = row[i]
            allowed = 2 * (sd + 0.0005) / np.sqrt(TOY_REPETITIONS) + 0.0005
            zs.append(abs(expected.loc[metric, s] - mean) / allowed)
    worst = max(zs)
    inside = sum(z <= 1 for z in zs)
    est = Estimate.exact(worst, "largest gap over the allowed gap (exact expectations)")
    return Outcome(Verdict.AGREES if inside == len(zs) else Verdict.DIFFERS, est,
                   f"{inside} of {len(zs)} expectations lie within the allowed gap; the largest gap is "
                   f"{format_number(worst)} times the allowance", f"{inside}/{len(zs)} within")


@LEDGER.claim(_P + "table2.sd", statement="Spread of the example's sampled metrics over repetitions (Table 2, "
              "standard deviations)", source="§4.2, Table 2", paper_value="12 sd", paper_dataset="toy (n = 10,000)",
              rule="each simulated sd within 3 combined standard errors of the printed sd (se of an sd ≈ "
                   "sd/√(2(R − 1))) plus its rounding", needs=("toy", "toy_sampled"))
def _table2_sd(r):
    _, sim, reps = _table2_parts(r)
    if r["toy"].m != TOY_M:
        return Outcome(Verdict.NOT_REPRODUCED, None, f"the chapter samples m = {r['toy'].m}, Table 2 m = {TOY_M}")
    if reps < 2:
        return Outcome(Verdict.NOT_REPRODUCED, None, "a single repetition has no spread")
    inside, worst = 0, 0.0
    for s, row in TABLE2.items():
        for i, metric in enumerate(TOY_METRICS):
            sd_p = row[i][1]
            sd_o = float(sim.loc[(metric, s), "sd"])
            se = np.hypot(sd_o / np.sqrt(2 * (reps - 1)), sd_p / np.sqrt(2 * (TOY_REPETITIONS - 1)))
            gap = abs(sd_o - sd_p)
            worst = max(worst, gap)
            inside += gap <= 3 * se + 0.0005
    verdict = Verdict.AGREES if inside == 12 else Verdict.DIFFERS
    return Outcome(verdict, Estimate.point(worst, "largest |sd ours − sd printed|"),
                   f"{inside} of 12 standard deviations agree within their sampling error ({reps} repetitions "
                   f"here, {TOY_REPETITIONS} in the paper)", f"{inside}/12 within")


@LEDGER.claim(_P + "s4.2.ap-reversed", statement="Sampled AP (m = 99) ranks A first and C, the exact best, last",
              source="§4.2, Table 2", paper_value="A > B > C", paper_dataset="toy (n = 10,000)",
              rule="order of the exact expectations of sampled AP", needs=("toy",))
def _ap_reversed(r):
    e = _toy_expected(r["toy"], r["toy"].m, ["AP"]).loc["AP"]
    order = order_text(e.to_dict())
    ok = order[0] == "A" and order[-1] == "C"
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, None,
                   f"expected sampled AP at m = {r['toy'].m} orders {order}", order)


@LEDGER.claim(_P + "s4.2.only-auc", statement="Only AUC keeps the exact order of A, B, C under sampling; AP, NDCG "
              "and Recall@10 do not", source="§4.2", paper_value="AUC only", paper_dataset="toy (n = 10,000)",
              rule="per metric, whether every pair has the same sign of difference exactly and in expectation "
                   "(Definition 1)", needs=("toy",))
def _only_auc(r):
    toy = r["toy"]
    ex, sm = _toy_exact(toy, TOY_METRICS), _toy_expected(toy, toy.m, TOY_METRICS)
    consistent = []
    for metric in TOY_METRICS:
        same = all(np.sign(round(ex.loc[metric, a] - ex.loc[metric, b], 12))
                   == np.sign(round(sm.loc[metric, a] - sm.loc[metric, b], 12))
                   for a, b in combinations("ABC", 2))
        if same:
            consistent.append(metric)
    text = ", ".join(consistent) or "none"
    return Outcome(Verdict.AGREES if consistent == ["AUC"] else Verdict.DIFFERS, None,
                   f"consistent at m = {toy.m}: {text}", text)


def _fig2(r, m: int | Sequence[int], want: str, tol: float = 0.0, what: str = "") -> Outcome:
    toy = r["toy"]
    ms = [m] if isinstance(m, int) else list(m)
    orders = [order_text(_toy_expected(toy, mm, ["AP"]).loc["AP"].to_dict(), tol) for mm in ms]
    bad = [(mm, o) for mm, o in zip(ms, orders) if o != want]
    where = f"m = {ms[0]}" if len(ms) == 1 else f"every m from {ms[0]} to {ms[-1]}"
    if not bad:
        return Outcome(Verdict.AGREES, None, f"expected sampled AP orders {want} at {where}{what}", want)
    shown = ", ".join(f"{o} at m = {mm}" for mm, o in bad[:3])
    return Outcome(Verdict.DIFFERS, None, f"expected sampled AP orders {shown}; the paper reads {want}", bad[0][1])


@LEDGER.claim(_P + "fig2.ap-small-m", statement="Sampled AP orders A > C > B for fewer than 50 negatives",
              source="§4.2, Fig. 2", paper_value="A > C > B (m < 50)", paper_dataset="toy (n = 10,000)",
              rule="exact expectations at every m = 1..49", needs=("toy",))
def _fig2_small(r):
    return _fig2(r, list(range(1, PAPER["fig2_ap_small"])), "A>C>B")


@LEDGER.claim(_P + "fig2.ap-200", statement="Sampled AP orders A > B > C at about 200 negatives",
              source="§4.2, Fig. 2", paper_value="A > B > C (m ≈ 200)", paper_dataset="toy (n = 10,000)",
              rule="exact expectations at m = 200", needs=("toy",))
def _fig2_200(r):
    return _fig2(r, PAPER["fig2_ap_mid"], "A>B>C")


@LEDGER.claim(_P + "fig2.ap-500", statement="Sampled AP orders C > A > B at about 500 negatives",
              source="§4.2, Fig. 2", paper_value="C > A > B (m ≈ 500)", paper_dataset="toy (n = 10,000)",
              rule="exact expectations at m = 500", needs=("toy",))
def _fig2_500(r):
    return _fig2(r, PAPER["fig2_ap_late"], "C>A>B")


@LEDGER.claim(_P + "fig2.ap-large", statement="For large samples sampled AP orders C first, A and B equal",
              source="§4.2, Fig. 2", paper_value="C > A = B", paper_dataset="toy (n = 10,000)",
              rule="exact expectations at m = n − 1, A and B equal within Table 1's rounding (0.0005)",
              needs=("toy",))
def _fig2_large(r):
    return _fig2(r, r["toy"].n - 1, "C>A=B", tol=0.0005)


@_memo
def recall_consistent_from(toy: ToyInputs, step: int = 100, tol: float = 0.0005) -> int | None:
    """Smallest m (multiple of ``step``) from which expected sampled Recall@10 of the example orders
    the systems as the exact metric does, exact ties read as equal within ``tol``, up to m = n − 1."""
    ex = _toy_exact(toy, ["Recall@10"]).loc["Recall@10"].to_dict()
    want = order_text(ex, tol)
    ms = list(range(step, toy.n, step))
    from ..sampled import m_curves

    frame = m_curves({k: np.asarray(v) for k, v in toy.ranks.items()}, toy.n, ms, ["Recall@10"], ["sampled"],
                     replace=toy.replace).pivot(index="m", columns="system", values="value")
    ok = np.array([order_text(frame.loc[m].to_dict(), tol) == want for m in ms])
    if not ok[-1]:
        return None
    fails = np.flatnonzero(~ok)
    return int(ms[0] if fails.size == 0 else ms[fails[-1] + 1])


@LEDGER.claim(_P + "fig2.recall-5000", statement="Sampled Recall@10 of the example becomes consistent only at "
              "about 5,000 negatives out of 10,000", source="§4.2, Fig. 2", paper_value=5000,
              paper_dataset="toy (n = 10,000)",
              rule="smallest m (steps of 100) from which the expected order equals the exact C > A = B (ties within "
                   "0.0005); agrees within a factor 1.5 of the paper's value, read off a log-scale figure",
              needs=("toy",))
def _fig2_recall(r):
    m = recall_consistent_from(r["toy"])
    if m is None:
        return Outcome(Verdict.DIFFERS, None, "never consistent below m = n", "never")
    p = PAPER["fig2_recall"]
    ok = p / 1.5 <= m <= p * 1.5
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, Estimate.exact(m, "exact expectations on a grid"),
                   f"consistent from m = {m:,} on", f"m = {m:,}")


@LEDGER.claim(_P + "s4.4.1.auc-unbiased", statement="Sampled AUC is an unbiased estimate of exact AUC, with or "
              "without replacement", source="§4.4.1", paper_value="unbiased", paper_dataset="analysis",
              rule="largest |E[AUC_{m+1}(r̃)] − AUC_n(r)| over every true rank, summed law (not the closed "
                   "form), both laws, at most 1e-12", needs=("toy",))
def _auc_unbiased(r):
    gap = _auc_gap(r["toy"])
    toy = r["toy"]
    return Outcome(Verdict.AGREES if gap <= 1e-12 else Verdict.DIFFERS, Estimate.exact(gap, "exact summation"),
                   f"largest gap {gap:.1e} over r = 1..{toy.n:,} at m = {toy.m}")


@_memo
def _auc_gap(toy: ToyInputs) -> float:
    from ..sampled import expected_metric, metric_value

    ranks = np.arange(1, toy.n + 1)
    return max(float(np.abs(expected_metric("AUC", ranks, toy.n, toy.m, rep, closed_form=False)
                           - metric_value("AUC", ranks, toy.n)).max()) for rep in (True, False))


@LEDGER.claim(_P + "s4.4.3.eq19", statement="Closed form of expected sampled AP (eq. 19)", source="§4.4.3, eq. 19",
              paper_value="eq. 19", paper_dataset="analysis",
              rule="largest |closed form − summation of eq. 16| over every true rank at most 1e-12",
              needs=("toy",))
def _eq19(r):
    toy = r["toy"]
    gap = _eq19_gap(toy)
    return Outcome(Verdict.AGREES if gap <= 1e-12 else Verdict.DIFFERS, Estimate.exact(gap, "exact"),
                   f"largest gap {gap:.1e} at m = {toy.m}")


@_memo
def _eq19_gap(toy: ToyInputs) -> float:
    from ..sampled import expected_metric

    ranks = np.arange(1, toy.n + 1)
    return float(np.abs(expected_metric("AP", ranks, toy.n, toy.m, True)
                        - expected_metric("AP", ranks, toy.n, toy.m, True, closed_form=False)).max())


@LEDGER.claim(_P + "s4.4.4.m1", statement="With one negative every metric that prefers rank 1 to rank 2 orders "
              "systems as exact AUC does", source="§4.4.4", paper_value="collapse to AUC", paper_dataset="toy",
              rule="expected sampled AP, NDCG, NDCG@10 and Recall@1 at m = 1 on the example order A, B, C as "
                   "exact AUC", needs=("toy",))
def _m1(r):
    toy = r["toy"]
    auc = order_text(_toy_exact(toy, ["AUC"]).loc["AUC"].to_dict(), 1e-12)
    sm = _toy_expected(toy, 1, ["AP", "NDCG", "NDCG@10", "Recall@1"])
    orders = {m: order_text(sm.loc[m].to_dict(), 1e-12) for m in sm.index}
    bad = {m: o for m, o in orders.items() if o != auc}
    text = f"exact AUC {auc}; " + ", ".join(f"{m}: {o}" for m, o in orders.items())
    return Outcome(Verdict.AGREES if not bad else Verdict.DIFFERS, None, text, auc)


@_memo
def _fig4_vectors(toy: ToyInputs, n: int, m: int) -> dict[str, np.ndarray]:
    from ..sampled import correction, sampled_metric_values

    out = {"sampled": sampled_metric_values("AP", m), "rank-estimate": correction("AP", n, m, "rank-estimate"),
           "cls": correction("AP", n, m, "cls", replace=toy.replace)}
    for g in toy.gammas:
        out[f"BV {g:g}"] = correction("AP", n, m, "bv", gamma=g, replace=toy.replace)
    return out


def bias_variance(vec: np.ndarray, n: int, m: int, replace: bool = True) -> tuple[float, float]:
    """Prior-weighted (uniform) squared bias and variance of a corrected AP vector (eq. 24's terms)."""
    from ..sampled import correction_system

    P, w, M = correction_system("AP", n, m, replace=replace)
    mean = P @ vec
    return float(w @ (mean - M) ** 2), float(w @ (P @ vec**2 - mean**2))


@_memo
def _fig4_bv(toy: ToyInputs) -> dict[str, tuple[float, float]]:
    """Weighted squared bias and variance of each corrected AP of Fig. 4."""
    return {k: bias_variance(v, toy.n, PAPER["fig4_m"], toy.replace)
            for k, v in _fig4_vectors(toy, toy.n, PAPER["fig4_m"]).items()}


@LEDGER.claim(_P + "fig4.closer", statement="Every corrected AP is closer to exact AP in expectation than the "
              "uncorrected one (n = 10,000, m = 100, uniform prior)", source="§5.4, Fig. 4",
              paper_value="all closer", paper_dataset="analysis",
              rule="prior-weighted squared bias of each correction below the uncorrected metric's", needs=("toy",))
def _fig4_closer(r):
    toy = r["toy"]
    vecs = _fig4_vectors(toy, toy.n, PAPER["fig4_m"])
    bias = {k: v[0] for k, v in _fig4_bv(toy).items()}
    worse = [k for k in vecs if k != "sampled" and bias[k] >= bias["sampled"]]
    ratio = max(bias[k] for k in vecs if k != "sampled") / bias["sampled"]
    return Outcome(Verdict.AGREES if not worse else Verdict.DIFFERS,
                   Estimate.exact(ratio, "largest bias of a correction over the uncorrected bias"),
                   "every correction has less bias" if not worse else f"not closer: {', '.join(worse)}")


@LEDGER.claim(_P + "fig4.oscillates", statement="Without the order constraint, low γ gives oscillating corrections",
              source="§5.4, Fig. 4", paper_value="oscillating", paper_dataset="analysis",
              rule="the BV vector for the smallest γ rises somewhere (a non-monotone vector) while BV 1 and CLS "
                   "do not", needs=("toy",))
def _fig4_osc(r):
    toy = r["toy"]
    vecs = _fig4_vectors(toy, toy.n, PAPER["fig4_m"])
    rises = {k: int((np.diff(v) > 1e-12).sum()) for k, v in vecs.items()}
    low = f"BV {min(toy.gammas):g}"
    ok = rises[low] > 0 and rises["BV 1"] == 0 and rises["cls"] == 0
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, Estimate.exact(rises[low], "rises of the vector"),
                   f"{low} rises at {rises[low]} of {PAPER['fig4_m']} steps, BV 1 at {rises['BV 1']}, CLS at "
                   f"{rises['cls']}")


@LEDGER.claim(_P + "s5.3.trade-off", statement="Lower γ trades bias for variance", source="§5.3, eq. 24",
              paper_value="bias falls, variance grows as γ falls", paper_dataset="analysis",
              rule="over the chapter's γ (decreasing), the weighted squared bias of corrected AP falls and its "
                   "weighted variance grows at every step", needs=("toy",))
def _tradeoff(r):
    toy = r["toy"]
    gam = sorted(toy.gammas, reverse=True)
    stats_ = _fig4_bv(toy)
    bv = [stats_[f"BV {g:g}"] for g in gam]
    b_ok = all(x[0] > y[0] for x, y in zip(bv, bv[1:]))
    v_ok = all(x[1] < y[1] for x, y in zip(bv, bv[1:]))
    return Outcome(Verdict.AGREES if b_ok and v_ok else Verdict.DIFFERS, None,
                   f"bias {'falls' if b_ok else 'does not fall'} and variance {'grows' if v_ok else 'does not grow'} "
                   f"at every step of γ = {', '.join(f'{g:g}' for g in gam)}")


@LEDGER.claim(_P + "s5.3.gamma-one", statement="BV with γ = 1 is the posterior mean of the metric given the sampled "
              "rank (eq. 26; §5.3 calls it least squares)", source="§5.3, eq. 26", paper_value="eq. 26",
              paper_dataset="analysis", rule="largest |BV 1 − Σ_r p(r | r̃) M(r)| at most 1e-9", needs=("toy",))
def _gamma_one(r):
    gap = _gamma_one_gap(r["toy"])
    return Outcome(Verdict.AGREES if gap <= 1e-9 else Verdict.DIFFERS, Estimate.exact(gap, "exact"),
                   f"largest gap {gap:.1e}")


@_memo
def _gamma_one_gap(toy: ToyInputs) -> float:
    from ..sampled import correction, correction_system

    P, w, M = correction_system("AP", toy.n, PAPER["fig4_m"], replace=toy.replace)
    post = (P * w[:, None]) / (P * w[:, None]).sum(axis=0)
    return float(np.abs(correction("AP", toy.n, PAPER["fig4_m"], "bv", gamma=1.0, replace=toy.replace)
                        - post.T @ M).max())


@LEDGER.claim(_P + "s5.3.least-squares-variance", statement="The minimal-bias (least-squares) correction has high "
              "variance", source="§5.3", paper_value="high variance", paper_dataset="analysis",
              rule="at the paper's ML-1M size (n = 3,706, m = 100), the weighted variance of least-squares AP "
                   "exceeds that of every BV γ of the chapter", needs=("toy",))
def _ls_variance(r):
    v_ls, v_bv = _ls_bv_variance(r["toy"])
    return Outcome(Verdict.AGREES if v_ls > v_bv else Verdict.DIFFERS, Estimate.exact(v_ls, "exact"),
                   f"weighted variance {v_ls:.2g} against at most {v_bv:.2g} for BV")


@_memo
def _ls_bv_variance(toy: ToyInputs) -> tuple[float, float]:
    import warnings

    from ..sampled import correction
    from ..sampled.corrections import IllConditionedWarning

    n, m = PAPER["n"], PAPER["m"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        ls = correction("AP", n, m, "least-squares", replace=toy.replace)
    v_ls = bias_variance(ls, n, m, toy.replace)[1]
    v_bv = max(bias_variance(correction("AP", n, m, "bv", gamma=g, replace=toy.replace), n, m, toy.replace)[1]
               for g in toy.gammas)
    return v_ls, v_bv


# --------------------------------------------------------------------------------------------
# MovieLens (§6): rank distributions (Fig. 5)


@LEDGER.claim(_P + "fig5.z-worst", statement="Z puts many held-out items in the worst bucket: over 1,600 of "
              "6,040 users", source="§6.1, Fig. 5", paper_value="over 1600 of 6040", paper_dataset="ML-1M",
              rule="share of users whose rank lies in the last tenth of their list, bootstrap over users; the "
                   "interval must lie above the paper's share", needs=("real", "settings"))
def _fig5_z(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    hit = worst_bucket(st.ranks()["Z"], st.standing.n).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    return sign_rule(Estimate(est.value - PAPER["z_worst_bucket"] / PAPER["users"], est.low - PAPER["z_worst_bucket"]
                              / PAPER["users"], est.high - PAPER["z_worst_bucket"] / PAPER["users"], est.method),
                     "positive", label="our share minus the paper's")


@LEDGER.claim(_P + "fig5.x-top100", statement="X ranks 2,310 of 6,040 held-out items in its top 100",
              source="§6.1, Fig. 5", paper_value="2310 of 6040", paper_dataset="ML-1M",
              rule="share of users with rank ≤ 100, bootstrap over users, against 2,310/6,040 (our lists are "
                   "shorter, so this share is not expected to match)", needs=("real", "settings"))
def _fig5_x_top(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    from ..ledger import value_rule

    hit = (st.ranks()["X"] <= 100).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    return value_rule(PAPER["x_top100"] / PAPER["users"], est, label="our share")


@LEDGER.claim(_P + "fig5.x-bottom", statement="X puts fewer than 300 of 6,040 held-out items in the bottom half",
              source="§6.1, Fig. 5", paper_value="under 300 of 6040", paper_dataset="ML-1M",
              rule="share of users with rank above n/2, bootstrap over users; the interval must lie below the "
                   "paper's share", needs=("real", "settings"))
def _fig5_x_bottom(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    hit = (st.ranks()["X"] > st.standing.n / 2).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    p = PAPER["x_bottom_half"] / PAPER["users"]
    return sign_rule(Estimate(est.value - p, est.low - p, est.high - p, est.method), "negative",
                     label="our share minus the paper's")


@LEDGER.claim(_P + "s6.1.y-profile", statement="Y is better than X in the top 10 but worse overall",
              source="§6.1, Fig. 5", paper_value="Y > X on Recall@10, Y < X on AUC", paper_dataset="ML-1M",
              rule="paired bootstrap of exact Recall@10 (Y − X > 0) and exact AUC (X − Y > 0)",
              needs=("real", "settings"))
def _y_profile(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    return _combine(_order_signs({"Recall@10 Y − X": _exact_diff(st, "Recall@10", "Y", "X", s),
                                  "AUC X − Y": _exact_diff(st, "AUC", "X", "Y", s)}))


# §6.2: exact and sampled metrics (Table 3)


def _exact_order_claim(metric: str):
    @LEDGER.claim(_P + f"s6.2.exact-order.{metric.split('@')[0].lower()}",
                  statement=f"Exact {metric} orders Z > Y > X", source="§6.2, Table 3", paper_value="Z > Y > X",
                  paper_dataset="ML-1M", rule="paired bootstrap over users of Z − Y and Y − X, both positive",
                  needs=("real", "settings"))
    def _(r):
        st, s = r["real"], r["settings"]
        if (no := _needs_xyz(st)) is not None:
            return no
        return _combine(_chain(st, metric, "ZYX", lambda a, b: _exact_diff(st, metric, a, b, s)))


for _metric in TOP_HEAVY:
    _exact_order_claim(_metric)


@LEDGER.claim(_P + "s6.2.sampled-recall", statement="Uncorrected sampled Recall@10 orders X > Y > Z, the paper's "
              "exact order reversed",
              source="§6.2, Table 3", paper_value="X > Y > Z", paper_dataset="ML-1M",
              rule="t interval over repetitions of X − Y and Y − Z (shared negatives), both positive",
              needs=("real", "settings"))
def _sampled_recall(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    return _combine(_chain(st, "Recall@10", "XYZ", lambda a, b: _rep_diff(st, "Recall@10", "sampled", a, b, s.level)))


@LEDGER.claim(_P + "s6.2.x-looks-best", statement="X, the worst on exact NDCG@10 and AP, looks best when sampled",
              source="§6.2, Table 3", paper_value="X best sampled", paper_dataset="ML-1M",
              rule="X worst exactly (paired bootstrap) and best sampled (t interval over repetitions) on both "
                   "metrics", needs=("real", "settings"))
def _x_best(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    parts = {}
    for metric in ("NDCG@10", "AP"):
        for other in "YZ":
            parts[f"exact {metric} {other} − X"] = _exact_diff(st, metric, other, "X", s)
            parts[f"sampled {metric} X − {other}"] = _rep_diff(st, metric, "sampled", "X", other, s.level)
    return _combine(_order_signs(parts))


@LEDGER.claim(_P + "s6.2.zy-kept", statement="Sampled NDCG@10 and AP keep the exact order of the two better "
              "systems, Z > Y", source="§6.2, Table 3", paper_value="Z > Y", paper_dataset="ML-1M",
              rule="t interval over repetitions of sampled Z − Y, positive on both metrics",
              needs=("real", "settings"))
def _zy(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    return _combine(_order_signs({f"sampled {m} Z − Y": _rep_diff(st, m, "sampled", "Z", "Y", s.level)
                                  for m in ("NDCG@10", "AP")}))


@LEDGER.claim(_P + "s6.2.auc-consistent", statement="Sampled AUC orders every pair as exact AUC does",
              source="§6.2, Table 3", paper_value="consistent", paper_dataset="ML-1M",
              rule="per pair, the t interval over repetitions of the sampled difference lies on the side of the "
                   "exact difference", needs=("real", "settings"))
def _auc_consistent(r):
    st, s = r["real"], r["settings"]
    ex = _exact_means(st).loc["AUC"]
    parts = {}
    for a, b in combinations(st.systems, 2):
        hi, lo = (a, b) if ex[a] >= ex[b] else (b, a)
        parts[f"sampled AUC {hi} − {lo}"] = _rep_diff(st, "AUC", "sampled", hi, lo, s.level)
    return _combine(_order_signs(parts))


@LEDGER.claim(_P + "s6.2.bias-not-variance", statement="The sampled metrics' standard deviations are small: the "
              "problem is bias, not variance", source="§6.2, Table 3", paper_value="low sd, large bias",
              paper_dataset="ML-1M",
              rule="for every system and top-heavy metric, |mean sampled − exact| exceeds 3 standard deviations "
                   "over repetitions", needs=("real",))
def _bias_not_var(r):
    st = r["real"]
    ex = _exact_means(st)
    ratios = []
    for metric in TOP_HEAVY:
        w = _reps(st, metric, "sampled")
        for sys_ in st.systems:
            sd = float(w[sys_].std(ddof=1)) if len(w) > 1 else float("nan")
            ratios.append(abs(float(w[sys_].mean()) - ex.loc[metric, sys_]) / sd if sd > 0 else float("inf"))
    if any(np.isnan(ratios)):
        return Outcome(Verdict.NOT_REPRODUCED, None, "one repetition has no standard deviation")
    worst = min(ratios)
    return Outcome(Verdict.AGREES if worst > 3 else Verdict.DIFFERS,
                   Estimate.point(worst, "smallest |bias| / sd over systems and metrics"),
                   f"the smallest bias is {format_number(worst)} standard deviations")


# §6.3: corrections


def _bias_estimates(st, metric: str, est: str, system: str, level: float) -> Estimate:
    w = _reps(st, metric, est)
    return _mc(w[system].to_numpy() - _exact_means(st).loc[metric, system], level,
               f"{est} {metric} {system} minus exact")


@LEDGER.claim(_P + "s6.3.all-closer", statement="Every correction is closer to the exact metric than the uncorrected "
              "sampled metric", source="§6.3, Table 3", paper_value="all closer", paper_dataset="ML-1M",
              rule="per system, top-heavy metric and correction: t interval over repetitions of |bias uncorrected| − "
                   "|bias corrected| (same draws) above 0", needs=("real", "settings"))
def _all_closer(r):
    st, s = r["real"], r["settings"]
    ex = _exact_means(st)
    parts = {}
    for metric in TOP_HEAVY:
        raw = _reps(st, metric, "sampled")
        for est in st.estimators:
            if est == "sampled":
                continue
            w = _reps(st, metric, est)
            for sys_ in st.systems:
                d = np.abs(raw[sys_] - ex.loc[metric, sys_]) - np.abs(w[sys_] - ex.loc[metric, sys_])
                parts[f"bias reduction by {est}, {metric} {sys_}"] = _mc(d.to_numpy(), s.level,
                                                                       "|bias| uncorrected − corrected")
    out = _combine(_order_signs(parts))
    agrees = sum(sign_rule(e, "positive").verdict == Verdict.AGREES for e in parts.values())
    return Outcome(out.verdict, out.ours, out.reason, f"{agrees} of {len(parts)} closer")


@LEDGER.claim(_P + "s6.3.low-bias", statement="CLS and BV with low γ have values close to the exact metric",
              source="§6.3, Table 3", paper_value="CLS, BV 0.01, BV 0.001 close", paper_dataset="ML-1M",
              rule="the largest relative bias (over systems and top-heavy metrics) of CLS, BV 0.01 and BV 0.001 "
                   "is below that of the rank estimate and of BV 1", needs=("real",))
def _low_bias(r):
    st = r["real"]
    ex = _exact_means(st)

    def worst(est: str) -> float:
        return max(abs(float(_reps(st, m, est)[sy].mean()) / ex.loc[m, sy] - 1) for m in TOP_HEAVY for sy in st.systems)

    low = [e for e in ("cls", "BV 0.01", "BV 0.001") if e in st.estimators]
    high = [e for e in ("rank-estimate", "BV 1") if e in st.estimators]
    if not low or not high:
        return Outcome(Verdict.NOT_REPRODUCED, None, "the chapter did not run these corrections")
    wl, wh = {e: worst(e) for e in low}, {e: worst(e) for e in high}
    ok = max(wl.values()) < min(wh.values())
    text = ", ".join(f"{e}: {v * 100:.0f} %" for e, v in {**wl, **wh}.items())
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, Estimate.point(max(wl.values()), "largest relative bias"),
                   f"largest relative bias — {text}")


@LEDGER.claim(_P + "s6.3.z-first", statement="Every correction places Z first on Recall@10, NDCG@10 and AP",
              source="§6.3, Table 3", paper_value="Z first", paper_dataset="ML-1M",
              rule="t intervals over repetitions of Z − X and Z − Y, positive for every correction and metric",
              needs=("real", "settings"))
def _z_first(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    parts = {f"{e} {m} Z − {o}": _rep_diff(st, m, e, "Z", o, s.level)
             for e in st.estimators if e != "sampled" for m in TOP_HEAVY for o in "XY"}
    return _combine(_order_signs(parts))


@LEDGER.claim(_P + "s6.3.low-gamma-xy", statement="BV with low γ also orders X and Y correctly",
              source="§6.3, Table 3", paper_value="Y > X with BV 0.01, 0.001", paper_dataset="ML-1M",
              rule="for BV 0.01 and BV 0.001 on Recall@10, NDCG@10 and AP, the t interval of the sampled "
                   "difference lies on the side of the exact one", needs=("real", "settings"))
def _low_gamma(r):
    st, s = r["real"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    ex = _exact_means(st)
    parts = {}
    for e in ("BV 0.01", "BV 0.001"):
        if e not in st.estimators:
            continue
        for m in TOP_HEAVY:
            hi, lo = ("Y", "X") if ex.loc[m, "Y"] >= ex.loc[m, "X"] else ("X", "Y")
            parts[f"{e} {m} {hi} − {lo}"] = _rep_diff(st, m, e, hi, lo, s.level)
    return _combine(_order_signs(parts))


@LEDGER.claim(_P + "s6.3.rank-estimate-recall-ndcg", statement="Under the rank estimate Recall@10 and NDCG@10 are "
              "identical", source="§6.3, Tables 3–4", paper_value="identical", paper_dataset="ML-1M",
              rule="largest |Recall@10 − NDCG@10| over systems and repetitions is 0 (both built for one n)",
              needs=("real",))
def _re_equal(r):
    st = r["real"]
    a, b = _reps(st, "Recall@10", "rank-estimate"), _reps(st, "NDCG@10", "rank-estimate")
    gap = float(np.abs(a.to_numpy() - b.to_numpy()).max())
    return Outcome(Verdict.AGREES if gap <= 1e-12 else Verdict.DIFFERS, Estimate.exact(gap, "exact"),
                   f"largest gap {gap:.1e} with n = {st.n_fit:,}, m = {st.m}")


@LEDGER.claim(_P + "s6.3.variance-grows", statement="The lower γ, the higher the variance of the corrected metric",
              source="§6.3, §7, Table 3", paper_value="sd grows as γ falls", paper_dataset="ML-1M",
              rule="standard deviation over repetitions grows at every step BV 1 → 0.1 → 0.01 → 0.001, for every "
                   "system and top-heavy metric", needs=("real",))
def _var_grows(r):
    st = r["real"]
    steps = [e for e in ("BV 1", "BV 0.1", "BV 0.01", "BV 0.001") if e in st.estimators]
    if len(steps) < 2 or st.repetitions < 2:
        return Outcome(Verdict.NOT_REPRODUCED, None, "needs two BV corrections and two repetitions")
    good = total = 0
    for m in TOP_HEAVY:
        sds = [_reps(st, m, e).std(ddof=1) for e in steps]
        for sy in st.systems:
            seq = [float(x[sy]) for x in sds]
            total += 1
            good += all(a < b for a, b in zip(seq, seq[1:]))
    return Outcome(Verdict.AGREES if good == total else Verdict.DIFFERS, Estimate.exact(good, "count"),
                   f"the sd grows at every step for {good} of {total} system–metric pairs", f"{good}/{total}")


# Fig. 6 and Table 4: orders of pairs


def _order_row(order: pd.DataFrame, m: int, pair: str, metric: str, est: str) -> pd.Series | None:
    sel = order[(order["m"] == m) & (order["pair"] == pair) & (order["metric"] == metric) & (order["estimator"] == est)]
    return None if sel.empty else sel.iloc[0]


def _fig6(r, est: str, paper_m: int, expected: str) -> Outcome:
    st, order, s = r["real"], r["real_order"], r["settings"]
    if (no := _needs_xyz(st)) is not None:
        return no
    m = max(1, int(round(paper_m * float(st.standing.n.mean()) / PAPER["n"])))
    row = _order_row(order, m, "X vs Y", "Recall@10", est)
    if row is None:
        return Outcome(Verdict.NOT_REPRODUCED, None, f"the order study did not run m = {m} with {est}")
    from scipy import stats

    t = stats.norm.ppf(0.5 + s.level / 2)
    est_ = Estimate(row["mean"], row["mean"] - t * row["se"], row["mean"] + t * row["se"],
                    f"expected sampled Recall@10 X vs Y at m = {m} (the paper's rate), signed by the exact order: "
                    f"mean ± {t:.2f} Monte-Carlo se")
    return sign_rule(est_, expected, label=f"signed difference at m = {m}")


@LEDGER.claim(_P + "fig6.uncorrected", statement="Uncorrected Recall@10 needs more than 1,000 of 3,706 negatives "
              "(27 %) to order X and Y correctly in expectation", source="§6.3, Fig. 6",
              paper_value="more than 1000 of 3706", paper_dataset="ML-1M",
              rule="at the same sampling rate on our data, the expected difference signed by the exact order is "
                   "still negative (t interval over repetitions)", needs=("real", "real_order", "settings"))
def _fig6_raw(r):
    return _fig6(r, "sampled", PAPER["fig6_uncorrected"], "negative")


@LEDGER.claim(_P + "fig6.bv", statement="BV 0.1 orders X and Y correctly in expectation with fewer than 60 "
              "negatives (under 2 %)", source="§6.3, Fig. 6", paper_value="fewer than 60 of 3706",
              paper_dataset="ML-1M",
              rule="at the same sampling rate on our data, the expected difference signed by the exact order is "
                   "positive (t interval over repetitions)", needs=("real", "real_order", "settings"))
def _fig6_bv(r):
    return _fig6(r, f"BV {PAPER['fig6_bv_gamma']:g}", PAPER["fig6_bv"], "positive")


def _shares(st, shared: bool = True) -> pd.DataFrame:
    from ..sampled import pairwise_agreement

    ex = _exact_means(st).stack().rename("value").reset_index()
    return pairwise_agreement(st.sampled(shared=shared), ex)


def _wilson(k: float, n: int, level: float) -> tuple[float, float]:
    from scipy import stats

    z = stats.norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


@LEDGER.claim(_P + "table4.bv", statement="BV 0.1 gets the order right with more than 90 % chance in all but one "
              "comparison", source="§6.3, Table 4", paper_value="11 of 12", paper_dataset="ML-1M",
              rule="per pair and metric, the Wilson interval of the share of correct repetitions: above 0.9 counts, "
                   "below does not, across unclear; agrees if at least 11 count even when the unclear fail",
              needs=("real", "settings"))
def _table4_bv(r):
    st, s = r["real"], r["settings"]
    est = f"BV {PAPER['fig6_bv_gamma']:g}"
    if est not in st.estimators:
        return Outcome(Verdict.NOT_REPRODUCED, None, f"{est} was not run")
    sh = _shares(st)
    sh = sh[sh["estimator"] == est].dropna(subset=["agreement"])
    R = st.repetitions
    sure = unclear = 0
    for a in sh["agreement"]:
        lo, hi = _wilson(a * R, R, s.level)
        sure += lo > PAPER["table4_bv_level"]
        unclear += lo <= PAPER["table4_bv_level"] < hi
    need = len(sh) - PAPER["table4_bv_misses"]
    if sure >= need:
        verdict = Verdict.AGREES
    elif sure + unclear < need:
        verdict = Verdict.DIFFERS
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(verdict, Estimate(sure, sure, sure + unclear, "comparisons above 0.9: sure, and with the unclear"),
                   f"{sure} of {len(sh)} comparisons are above 0.9 beyond doubt, {unclear} unclear ({R} repetitions)",
                   f"{sure} (+{unclear} unclear) of {len(sh)}")


@LEDGER.claim(_P + "table4.rank-estimate", statement="The rank estimate is better than the uncorrected metric in "
              "every comparison (§6.3 says strictly; its own Table 4 has ties at 100)", source="§6.3, Table 4",
              paper_value="never worse, better in 7 of 12", paper_dataset="ML-1M",
              rule="per pair and metric, the share of correct repetitions of the rank estimate is never below "
                   "the uncorrected one's by more than sampling noise (two-proportion z > 2), and above it somewhere",
              needs=("real",))
def _table4_re(r):
    st = r["real"]
    sh = _shares(st).pivot_table(index=["pair", "metric"], columns="estimator", values="agreement")
    if "rank-estimate" not in sh:
        return Outcome(Verdict.NOT_REPRODUCED, None, "the rank estimate was not run")
    R = st.repetitions
    a, b = sh["rank-estimate"], sh["sampled"]
    se = np.sqrt(np.maximum(a * (1 - a) + b * (1 - b), 1.0 / R) / R)
    worse = int(((b - a) / se > 2).sum())
    better = int(((a - b) / se > 2).sum())
    if worse:
        verdict = Verdict.DIFFERS
    elif better:
        verdict = Verdict.AGREES
    else:
        verdict = Verdict.INCONCLUSIVE
    return Outcome(verdict, Estimate.exact(better, "comparisons clearly better"),
                   f"clearly better in {better}, clearly worse in {worse} of {len(sh)} comparisons",
                   f"better {better}, worse {worse} of {len(sh)}")


# §8: several relevant items


@LEDGER.claim(_P + "s8.several-items", statement="With several relevant items, per-item corrections under the "
              "independence approximation still bring the sampled metric closer to the exact one",
              source="§8", paper_value="suggested, not tested", paper_dataset="—",
              rule="for every system and metric of the several-items study, the t interval over repetitions of "
                   "|bias uncorrected| − |bias BV| (same draws) lies above 0",
              needs=("real_multi", "settings"))
def _several(r):
    mu, s = r["real_multi"], r["settings"]
    sim = mu.sim
    ests = [e for e in sim["estimator"].unique() if str(e).startswith("BV")]
    if not ests:
        return Outcome(Verdict.NOT_REPRODUCED, None, "no BV correction in the several-items study")
    est = ests[0]
    parts = {}
    for metric in sim["metric"].unique():
        if metric == "AUC":
            continue  # unbiased already
        for sy in mu.standing.systems:
            exact = float(mu.exact[(sy, metric)].mean())
            raw = sim[(sim["metric"] == metric) & (sim["estimator"] == "sampled") & (sim["system"] == sy)]["value"]
            cor = sim[(sim["metric"] == metric) & (sim["estimator"] == est) & (sim["system"] == sy)]["value"]
            d = np.abs(raw.to_numpy() - exact) - np.abs(cor.to_numpy() - exact)
            parts[f"bias reduction by {est}, {metric} {sy}"] = _mc(d, s.level, "|bias| uncorrected − corrected")
    return _combine(_order_signs(parts))


# --------------------------------------------------------------------------------------------
# Tables beside the paper's, and the tie-rule dependence


def table3_frame(study, ties: str | None = None) -> pd.DataFrame:
    """Table 3 beside ours: rows (metric, system, source ∈ paper/ours), columns exact and each
    estimator, cells "mean ± sd" in percent (the paper on ML-1M, ours on the study's data)."""
    from ..sampled import summarise

    rule = ties or study.ties
    ex = study.exact_means(rule)
    summ = summarise(study.sampled(rule)).set_index(["metric", "system", "estimator"])
    rows = []
    for metric in study.metrics:
        for sy in study.systems:
            ours = {"exact": f"{100 * ex.loc[metric, sy]:.2f}"}
            for e in study.estimators:
                mean, sd = summ.loc[(metric, sy, e), ["mean", "sd"]]
                ours[e] = f"{100 * mean:.2f} ± {100 * sd:.2f}" if np.isfinite(sd) else f"{100 * mean:.2f}"
            rows.append({"metric": metric, "system": sy, "source": "ours", **ours})
            if metric in TABLE3 and sy in TABLE3[metric]:
                p = TABLE3[metric][sy]
                paper = {"exact": f"{p[0]:.2f}"}
                paper.update({e: f"{v[0]:.2f} ± {v[1]:.2f}" for e, v in zip(TABLE3_ESTIMATORS, p[1:])})
                rows.append({"metric": metric, "system": sy, "source": "paper", **paper})
    cols = ["exact", *study.estimators]
    return pd.DataFrame(rows).set_index(["metric", "system", "source"])[cols].fillna("")


def table4_frame(study, shared: bool = True) -> pd.DataFrame:
    """Table 4 beside ours: rows (pair, metric, source), columns estimators, percent of
    repetitions ordering the pair as the exact metric does."""
    sh = _shares(study, shared)
    ours = (100 * sh.pivot_table(index=["pair", "metric"], columns="estimator", values="agreement", sort=False))
    ours = ours[[e for e in study.estimators if e in ours]].round(0)
    rows = []
    for (pair, metric), row in ours.iterrows():
        rows.append({"pair": pair, "metric": metric, "source": "ours", **row.to_dict()})
        if pair in TABLE4 and metric in TABLE4[pair]:
            rows.append({"pair": pair, "metric": metric, "source": "paper",
                         **dict(zip(TABLE4_ESTIMATORS, TABLE4[pair][metric]))})
    frame = pd.DataFrame(rows).set_index(["pair", "metric", "source"])
    return frame[[c for c in ours.columns]]


def evaluate_under(results: Mapping[str, Any], ties: str, *, dataset: str, profile: str) -> pd.DataFrame:
    """The ledger evaluated with the real-data claims read under another tie rule (not stored).

    The order study and the several-items study ran under the chapter's rule only; under another
    rule their claims read "not reproduced here"."""
    from dataclasses import replace

    res = dict(results)
    st = res.get("real")
    if st is not None and ties != st.ties:
        res["real"] = replace(st, ties=ties)
        res.pop("real_order", None)
        res.pop("real_multi", None)
    return LEDGER.evaluate(res, dataset=dataset, profile=profile)


def tie_dependence(results: Mapping[str, Any], rules: Sequence[str], *, dataset: str, profile: str) -> pd.DataFrame:
    """Verdict of every real-data claim under each tie rule: rows claims, columns rules, plus
    whether the verdict changes (claims not run under a rule are left out of that comparison)."""
    frames = {rule: evaluate_under(results, rule, dataset=dataset, profile=profile).set_index("claim")
              for rule in rules}
    first = frames[rules[0]]
    real = [c.id for c in LEDGER if "real" in c.needs]
    table = pd.DataFrame({rule: f.loc[real, "verdict"] for rule, f in frames.items()})
    table.insert(0, "statement", first.loc[real, "statement"])
    run = table[list(rules)].where(table[list(rules)] != "not reproduced here")
    table["depends on ties"] = run.nunique(axis=1, dropna=True) > 1
    return table


def paper_order(metric: str, column: int = 0) -> str:
    """The order of X, Y, Z in a column of Table 3 (0 = exact, 1 = uncorrected sampled, …)."""
    values = {s: (v[column] if column == 0 else v[column][0]) for s, v in TABLE3[metric].items()}
    return order_text(values)


def fig5_frame(study) -> pd.DataFrame:
    """Fig. 5's counts beside ours: the paper's count of 6,040 users and share, our count and share."""
    ranks, n = study.ranks(), study.standing.n
    rows = []
    if {"X", "Z"} <= set(study.systems):
        ours = {
            "Z in the worst bucket": worst_bucket(ranks["Z"], n),
            "X in the top 100": ranks["X"] <= 100,
            "X in the bottom half": ranks["X"] > n / 2,
        }
        paper = {"Z in the worst bucket": ("over", PAPER["z_worst_bucket"]),
                 "X in the top 100": ("", PAPER["x_top100"]),
                 "X in the bottom half": ("under", PAPER["x_bottom_half"])}
        for what, hit in ours.items():
            word, count = paper[what]
            rows.append({"users": what, "paper": f"{word} {count:,}".strip(),
                         "paper share": count / PAPER["users"], "ours": int(hit.sum()),
                         "our share": float(hit.mean())})
    return pd.DataFrame(rows).set_index("users") if rows else pd.DataFrame()


def verdict_text(results: Mapping[str, Any], claim_id: str) -> str:
    """"**verdict** (reason)" of one claim, for the chapter's prose."""
    out = LEDGER[_P + claim_id if not claim_id.startswith(_P) else claim_id].outcome(results, strict=False)
    return f"**{out.verdict.value}** ({out.reason})"
