r"""The study of Valcarce et al. (2020): nine metrics, k folds, two averages, five incompleteness schemes.

Valcarce, Bellogín, Parapar and Castells (2020, *Assessing ranking metrics in top-N
recommendation*, IRJ) extend their 2018 study with F1 and ERR, geometric means, 5-fold
cross-validation and item- and user-level incompleteness. This module holds what that extension
needs beyond :mod:`recmeta.metaeval.incompleteness`, :mod:`recmeta.metaeval.agreement` and
:mod:`recmeta.metaeval.significance`:

* :func:`pool_folds` — the folds' test sets and runs as **one** evaluation whose *topics* are
  (fold, user) pairs. A user is judged in every fold in which they have test ratings, with a
  different test set and different runs each time, so each (fold, user) is one topic, as a
  TREC topic is one query. System scores are means over all topics of all folds. The
  incompleteness units stay the dataset's own users and items: removing an item removes its
  test ratings in every fold, removing a user removes all of that user's topics.
* :func:`scorer` — the nine metrics at one cut-off on any subset of the test rows, as a
  :class:`recmeta.metrics.Subsets` of the metric engine: the judged positions of the lists are
  found once and each incomplete test set only switches some of them off (one compiled pass
  per test set gives every metric, with arithmetic and geometric means). infAP is read as the
  paper's eq. 11 (``infap="pooled"``, :mod:`recmeta.metrics._options`).
* :func:`per_user` — each user's scores averaged over the folds where the user is evaluated.
  The paper's permutation tests have the *users* as their n, so these per-user scores are the
  main input of the p-values and DP; the (fold, user) topics are kept as a sensitivity check.
* :func:`robustness_summary` and :func:`area_estimate` — the area under a robustness curve
  (mean τ over the shares by the trapezoid rule, so an uneven grid of shares is weighted by
  the width each share stands for) with a Monte-Carlo band over the random masks.
* :func:`tau_bootstrap`, :func:`dp_bootstrap` — bootstrap over users of the τ among metrics
  and of DP, the uncertainty the chapter's ledger (:mod:`recmeta.papers.valcarce2020`) reads.
* :func:`expected_precision_ratio` — what random rating removal does to mean P@k when topics
  left without a relevant item drop out of the mean.

Geometric means floor zeros at :data:`recmeta.metrics.GMEAN_FLOOR` (1e-5, trec_eval's
``gm_map``): ``GM = exp(mean(log(max(x, 1e-5))))`` over the evaluated topics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .metrics import GMEAN_FLOOR, Judgments, Runs, Subsets
from .ledger import Estimate

__all__ = [
    "METRICS",
    "LABELS",
    "measures",
    "label",
    "Study",
    "pool_folds",
    "scorer",
    "per_user",
    "trapezoid_weights",
    "tau_resolution",
    "area_estimate",
    "robustness_summary",
    "curve_point",
    "cluster_means",
    "TauBootstrap",
    "tau_bootstrap",
    "dp_bootstrap",
    "dp_mc_halfwidth",
    "dp_estimate",
    "expected_precision_ratio",
    "judged_share",
    "SCHEMES",
    "kfold_study",
    "incompleteness_masks",
    "robustness",
    "Results",
    "run",
]

#: the nine metrics of Valcarce et al. (2020, Sec. 3.2), engine names
METRICS: tuple[str, ...] = ("P", "R", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP")
#: the paper's names for them (arithmetic mean); the geometric ones add a leading "G"
LABELS: dict[str, str] = {
    "P": "P", "R": "Recall", "F1": "F1", "AP": "MAP", "nDCG": "nDCG", "RR": "MRR",
    "ERR": "ERR", "bpref": "bpref", "infAP": "infAP",
}
AGGREGATES = ("mean", "gmean")


def measures(cutoff: int = 100, metrics: Sequence[str] = METRICS) -> list[str]:
    """Engine names of the metrics at ``cutoff``: ``["P@100", "R@100", ...]``."""
    unknown = [m for m in metrics if m not in LABELS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; the study knows {list(METRICS)}")
    return [f"{m}@{int(cutoff)}" for m in metrics]


def label(measure: str, aggregate: str = "mean") -> str:
    """The paper's name of an engine measure: ``"RR@100"`` → ``"MRR"``, or ``"GMRR"`` for gmean."""
    base = measure.split("@", 1)[0]
    if base not in LABELS:
        raise ValueError(f"unknown metric {measure!r}; the study knows {list(METRICS)}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    return ("G" if aggregate == "gmean" else "") + LABELS[base]


# ---------------------------------------------------------------------------------- pooling
@dataclass(frozen=True)
class Study:
    """The folds of a cross-validation pooled into one evaluation over (fold, user) topics.

    Attributes
    ----------
    judgments, runs:
        Metric-engine inputs whose users are topic numbers 0..T-1.
    topics:
        One row per topic (aligned with ``judgments.users``): ``fold`` and the dataset's ``user``.
    test:
        The judged entries in the row order of ``judgments.to_frame()`` with the dataset's ids:
        ``fold``, ``user``, ``item``, ``rating``. Build incompleteness masks from this frame.
    """

    judgments: Judgments
    runs: Runs
    topics: pd.DataFrame
    test: pd.DataFrame

    @property
    def systems(self) -> list[str]:
        return list(self.runs.systems)

    @property
    def n_folds(self) -> int:
        return int(self.topics["fold"].nunique())

    def __repr__(self) -> str:
        return (f"Study({self.n_folds} folds, {len(self.topics)} topics, "
                f"{len(self.test)} judged entries, {len(self.systems)} systems)")


def pool_folds(
    tests: Sequence[pd.DataFrame],
    run_frames: Sequence[pd.DataFrame],
    *,
    threshold: float,
    max_grade: float | None = None,
) -> Study:
    """Pool the folds: topic = (fold, user), one :class:`Study` for the whole cross-validation.

    ``tests[f]`` is fold ``f``'s test frame (user, item, rating); ``run_frames[f]`` its runs
    (system, user, item, and score or rank, e.g. from :func:`recmeta.runs.make`). Every fold must
    hold the same systems. ``max_grade`` (ERR's r_max, Valcarce et al. 2020, eq. 8) defaults to
    the largest test rating of all folds — with k folds over ratings, the largest rating of the
    dataset. Users of a run without test ratings in that fold are not topics and are ignored.
    """
    if len(tests) != len(run_frames):
        raise ValueError(f"{len(tests)} test frames but {len(run_frames)} run frames; give one "
                         "of each per fold")
    if not tests:
        raise ValueError("no folds given")
    for f, (t, r) in enumerate(zip(tests, run_frames)):
        for frame, what, cols in ((t, "test", ("user", "item", "rating")),
                                  (r, "run", ("system", "user", "item"))):
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(f"fold {f}: the {what} must be a DataFrame, got {type(frame).__name__}")
            missing = [c for c in cols if c not in frame.columns]
            if missing:
                raise ValueError(f"fold {f}: the {what} frame lacks column(s) {missing}")
        if len(t) == 0:
            raise ValueError(f"fold {f}: the test frame is empty")
    systems = [sorted(pd.unique(r["system"])) for r in run_frames]
    if any(s != systems[0] for s in systems[1:]):
        bad = next(f for f, s in enumerate(systems) if s != systems[0])
        raise ValueError(f"fold {bad} has systems {systems[bad]} but fold 0 has {systems[0]}; "
                         "every fold must hold the runs of the same systems")
    judgments, all_users, pooled_test, topics = _pool_tests(tests, threshold, max_grade)
    runs = _pool_runs(run_frames, judgments, all_users)
    return Study(judgments, runs, topics, pooled_test)


def _pool_tests(tests: Sequence[pd.DataFrame], threshold: float, max_grade: float | None):
    """The judgments over (fold, user) topics (topic = fold · |users| + the user's code), the
    dataset's users, the pooled test frame and the topics frame of :class:`Study`."""
    # dense codes of the dataset's users, shared by all folds
    all_users = pd.Index(pd.unique(np.concatenate([t["user"].to_numpy() for t in tests])))
    n_u = len(all_users)
    tagged = []
    for f, t in enumerate(tests):
        code = all_users.get_indexer(t["user"])
        tagged.append(pd.DataFrame({"topic": f * n_u + code, "fold": f, "user": t["user"].to_numpy(),
                                    "item": t["item"].to_numpy(),
                                    "rating": t["rating"].to_numpy(dtype=np.float64)}))
    test = pd.concat(tagged, ignore_index=True)
    if max_grade is None:
        max_grade = float(test["rating"].max())
    judgments = Judgments.from_frame(test, threshold, user_col="topic", max_grade=max_grade)
    topic = judgments.users.to_numpy()
    topics = pd.DataFrame({"fold": topic // n_u, "user": all_users[topic % n_u]})
    rows = judgments.to_frame()
    rows_topic = rows["user"].to_numpy()  # to_frame names the topic column "user"
    pooled_test = pd.DataFrame({"fold": rows_topic // n_u, "user": all_users[rows_topic % n_u],
                                "item": rows["item"].to_numpy(), "rating": rows["rating"].to_numpy()})
    return judgments, all_users, pooled_test, topics


def _pool_runs(run_frames: Sequence[pd.DataFrame], judgments: Judgments, all_users: pd.Index) -> Runs:
    """The folds' runs (``run_frames[f]`` for fold ``f``) over the topics of :func:`_pool_tests`."""
    n_u = len(all_users)
    frames = []
    for f, r in enumerate(run_frames):
        code = all_users.get_indexer(r["user"])
        known = code >= 0
        frames.append(r.loc[known].assign(user=f * n_u + code[known]))
    return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments)


def per_user(matrix: ArrayLike, topics: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Average each user's per-topic scores over the folds where the user is evaluated.

    ``matrix`` is systems × topics (NaN = topic not evaluated, as from
    :func:`recmeta.metrics.score_matrix`). Returns (systems × users, the users), dropping users
    evaluated in no fold. These are the units of the paper's paired tests (its n is the number
    of users); the (fold, user) topics would count a user up to k times.
    """
    a = np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != len(topics):
        raise ValueError(f"need a (systems × {len(topics)} topics) matrix, got shape {a.shape}")
    codes, users = pd.factorize(topics["user"])
    seen = ~np.isnan(a)
    sums = np.zeros((a.shape[0], len(users)))
    counts = np.zeros((a.shape[0], len(users)))
    for s in range(a.shape[0]):  # loop over systems only
        sums[s] = np.bincount(codes, weights=np.where(seen[s], a[s], 0.0), minlength=len(users))
        counts[s] = np.bincount(codes, weights=seen[s].astype(np.float64), minlength=len(users))
    keep = counts[0] > 0
    if not (counts[:, keep] > 0).all():
        raise ValueError("a user is evaluated for some systems but not others")
    return sums[:, keep] / counts[:, keep], pd.Index(users[keep], name="user")


# ------------------------------------------------------------------------------- scoring
def scorer(study: Study, cutoff: int = 100, metrics: Sequence[str] = METRICS,
           *, infap: str = "pooled") -> Subsets:
    """The study's metrics at ``cutoff`` on any subset of its test rows (``Study.test`` order).

    A :class:`recmeta.metrics.Subsets` over the pooled judgments and runs: ``.score(keep)`` gives
    per-topic scores (systems × topics), ``.means(masks.keep, aggregates=AGGREGATES)`` the system
    means on every incomplete test set. infAP defaults to the paper's eq. 11
    (``infap="pooled"``: every ranked item pooled, the unrated ones unjudged); ``"trec_eval"``
    is trec_eval's reading, which without a pool repeats AP.
    """
    if int(cutoff) != cutoff or cutoff < 1:
        raise ValueError(f"the cut-off must be a positive integer, got {cutoff!r}")
    return Subsets(study.judgments, study.runs, measures(int(cutoff), metrics), infap=infap)


# ------------------------------------------------------------------------ robustness areas
def trapezoid_weights(shares: ArrayLike) -> np.ndarray:
    r"""Weights :math:`w` with :math:`\sum_i w_i \tau_i = \frac{1}{s_{\max} - s_{\min}}\int \tau\,ds`
    by the trapezoid rule over the actual shares.

    With the shares sorted, :math:`s_{(0)} < \dots < s_{(m)}`:
    :math:`w_{(i)} = (s_{(i+1)} - s_{(i-1)}) / (2 (s_{(m)} - s_{(0)}))`, where
    :math:`s_{(-1)} = s_{(0)}` and :math:`s_{(m+1)} = s_{(m)}`; the weights sum to 1 and come
    back in the input order. An uneven grid (the paper's 100 %, 95 %, ..., 5 %, 1 %) gives each
    share the width it stands for; a single share gets weight 1.
    """
    s = np.asarray(shares, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValueError(f"shares must be a non-empty 1-d array of finite numbers, got {s!r}")
    if np.unique(s).size != s.size:
        raise ValueError(f"shares must be distinct, got {s}")
    if s.size == 1:
        return np.ones(1)
    order = np.argsort(s)
    x = s[order]
    left = np.r_[x[0], x[:-1]]
    right = np.r_[x[1:], x[-1]]
    out = np.empty_like(x)
    out[order] = (right - left) / (2.0 * (x[-1] - x[0]))
    return out


def tau_resolution(n_systems: int) -> float:
    r"""Half the change of Kendall's τ when one pair of systems swaps: :math:`1/\binom{S}{2}`.

    The band given to the area of a curve from deterministic masks (popular items, largest
    users): two such areas closer than one swapped pair (:math:`2/\binom{S}{2}`) count as tied.
    """
    if n_systems < 2:
        raise ValueError(f"need at least two systems, got {n_systems}")
    return 2.0 / (n_systems * (n_systems - 1))


def _area_parts(share: np.ndarray, value: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """Trapezoid area of per-mask values: (area, a_i = w_i² s_i²/n_i, n_i, deterministic)."""
    frame = pd.DataFrame({"share": share, "value": value})
    g = frame.groupby("share", sort=True)["value"]
    mean, sd, n = g.mean(), g.std(ddof=1), g.size()
    w = trapezoid_weights(mean.index.to_numpy())
    area = float(np.dot(w, mean.to_numpy()))
    deterministic = bool((n == 1).all())
    a = (w ** 2) * np.nan_to_num(sd.to_numpy() ** 2) / n.to_numpy()
    return area, a, n.to_numpy(), deterministic


def _area_estimate(parts: Sequence[tuple[float, np.ndarray, np.ndarray, bool]], signs: Sequence[float],
                   resolution: float, level: float, what: str) -> Estimate:
    """Combine independent areas ``Σ sign · area`` into an Estimate (see :func:`area_estimate`)."""
    from scipy import stats

    value = float(sum(s * p[0] for s, p in zip(signs, parts)))
    a = np.concatenate([p[1] for p in parts if not p[3]]) if any(not p[3] for p in parts) else np.zeros(0)
    n = np.concatenate([p[2] for p in parts if not p[3]]) if a.size else np.zeros(0)
    half_det = sum(resolution for p in parts if p[3])
    var = float(a.sum())
    half_mc = 0.0
    if var > 0:
        live = (a > 0) & (n > 1)
        df = var ** 2 / float(np.sum(a[live] ** 2 / (n[live] - 1)))
        half_mc = float(stats.t.ppf(0.5 + level / 2, df)) * np.sqrt(var)
    masks = int(n.sum())
    if half_det and masks:
        method = (f"{what}: t interval over {masks} random masks plus ± {resolution:.3g} per "
                  f"deterministic curve (one system pair's step of τ), {level:.0%}")
    elif half_det:
        method = (f"{what}: deterministic masks, ± {half_det:.3g} (one system pair's step of τ "
                  "counts as a tie)")
    else:
        method = f"{what}: t interval over {masks} random masks (Welch–Satterthwaite df), {level:.0%}"
    half = half_mc + half_det
    return Estimate(value, value - half, value + half, method)


def _select(taus: pd.DataFrame, scheme: str, aggregate: str, metric: str | None) -> pd.DataFrame:
    t = taus[(taus["scheme"] == scheme) & (taus["aggregate"] == aggregate)]
    if metric is not None:
        t = t[t["metric"] == metric]
    if t.empty:
        raise KeyError(f"no τ values for scheme {scheme!r}, aggregate {aggregate!r}, metric {metric!r}")
    # one value per mask: τ of the metric, or the mean over metrics
    return t.groupby(["share", "sample"], as_index=False)["tau"].mean()


def area_estimate(
    taus: pd.DataFrame,
    *,
    scheme: str,
    aggregate: str = "mean",
    metric: str | None = None,
    minus: Mapping[str, str | None] | None = None,
    n_systems: int,
    level: float = 0.95,
) -> Estimate:
    r"""Area under a robustness curve (mean τ over the shares, trapezoid rule), with its band.

    ``taus`` holds one τ per mask (columns scheme, aggregate, metric, share, sample, tau; see
    :func:`robustness`). ``metric=None`` averages the nine metrics on each mask first.
    ``minus`` (keys scheme, aggregate, metric; missing keys default to this call's) makes it
    the difference of two areas: *paired* by mask when both use the same scheme (same masks),
    independent otherwise.

    The area is :math:`A = \sum_i w_i \bar\tau_i` with :func:`trapezoid_weights`. For random
    masks its Monte-Carlo variance is :math:`\sum_i w_i^2 s_i^2 / n_i` (sample variance
    :math:`s_i^2` of the :math:`n_i` masks of share :math:`i`), with a Student-t interval on
    Welch–Satterthwaite degrees of freedom. Deterministic masks (one per share) have no
    Monte-Carlo error; their band is ± :func:`tau_resolution` per curve, so two areas closer
    than one swapped system pair never count as different.
    """
    res = tau_resolution(n_systems)
    a = _select(taus, scheme, aggregate, metric)
    what = f"area of {scheme}/{aggregate}"
    if minus is None:
        return _area_estimate([_area_parts(a["share"].to_numpy(), a["tau"].to_numpy())], [1.0],
                              res, level, what)
    other = {"scheme": scheme, "aggregate": aggregate, "metric": metric, **dict(minus)}
    b = _select(taus, other["scheme"], other["aggregate"], other["metric"])
    what = "difference of areas"
    if other["scheme"] == scheme:
        both = a.merge(b, on=["share", "sample"], suffixes=("_a", "_b"), validate="one_to_one")
        if len(both) != len(a) or len(both) != len(b):
            raise ValueError("the two curves were not measured on the same masks")
        parts = _area_parts(both["share"].to_numpy(), (both["tau_a"] - both["tau_b"]).to_numpy())
        # a paired difference of deterministic curves: one pair's step in all
        return _area_estimate([parts], [1.0], 2 * res, level, f"paired {what} (same masks)")
    pa = _area_parts(a["share"].to_numpy(), a["tau"].to_numpy())
    pb = _area_parts(b["share"].to_numpy(), b["tau"].to_numpy())
    return _area_estimate([pa, pb], [1.0, -1.0], res, level, f"{what} (independent masks)")


def robustness_summary(
    curves: pd.DataFrame,
    by: Sequence[str] = ("scheme", "aggregate"),
    *,
    n_systems: int | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Area under each robustness curve (mean τ by the trapezoid rule), its band and rank.

    ``curves`` stacks :func:`recmeta.metaeval.agreement.robustness_curves` frames (columns metric, share,
    tau, and sd and samples for the band) with extra columns ``by``. ``mean_tau`` is
    :math:`\\sum_i w_i \\bar\\tau_i` with :func:`trapezoid_weights` over the curve's actual
    shares, so an uneven grid is weighted by the width each share stands for (not a plain mean
    of the points). ``low``/``high`` come from :func:`area_estimate`'s rule when the curves carry
    ``sd`` and ``samples`` (and ``n_systems`` is given for deterministic curves); ``rank`` is 1
    for the most robust metric within each group of ``by``.
    """
    by = list(by)
    missing = [c for c in [*by, "metric", "share", "tau"] if c not in curves.columns]
    if missing:
        raise ValueError(f"curves lack column(s) {missing}")
    banded = {"sd", "samples"} <= set(curves.columns)
    rows = []
    for key, c in curves.groupby([*by, "metric"], sort=False):
        w = trapezoid_weights(c["share"].to_numpy())
        row = dict(zip([*by, "metric"], key if isinstance(key, tuple) else (key,)))
        row["mean_tau"] = float(np.dot(w, c["tau"].to_numpy()))
        if banded:
            n = c["samples"].to_numpy()
            if (n == 1).all():
                half = tau_resolution(n_systems) if n_systems else np.nan
                row["low"], row["high"] = row["mean_tau"] - half, row["mean_tau"] + half
            else:
                # per-share sd and count rebuild the same estimate as area_estimate
                parts = (row["mean_tau"], w ** 2 * np.nan_to_num(c["sd"].to_numpy() ** 2) / n, n, False)
                est = _area_estimate([parts], [1.0], 0.0, level, "area")
                row["low"], row["high"] = est.low, est.high
        rows.append(row)
    area = pd.DataFrame(rows)
    area["rank"] = area.groupby(by, sort=False)["mean_tau"].rank(ascending=False, method="min")
    return area


def curve_point(curves: pd.DataFrame, share: float, *, scheme: str, aggregate: str = "mean",
                metric: str) -> Estimate | None:
    """τ of one curve at ``share`` with its t band over the masks, or None if off the grid."""
    c = curves[(curves["scheme"] == scheme) & (curves["aggregate"] == aggregate)
               & (curves["metric"] == metric) & np.isclose(curves["share"], share)]
    if c.empty:
        return None
    r = c.iloc[0]
    if not (np.isfinite(r["low"]) and np.isfinite(r["high"])):
        return Estimate.point(float(r["tau"]), f"one mask at share {share:g}, no interval")
    return Estimate(float(r["tau"]), float(r["low"]), float(r["high"]),
                    f"t interval over {int(r['samples'])} masks at share {share:g}, 95 %")


# ------------------------------------------------------------------------ bootstrap over users
def cluster_means(matrix: ArrayLike, unit_of_topic: ArrayLike, counts: ArrayLike,
                  how: str = "mean") -> np.ndarray:
    """System means of a (systems × topics) matrix in bootstrap resamples of units: (B × systems).

    ``counts`` (B × units) says how often each unit (user) is drawn in each resample
    (:func:`recmeta.metaeval.agreement.resample_counts`); every topic of a unit carries the unit's count,
    so resampling users keeps all of a user's (fold, user) topics together (a cluster
    bootstrap), and :func:`recmeta.metaeval.agreement.weighted_means` does the rest. NaN topics drop out
    as in :func:`recmeta.metrics.aggregate`; ``how="gmean"`` averages
    ``log(max(x, GMEAN_FLOOR))`` and exponentiates.
    """
    from .metaeval.agreement import weighted_means

    x = np.asarray(matrix, dtype=np.float64)
    if how == "gmean":
        x = np.log(np.maximum(x, GMEAN_FLOOR))  # NaN stays NaN
    elif how != "mean":
        raise ValueError(f"how must be one of {AGGREGATES}, got {how!r}")
    out = weighted_means(x, np.asarray(counts, dtype=np.float64)[:, np.asarray(unit_of_topic)])
    return np.exp(out) if how == "gmean" else out


@dataclass(frozen=True)
class TauBootstrap:
    """Kendall τ among the metrics' system orderings, with replicates of a bootstrap over users.

    ``point[agg]`` and ``reps[agg]`` are (metrics × metrics) and (resamples × metrics × metrics)
    for ``agg`` in mean/gmean; ``arith_geo`` and ``arith_geo_reps`` hold τ between each metric's
    arithmetic and geometric orderings. ``metrics`` are the short names (P, R, ...).
    """

    metrics: tuple[str, ...]
    point: dict[str, np.ndarray]
    reps: dict[str, np.ndarray]
    arith_geo: np.ndarray
    arith_geo_reps: np.ndarray

    @property
    def n_boot(self) -> int:
        return int(self.arith_geo_reps.shape[0])


def tau_bootstrap(matrices: Mapping[str, np.ndarray], topics: pd.DataFrame, *, n_boot: int,
                  seed: int) -> TauBootstrap:
    """τ among metrics and τ(arithmetic, geometric) with a cluster bootstrap over users.

    ``matrices`` maps engine names (``"P@100"``) to (systems × topics) scores; ``topics`` gives
    each topic's user (:attr:`Study.topics`). Each replicate resamples users with replacement
    (:func:`recmeta.metaeval.agreement.resample_counts`), recomputes every system mean
    (:func:`cluster_means`) and the τ matrices (:func:`recmeta.metaeval.agreement.kendall_tau`).
    """
    from .metaeval import agreement

    names = list(matrices)
    short = tuple(n.split("@", 1)[0] for n in names)
    codes, users = pd.factorize(topics["user"])
    counts = agreement.resample_counts(len(users), n_boot, seed)
    ones = np.ones((1, len(users)))
    point, reps, means = {}, {}, {}
    for agg in AGGREGATES:
        full = np.stack([cluster_means(matrices[n], codes, ones, agg)[0] for n in names])  # M × S
        boot = np.stack([cluster_means(matrices[n], codes, counts, agg) for n in names], axis=1)  # B × M × S
        means[agg] = (full, boot)
        point[agg] = agreement.kendall_tau(full[:, None, :], full[None, :, :])
        reps[agg] = agreement.kendall_tau(boot[:, :, None, :], boot[:, None, :, :])
    ag = agreement.kendall_tau(means["mean"][0], means["gmean"][0])
    ag_reps = agreement.kendall_tau(means["mean"][1], means["gmean"][1])
    return TauBootstrap(short, point, reps, ag, ag_reps)


def dp_bootstrap(user_matrices: Mapping[str, np.ndarray], *, n_boot: int,
                 seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """DP in bootstrap resamples of the users: (replicates (B × metrics), base (metrics,)).

    Each resample draws the users with replacement (:func:`recmeta.metaeval.agreement.resample_counts`;
    the same draws for every metric, so the replicates are paired across metrics) and sums the
    paired t-test p-values of all system pairs (:func:`recmeta.metaeval.significance.bootstrap_dp_t`, a
    stand-in for the permutation test, close to it with hundreds of users). ``base`` is that
    t-test DP on the users as they are: :func:`dp_estimate` places the replicates' spread
    around the permutation DP by ``value + (replicate − base)``. Short metric names.
    """
    from .metaeval.agreement import resample_counts
    from .metaeval.significance import bootstrap_dp_t, evaluated_users

    names = list(user_matrices)
    first = evaluated_users(user_matrices[names[0]])
    counts = resample_counts(first.shape[1], n_boot, seed)
    ones = np.ones((1, first.shape[1]))
    reps, base = {}, {}
    for n in names:
        a = evaluated_users(user_matrices[n])
        if a.shape != first.shape:
            raise ValueError(f"{n}: {a.shape} per-user scores, {first.shape} for {names[0]}")
        short = n.split("@", 1)[0]
        reps[short] = bootstrap_dp_t(a, counts)
        base[short] = float(bootstrap_dp_t(a, ones)[0])
    return pd.DataFrame(reps), pd.Series(base)


def dp_mc_halfwidth(pvalues: pd.DataFrame, n_permutations: int, z: float = 1.96) -> pd.Series:
    r"""Monte-Carlo half-width of DP per metric: :math:`z\sum_{pairs}\sqrt{p(1-p)/B}`.

    An upper bound: the p-values of one metric share their sign flips, so their errors may be
    correlated; summing the standard errors assumes the worst (perfect) correlation.
    """
    p = pvalues["p"].to_numpy()
    se = np.sqrt(p * (1 - p) / n_permutations)
    return (pd.Series(z * se, index=pvalues["metric"].to_numpy()).groupby(level=0, sort=False).sum()
            .rename(index=lambda n: n.split("@", 1)[0]))


def dp_estimate(dp: pd.Series, reps: pd.DataFrame, base: pd.Series, mc: pd.Series, metric: str,
                minus: str | None = None, level: float = 0.95) -> Estimate:
    """DP of ``metric`` (or DP(metric) − DP(minus)) with its interval.

    The value is the permutation-test DP. The interval is the percentile interval of the
    bootstrap replicates over users (:func:`dp_bootstrap`, paired across metrics) placed around
    the value, ``value + (replicate − base)`` (resampling adds noise to a difference near zero,
    which biases replicate p-values low; shifting by the replicates' own base keeps their
    spread and drops that bias), widened by the Monte-Carlo half-width of the permutation
    p-values (:func:`dp_mc_halfwidth`; both metrics' for a difference). A DP is clipped at 0.
    """
    r = reps[metric] - (reps[minus] if minus else 0.0)
    b = float(base[metric] - (base[minus] if minus else 0.0))
    value = float(dp[metric] - (dp[minus] if minus else 0.0))
    r = value + (r[np.isfinite(r)].to_numpy() - b)
    widen = float(mc[metric] + (mc[minus] if minus else 0.0))
    lo, hi = np.quantile(r, [(1 - level) / 2, (1 + level) / 2]) if r.size else (value, value)
    lo, hi = float(lo) - widen, float(hi) + widen
    if minus is None:
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    return Estimate(value, lo, hi,
                    f"percentile interval of {r.size} bootstrap replicates over users (paired "
                    f"t-test p-values, centred on the permutation DP), widened by the Monte-Carlo "
                    f"error of the p-values, {level:.0%}")


# --------------------------------------------------------------------- expected precision
def expected_precision_ratio(n_relevant: ArrayLike, share: float, n_ratings: int | None = None) -> float:
    r"""Expected mean P@k on the incomplete test sets over its full value, random ratings removed.

    A hit (relevant item in the top k) survives with probability :math:`q`, so a topic's
    expected precision is :math:`q` times its full value. But a topic whose :math:`R_t` relevant
    ratings are all removed has no relevant item left and drops out of the mean; it stays with
    probability :math:`\pi_t`. A hit implies the topic stays, so by the ratio of expectations
    (exact up to :math:`O(1/T)` in the number of topics :math:`T`)

    .. math::

        \frac{E[\bar P(p)]}{\bar P(1)} \approx \frac{q\,T}{\sum_t \pi_t} = \frac{q}{\bar\pi},

    the same for every system. Each rating kept independently with probability :math:`p`:
    :math:`q = p`, :math:`\pi_t = 1 - (1-p)^{R_t}`. Exactly :math:`K = \mathrm{round}(pN)` of
    :math:`N` ratings kept (``n_ratings=N``, as :func:`recmeta.metaeval.incompleteness.random_ratings`
    does): :math:`q = K/N`, :math:`\pi_t = 1 - \binom{N-R_t}{K}/\binom{N}{K}`. The naive
    :math:`p` ignores the topics that drop out and underestimates the ratio.
    ``n_relevant`` holds :math:`R_t` of the topics with at least one relevant item.
    """
    from scipy.special import gammaln

    r = np.asarray(n_relevant, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or (r < 1).any():
        raise ValueError("n_relevant must be a non-empty 1-d array of counts >= 1")
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], got {share!r}")
    if n_ratings is None:
        q = float(share)
        gone = (1.0 - q) ** r
    else:
        n = int(n_ratings)
        if n < r.max():
            raise ValueError(f"{n} ratings cannot hold a topic with {int(r.max())} relevant ones")
        k = int(np.floor(share * n + 0.5 + 1e-9))
        q = k / n
        # C(N - R, K) / C(N, K), zero when fewer than K ratings remain outside the topic
        ok = n - r >= k
        log = gammaln(n - r + 1) - gammaln(n - r - k + 1) - gammaln(n + 1) + gammaln(n - k + 1)
        gone = np.where(ok, np.exp(np.where(ok, log, 0.0)), 0.0)
    return float(q / np.mean(1.0 - gone))


def judged_share(study: Study, cutoff: int = 100) -> pd.Series:
    """Per user: the share of their ranked positions (all systems, all folds, top ``cutoff``)
    that carry a test rating — the paper's "test rating coverage" of the top 100 (Valcarce et
    al. 2020, §6.3.1)."""
    judgments, runs = study.judgments, study.runs
    ranks = runs.ranks[:, :, :min(int(cutoff), runs.depth)]
    ranked = (ranks >= 0).sum(axis=(0, 2)).astype(np.float64)  # per topic
    rows = judgments.to_frame()
    width = np.int64(len(runs.items) + 1)
    judged = np.sort(judgments.users.get_indexer(rows["user"]).astype(np.int64) * width
                     + judgments.items.get_indexer(rows["item"]))
    s, t, d = np.nonzero(ranks >= 0)
    key = t.astype(np.int64) * width + ranks[s, t, d]
    at = np.minimum(np.searchsorted(judged, key), max(judged.size - 1, 0))
    hit = judged[at] == key if judged.size else np.zeros(key.size, dtype=bool)
    per_topic = np.bincount(t[hit], minlength=len(judgments.users)).astype(np.float64)
    codes, users = pd.factorize(study.topics["user"])
    num = np.bincount(codes, weights=per_topic, minlength=len(users))
    den = np.bincount(codes, weights=ranked, minlength=len(users))
    keep = den > 0
    return pd.Series(num[keep] / den[keep], index=pd.Index(users[keep], name="user"), name="judged")

# ------------------------------------------------------------------------------- pipeline
#: the five incompleteness schemes of Valcarce et al. (2020, Sec. 4.2), in the paper's order
SCHEMES: dict[str, str] = {
    "ratings": "random ratings removed",
    "items": "random items removed",
    "popular": "most popular items removed",
    "users": "random users removed",
    "large-users": "largest users removed",
}


def kfold_study(
    ratings: pd.DataFrame,
    systems: Sequence,
    *,
    dataset: str,
    k: int = 5,
    folds: Sequence[int] | None = None,
    seed: int = 0,
    threshold: float = 4,
    depth: int = 100,
    progress: bool | None = None,
) -> Study:
    """Runs of ``systems`` (roster :class:`recmeta.roster.System`) on the folds of a k-fold split.

    The ratings are cut into ``k`` folds with :func:`recmeta.splits.kfold` (seeded); for each of
    ``folds`` (default all), every system is trained on the other folds and ranks all the items
    the user has not rated in training (AllItems, top ``depth``), through the run cache of
    :func:`recmeta.runs.make` (split ``"{k}fold-{f}"``, ``seed``): a second call trains nothing.
    ERR's r_max is the largest rating of the dataset.
    """
    from . import recommenders
    from . import splits

    parts = splits.kfold(ratings, k, seed=seed)
    folds = list(range(k)) if folds is None else [int(f) for f in folds]
    bad = [f for f in folds if not 0 <= f < k]
    if bad or not folds or len(set(folds)) != len(folds):
        raise ValueError(f"folds must be distinct numbers in [0, {k}), got {folds}")
    tests = [parts[f].test for f in folds]
    judgments, all_users, pooled_test, topics = _pool_tests(
        tests, threshold, float(ratings["rating"].max()))
    # one system at a time (its folds pooled, then its arrays): memory holds one system's
    # frames, not every system's (Runs.concat; the same runs as pool_folds on all frames)
    runs = Runs.concat([
        _pool_runs([recommenders.make([system], parts[f].train, dataset=dataset, split=f"{k}fold-{f}",
                           seed=seed, depth=depth, progress=progress) for f in folds],
                   judgments, all_users)
        for system in systems])
    study = Study(judgments, runs, topics, pooled_test)
    # fold numbers as in the split, not positions in ``folds``
    fold_of = np.asarray(folds)
    topics = study.topics.assign(fold=fold_of[study.topics["fold"].to_numpy()])
    test = study.test.assign(fold=fold_of[study.test["fold"].to_numpy()])
    return Study(study.judgments, study.runs, topics, test)


def incompleteness_masks(
    test: pd.DataFrame,
    scheme: str,
    shares: ArrayLike,
    n_samples: int,
    *,
    seed: int,
):
    """The masks of one scheme of :data:`SCHEMES` over the pooled test rows (``Study.test``).

    Random schemes draw ``n_samples`` masks per share; ``popular`` and ``large-users`` are
    deterministic (one mask per share). Units are the dataset's ratings, items or users, shared
    by all folds (:mod:`recmeta.metaeval.incompleteness` keeps exactly ``round(p·units)`` of them).
    """
    from .metaeval import incompleteness as I

    if scheme == "ratings":
        return I.random_ratings(test, shares, n_samples, seed=seed)
    if scheme == "items":
        return I.random_items(test, shares, n_samples, seed=seed)
    if scheme == "users":
        return I.random_users(test, shares, n_samples, seed=seed)
    if scheme == "popular":
        return I.popular_items_removed(test, shares)
    if scheme == "large-users":
        return I.largest_users_removed(test, shares)
    raise ValueError(f"unknown scheme {scheme!r}; choose from {list(SCHEMES)}")


def robustness(
    subsets: Subsets,
    masks,
    reference: Mapping[str, np.ndarray],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Robustness curves, absolute values and per-mask τ of every metric under one set of masks.

    ``subsets`` scores the metrics on any subset of the test rows (:func:`scorer`);
    ``reference[aggregate]`` is (metrics × systems): the means on the full test set. Returns
    ``(curves, absolute, taus)``: :func:`recmeta.metaeval.agreement.robustness_curves` for both
    aggregates (column ``aggregate``); the metric values averaged over systems, then over the
    masks of each share, with their standard deviation and count (columns aggregate, metric,
    share, value, sd, samples) — the paper's Fig. 4; and Kendall's τ of every mask (columns
    aggregate, metric, share, sample, tau), which :func:`area_estimate` pairs across metrics.
    """
    from .metaeval import agreement

    scores = subsets.means(masks.keep, aggregates=AGGREGATES)
    names = subsets.metrics
    curves, absolute, taus = [], [], []
    for agg, s in scores.items():
        curves.append(agreement.robustness_curves(s, reference[agg], masks.share, names)
                      .assign(aggregate=agg))
        tau = agreement.kendall_tau(s, reference[agg][None, :, :])  # masks × metrics
        taus.append(pd.DataFrame({
            "aggregate": agg, "metric": np.tile(names, len(masks.share)),
            "share": np.repeat(masks.share, len(names)), "sample": np.repeat(masks.sample, len(names)),
            "tau": tau.ravel()}))
        mean = pd.DataFrame(s.mean(axis=2), columns=names).assign(share=masks.share)  # over systems
        long = mean.melt(id_vars="share", var_name="metric", value_name="value")
        g = long.groupby(["share", "metric"], sort=False)["value"]
        absolute.append(pd.DataFrame({"value": g.mean(), "sd": g.std(ddof=1), "samples": g.size()})
                        .reset_index().assign(aggregate=agg))
    return (pd.concat(curves, ignore_index=True), pd.concat(absolute, ignore_index=True),
            pd.concat(taus, ignore_index=True))


@dataclass
class Results:
    """Everything the chapter shows for one dataset (see :func:`run`).

    ``pvalues`` are the permutation tests on *users* (each user's scores averaged over the folds
    first, :func:`per_user`): the paper's unit, and the input of DP and of the ledger.
    ``pvalues_topics`` tests on the (fold, user) topics instead, as a sensitivity check.
    """

    study: Study
    cutoff: int
    matrices: dict[str, np.ndarray]
    reference: dict[str, pd.DataFrame]
    curves: pd.DataFrame
    absolute: pd.DataFrame
    taus: pd.DataFrame
    pvalues: pd.DataFrame
    pvalues_topics: pd.DataFrame
    judged: pd.Series
    n_permutations: int
    seed: int

    @property
    def measures(self) -> list[str]:
        return list(self.matrices)

    @property
    def n_systems(self) -> int:
        return len(self.study.systems)

    @property
    def dp(self) -> pd.Series:
        """DP (sum of p-values over all system pairs) per measure, users as the units."""
        return self.pvalues.groupby("metric", sort=False)["p"].sum()

    @property
    def dp_topics(self) -> pd.Series:
        """DP with the (fold, user) topics as the units (sensitivity check)."""
        return self.pvalues_topics.groupby("metric", sort=False)["p"].sum()

    def user_matrices(self) -> dict[str, np.ndarray]:
        """Per-user scores (systems × users), each user averaged over the folds (:func:`per_user`)."""
        return {n: per_user(m, self.study.topics)[0] for n, m in self.matrices.items()}

    def tau(self, aggregate: str = "mean") -> pd.DataFrame:
        """Kendall τ among the measures' system orderings (the paper's Figs. 1 and 9)."""
        from .metaeval import agreement

        ref = self.reference[aggregate]
        return agreement.tau_matrix(ref[self.measures].T.to_numpy(), self.measures)

    def tau_arith_geo(self) -> pd.Series:
        """τ between each measure's arithmetic and geometric system orderings (Sec. 7.1)."""
        from .metaeval import agreement

        a = self.reference["mean"][self.measures].T.to_numpy()
        g = self.reference["gmean"][self.measures].T.to_numpy()
        return pd.Series(agreement.kendall_tau(a, g), index=self.measures)

    def summary(self) -> pd.DataFrame:
        """:func:`robustness_summary` of the curves (trapezoid areas with bands, ranks)."""
        return robustness_summary(self.curves, n_systems=self.n_systems)

    def expected_precision(self, shares: ArrayLike | None = None) -> pd.DataFrame:
        """Observed mean P@k over its full value against :func:`expected_precision_ratio`.

        One row per share of the ratings scheme: ``observed`` (mean over the masks of the mean
        over systems, divided by the full value) with its t band, the naive ``share`` and the
        ``expected`` ratio with topics that lose every relevant item dropping out.
        """
        from scipy import stats

        name = f"P@{self.cutoff}"
        a = self.absolute[(self.absolute["scheme"] == "ratings") & (self.absolute["aggregate"] == "mean")
                          & (self.absolute["metric"] == name)].sort_values("share", ascending=False)
        if shares is not None:
            a = a[np.isin(np.round(a["share"], 10), np.round(np.asarray(shares, float), 10))]
        full = float(self.reference["mean"][name].mean())
        rel = self.study.judgments.to_frame()
        relevant = rel.iloc[:, 2].to_numpy() >= self.study.judgments.threshold
        n_rel = np.bincount(self.study.judgments.users.get_indexer(rel.iloc[:, 0])[relevant],
                            minlength=len(self.study.judgments.users))
        n_rel = n_rel[n_rel > 0]
        rows = []
        for r in a.itertuples():
            half = (stats.t.ppf(0.975, r.samples - 1) * r.sd / np.sqrt(r.samples)
                    if r.samples > 1 and np.isfinite(r.sd) else np.nan)
            rows.append({"share": r.share, "observed": r.value / full,
                         "low": (r.value - half) / full, "high": (r.value + half) / full,
                         "expected": expected_precision_ratio(n_rel, r.share, len(rel)),
                         "samples": r.samples})
        return pd.DataFrame(rows)

    def ledger_inputs(self, *, n_boot: int = 200, seed: int | None = None) -> dict[str, object]:
        """The named results the chapter's ledger reads (:mod:`recmeta.papers.valcarce2020`).

        Metric names are short (``"P"``, ``"RR"``, ...). ``taus``, ``curves`` and ``absolute``
        are the robustness frames; ``tau_among`` the :class:`TauBootstrap` (``n_boot``
        resamples of users); ``dp`` the per-user DP with ``dp_reps`` and ``dp_base``
        (:func:`dp_bootstrap`) and ``dp_mc`` (:func:`dp_mc_halfwidth`); ``judged`` the per-user judged share of the lists;
        ``full_values`` each metric's mean over systems on the full test set (arithmetic).
        """
        seed = self.seed if seed is None else seed
        short = {n: n.split("@", 1)[0] for n in self.measures}

        def rename(frame: pd.DataFrame) -> pd.DataFrame:
            return frame.assign(metric=frame["metric"].map(short))

        users = self.user_matrices()
        reps, base = dp_bootstrap(users, n_boot=n_boot, seed=seed)
        return {
            "metrics": tuple(short.values()),
            "n_systems": self.n_systems,
            "taus": rename(self.taus),
            "curves": rename(self.curves),
            "absolute": rename(self.absolute),
            "full_values": self.reference["mean"][self.measures].mean().rename(index=short),
            "tau_among": tau_bootstrap(self.matrices, self.study.topics, n_boot=n_boot, seed=seed),
            "dp": self.dp.rename(index=short),
            "dp_reps": reps,
            "dp_base": base,
            "dp_mc": dp_mc_halfwidth(self.pvalues, self.n_permutations),
            "judged": self.judged,
        }


def run(
    study: Study,
    *,
    shares: Mapping[str, ArrayLike],
    n_samples: int,
    seed: int,
    n_permutations: int,
    cutoff: int = 100,
    metrics: Sequence[str] = METRICS,
    progress: bool = False,
) -> Results:
    """The whole study on one pooled cross-validation (Valcarce et al. 2020, Secs. 6–7).

    ``shares`` maps each scheme of :data:`SCHEMES` to its shares kept. Per-topic scores come
    from :func:`scorer` (infAP as the paper's eq. 11); p-values from :func:`recmeta.metaeval.significance.pvalue_table` (paired
    permutation test, difference of means, ``n_permutations`` sign flips, seeded), on users
    (each user's scores averaged over the folds: the main input) and on (fold, user) topics.
    """
    from .metaeval import significance

    missing = [s for s in SCHEMES if s not in shares]
    if missing:
        raise ValueError(f"no shares for scheme(s) {missing}; give shares for {list(SCHEMES)}")
    subsets = scorer(study, cutoff, metrics)
    names = subsets.metrics
    matrices = subsets.score()
    reference = {
        agg: pd.DataFrame({n: _aggregate(matrices[n], agg) for n in names}, index=study.systems)
        for agg in AGGREGATES
    }
    ref_arrays = {agg: reference[agg][names].T.to_numpy() for agg in AGGREGATES}
    curves, absolute, taus = [], [], []
    for k, scheme in enumerate(SCHEMES):
        masks = incompleteness_masks(study.test, scheme, shares[scheme], n_samples, seed=seed + k)
        c, a, t = robustness(subsets, masks, ref_arrays)
        curves.append(c.assign(scheme=scheme))
        absolute.append(a.assign(scheme=scheme))
        taus.append(t.assign(scheme=scheme))
    users = {n: per_user(m, study.topics)[0] for n, m in matrices.items()}
    pvalues = significance.pvalue_table(users, study.systems, seed=seed,
                                        n_permutations=n_permutations, progress=progress)
    pvalues_topics = significance.pvalue_table(matrices, study.systems, seed=seed,
                                               n_permutations=n_permutations, progress=progress)
    return Results(study, cutoff, matrices, reference, pd.concat(curves, ignore_index=True),
                   pd.concat(absolute, ignore_index=True), pd.concat(taus, ignore_index=True),
                   pvalues, pvalues_topics, judged_share(study, cutoff),
                   int(n_permutations), int(seed))


def _aggregate(matrix: np.ndarray, how: str) -> np.ndarray:
    from .metrics import aggregate

    return aggregate(matrix, how)


# ---------------------------------------------------------------------------------- figures
def plot_curves(curves: pd.DataFrame, names: Sequence[str], labels: Sequence[str], xlabel: str,
                title: str, ax) -> None:
    """Robustness curves of several measures on one axis: mean τ per share with its 95 % band.

    The style of the robustness chapter: x is the percentage kept (decreasing to the right),
    y is Kendall's τ with the full test set, one colour per measure.
    """
    import seaborn as sns

    palette = sns.color_palette("viridis" if len(names) > 7 else "tab10", len(names))
    for colour, m, lab in zip(palette, names, labels):
        c = curves[curves["metric"] == m]
        ax.plot(100 * c["share"], c["tau"], color=colour, label=lab, marker=".")
        ax.fill_between(100 * c["share"], c["low"], c["high"], color=colour, alpha=0.2)
    ax.invert_xaxis()
    ax.set(xlabel=xlabel, ylabel="Kendall's τ with the full test set", title=title)


def plot_schemes(results: Results, aggregate: str, axes) -> None:
    """One panel per scheme of :data:`SCHEMES`: the nine robustness curves of one aggregate."""
    units = {"ratings": "test ratings", "items": "test items", "popular": "test items",
             "users": "test users", "large-users": "test users"}
    names = results.measures
    labels = [label(n, aggregate) for n in names]
    c = results.curves[results.curves["aggregate"] == aggregate]
    for ax, (scheme, title) in zip(np.ravel(axes), SCHEMES.items()):
        plot_curves(c[c["scheme"] == scheme], names, labels, f"% of {units[scheme]} kept",
                    title, ax)
    np.ravel(axes)[0].legend(fontsize=8, ncol=2)
