"""Valcarce et al. (2018): the chapter's settings, with each profile's defaults.

The chapter's parameters cell leaves the sizes at ``None``; :meth:`Settings.resolve` fills them
from the profile: the paper's sizes in ``full`` (the whole roster, 50 random samples per share,
100,000 permutations), small ones in ``quick`` (for CI).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import pandas as pd

from ...book.costs import Plan, Size
from ...ledger import PROFILES
from ...metaeval import incompleteness
from ...recommenders import roster
from .study import cost_plan, study
from .values import CUTOFFS, METRICS, PAPER_PERMUTATIONS, PAPER_SAMPLES

__all__ = ["QUICK_SECOND_SKIPS", "QUICK_SYSTEMS", "Settings"]

#: the quick profile's systems: fast to train and spread from random to strong
QUICK_SYSTEMS: tuple[str, ...] = (
    "random",
    "pop",
    "bias",
    "iknn-20",
    "uknn-30",
    "kr-x",
    "wrmf-50",
    "biasedmf-50",
    "ease-250",
    "biasedsvd-50",
)

#: the quick profile's resamples: the fewest with which Holm's first step (α/n, α = 0.05) can
#: pass for the largest conjunction the ledger grades, Fig. 4's 30 pairs of cut-offs
#: (1/(B + 1) <= 0.05/30); 100 left every conjunction of 7 or more parts open
QUICK_RESAMPLES = 20 * 30 - 1
#: per profile: sparsity shares, samples per share, popularity shares, permutations, resamples
_QUICK: dict[str, Any] = {
    "sparsity_shares": (1.0, 0.75, 0.5, 0.25, 0.05),
    "n_samples": 5,
    "popularity_shares": (1.0, 0.95, 0.9, 0.85, 0.8),
    "n_permutations": 2_000,
    "n_bootstrap": QUICK_RESAMPLES,
    "boot_masks": None,
}
#: the full profile's random masks per share that enter the two-level bootstrap (each costs a
#: pass and B τ per measure); the point values use all of them
FULL_BOOT_MASKS = 10
#: the second dataset only feeds the ledger: in the quick profile it runs with fewer masks
_QUICK_SECOND: dict[str, Any] = {
    "sparsity_shares": (1.0, 0.5, 0.05),
    "n_samples": 3,
    "popularity_shares": (1.0, 0.9, 0.8),
}
#: left out of the quick profile's second dataset: EASE inverts an items × items Gram matrix,
#: cubic in the items (ml-latest-small's 9,724 items: 16 to 25 s on one thread, where ML-100K's
#: 1,682 take a fraction of a second); the assessing chapter's quick second dataset leaves it
#: out too
QUICK_SECOND_SKIPS: tuple[str, ...] = ("ease-250",)


@dataclass(frozen=True)
class Settings:
    """Every knob of :func:`recmeta.papers.valcarce2018.study.study` for one dataset."""

    systems: tuple[str, ...]
    sparsity_shares: tuple[float, ...]
    n_samples: int
    popularity_shares: tuple[float, ...]
    n_permutations: int
    n_bootstrap: int
    boot_masks: int | None = None
    threshold: float | None = 4
    test_fraction: float = 0.2
    split_seed: int = 0
    depth: int = 100
    metrics: tuple[str, ...] = METRICS
    cutoffs: tuple[int, ...] = CUTOFFS
    seed: int = 20180702

    @classmethod
    def resolve(cls, profile: str, **given: Any) -> Settings:
        """The settings of ``profile`` (``"full"`` or ``"quick"``) with the ``given`` values;
        ``None`` for a size that depends on the profile (the systems, the share grids, the
        samples, permutations and resamples) takes the profile's default; other values are
        passed on as given. Unknown names are an error."""
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; choose one of {PROFILES}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown setting(s) {unknown}; the study takes {sorted(known)}")
        quick = profile == "quick"
        defaults: dict[str, Any] = (
            dict(_QUICK)
            if quick
            else {
                "sparsity_shares": tuple(incompleteness.sparsity_shares()),
                "n_samples": PAPER_SAMPLES,
                "popularity_shares": tuple(incompleteness.popularity_shares()),
                "n_permutations": PAPER_PERMUTATIONS,
                "n_bootstrap": 1000,
                "boot_masks": FULL_BOOT_MASKS,
            }
        )
        defaults["systems"] = QUICK_SYSTEMS if quick else tuple(roster.names())
        values = {k: v for k, v in given.items() if v is not None or k not in defaults}
        for k, v in defaults.items():
            values.setdefault(k, v)
        for k in ("systems", "metrics", "cutoffs", "sparsity_shares", "popularity_shares"):
            if k in values:
                if isinstance(values[k], str):
                    raise TypeError(f"{k} must be a list, got the string {values[k]!r}")
                values[k] = tuple(values[k])
        return cls(**values)

    def second(self, profile: str) -> Settings:
        """The settings of the second dataset, which only feeds the ledger: the same, except that
        the quick profile runs it with fewer incomplete test sets and without the systems of
        :data:`QUICK_SECOND_SKIPS`."""
        if profile != "quick":
            return self
        kept = tuple(s for s in self.systems if s not in QUICK_SECOND_SKIPS)
        return replace(self, **_QUICK_SECOND, systems=kept)

    def study_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~recmeta.papers.valcarce2018.study.study` (all but the
        systems, which it takes positionally)."""
        kwargs = asdict(self)
        del kwargs["systems"]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}

    def study(self, ratings: pd.DataFrame, dataset: str) -> dict[str, Any]:
        """:func:`~recmeta.papers.valcarce2018.study.study` of ``ratings`` with these settings."""
        return study(ratings, list(self.systems), dataset=str(dataset), **self.study_kwargs())

    def cost(self, size: Size) -> Plan:
        """The expensive steps of the study on a dataset of ``size`` (:func:`cost_plan`)."""
        return cost_plan(size, list(self.systems), **self.study_kwargs())
