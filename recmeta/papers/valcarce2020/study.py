r"""The study of Valcarce et al. (2020): nine metrics, k folds, two averages, five schemes.

Valcarce, Bellogín, Parapar and Castells (2020, *Assessing ranking metrics in top-N
recommendation*, IRJ) extend their 2018 study with F1 and ERR, geometric means, 5-fold
cross-validation and item- and user-level incompleteness. :func:`run` does the whole study on
one pooled cross-validation (:mod:`.folds`): scores on the full test sets, the robustness curves
of the five schemes with both means (:func:`robustness`), and the permutation tests on users and
on (fold, user) topics. :class:`Results` holds what the chapter shows, and
:meth:`Results.ledger_inputs` what the ledger (:mod:`.claims`) reads. :class:`Settings` turns
the chapter's parameters into the sizes of a profile; :func:`cost_plan` states its cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ... import analyses
from ...book.costs import Plan, Size
from ...ledger import PROFILES
from ...metaeval import agreement, significance
from ...metaeval.incompleteness import Masks
from ...metrics import Subsets, aggregate
from ...recommenders import roster
from .curves import expected_precision_ratio, robustness_summary
from .datasets import summary
from .equations import study_check
from .folds import (
    AGGREGATES,
    METRICS,
    SCHEMES,
    Study,
    incompleteness_masks,
    judged_share,
    label,
    per_user,
    scorer,
)
from .hard_users import hard_user_dp
from .replicates import dp_mc_halfwidth, dp_replicates, tau_replicates
from .uncertainty import CurveReplicates, curve_replicates

__all__ = ["Results", "Settings", "cost_plan", "robustness", "run"]

#: bootstrap replicates in the quick profile: a one-sided bootstrap p-value is at least
#: 1/(B + 1), and Holm over the 36 pairs of metrics needs 0.05/36, so B >= 720
QUICK_BOOT = 1_000
#: masks per share that enter the bootstrap of the curves in the full profile (of 50): each
#: costs one pass and n_boot means; fewer masks only widen the intervals
FULL_MASKS = 10
#: the quick profile's systems: a few fast ones, weak and strong
QUICK_SYSTEMS: tuple[str, ...] = ("random", "pop", "bias", "kr-x", "wrmf-50", "ease-250")
#: left out of the full roster: slowest to train / near copy of iknn-20 (21 systems remain)
SKIPPED: tuple[str, ...] = ("flexmf-warp", "iknn-50")
#: the second dataset's systems in each profile
SECOND_SYSTEMS: dict[str, tuple[str, ...]] = {
    "quick": ("random", "pop", "bias", "kr-x", "wrmf-50"),
    "full": (
        "random",
        "pop",
        "bias",
        "kr-x",
        "kr-y",
        "wrmf-50",
        "biasedmf-50",
        "biasedsvd-50",
        "ease-250",
    ),
}


@dataclass(frozen=True)
class Settings:
    """The chapter's sizes in one profile (:meth:`resolve` fills the profile's defaults)."""

    profile: str
    k: int
    systems: list[str]
    folds: list[int]
    shares: list[float]
    popular_shares: list[float]
    n_samples: int
    n_permutations: int
    n_boot: int
    boot_masks: int | None
    second_systems: list[str]
    second_folds: list[int]
    second_samples: int

    @classmethod
    def resolve(
        cls,
        profile: str,
        *,
        k: int = 5,
        systems: Sequence[str] | None = None,
        folds: Sequence[int] | None = None,
        shares: Sequence[float] | None = None,
        popular_shares: Sequence[float] | None = None,
        n_samples: int | None = None,
        n_permutations: int | None = None,
        n_boot: int | None = None,
        boot_masks: int | None = None,
        second_systems: Sequence[str] | None = None,
        second_folds: Sequence[int] = (0, 1),
        second_samples: int | None = None,
    ) -> Settings:
        """The settings of ``profile`` (``"quick"`` or ``"full"``) with the given values; ``None``
        takes the profile's default (full: the paper's sizes where affordable; quick: a few fast
        systems, two folds and a coarse grid of shares)."""
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {PROFILES}")
        quick = profile == "quick"
        if quick:
            grid = [1.0, 0.75, 0.5, 0.25, 0.1]
            popular = [1.0, 0.95, 0.9, 0.85, 0.8]
        else:
            grid = [*np.round(np.arange(1.0, 0.04, -0.05), 2), 0.01]
            popular = list(np.round(np.arange(1.0, 0.795, -0.01), 2))
        given = {
            "systems": systems,
            "shares": shares,
            "popular_shares": popular_shares,
            "second_systems": second_systems,
        }
        empty = [name for name, v in given.items() if v is not None and len(v) == 0]
        if empty:
            raise ValueError(
                f"{', '.join(empty)} must not be empty; give None for the profile's default"
            )
        full_roster = [n for n in roster.names() if n not in SKIPPED]
        return cls(
            profile=profile,
            k=int(k),
            systems=list(systems)
            if systems is not None
            else list(QUICK_SYSTEMS)
            if quick
            else full_roster,
            folds=[int(f) for f in folds] if folds is not None else list(range(2 if quick else k)),
            shares=list(shares) if shares is not None else grid,
            popular_shares=list(popular_shares) if popular_shares is not None else popular,
            n_samples=int(n_samples) if n_samples is not None else 5 if quick else 50,
            n_permutations=int(n_permutations)
            if n_permutations is not None
            else 2_000
            if quick
            else 100_000,
            n_boot=int(n_boot) if n_boot is not None else QUICK_BOOT if quick else 1_000,
            boot_masks=int(boot_masks) if boot_masks is not None else None if quick else FULL_MASKS,
            second_systems=list(
                second_systems if second_systems is not None else SECOND_SYSTEMS[profile]
            ),
            second_folds=[int(f) for f in second_folds],
            second_samples=int(second_samples)
            if second_samples is not None
            else 3
            if quick
            else 10,
        )

    @property
    def quick(self) -> bool:
        return self.profile == "quick"

    @property
    def scheme_shares(self) -> dict[str, list[float]]:
        """The shares kept in each scheme of :data:`SCHEMES`: the popular-items scheme has its
        own grid, the others share one."""
        return {
            "ratings": self.shares,
            "items": self.shares,
            "popular": self.popular_shares,
            "users": self.shares,
            "large-users": self.shares,
        }

    def cost_plan(self, size: Size) -> Plan:
        """:func:`cost_plan` of the main study on a dataset of ``size``."""
        return cost_plan(
            size,
            self.systems,
            folds=self.folds,
            shares=self.scheme_shares,
            n_samples=self.n_samples,
            n_permutations=self.n_permutations,
        )

    def second_cost_plan(self, size: Size) -> Plan:
        """:func:`cost_plan` of the lighter study on the second dataset."""
        return cost_plan(
            size,
            self.second_systems,
            folds=self.second_folds,
            shares=self.scheme_shares,
            n_samples=self.second_samples,
            n_permutations=self.n_permutations,
        )


def cost_plan(
    size: Size,
    systems: list[str],
    *,
    folds: list[int],
    shares: Mapping[str, list[float]],
    n_samples: int,
    n_permutations: int,
    metrics: Iterable[str] | None = None,
) -> Plan:
    """The expensive steps of :func:`run` on a dataset of ``size`` (:mod:`recmeta.book.costs`): the
    runs of ``systems`` on each of ``folds``; one compiled pass per incomplete test set of the
    schemes that remove ratings or items (``n_samples`` masks per share for the random ones, one
    per share for popular items; the users schemes keep whole users and need none); and the
    permutation tests of every pair for every metric, on users and on (fold, user) topics."""
    metrics = list(metrics or METRICS)
    n_sys, n_m = len(systems), len(metrics)
    # the users schemes keep whole users: their masks' means need no pass (Subsets.means)
    passes = {"ratings": n_samples, "items": n_samples, "popular": 1}
    sets = sum(len(v) * passes[k] for k, v in shares.items() if k in passes)
    pairs = n_sys * (n_sys - 1) // 2 * n_m
    # each fold adds its own lists (users × systems) and test rows: as many incomplete test
    # sets and topics as one holdout per fold
    f = len(folds)
    return (
        Plan(size)
        .runs(systems, splits=f, ahead=True)
        .subsets(
            sets * f,
            n_sys,
            n_m,
            label=f"{sets:,} incomplete test sets × {f} folds × {n_sys} systems × {n_m} metrics",
        )
        .tests(pairs, n_permutations, label=f"permutation tests on users: {pairs:,} pairs")
        .tests(
            pairs,
            n_permutations,
            repeats=f,
            label=f"permutation tests on (fold, user) topics: {pairs:,} pairs",
        )
        .unmodelled("the bootstrap intervals of the ledger")
    )


def robustness(
    subsets: Subsets,
    masks: Masks,
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
    scores = subsets.means(masks.keep, aggregates=AGGREGATES)
    names = subsets.metrics
    curves, absolute, taus = [], [], []
    for agg, s in scores.items():
        curves.append(
            agreement.robustness_curves(s, reference[agg], masks.share, names).assign(aggregate=agg)
        )
        tau = agreement.kendall_tau(s, reference[agg][None, :, :])  # masks × metrics
        taus.append(
            pd.DataFrame(
                {
                    "aggregate": agg,
                    "metric": np.tile(names, len(masks.share)),
                    "share": np.repeat(masks.share, len(names)),
                    "sample": np.repeat(masks.sample, len(names)),
                    "tau": tau.ravel(),
                }
            )
        )
        mean = pd.DataFrame(s.mean(axis=2), columns=names).assign(share=masks.share)  # over systems
        long = mean.melt(id_vars="share", var_name="metric", value_name="value")
        g = long.groupby(["share", "metric"], sort=False)["value"]
        absolute.append(
            pd.DataFrame({"value": g.mean(), "sd": g.std(ddof=1), "samples": g.size()})
            .reset_index()
            .assign(aggregate=agg)
        )
    return (
        pd.concat(curves, ignore_index=True),
        pd.concat(absolute, ignore_index=True),
        pd.concat(taus, ignore_index=True),
    )


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
    curve_reps: CurveReplicates | None = None

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
        """Per-user scores (systems × users), each user averaged over the folds
        (:func:`per_user`)."""
        return {n: per_user(m, self.study.topics)[0] for n, m in self.matrices.items()}

    def tau(self, aggregate: str = "mean") -> pd.DataFrame:
        """Kendall τ among the measures' system orderings (the paper's Figs. 1 and 9)."""
        ref = self.reference[aggregate]
        return agreement.tau_matrix(ref[self.measures].T.to_numpy(), self.measures)

    def tau_arith_geo(self) -> pd.Series:
        """τ between each measure's arithmetic and geometric system orderings (Sec. 7.1)."""
        a = self.reference["mean"][self.measures].T.to_numpy()
        g = self.reference["gmean"][self.measures].T.to_numpy()
        return pd.Series(agreement.kendall_tau(a, g), index=self.measures)

    def means_table(self) -> pd.DataFrame:
        """Each system's metrics on the full test sets, arithmetic means then geometric ones
        (labels prefixed G), sorted by decreasing nDCG."""
        table = pd.concat(
            {"mean": self.reference["mean"], "gmean": self.reference["gmean"]}, axis=1
        )
        table.columns = [label(m, agg) for agg, m in table.columns]
        return table.sort_values("nDCG", ascending=False)

    def summary(self) -> pd.DataFrame:
        """:func:`robustness_summary` of the curves (trapezoid areas with bands, ranks)."""
        return robustness_summary(self.curves, n_systems=self.n_systems)

    def expected_precision(self, shares: ArrayLike | None = None) -> pd.DataFrame:
        """Observed mean P@k over its full value against :func:`expected_precision_ratio`.

        One row per share of the ratings scheme: ``observed`` (mean over the masks of the mean
        over systems, divided by the full value) with its t band, the naive ``share`` and the
        ``expected`` ratio with topics that lose every relevant item dropping out.
        """
        name = f"P@{self.cutoff}"
        a = self.absolute
        a = a[
            (a["scheme"] == "ratings") & (a["aggregate"] == "mean") & (a["metric"] == name)
        ].sort_values("share", ascending=False)
        if shares is not None:
            a = a[np.isin(np.round(a["share"], 10), np.round(np.asarray(shares, float), 10))]
        full = float(self.reference["mean"][name].mean())
        rel = self.study.judgments.to_frame()
        relevant = rel.iloc[:, 2].to_numpy() >= self.study.judgments.threshold
        n_rel = np.bincount(
            self.study.judgments.users.get_indexer(rel.iloc[:, 0])[relevant],
            minlength=len(self.study.judgments.users),
        )
        n_rel = n_rel[n_rel > 0]
        rows = []
        for r in a.itertuples():
            half = (
                stats.t.ppf(0.975, r.samples - 1) * r.sd / np.sqrt(r.samples)
                if r.samples > 1 and np.isfinite(r.sd)
                else np.nan
            )
            rows.append(
                {
                    "share": r.share,
                    "observed": r.value / full,
                    "low": (r.value - half) / full,
                    "high": (r.value + half) / full,
                    "expected": expected_precision_ratio(n_rel, r.share, len(rel)),
                    "samples": r.samples,
                }
            )
        return pd.DataFrame(rows)

    @analyses.analysis_method
    def ledger_inputs(
        self,
        *,
        n_boot: int = 200,
        seed: int | None = None,
        ratings: pd.DataFrame | None = None,
    ) -> dict[str, object]:
        """The named results the chapter's ledger reads (:mod:`recmeta.papers.valcarce2020`).

        Metric names are short (``"P"``, ``"RR"``, ...). ``taus``, ``curves`` and ``absolute``
        are the robustness frames; ``tau_among`` the :class:`TauReplicates` (``n_boot``
        resamples of users); ``dp`` the per-user DP with ``dp_reps`` and ``dp_base``
        (:func:`dp_replicates`) and ``dp_mc`` (:func:`dp_mc_halfwidth`); ``judged`` the per-user
        judged share of the lists;
        ``full_values`` each metric's mean over systems on the full test set (arithmetic);
        ``curve_reps`` the two-level bootstrap of the robustness curves
        (:func:`~.uncertainty.curve_replicates`, drawn by :func:`run` when given ``n_boot``;
        None otherwise, and the claims on robustness are then not reproduced);
        ``metric_check`` the scores against eqs. 1–11 written out (:func:`.equations.study_check`);
        ``hard_users`` the graded metrics' DP on the hard and easy halves of the users
        (:func:`.hard_users.hard_user_dp`); ``data`` the dataset's Table 2 quantities
        (:func:`.datasets.summary`) when ``ratings`` are given, absent otherwise.
        """
        seed = self.seed if seed is None else seed
        short = {n: n.split("@", 1)[0] for n in self.measures}

        def rename(frame: pd.DataFrame) -> pd.DataFrame:
            return frame.assign(metric=frame["metric"].map(short))

        users = self.user_matrices()
        reps, base = dp_replicates(users, n_boot=n_boot, seed=seed)
        first = self.measures[0]
        ids = per_user(self.matrices[first], self.study.topics)[1]
        sizes = self.study.test.groupby("user").size().reindex(ids)
        hard = hard_user_dp(
            {short[n]: m for n, m in users.items()},
            sizes,
            n_boot=n_boot,
            seed=seed,
            n_permutations=self.n_permutations,
        )
        extra: dict[str, object] = {} if ratings is None else {"data": summary(ratings)}
        return {
            **extra,
            "metric_check": study_check(self.study, self.matrices, self.cutoff, seed=seed),
            "hard_users": hard,
            "metrics": tuple(short.values()),
            "n_systems": self.n_systems,
            "taus": rename(self.taus),
            "curves": rename(self.curves),
            "absolute": rename(self.absolute),
            "full_values": self.reference["mean"][self.measures].mean().rename(index=short),
            "tau_among": tau_replicates(self.matrices, self.study.topics, n_boot=n_boot, seed=seed),
            "dp": self.dp.rename(index=short),
            "dp_reps": reps,
            "dp_base": base,
            "dp_mc": dp_mc_halfwidth(self.pvalues, self.n_permutations),
            "judged": self.judged,
            "curve_reps": self.curve_reps,
        }


@analyses.analysis
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
    n_boot: int | None = None,
    boot_masks: int | None = None,
) -> Results:
    """The whole study on one pooled cross-validation (Valcarce et al. 2020, Secs. 6–7).

    ``shares`` maps each scheme of :data:`SCHEMES` to its shares kept. Per-topic scores come
    from :func:`scorer` (infAP as the paper's eq. 11); p-values from
    :func:`recmeta.metaeval.significance.pvalue_table` (paired permutation test, difference of
    means, ``n_permutations`` sign flips, seeded), on users
    (each user's scores averaged over the folds: the main input) and on (fold, user) topics.
    With ``n_boot``, the robustness curves also get ``n_boot`` replicates of the two-level
    bootstrap of :func:`~.uncertainty.curve_replicates` (users and masks resampled; seed
    ``seed``, the users drawn as in :meth:`Results.ledger_inputs`).
    """
    missing = [s for s in SCHEMES if s not in shares]
    if missing:
        raise ValueError(f"no shares for scheme(s) {missing}; give shares for {list(SCHEMES)}")
    subsets = scorer(study, cutoff, metrics)
    names = subsets.metrics
    matrices = subsets.score()
    reference = {
        agg: pd.DataFrame({n: aggregate(matrices[n], agg) for n in names}, index=study.systems)
        for agg in AGGREGATES
    }
    ref_arrays = {agg: reference[agg][names].T.to_numpy() for agg in AGGREGATES}
    curves, absolute, taus = [], [], []
    all_masks = {}
    for k, scheme in enumerate(SCHEMES):
        masks = incompleteness_masks(study.test, scheme, shares[scheme], n_samples, seed=seed + k)
        all_masks[scheme] = masks
        c, a, t = robustness(subsets, masks, ref_arrays)
        curves.append(c.assign(scheme=scheme))
        absolute.append(a.assign(scheme=scheme))
        taus.append(t.assign(scheme=scheme))
    users = {n: per_user(m, study.topics)[0] for n, m in matrices.items()}
    pvalues = significance.pvalue_table(
        users, study.systems, seed=seed, n_permutations=n_permutations, progress=progress
    )
    pvalues_topics = significance.pvalue_table(
        matrices, study.systems, seed=seed, n_permutations=n_permutations, progress=progress
    )
    return Results(
        study,
        cutoff,
        matrices,
        reference,
        pd.concat(curves, ignore_index=True),
        pd.concat(absolute, ignore_index=True),
        pd.concat(taus, ignore_index=True),
        pvalues,
        pvalues_topics,
        judged_share(study, cutoff),
        int(n_permutations),
        int(seed),
        None
        if n_boot is None
        else curve_replicates(
            subsets, all_masks, study.topics, n_boot=int(n_boot), seed=seed, max_masks=boot_masks
        ),
    )
