"""The sampled-metrics chapter's settings: the parameters cell resolved against the profile.

:meth:`Settings.resolve` turns the notebook's parameters (``None`` = the profile's default)
into concrete values; the ledger's claims read ``n_resamples``, ``level`` and ``seed`` from the
object the chapter stores under ``results["settings"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...book.costs import Plan, Size
from ...ledger import PROFILES
from ...sampled import check_ties
from .paper import PAPER, TOY_REPETITIONS

__all__ = ["DEFAULT_TIES", "TIES_PRINCIPLE", "Settings", "cost_plan"]

#: the chapter's default tie rule, fixed before any data on the principle below
DEFAULT_TIES = "expected"
#: why: the principle behind :data:`DEFAULT_TIES`, in one sentence the chapter prints
TIES_PRINCIPLE = (
    "the paper does not say how it breaks ties, so the default is the rule that favours no "
    "system for the order of items it scores equally: the expected value under a uniformly "
    "random order of the tie block (McSherry & Najork 2008)"
)

#: the profiles' defaults of the parameters that are ``None`` in the parameters cell
DEFAULTS: dict[str, dict[str, Any]] = {
    "quick": {
        "toy_repetitions": 200,
        "check_draws": 2_000,
        "real_repetitions": 20,
        "fig6_ms": (10, 30, 100, 300),
        "n_resamples": 1999,
    },
    "full": {
        "toy_repetitions": TOY_REPETITIONS,
        "check_draws": 20_000,
        "real_repetitions": PAPER["repetitions"],
        "fig6_ms": (10, 20, 30, 60, 100, 200, 300, 600, 1000, 2000),
        "n_resamples": 9999,
    },
}


@dataclass(frozen=True)
class Settings:
    """Every knob of the chapter; the claims' uncertainty comes from the first three."""

    n_resamples: int = 9999
    level: float = 0.95
    seed: int = 0
    profile: str = "full"
    dataset: str = "ml-100k"
    second_dataset: str | None = None
    replace: bool = True
    ties: str = DEFAULT_TIES
    toy_repetitions: int = TOY_REPETITIONS
    check_draws: int = 20_000
    real_repetitions: int = 100
    fig6_ms: tuple[int, ...] = (10, 20, 30, 60, 100, 200, 300, 600, 1000, 2000)
    gammas: tuple[float, ...] = (1.0, 0.1, 0.01, 0.001)

    @property
    def quick(self) -> bool:
        """Whether this is the quick profile (smaller grids)."""
        return self.profile == "quick"

    @property
    def estimators(self) -> list[str]:
        """The estimators of the paper's Table 3 with the chapter's γ: uncorrected, rank
        estimate, CLS and one BV per γ."""
        return ["sampled", "rank-estimate", "cls"] + [f"BV {g:g}" for g in self.gammas]

    @property
    def law(self) -> str:
        """How the negatives are drawn, in words."""
        if self.replace:
            return "with replacement (binomial law)"
        return "without replacement (hypergeometric law)"

    @classmethod
    def resolve(
        cls,
        profile: str,
        *,
        dataset: str,
        second_dataset: str | None = None,
        seed: int = 0,
        replace: bool = True,
        ties: str = DEFAULT_TIES,
        gammas: Sequence[float] = (1.0, 0.1, 0.01, 0.001),
        level: float = 0.95,
        toy_repetitions: int | None = None,
        check_draws: int | None = None,
        real_repetitions: int | None = None,
        fig6_ms: Sequence[int] | None = None,
        bootstrap_resamples: int | None = None,
    ) -> Settings:
        """The settings of ``profile`` (``"quick"`` or ``"full"``) with the given values;
        ``None`` takes the profile's default. A tie rule the package does not know is an error;
        a second dataset equal to the first is dropped (the same data once is enough)."""
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {PROFILES}")
        check_ties(ties)
        given: dict[str, Any] = {
            "toy_repetitions": toy_repetitions,
            "check_draws": check_draws,
            "real_repetitions": real_repetitions,
            "fig6_ms": fig6_ms,
            "n_resamples": bootstrap_resamples,
        }
        values = {k: (DEFAULTS[profile][k] if v is None else v) for k, v in given.items()}
        return cls(
            n_resamples=int(values["n_resamples"]),
            level=float(level),
            seed=int(seed),
            profile=profile,
            dataset=str(dataset),
            second_dataset=second_dataset if second_dataset != dataset else None,
            replace=bool(replace),
            ties=ties,
            toy_repetitions=int(values["toy_repetitions"]),
            check_draws=int(values["check_draws"]),
            real_repetitions=int(values["real_repetitions"]),
            fig6_ms=tuple(int(m) for m in values["fig6_ms"]),
            gammas=tuple(float(g) for g in gammas),
        )


def cost_plan(size: Size, systems: list[str], *, repetitions: int, m: int) -> Plan:
    """The steps of the real-data part on a dataset of ``size`` that :mod:`recmeta.book.costs` can
    estimate: the runs of ``systems`` (estimated as top-100 runs; the chapter scores candidate
    items instead, which skips the top-100 selection)."""
    return (
        Plan(size)
        .runs(systems)
        .unmodelled(f"{repetitions} sampled evaluations with m = {m} negatives")
        .unmodelled(
            "the simulations of the running example and of the formula checks "
            "(they do not depend on the dataset)"
        )
    )
