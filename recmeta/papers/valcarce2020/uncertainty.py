r"""Robustness curves of Valcarce et al. (2020) with uncertainty from the users and the masks.

A point of a robustness curve is the mean, over the masks of one share, of Kendall's τ between
the systems' ordering on an incomplete test set and on the full one. Two things vary if the
study is run again: the users (a sample of a population) and, for the random schemes, the
masks. :func:`curve_replicates` resamples both with the package's **two-level bootstrap**
(:class:`recmeta.metaeval.two_level.TwoLevel`; Davison & Hinkley 1997, §3.8): the users are
drawn with replacement, all of a user's (fold, user) topics together (the same draws as the τ
among metrics of :func:`~.replicates.tau_replicates`), the systems' means on the full test set
and on every mask are recomputed on those users, and τ between them; at each share the masks
of a random scheme are drawn with replacement, and the replicate's point is the mean τ over the
drawn masks. What is specific to this chapter: the topics grouped by user
(:func:`user_sums`), both means (arithmetic and geometric) and each metric's level.

A deterministic scheme (popular items, largest users) has one mask per share and only the users
vary: the bootstrap of Valcarce et al. (2018)'s chapter for the same scheme. The same user and
mask draws serve every metric and both means, so differences between metrics are paired.

An area (:meth:`CurveReplicates.area`) is the trapezoid mean of a replicate's points
(:func:`~.curves.trapezoid_weights`); its interval is the bias-corrected percentile (BC)
interval of the replicates about the observed area
(:func:`recmeta.metaeval.bootstrap.replicate_interval`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from ...arrays import group_sums, threaded_map
from ...metaeval import agreement
from ...metaeval.incompleteness import Masks
from ...metaeval.two_level import TwoLevel
from ...metrics import GMEAN_FLOOR, Subsets
from .curves import trapezoid_weights
from .folds import AGGREGATES

__all__ = ["CurveReplicates", "curve_replicates", "user_sums"]


@dataclass(frozen=True)
class CurveReplicates:
    """Bootstrap replicates of every robustness curve (:func:`curve_replicates`).

    ``tau[(scheme, aggregate)]`` is (replicates × shares × metrics): each replicate's mean τ at
    each share of ``shares[scheme]`` (descending, as the masks were built); ``masks[scheme]``
    the number of masks per share (1 for a deterministic scheme); ``metrics`` short names.
    ``level`` holds, in the same shape, each metric's mean over the systems (the paper's
    Fig. 4), and ``full_level[aggregate]`` (replicates × metrics) that mean on the full test
    set, in the same replicates.
    """

    metrics: tuple[str, ...]
    shares: dict[str, np.ndarray]
    masks: dict[str, int]
    tau: dict[tuple[str, str], np.ndarray]
    level: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    full_level: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_boot(self) -> int:
        return int(next(iter(self.tau.values())).shape[0])

    def _get(self, scheme: str, aggregate: str) -> np.ndarray:
        if (scheme, aggregate) not in self.tau:
            raise KeyError(f"no replicates for scheme {scheme!r}, aggregate {aggregate!r}")
        return self.tau[(scheme, aggregate)]

    def area(self, scheme: str, aggregate: str = "mean") -> np.ndarray:
        """Each replicate's area under each metric's curve (replicates × metrics)."""
        w = trapezoid_weights(self.shares[scheme])
        return np.einsum("bsm,s->bm", self._get(scheme, aggregate), w)

    def at(self, scheme: str, share: float, aggregate: str = "mean") -> np.ndarray | None:
        """Each replicate's mean τ at ``share`` (replicates × metrics), None if off the grid."""
        hit = np.flatnonzero(np.isclose(self.shares[scheme], share))
        return None if hit.size == 0 else self._get(scheme, aggregate)[:, hit[0], :]

    def deterministic(self, scheme: str) -> bool:
        return self.masks[scheme] == 1


def user_sums(
    matrix: np.ndarray, codes: np.ndarray, n_users: int, how: str = "mean"
) -> tuple[np.ndarray, np.ndarray]:
    """Per user, the sum of a (… × topics) array over the user's scored topics and their
    number: two (… × users) arrays. ``how="gmean"`` sums ``log(max(x, GMEAN_FLOOR))``.

    The mean over the users drawn in a bootstrap replicate with counts ``c`` is then
    ``(c @ sums.T) / (c @ numbers.T)``: the NaN-skipping mean over their topics, as
    :func:`recmeta.metrics.aggregate` and :func:`~.replicates.cluster_means` compute it. One
    compiled pass over every row (:func:`recmeta.arrays.group_sums`), which adds each user's
    topics in their order, as a count row by row does.
    """
    x = np.asarray(matrix, dtype=np.float64)
    if how == "gmean":
        x = np.log(np.maximum(x, GMEAN_FLOOR))
    elif how != "mean":
        raise ValueError(f"how must be one of {AGGREGATES}, got {how!r}")
    lead = x.shape[:-1]
    sums, nums = group_sums(x.reshape(-1, x.shape[-1]), codes, n_users)
    return sums.reshape(*lead, n_users), nums.reshape(*lead, n_users)


def _boot_means(
    scores: Mapping[str, np.ndarray], names: list[str], codes: np.ndarray, counts: np.ndarray
) -> dict[str, np.ndarray]:
    """System means of every metric in every replicate: {aggregate: B × metrics × systems}.

    One matrix product for the sums of both means; the numbers of scored topics are shared by
    both (a topic is NaN in both or in neither), and when every metric and system scores the
    same topics (as the study's scorer does) a single vector product gives them all.
    """
    n_users = counts.shape[1]
    stacked = np.stack([scores[n] for n in names])  # metrics × systems × topics
    parts = {agg: user_sums(stacked, codes, n_users, agg) for agg in AGGREGATES}
    sums = np.concatenate([parts[agg][0] for agg in AGGREGATES])
    nums = parts["mean"][1].reshape(-1, n_users)  # (metrics·systems) × U
    shape = (counts.shape[0], len(AGGREGATES), len(names), sums.shape[1])
    num = (counts @ sums.reshape(-1, n_users).T).reshape(shape)
    if (nums == nums[0]).all():
        den = (counts @ nums[0])[:, None, None, None]
    else:
        den = (counts @ nums.T).reshape(shape[0], 1, *shape[2:])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return {
        agg: np.exp(mean[:, k]) if agg == "gmean" else mean[:, k]
        for k, agg in enumerate(AGGREGATES)
    }


def curve_replicates(
    subsets: Subsets,
    masks: Mapping[str, Masks],
    topics: pd.DataFrame,
    *,
    n_boot: int,
    seed: int,
    max_masks: int | None = None,
) -> CurveReplicates:
    """The two-level bootstrap of the robustness curves (see the module's docstring).

    ``subsets`` scores the study's metrics on any subset of the test rows (:func:`~.folds.scorer`);
    ``masks`` maps each scheme to its :class:`~recmeta.metaeval.incompleteness.Masks`;
    ``topics`` gives each topic's user (:attr:`~.folds.Study.topics`). Each mask is scored once
    per topic; replicate ``b`` draws the users with counts ``resample_counts(users, n_boot,
    seed)[b]`` and, at each share, as many masks as there are, with replacement (generator
    seeded with ``seed + 1``). τ is :func:`recmeta.metaeval.agreement.nan_kendall_tau`, against
    the full test set's replicates (:class:`~recmeta.metaeval.agreement.TauAgainst`): NaN
    where a replicate leaves a system without a scored user; such points are averaged over
    the masks that have one.

    ``max_masks`` bounds the cost (each mask scored costs a pass and ``n_boot`` means): only the
    first ``max_masks`` masks of each share enter the bootstrap, drawn ``max_masks`` at a time.
    Their mean varies more than the mean of all ``n`` masks the point value averages, so the
    interval can only widen (towards inconclusive).
    """
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    if max_masks is not None and (int(max_masks) != max_masks or max_masks < 1):
        raise ValueError(f"max_masks must be a positive integer or None, got {max_masks!r}")
    names = list(subsets.metrics)
    codes, users = pd.factorize(topics["user"])
    draws = TwoLevel(len(users), int(n_boot), seed)
    counts = draws.counts.astype(np.float64)
    full = _boot_means(subsets.score(), names, codes, counts)
    against = {agg: agreement.TauAgainst(full[agg]) for agg in AGGREGATES}
    #: the statistics of a mask, stacked on a last axis: τ and level, each under both means
    keys = [(what, agg) for what in ("tau", "level") for agg in AGGREGATES]

    def boot_means(mask: tuple[np.ndarray, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """:func:`_boot_means` of one mask (its rows kept, its per-topic scores)."""
        keep, scores = mask
        return full if keep.all() else _boot_means(scores, names, codes, counts)

    def per_mask(boot: dict[str, np.ndarray]) -> np.ndarray:
        """τ with the full test set and each metric's level on one mask, from its replicates'
        means ``boot`` (:func:`boot_means`): B × metrics × keys."""
        out = np.empty((int(n_boot), len(names), len(keys)))
        for k, (what, agg) in enumerate(keys):
            if what == "tau":
                out[..., k] = against[agg](boot[agg])
            else:
                with warnings.catch_warnings():  # a resample may leave no scored user
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out[..., k] = np.nanmean(boot[agg], axis=-1)
        return out

    def share_stats(stack: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """:func:`per_mask` of the masks ``idx`` of one share, scored together; the next masks'
        replicate means are computed while one's τ is (threaded_map)."""
        keep = stack[idx]
        boots = threaded_map(boot_means, zip(keep, subsets.scores(keep), strict=True))
        return np.stack([per_mask(boot) for boot in boots])

    shares: dict[str, np.ndarray] = {}
    n_masks: dict[str, int] = {}
    tau: dict[tuple[str, str], np.ndarray] = {}
    level: dict[tuple[str, str], np.ndarray] = {}
    for scheme, m in masks.items():
        grid = pd.unique(m.share)
        per_share = [np.flatnonzero(m.share == s)[:max_masks] for s in grid]
        sizes = {len(j) for j in per_share}
        if len(sizes) != 1:
            raise ValueError(f"scheme {scheme!r}: the shares hold different numbers of masks")
        shares[scheme], n_masks[scheme] = np.asarray(grid, dtype=float), sizes.pop()
        reps = draws.over_group_batches(partial(share_stats, m.keep), per_share)
        for k, (what, agg) in enumerate(keys):  # reps: B × shares × metrics × keys
            part = np.ascontiguousarray(reps[..., k])
            (tau if what == "tau" else level)[(scheme, agg)] = part
    short = tuple(n.split("@", 1)[0] for n in names)
    full_level = {agg: np.nanmean(full[agg], axis=-1) for agg in AGGREGATES}
    return CurveReplicates(short, shares, n_masks, tau, level, full_level)
