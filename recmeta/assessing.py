r"""The study of Valcarce et al. (2020): nine metrics, k folds, two averages, five incompleteness schemes.

Valcarce, Bellogín, Parapar and Castells (2020, *Assessing ranking metrics in top-N
recommendation*, IRJ) extend their 2018 study with F1 and ERR, geometric means, 5-fold
cross-validation and item- and user-level incompleteness. This module holds what that extension
needs beyond :mod:`recmeta.incompleteness`, :mod:`recmeta.agreement` and
:mod:`recmeta.significance`:

* :func:`pool_folds` — the folds' test sets and runs as **one** evaluation whose *topics* are
  (fold, user) pairs. A user is judged in every fold in which they have test ratings, with a
  different test set and different runs each time, so each (fold, user) is one topic, as a
  TREC topic is one query. System scores are means over all topics of all folds; paired tests
  pair the systems on each topic. The incompleteness units stay the dataset's own users and
  items: removing an item removes its test ratings in every fold, removing a user removes all
  of that user's topics.
* :class:`HitScorer` — the nine metrics at one cut-off, computed from the judged positions of
  the lists only (a few per list); the hits are found once and each incomplete test set only
  switches some of them off. It gives the engine's values (tested against
  :func:`recmeta.metrics.score_matrices`, itself tested against trec_eval), about as fast as
  the engine's compiled pass, and adds the paper's reading of infAP (eq. 11), which the engine,
  following trec_eval on plain qrels, does not compute.
* :func:`score_masks` — arithmetic and geometric system means on every incomplete test set from
  one scoring pass.
* :func:`per_user` — the other pooling (each user's scores averaged over folds first), to show
  how much the choice moves discriminative power.
* :func:`robustness_summary` and :func:`check_claims` — the paper's conclusions, one by one,
  against our curves and DP values.

Geometric means floor zeros at :data:`recmeta.metrics.GMEAN_FLOOR` (1e-5, trec_eval's
``gm_map``): ``GM = exp(mean(log(max(x, 1e-5))))`` over the evaluated topics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from tqdm import tqdm

from .metrics import GMEAN_FLOOR, Judgments, Runs

__all__ = [
    "METRICS",
    "LABELS",
    "measures",
    "label",
    "Study",
    "pool_folds",
    "HitScorer",
    "score_masks",
    "per_user",
    "robustness_summary",
    "check_claims",
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
INFAP_EPSILON = 1e-5  # trec_eval's, as in recmeta.metrics
INFAP_VARIANTS = ("pooled", "trec")


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
    frames = []
    for f, r in enumerate(run_frames):
        code = all_users.get_indexer(r["user"])
        known = code >= 0
        frames.append(r.loc[known].assign(user=f * n_u + code[known]))
    runs = Runs.from_frame(pd.concat(frames, ignore_index=True), judgments)
    topic = judgments.users.to_numpy()
    topics = pd.DataFrame({"fold": topic // n_u, "user": all_users[topic % n_u]})
    rows = judgments.to_frame()
    rows_topic = rows["user"].to_numpy()  # to_frame names the topic column "user"
    pooled_test = pd.DataFrame({"fold": rows_topic // n_u, "user": all_users[rows_topic % n_u],
                                "item": rows["item"].to_numpy(), "rating": rows["rating"].to_numpy()})
    return Study(judgments, runs, topics, pooled_test)


def per_user(matrix: ArrayLike, topics: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Average each user's per-topic scores over the folds where the user is evaluated.

    ``matrix`` is systems × topics (NaN = topic not evaluated, as from
    :func:`recmeta.metrics.score_matrix`). Returns (systems × users, the users), dropping users
    evaluated in no fold — the per-user pooling, an alternative to testing on (fold, user) topics.
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


# ------------------------------------------------------------------------------- fast scoring
class HitScorer:
    r"""The nine metrics at cut-off ``k`` from the judged positions of the lists.

    Only ranked items that carry a judgment change any of the nine metrics: P@k, R@k, F1@k,
    AP@k (trec_eval ``map_cut``, ÷|R|), nDCG@k (linear gain, ideal from all judged items),
    RR@k, ERR@k (gain (2^r − 1)/2^rmax), bpref@k and infAP@k (trec_eval). With the hits of a
    list at ranks :math:`r_1 < r_2 < \dots` (judged items within the top k), each metric is a
    sum over hits of a term that depends on the hit's rank, grade, and the numbers of relevant
    (:math:`a_h`) and judged non-relevant (:math:`n_h`) hits before it:

    .. math::

        \mathrm{AP} = \frac{1}{|R|}\sum_{h\,\mathrm{rel}} \frac{a_h + 1}{r_h}, \quad
        \mathrm{bpref} = \frac{1}{|R|}\sum_{h\,\mathrm{rel}}
            \Bigl(1 - \frac{\min(n_h, |R|)}{\max(1, \min(|N|, |R|))}\Bigr), \quad
        \mathrm{infAP} = \frac{1}{|R|}\sum_{h\,\mathrm{rel}}
            \Bigl(\frac{1}{r_h} + \frac{a_h + n_h}{r_h}\,
            \frac{a_h + \varepsilon}{a_h + n_h + 2\varepsilon}\Bigr),

    :math:`\mathrm{ERR} = \sum_h G_h / r_h \prod_{h' < h} (1 - G_{h'})`, F1 = 2·hits/(k + |R|),
    and so on (Valcarce et al. 2020, eqs. 1–11; trec_eval for AP, bpref, infAP). A subset of
    the judgments (a ``keep`` mask over the test rows) just switches hits off, so one set of
    hits serves every incomplete test set. Values equal :func:`recmeta.metrics.score_matrices`
    (same NaN for topics without a relevant item, 0 for empty lists) up to float rounding.

    infAP comes in two readings (``infap=``). ``"trec"`` is the engine's: trec_eval with the
    unrated items outside the pool; then ``(a_h + n_h)/r_h · (a_h + ε)/(a_h + n_h + 2ε)`` is
    ``a_h / r_h`` up to ε and infAP equals AP. ``"pooled"`` (default) is Valcarce et al. (2020,
    eq. 11): every ranked item is in the pool and the unrated ones are *pooled but unjudged*
    (trec_eval's relevance −1), so the factor ``(a_h + n_h)/r_h`` becomes ``(r_h − 1)/r_h`` and
    the precision above a hit is estimated from its judged items only (Yilmaz & Aslam 2006).
    """

    def __init__(self, judgments: Judgments, runs: Runs, k: int = 100, *, infap: str = "pooled"):
        runs.check_aligned(judgments)
        if int(k) != k or k < 1:
            raise ValueError(f"the cut-off must be a positive integer, got {k!r}")
        if infap not in INFAP_VARIANTS:
            raise ValueError(f"infap must be one of {INFAP_VARIANTS}, got {infap!r}")
        self.k = int(k)
        self.infap = infap
        self.judgments = judgments
        self.runs = runs
        rows = judgments.to_frame()
        n_items = len(runs.items)
        self.n_topics = len(judgments.users)
        self.n_systems = len(runs.systems)
        u = judgments.users.get_indexer(rows.iloc[:, 0])
        i = judgments.items.get_indexer(rows.iloc[:, 1])
        self.entry_topic = u.astype(np.int64)
        self.grade = rows.iloc[:, 2].to_numpy(dtype=np.float64)
        self.threshold = judgments.threshold
        self.rmax = judgments.max_grade
        key = u.astype(np.int64) * (n_items + 1) + i
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        # ranked positions within the cut-off: (system, topic, rank) in that lexicographic order
        depth = min(self.k, runs.depth)
        ranks = runs.ranks[:, :, :depth]
        s, t, d = np.nonzero(ranks >= 0)
        qkey = t.astype(np.int64) * (n_items + 1) + ranks[s, t, d]
        at = np.searchsorted(sorted_key, qkey)
        at = np.minimum(at, len(sorted_key) - 1)
        found = sorted_key[at] == qkey
        self.hit_entry = order[at[found]]
        self.hit_system = s[found].astype(np.int64)
        self.hit_topic = t[found].astype(np.int64)
        self.hit_rank = (d[found] + 1).astype(np.float64)
        self.hit_grade = self.grade[self.hit_entry]
        self.hit_group = self.hit_system * self.n_topics + self.hit_topic
        self.empty = ~(runs.ranks[:, :, 0] >= 0)  # systems × topics with no list
        # per-hit constants shared by every mask
        start = np.r_[True, self.hit_group[1:] != self.hit_group[:-1]] if found.any() else \
            np.zeros(0, dtype=bool)
        self.seg_start = np.flatnonzero(start)
        self.seg_group = self.hit_group[self.seg_start]
        self.first_pos = np.maximum.accumulate(np.where(start, np.arange(start.size), 0))
        self.inv_rank = 1.0 / self.hit_rank
        self.hit_discount = 1.0 / np.log2(self.hit_rank + 1.0)
        self.can_be_relevant = self.hit_grade >= judgments.threshold
        self.hit_gain = (np.exp2(self.hit_grade) - 1.0) / np.exp2(judgments.max_grade)
        self.hit_log_stay = np.log1p(-self.hit_gain)
        # ideal DCG: entries by (topic, grade desc), discount by the rank among kept entries
        self.ideal_order = np.lexsort((-self.grade, self.entry_topic))
        self.discount = 1.0 / np.log2(np.arange(2, self.k + 2, dtype=np.float64))

    # -- segmented helpers over hits sorted by (group, rank)
    def _before(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over the hits before each hit within its (system, topic) list."""
        c = np.cumsum(values, dtype=np.float64) - values
        return c - c[self.first_pos]

    def _sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each (system, topic) list: systems × topics."""
        out = np.zeros(self.n_systems * self.n_topics)
        if self.seg_start.size:
            out[self.seg_group] = np.add.reduceat(values, self.seg_start)
        return out.reshape(self.n_systems, self.n_topics)

    def score(self, keep: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per-topic scores (systems × topics) of the nine metrics on the judgments ``keep`` leaves.

        ``keep`` is a boolean flag per test row (the rows of ``judgments.to_frame()``), as the
        masks of :mod:`recmeta.incompleteness` hold; ``None`` keeps every row.
        """
        n = self.grade.size
        if keep is None:
            keep = np.ones(n, dtype=bool)
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.shape != (n,):
            raise ValueError(f"keep must be a boolean array with one flag per test row ({n}), "
                             f"got {keep.dtype} {keep.shape}")
        k = float(self.k)
        rel_entry = keep & (self.grade >= self.threshold)
        n_rel = np.bincount(self.entry_topic[rel_entry], minlength=self.n_topics).astype(np.float64)
        n_judged = np.bincount(self.entry_topic[keep], minlength=self.n_topics).astype(np.float64)
        n_non = n_judged - n_rel
        active = keep[self.hit_entry]
        rel = active & self.can_be_relevant
        relf = rel.astype(np.float64)
        nonf = (active & ~self.can_be_relevant).astype(np.float64)
        a = self._before(relf)
        nb = self._before(nonf)
        r = self.hit_rank
        hits = self._sum(relf)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = {}
            out["P"] = hits / k
            out["R"] = hits / n_rel
            out["F1"] = np.where(hits > 0, 2.0 * hits / (k + n_rel), 0.0)
            out["AP"] = self._sum(relf * (a + 1.0) * self.inv_rank) / n_rel
            # nDCG: linear gain of every kept judged item, ideal from the kept entries
            dcg = self._sum(np.where(active, self.hit_grade, 0.0) * self.hit_discount)
            ideal = self._ideal(keep)
            out["nDCG"] = np.where(ideal > 0, dcg / ideal, 0.0)
            out["RR"] = self._sum(np.where(rel & (a == 0), self.inv_rank, 0.0))
            gain = np.where(active, self.hit_gain, 0.0)
            reach = np.exp(self._before(np.where(active, self.hit_log_stay, 0.0)))
            out["ERR"] = self._sum(reach * gain * self.inv_rank)
            den = np.maximum(np.minimum(n_non, n_rel), 1.0)[self.hit_topic]
            term = 1.0 - np.minimum(nb, n_rel[self.hit_topic]) / den
            out["bpref"] = self._sum(relf * term) / n_rel
            j = a + nb
            # "trec": share of judged items above, a + nb out of r - 1; "pooled": all of them
            above = j if self.infap == "trec" else r - 1.0
            expected = self.inv_rank + (above / r) * (a + INFAP_EPSILON) / (j + 2 * INFAP_EPSILON)
            out["infAP"] = self._sum(relf * expected) / n_rel
        excluded = n_rel == 0
        for name, v in out.items():
            v = np.array(v, dtype=np.float64)
            v[self.empty] = 0.0
            v[:, excluded] = np.nan
            out[name] = v
        return out

    def _ideal(self, keep: np.ndarray) -> np.ndarray:
        """Ideal DCG@k per topic over the kept entries (linear gain, Järvelin & Kekäläinen 2002)."""
        o = self.ideal_order
        kept = keep[o]
        t = self.entry_topic[o]
        c = np.cumsum(kept, dtype=np.int64)
        start = np.r_[True, t[1:] != t[:-1]]
        base = np.maximum.accumulate(np.where(start, c - kept, 0))
        rank = c - kept - base  # 0-based rank among the topic's kept entries
        use = kept & (rank < self.k)
        w = self.grade[o][use] * self.discount[rank[use]]
        return np.bincount(t[use], weights=w, minlength=self.n_topics)


def score_masks(
    scorer: HitScorer,
    keep: np.ndarray,
    *,
    metrics: Sequence[str] = METRICS,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """System means on every incomplete test set: {"mean", "gmean"} → (masks × metrics × systems).

    ``keep`` is (masks × test rows), e.g. ``Masks.keep`` built from ``study.test``. Topics left
    without a relevant item drop out of both means (as in :func:`recmeta.metrics.aggregate`);
    the geometric mean floors zeros at :data:`recmeta.metrics.GMEAN_FLOOR`.
    """
    keep = np.asarray(keep)
    if keep.ndim != 2 or keep.dtype != bool:
        raise ValueError("keep must be a boolean (masks × test rows) array, e.g. Masks.keep")
    metrics = list(metrics)
    out = {a: np.empty((keep.shape[0], len(metrics), scorer.n_systems)) for a in AGGREGATES}
    for j in tqdm(range(keep.shape[0]), disable=not progress, desc="incomplete test sets"):
        mats = scorer.score(keep[j])
        for m, name in enumerate(metrics):
            x = mats[name]
            out["mean"][j, m] = np.nanmean(x, axis=1)
            out["gmean"][j, m] = np.exp(np.nanmean(np.log(np.maximum(x, GMEAN_FLOOR)), axis=1))
    return out


# ---------------------------------------------------------------------------- conclusions
def robustness_summary(curves: pd.DataFrame, by: Sequence[str] = ("scheme", "aggregate")) -> pd.DataFrame:
    """Mean τ over the shares of each curve, and its rank among the metrics (1 = most robust).

    ``curves`` stacks :func:`recmeta.agreement.robustness_curves` frames with extra columns
    ``by`` (e.g. scheme and aggregate). The mean τ over an evenly spaced grid of shares is the
    area under the robustness curve divided by its width.
    """
    by = list(by)
    missing = [c for c in [*by, "metric", "tau"] if c not in curves.columns]
    if missing:
        raise ValueError(f"curves lack column(s) {missing}")
    area = curves.groupby([*by, "metric"], sort=False)["tau"].mean().rename("mean_tau").reset_index()
    area["rank"] = area.groupby(by, sort=False)["mean_tau"].rank(ascending=False, method="min")
    return area


def _rank(summary: pd.DataFrame, scheme: str, aggregate: str) -> pd.Series:
    s = summary[(summary["scheme"] == scheme) & (summary["aggregate"] == aggregate)]
    if s.empty:
        raise KeyError(f"no robustness curves for scheme {scheme!r}, aggregate {aggregate!r}")
    return s.set_index("metric")


def check_claims(
    summary: pd.DataFrame,
    dp: Mapping[str, float],
    tau_mean: pd.DataFrame,
    tau_mean_gmean: Mapping[str, float],
    *,
    cutoff: int = 100,
    random_schemes: Sequence[str] = ("ratings", "items", "users"),
) -> pd.DataFrame:
    """The paper's conclusions, each with our evidence and a verdict.

    ``summary``: :func:`robustness_summary` with schemes ``ratings``, ``items``, ``users``,
    ``popular`` and ``large-users`` and aggregates ``mean``/``gmean``, metrics named as
    :func:`measures`. ``dp``: DP per measure. ``tau_mean``: Kendall τ among the measures
    (arithmetic means). ``tau_mean_gmean``: τ between each measure's arithmetic and geometric
    means. A claim about "the most/least robust" metrics reads the ranks of mean τ among the
    nine metrics: top three, or bottom three.
    """
    m = {name: f"{name}@{cutoff}" for name in METRICS}
    n = len(METRICS)
    rows = []

    def add(claim: str, section: str, evidence: str, holds: bool) -> None:
        rows.append({"claim": claim, "paper": section, "ours": evidence, "holds": bool(holds)})

    def ranks(scheme: str, agg: str, names: Sequence[str]) -> list[int]:
        r = _rank(summary, scheme, agg)["rank"]
        return [int(r[m[x]]) for x in names]

    def fmt(scheme: str, agg: str, names: Sequence[str]) -> str:
        return ", ".join(f"{label(m[x], agg)} {r}" for x, r in zip(names, ranks(scheme, agg, names)))

    schemes = list(random_schemes)
    top = [max(ranks(s, "mean", ["P", "nDCG"])) for s in schemes]
    add("P and nDCG are among the most robust metrics (arithmetic mean)", "Sec. 6.3, 8",
        "; ".join(f"{s}: {fmt(s, 'mean', ['P', 'nDCG'])}" for s in schemes) + f" (of {n})",
        all(t <= 3 for t in top))
    low = [min(ranks(s, "mean", ["RR", "ERR"])) for s in [*schemes, "popular"]]
    add("MRR and ERR are among the least robust metrics", "Sec. 6.3, 8",
        "; ".join(f"{s}: {fmt(s, 'mean', ['RR', 'ERR'])}" for s in [*schemes, "popular"]),
        all(r >= n - 2 for r in low))
    ratings = _rank(summary, "ratings", "mean")["mean_tau"]
    add("bpref and infAP fail their purpose: less robust to missing ratings than MAP",
        "Sec. 6.3.1, 8",
        f"mean τ: MAP {ratings[m['AP']]:.3f}, bpref {ratings[m['bpref']]:.3f}, "
        f"infAP {ratings[m['infAP']]:.3f}",
        ratings[m["bpref"]] < ratings[m["AP"]] and ratings[m["infAP"]] < ratings[m["AP"]])
    add("P is the most robust metric to removing popular items", "Sec. 6.3.2",
        fmt("popular", "mean", ["P"]), ranks("popular", "mean", ["P"])[0] == 1)
    big = _rank(summary, "large-users", "mean")["rank"]
    add("Removing the largest users: MRR and ERR more robust than P, F1 and nDCG", "Sec. 6.3.3",
        fmt("large-users", "mean", ["RR", "ERR", "P", "F1", "nDCG"]),
        max(big[m["RR"]], big[m["ERR"]]) < min(big[m["P"]], big[m["F1"]], big[m["nDCG"]]))
    arith = _rank(summary, "large-users", "mean")["mean_tau"]
    geo = _rank(summary, "large-users", "gmean")["mean_tau"]
    add("Geometric means are robust to removing the largest users: GP > P and GnDCG > nDCG",
        "Sec. 7.2, 8",
        f"mean τ: P {arith[m['P']]:.3f} vs GP {geo[m['P']]:.3f}; nDCG {arith[m['nDCG']]:.3f} vs "
        f"GnDCG {geo[m['nDCG']]:.3f}",
        geo[m["P"]] > arith[m["P"]] and geo[m["nDCG"]] > arith[m["nDCG"]])
    gl = [min(ranks(s, "gmean", ["F1", "RR"])) for s in [*schemes, "popular", "large-users"]]
    add("GF1 and GMRR are the least robust geometric metrics", "Sec. 7.2",
        "; ".join(f"{s}: {fmt(s, 'gmean', ['F1', 'RR'])}"
                  for s in [*schemes, "popular", "large-users"]),
        all(r >= n - 1 for r in gl))
    dps = pd.Series({x: dp[m[x]] for x in METRICS})
    best = dps.idxmin()
    add("nDCG discriminates best (lowest DP)", "Sec. 6.2, 8",
        f"lowest DP: {LABELS[best]} ({dps[best]:.3g}); nDCG {dps['nDCG']:.3g}, "
        f"rank {int(dps.rank(method='min')['nDCG'])} of {n}", best == "nDCG")
    t_map_ndcg = tau_mean.loc[m["AP"], m["nDCG"]]
    others = [m[x] for x in METRICS]
    mean_tau = tau_mean.loc[others, others].where(~np.eye(n, dtype=bool)).mean()
    lowest_two = set(mean_tau.nsmallest(2).index)
    add("MAP and nDCG agree closely; MRR and ERR differ most from the rest", "Sec. 6.1",
        f"τ(MAP, nDCG) = {t_map_ndcg:.2f}; lowest mean τ with the others: "
        + ", ".join(f"{label(x)} {mean_tau[x]:.2f}" for x in mean_tau.nsmallest(2).index),
        t_map_ndcg >= 0.9 and lowest_two == {m["RR"], m["ERR"]})
    tg = pd.Series(tau_mean_gmean)
    add("F1 and MRR change most when averaged geometrically; MAP barely does", "Sec. 7.1",
        f"τ(arith., geom.): MAP {tg[m['AP']]:.2f}, F1 {tg[m['F1']]:.2f}, MRR {tg[m['RR']]:.2f}",
        max(tg[m["F1"]], tg[m["RR"]]) < tg[m["AP"]])
    return pd.DataFrame(rows)


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
    from . import runs as R
    from . import splits

    parts = splits.kfold(ratings, k, seed=seed)
    folds = list(range(k)) if folds is None else [int(f) for f in folds]
    bad = [f for f in folds if not 0 <= f < k]
    if bad or not folds or len(set(folds)) != len(folds):
        raise ValueError(f"folds must be distinct numbers in [0, {k}), got {folds}")
    tests, frames = [], []
    for f in folds:
        frames.append(R.make(systems, parts[f].train, dataset=dataset, split=f"{k}fold-{f}",
                             seed=seed, depth=depth, progress=progress))
        tests.append(parts[f].test)
    study = pool_folds(tests, frames, threshold=threshold,
                       max_grade=float(ratings["rating"].max()))
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
    by all folds (:mod:`recmeta.incompleteness` keeps exactly ``round(p·units)`` of them).
    """
    from . import incompleteness as I

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
    scorer: HitScorer,
    masks,
    reference: Mapping[str, np.ndarray],
    *,
    metrics: Sequence[str] = METRICS,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Robustness curves and absolute values of every metric under one set of masks.

    ``reference[aggregate]`` is (metrics × systems): the means on the full test set. Returns
    ``(curves, absolute)``: :func:`recmeta.agreement.robustness_curves` for both aggregates
    (column ``aggregate``), and the metric values averaged over systems and samples per share
    (columns aggregate, metric, share, value) — the paper's Fig. 4.
    """
    from . import agreement

    scores = score_masks(scorer, masks.keep, metrics=metrics, progress=progress)
    names = [f"{m}@{scorer.k}" for m in metrics]
    curves, absolute = [], []
    for agg, s in scores.items():
        curves.append(agreement.robustness_curves(s, reference[agg], masks.share, names)
                      .assign(aggregate=agg))
        mean = s.mean(axis=2)  # masks × metrics: mean over systems
        frame = pd.DataFrame(mean, columns=names).assign(share=masks.share)
        absolute.append(frame.groupby("share", sort=False).mean().reset_index()
                        .melt(id_vars="share", var_name="metric", value_name="value")
                        .assign(aggregate=agg))
    return pd.concat(curves, ignore_index=True), pd.concat(absolute, ignore_index=True)


@dataclass
class Results:
    """Everything the chapter shows for one dataset (see :func:`run`)."""

    study: Study
    cutoff: int
    matrices: dict[str, np.ndarray]
    reference: dict[str, pd.DataFrame]
    curves: pd.DataFrame
    absolute: pd.DataFrame
    pvalues: pd.DataFrame
    pvalues_per_user: pd.DataFrame

    @property
    def measures(self) -> list[str]:
        return list(self.matrices)

    @property
    def dp(self) -> pd.Series:
        """DP (sum of p-values over all system pairs) per measure, topics as the units."""
        return self.pvalues.groupby("metric", sort=False)["p"].sum()

    @property
    def dp_per_user(self) -> pd.Series:
        return self.pvalues_per_user.groupby("metric", sort=False)["p"].sum()

    def tau(self, aggregate: str = "mean") -> pd.DataFrame:
        """Kendall τ among the measures' system orderings (the paper's Figs. 1 and 9)."""
        from . import agreement

        ref = self.reference[aggregate]
        return agreement.tau_matrix(ref[self.measures].T.to_numpy(), self.measures)

    def tau_arith_geo(self) -> pd.Series:
        """τ between each measure's arithmetic and geometric system orderings (Sec. 7.1)."""
        from . import agreement

        a = self.reference["mean"][self.measures].T.to_numpy()
        g = self.reference["gmean"][self.measures].T.to_numpy()
        return pd.Series(agreement.kendall_tau(a, g), index=self.measures)

    def summary(self) -> pd.DataFrame:
        return robustness_summary(self.curves)

    def claims(self) -> pd.DataFrame:
        return check_claims(self.summary(), self.dp, self.tau("mean"), self.tau_arith_geo(),
                            cutoff=self.cutoff)


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
    from :class:`HitScorer`; p-values from :func:`recmeta.significance.pvalue_table` (paired
    permutation test, difference of means, ``n_permutations`` sign flips, seeded), once with
    (fold, user) topics as units and once with each user's scores averaged over folds.
    """
    from . import significance

    missing = [s for s in SCHEMES if s not in shares]
    if missing:
        raise ValueError(f"no shares for scheme(s) {missing}; give shares for {list(SCHEMES)}")
    scorer = HitScorer(study.judgments, study.runs, cutoff, infap="pooled")
    full = scorer.score()
    names = [f"{m}@{cutoff}" for m in metrics]
    matrices = {f"{m}@{cutoff}": full[m] for m in metrics}
    reference = {
        agg: pd.DataFrame({n: _aggregate(matrices[n], agg) for n in names}, index=study.systems)
        for agg in AGGREGATES
    }
    ref_arrays = {agg: reference[agg][names].T.to_numpy() for agg in AGGREGATES}
    curves, absolute = [], []
    for k, scheme in enumerate(SCHEMES):
        masks = incompleteness_masks(study.test, scheme, shares[scheme], n_samples, seed=seed + k)
        c, a = robustness(scorer, masks, ref_arrays, metrics=metrics, progress=progress)
        curves.append(c.assign(scheme=scheme))
        absolute.append(a.assign(scheme=scheme))
    pvalues = significance.pvalue_table(matrices, study.systems, seed=seed,
                                        n_permutations=n_permutations, progress=progress)
    users = {n: per_user(m, study.topics)[0] for n, m in matrices.items()}
    pvalues_user = significance.pvalue_table(users, study.systems, seed=seed,
                                             n_permutations=n_permutations, progress=progress)
    return Results(study, cutoff, matrices, reference, pd.concat(curves, ignore_index=True),
                   pd.concat(absolute, ignore_index=True), pvalues, pvalues_user)


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
