"""The chapter's settings (:class:`Settings`), the paper's printed values and the designs' names
(Bellogín, Castells & Cantador 2017)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...book.costs import Plan, Size

__all__ = [
    "CHAPTER",
    "FIG2_DESIGNS",
    "FIG8_DESIGNS",
    "ML1M",
    "NONPERSONALISED",
    "ORACLE",
    "PAPER",
    "Settings",
    "cost_plan",
]

CHAPTER = "statistical-biases"

#: the paper's printed values (section of the paper in the comment)
PAPER: dict[str, Any] = {
    "threshold": 5,  # §3.3: positive rating threshold on MovieLens
    "sigma": 0.2,  # §3.3: 80-20 % coin-flip splits
    "one_r_size": 100,  # §3.3: |T_u| = 100 in 1R
    "one_r_bound": 0.10,  # §3.3: "the upper bound of P@10 for the 1R methodology is 0.10"
    "popularity_ar": 0.08,  # §3.3: "in AR popularity ranges from 0.08 on MovieLens"
    "popularity_ar_lastfm": 0.35,  # §3.3: "... to 0.35 on Last.fm"
    "wilcoxon_p": 0.001,  # §3.3: "Wilcoxon p ≪ 0.001 for all pairwise differences"
    "alpha": 1.4,  # §5.2: "α ~ 1.4 for MovieLens 1M"
    "alpha0_popularity": 0.0077,  # §5.2: popularity at α = 0
    "alpha0_random": 0.0100,  # §5.2: random at α = 0
    "top_liked": 0.327,  # §5.2: the top item of MovieLens "is liked by 32.7 %" of users
    "uniform_size": 1703,  # §6.2: |T| on ML-1M, σ = 0.2, ε = 0.2
    "uniform_eta": 118,  # §6.2: η on ML-1M
    "ar_nonrelevant": 1700,  # §6.3: |N_u| of the AR design of Fig. 8
    "percentiles": 10,  # §6.3: m of P1R
    "p1r_size": 370,  # §6.1: |T_u| ≤ ~370 for m = 10 on ML-1M
    "dataset": "ML-1M",
}

#: names of the designs of Fig. 2 and Fig. 8 in the results
FIG2_DESIGNS = ("AR AI-AN", "AR TI-AN", "1R TI-NN")
FIG8_DESIGNS = ("1R", "U1R", "P1R", "P1R (AI)", "1R −10% head", "AR TI-NN", "UAR", "AI-UAR")
NONPERSONALISED = ("popularity", "most liked", "mean rating", "random")
ORACLE = "best non-personalised (test)"
#: the paper's dataset, as its claims name it
ML1M = PAPER["dataset"]

# ------------------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Settings:
    """Every knob of the chapter's experiments; :meth:`resolve` fills the profile's defaults.

    The chapter's parameters cell passes its values to :meth:`resolve` as they are (``None``
    takes the profile's default); ``profile`` is the profile they were resolved for.
    """

    threshold: float = 5.0
    sigma: float = 0.2
    n: int = 10
    n_nonrelevant: int = 99
    percentiles: int = 10
    epsilon: float = 0.2
    head: float = 0.1
    gamma: float = 1.0
    graded_threshold: float = 4.0
    seed: int = 0
    seeds: tuple[int, ...] = (0, 1)
    check_seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    removed_rates: tuple[float, ...] = (0.0, 0.4, 0.8)
    target_sizes: tuple[int, ...] = (100, 300)
    sigmas: tuple[float, ...] = (0.2,)
    alphas: tuple[float, ...] = (0.0, 1.0, 2.0)
    roster_systems: tuple[tuple[str, str], ...] = (("MF", "wrmf-50"),)
    roster_seeds: tuple[int, ...] = (0,)
    size_seeds: tuple[int, ...] = (0,)
    sim_seeds: tuple[int, ...] = (0,)
    design_seeds: tuple[int, ...] = (0,)
    metric_seeds: tuple[int, ...] = (0,)
    resamples: int = 999
    level: float = 0.95
    damping: float = 10.0
    ai_designs: bool = True
    engine_designs: bool = True
    profile: str = "full"

    @classmethod
    def resolve(
        cls, profile: str, *, secondary: bool = False, seed: int = 0, **given: Any
    ) -> Settings:
        """Settings of a profile (``"quick"`` or ``"full"``) with the given values; ``None`` takes
        the profile's default. ``secondary`` gives the smaller quick sizes of the second dataset.
        ``seeds``, ``check_seeds`` and ``roster_seeds`` may be counts or lists; ``roster_systems``
        a mapping role → roster name."""
        quick = profile == "quick"
        small = quick and secondary
        defaults: dict[str, Any] = {
            "seeds": 1 if small else 2 if quick else 6,
            "check_seeds": 2 if small else 6 if quick else 20,
            "removed_rates": (0.0, 0.8)
            if small
            else (0.0, 0.4, 0.8)
            if quick
            else (0.0, 0.2, 0.4, 0.6, 0.8),
            "target_sizes": (100, 300) if quick else (100, 250, 500, 1000),
            "sigmas": (0.2,) if quick else (0.1, 0.2, 0.3),
            "alphas": (0.0, 2.0)
            if small
            else (0.0, 1.0, 2.0)
            if quick
            else tuple(np.arange(9) * 0.25),
            "roster_systems": {}
            if small
            else {"MF": "wrmf-50"}
            if quick
            else {"pLSA": "plsa-50", "MF": "wrmf-50", "user-kNN": "uknn-30"},
            "roster_seeds": 0 if small else 1 if quick else 3,
            "resamples": 999 if quick else 4999,
            # the second dataset's quick run leaves out the designs over all items and Fig. 9
            "ai_designs": not small,
            "engine_designs": not small,
        }
        values = {k: v for k, v in given.items() if v is not None}
        for k, v in defaults.items():
            values.setdefault(k, v)
        first = int(seed)

        def seeds_of(x: Any) -> tuple[int, ...]:
            if isinstance(x, (int, np.integer)):
                return tuple(range(first, first + int(x)))
            return tuple(int(s) for s in x)

        seeds = seeds_of(values.pop("seeds"))
        check = seeds_of(values.pop("check_seeds"))
        roster = values.pop("roster_seeds")
        roster_seeds = (
            seeds[: int(roster)]
            if isinstance(roster, (int, np.integer))
            else tuple(int(s) for s in roster)
        )
        systems = values.pop("roster_systems")
        systems = (
            tuple(systems.items())
            if isinstance(systems, Mapping)
            else tuple(tuple(x) for x in systems)
        )
        few = 1 if quick else 3
        return cls(
            profile=profile,
            seed=first,
            seeds=seeds,
            check_seeds=check,
            roster_seeds=roster_seeds,
            roster_systems=systems,
            size_seeds=seeds[:few],
            sim_seeds=seeds[:few],
            design_seeds=seeds[:few],
            metric_seeds=seeds[:few],
            removed_rates=tuple(float(r) for r in values.pop("removed_rates")),
            target_sizes=tuple(int(t) for t in values.pop("target_sizes")),
            sigmas=tuple(float(s) for s in values.pop("sigmas")),
            alphas=tuple(float(a) for a in values.pop("alphas")),
            **values,
        )

    @property
    def roster(self) -> dict[str, str]:
        """Role in the paper → system of :mod:`recmeta.recommenders.roster`."""
        return dict(self.roster_systems)


def cost_plan(size: Size, settings: Settings) -> Plan:
    """The expensive steps of :class:`Study` on a dataset of ``size`` that :mod:`recmeta.book.costs`
    can estimate: the roster systems' runs (each scores every training user × item pair), on two
    splits per roster seed (the coin-flip and the uniform-test split) and on the simulated data of
    every other α and the last (:meth:`Study.simulation`). The protocol trials of the
    non-personalised recommenders are the bulk of the chapter and were not measured by the scale
    benchmark."""
    n_alpha = len(settings.alphas)
    simulated = sum(1 for k in range(n_alpha) if k % 2 == 0 or k == n_alpha - 1)
    splits = 2 * len(settings.roster_seeds) + (simulated if settings.sim_seeds else 0)
    plan = Plan(size)
    if settings.roster and splits:
        plan.runs(settings.roster.values(), splits=splits)

    def splits_(n: int) -> str:
        return f"{n} split" + ("s" if n != 1 else "")

    return plan.unmodelled(
        f"the protocol trials of the non-personalised recommenders on "
        f"{splits_(len(settings.seeds))} per configuration, and the formula "
        f"checks on {splits_(len(settings.check_seeds))} per point"
    )
