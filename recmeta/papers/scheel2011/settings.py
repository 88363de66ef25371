"""The chapter's parameters, with the profile's defaults filled in (:meth:`Settings.resolve`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from ...book import chapters
from ...ledger import PROFILES

__all__ = ["PARAMETERS", "PROFILE_DEFAULTS", "ProfileDefaults", "Settings"]


@dataclass(frozen=True)
class ProfileDefaults:
    """The values the parameters left at ``None`` take in one profile."""

    repetitions: int
    check_draws: int
    n_boot: int
    systems: tuple[str, ...]
    virtual_levels: tuple[int, ...]


#: the defaults of each profile: ``quick`` (small sizes, for CI) and ``full`` (the book's)
PROFILE_DEFAULTS: dict[str, ProfileDefaults] = {
    "quick": ProfileDefaults(
        repetitions=10,
        check_draws=1000,
        n_boot=1999,
        # BiasedSVD where the full profile has EASE, whose solve is cubic in the items: 16 to
        # 25 s on ml-latest-small's 9,724 on one thread; a truncated SVD takes under a second
        systems=("pop", "bias", "biasedmf-50", "wrmf-50", "biasedsvd-50"),
        virtual_levels=(2, 100),
    ),
    "full": ProfileDefaults(
        repetitions=100,
        check_draws=4000,
        n_boot=9999,
        systems=("pop", "bias", "biasedmf-50", "funksvd-50", "wrmf-50", "ease-250", "iknn-20"),
        virtual_levels=(2, 3, 5, 20, 50, 100),
    ),
}


@dataclass(frozen=True)
class Settings:
    """Every knob of the chapter, concrete (see the chapter's parameters cell for each one)."""

    profile: str
    dataset: str
    columns: str | None
    second_dataset: str | None
    seed: int
    n_items: int
    levels: tuple[int, ...]
    max_swaps: int
    repetitions: int
    check_draws: int
    test_fraction: float
    depth: int
    systems: tuple[str, ...]
    reference_system: str
    ordinal_levels: int
    virtual_levels: tuple[int, ...]
    n_candidates: int
    n_boot: int

    @classmethod
    def resolve(
        cls,
        profile: str,
        *,
        dataset: str = "ml-100k",
        columns: str | None = None,
        second_dataset: str | None = "ml-latest-small",
        seed: int = 42,
        n_items: int = 100,
        levels: Sequence[int] = (2, 10, 20, 50),
        max_swaps: int = 99,
        repetitions: int | None = None,
        check_draws: int | None = None,
        test_fraction: float = 0.2,
        depth: int = 100,
        systems: Sequence[str] | None = None,
        reference_system: str = "biasedmf-50",
        ordinal_levels: int = 9,
        virtual_levels: Sequence[int] | None = None,
        n_candidates: int = 100,
        n_boot: int | None = None,
    ) -> Settings:
        """The settings of ``profile`` (``"quick"`` or ``"full"``); a value left at ``None``
        takes the profile's default (:data:`PROFILE_DEFAULTS`). The ordinal level count is
        always among the virtual users' level counts."""
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {PROFILES}")
        d = PROFILE_DEFAULTS[profile]
        virtual = d.virtual_levels if virtual_levels is None else virtual_levels
        chosen = d.systems if systems is None else systems
        if isinstance(chosen, str):
            raise TypeError(f"systems must be a list of roster names, got the string {chosen!r}")
        return cls(
            profile=profile,
            dataset=str(dataset),
            columns=columns,
            second_dataset=second_dataset,
            seed=int(seed),
            n_items=int(n_items),
            levels=tuple(int(n) for n in levels),
            max_swaps=int(max_swaps),
            repetitions=d.repetitions if repetitions is None else int(repetitions),
            check_draws=d.check_draws if check_draws is None else int(check_draws),
            test_fraction=float(test_fraction),
            depth=int(depth),
            systems=tuple(str(x) for x in chosen),
            reference_system=str(reference_system),
            ordinal_levels=int(ordinal_levels),
            virtual_levels=tuple(sorted({int(n) for n in virtual} | {int(ordinal_levels)})),
            n_candidates=int(n_candidates),
            n_boot=d.n_boot if n_boot is None else int(n_boot),
        )

    @classmethod
    def from_parameters(cls, namespace: Mapping[str, Any]) -> Settings:
        """:meth:`resolve` with the chapter's parameters read by name from ``namespace`` (the
        notebook's variables: ``profile`` and every name of :data:`PARAMETERS`)."""
        missing = [k for k in ("profile", *PARAMETERS) if k not in namespace]
        if missing:
            raise KeyError(f"the chapter's parameters lack {missing}; define them first")
        return cls.resolve(namespace["profile"], **{k: namespace[k] for k in PARAMETERS})

    @property
    def datasets(self) -> list[str]:
        """The chapter's dataset, then the second one if it names another."""
        second = self.second_dataset
        return [self.dataset] + ([second] if second and second != self.dataset else [])

    def frames(self, first: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """The ratings of every dataset of the run: ``first`` (the chapter's dataset, loaded with
        its ``columns``) and the second dataset's, which must hold graded ratings too."""
        out = {self.dataset: first}
        for name in self.datasets[1:]:
            out[name] = chapters.ratings(name, needs="graded")
        return out

    @property
    def second(self) -> str | None:
        """The second dataset, or ``None`` when the chapter runs on one."""
        return self.datasets[1] if len(self.datasets) > 1 else None

    @property
    def show_levels(self) -> int:
        """The level count of the per-threshold figure: 10 when the study has it, else the most."""
        return 10 if 10 in self.levels else max(self.levels)


#: the chapter's parameters besides ``profile``, as named in its parameters cell
PARAMETERS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.name != "profile")
