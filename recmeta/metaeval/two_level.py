r"""The two-level bootstrap over users and random masks (Davison & Hinkley 1997, §3.8).

A statistic read off incomplete test sets (Kendall's τ between the system orders on an
incomplete and on the full test set, a mean score...) varies for two reasons if the study is
run again: the users are a sample of a population, and the masks that make the test set
incomplete are random. The two-level bootstrap resamples both, in ``B`` replicates:

1. **users** (first level): replicate ``b`` draws the ``n`` users with replacement, recorded as
   counts ``c_b`` (:func:`recmeta.metaeval.bootstrap.resample_counts` with the given seed, so
   the users are those of every other bootstrap over users with that seed). The statistic of
   every mask ``j`` is recomputed on those users: ``θ_jb`` (the caller computes it from
   :attr:`TwoLevel.counts`, one mask or one group of masks at a time);
2. **masks** (second level): within each group of exchangeable masks (the random masks of one
   share), replicate ``b`` draws as many masks as the group holds, with replacement
   (a generator seeded with ``seed + 1``), and its value is the mean of ``θ_jb`` over the drawn
   masks ``j`` (NaN-skipping: a replicate may leave a system without a scored user).

A group of one mask (a deterministic scheme) leaves only the users varying. The same user draws
serve every mask and every statistic, so differences between statistics are paired. The
bias-corrected interval of the replicates (:func:`recmeta.metaeval.bootstrap.replicate_interval`)
then carries both sources of variation, which an interval over the masks alone (a t interval of
the per-mask values on the full set of users) does not.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .bootstrap import resample_counts

__all__ = ["TwoLevel"]


class TwoLevel:
    """The draws of one two-level bootstrap (see the module's docstring).

    ``counts`` (B × users, int64) are the first level's user draws; :meth:`average` and
    :meth:`over_groups` draw the masks, from one generator seeded with ``seed + 1`` and consumed
    in call order (the same calls in the same order give the same replicates).
    """

    def __init__(self, n_users: int, n_boot: int, seed: int) -> None:
        if int(n_boot) != n_boot or n_boot < 2:
            raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
        self.counts = resample_counts(n_users, int(n_boot), seed)
        self._rng = np.random.default_rng(seed + 1)

    @property
    def n_boot(self) -> int:
        return int(self.counts.shape[0])

    def average(self, per_mask: ArrayLike) -> np.ndarray:
        """The second level on one group: ``per_mask`` is (masks × B × …), the statistic of
        each mask of the group in every replicate of the users; returns (B × …), replicate
        ``b`` the NaN-skipping mean of ``per_mask[j, b]`` over ``len(per_mask)`` masks ``j``
        drawn with replacement."""
        x = np.asarray(per_mask, dtype=np.float64)
        if x.ndim < 2 or x.shape[0] < 1 or x.shape[1] != self.n_boot:
            raise ValueError(
                f"per_mask must be (masks × {self.n_boot} replicates × …) with at least one "
                f"mask, got shape {x.shape}"
            )
        draw = self._rng.integers(0, x.shape[0], size=(self.n_boot, x.shape[0]))
        drawn = x[draw, np.arange(self.n_boot)[:, None]]  # B × drawn masks × …
        with warnings.catch_warnings():  # all-NaN: no drawn mask scores the point
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(drawn, axis=1)

    def over_groups(
        self, statistic: Callable[[int], ArrayLike], groups: Sequence[ArrayLike]
    ) -> np.ndarray:
        """Both levels over several groups of masks: ``statistic(j)`` is mask ``j``'s statistic
        in every replicate of the users (B × …, computed from :attr:`counts`); ``groups`` lists
        the mask indices of each group. Returns (B × groups × …)."""
        return self.over_group_batches(
            lambda idx: np.stack([np.asarray(statistic(int(j))) for j in idx]), groups
        )

    def over_group_batches(
        self, statistics: Callable[[np.ndarray], ArrayLike], groups: Sequence[ArrayLike]
    ) -> np.ndarray:
        """:meth:`over_groups` with the statistics of a whole group at once: ``statistics(idx)``
        is (masks × B × …) for the masks ``idx`` of one group, so a caller can score them
        together. Returns (B × groups × …)."""
        if len(groups) == 0:
            raise ValueError("over_groups needs at least one group of masks")
        out = []
        for g in groups:
            idx = np.asarray(g, dtype=np.int64).ravel()
            if idx.size == 0:
                raise ValueError("a group of masks is empty")
            out.append(self.average(statistics(idx)))
        return np.stack(out, axis=1)
