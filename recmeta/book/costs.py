"""What a chapter will cost before it runs: estimates from the scale benchmark's growth fits.

``benchmarks/scale.py`` measured, from ML-100K to a table shaped like ML-20M, the CPU seconds of
each phase of the book's pipeline: (a) each roster system's runs, (b) the metric engine,
(c) all-pairs permutation tests and (d) one robustness curve. Its ``fits`` command turns those
records into power laws ``t ≈ c · users^a · items^b · ratings^g`` (least squares in logs over
every size measured, real and synthetic: the real tables are denser than the synthetic ones, and
the three regressors tell density apart), written to :mod:`recmeta.book.cost_fits`; this module
reads them. A system measured on five sizes or fewer (the small ones) takes the exponents of its
family's representative, measured up to the large ones (``FAMILY`` of the benchmark), and its own
constant.

A chapter describes its expensive steps as a :class:`Plan` (which systems it trains, how many
permutation tests and incomplete test sets it scores) for a dataset :class:`Size`; :func:`show`
prints the plan's estimate on the chapter's own dataset and on the three reference sizes of the
benchmark, before the steps run. The estimate is in CPU seconds of the benchmark's machine (one
core for the single-threaded phases); each number carries the spread of its fit's residuals,
and a size beyond the largest one measured for a step is marked as extrapolated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from . import step_costs
from .cost_fits import FITS
from .step_fits import STEP_FITS

__all__ = [
    "Size",
    "REFERENCE_SIZES",
    "Growth",
    "growth",
    "run_seconds",
    "side_by_side",
    "runs_at_once",
    "Plan",
    "Step",
    "Estimate",
    "duration",
    "show",
    "UNITS",
]


@dataclass(frozen=True)
class Size:
    """The shape of a ratings table: distinct users, distinct items, rows; ``implicit`` for
    interactions without ratings (the systems that learn from rating values do not run there)."""

    users: int
    items: int
    ratings: int
    implicit: bool = False

    @classmethod
    def of(cls, ratings: pd.DataFrame) -> Size:
        """The size of a ratings frame (columns ``user``, ``item``, and ``rating`` unless the
        frame is implicit feedback)."""
        return cls(
            int(ratings["user"].nunique()),
            int(ratings["item"].nunique()),
            int(len(ratings)),
            "rating" not in ratings.columns,
        )

    def __str__(self) -> str:
        return f"{self.users:,} users, {self.items:,} items, {self.ratings:,} ratings"


#: the three sizes of the scale benchmark (``benchmarks/scale.md``)
REFERENCE_SIZES: dict[str, Size] = {
    "ML-100K": Size(943, 1_682, 100_000),
    "half-million subset": Size(2_999, 3_615, 487_650),
    "ML-20M shape": Size(138_493, 26_744, 20_000_263),
}

#: the work behind each measured phase, in the units a :class:`Plan` counts: (c) 231 pairs ×
#: 100,000 permutations; (d) 1,000 incomplete test sets × 22 systems, 7 measures; (b) 22 systems
#: × 11 measures
UNITS: dict[str, float] = {"tests": 231 * 100_000, "curve": 1_000 * 22, "evaluate": 22 * 11}
#: measures per incomplete test set of the benchmark's curve, and how the cost of one set grows
#: with the measures scored in it: ``(measures / 7) ** MEASURES_EXPONENT``. From
#: ``benchmarks/incomplete.py`` (issue 15's note): 2.97 ms per set for 7 measures against 7.9 ms
#: for 77 on ML-100K, log(7.9 / 2.97) / log(11) = 0.41.
CURVE_MEASURES = 7
#: the scale benchmark's analysis phases, which a chapter's measured steps replace
ANALYSIS_KINDS = ("evaluate", "tests", "curve")
MEASURES_EXPONENT = 0.41


@dataclass(frozen=True)
class Growth:
    """CPU seconds of one phase: ``exp(log_c) · users^a · items^b · ratings^g``, from ``n`` sizes.

    ``low``/``high``: the smallest and largest residual factor (measured / fitted) over those
    sizes; ``largest``: the most ratings at which the phase was measured; ``via``: the system
    whose exponents were borrowed, if any.
    """

    log_c: float
    a: float
    b: float
    g: float
    low: float
    high: float
    n: int
    largest: int
    via: str = ""

    def seconds(self, size: Size) -> float:
        return float(
            np.exp(
                self.log_c
                + self.a * np.log(size.users)
                + self.b * np.log(size.items)
                + self.g * np.log(size.ratings)
            )
        )

    def extrapolated(self, size: Size) -> bool:
        """Beyond the most ratings measured (never for a cost that does not grow with data)."""
        grows = bool(self.a or self.b or self.g)
        return grows and size.ratings > self.largest


def growth(kind: str) -> Growth:
    """The fitted growth of ``kind`` (``run:<system>``, ``evaluate``, ``tests`` or ``curve``, or
    a chapter's measured step ``step:<chapter>/<name>`` of :mod:`recmeta.book.step_costs`)."""

    if kind.startswith("step:"):
        return step_growth(kind)
    if kind not in FITS:
        systems = sorted(k.removeprefix("run:") for k in FITS if k.startswith("run:"))
        raise KeyError(
            f"no measured growth for {kind!r}: the scale benchmark measured the runs of "
            f"{', '.join(systems)}, and 'evaluate', 'tests', 'curve'. A system outside "
            "the roster needs its own measurement (benchmarks/scale.py bench)."
        )
    return Growth(**FITS[kind])


#: the wall time of a chapter's runs made two at a time, as a share of their time made one at a
#: time: robustness 77 s of 109 s (from the first run file written to the last), assessing
#: ranking metrics 68 s of 94 s (the chapter from an empty run cache less the chapter with every
#: run cached), full profile, on two cores (``benchmarks/README.md``, "Two chapters alone from
#: cold")
TWO_AT_ONCE = 0.71


def runs_at_once(jobs: int) -> float:
    """The share of their one-at-a-time time that runs made ``jobs`` at a time take: 1 for one,
    :data:`TWO_AT_ONCE` for two or more (measured at two only, so more workers are not counted
    as faster still)."""
    return 1.0 if jobs < 2 else TWO_AT_ONCE


def side_by_side(first: float, second: float, share: float = TWO_AT_ONCE) -> float:
    """The time of two parts run in two processes, the second's unstarted work taken over by the
    first's process once it is done (:mod:`recmeta.book.background`): with each process at
    1/(2w) of its speed alone while both run (w = ``share``; :data:`TWO_AT_ONCE` for training,
    0.5 for analyses, which ran side by side as fast as alone),
    max(w·(a + b), a + (2w − 1)·b) for the first part's a seconds and the second's b."""
    w = share
    return max(w * (first + second), first + (2 * w - 1) * second)


def run_seconds(system: str, ratings: pd.DataFrame) -> float:
    """The estimated CPU seconds of ``system``'s run trained on ``ratings`` (its ``run:`` fit),
    0 for a system the scale benchmark did not measure; enough to put runs in order of cost."""
    kind = f"run:{system}"
    return Growth(**FITS[kind]).seconds(Size.of(ratings)) if kind in FITS else 0.0


def step_growth(kind: str, *, fitted: bool = True) -> Growth:
    """The growth of a chapter's measured step: the exponents of its family's phase (none for a
    step that does not depend on the data) and its constant of :data:`STEP_FITS`
    (``fitted=False``: constant 1, the basis the fits divide the measured times by)."""
    key = kind.removeprefix("step:")
    if key not in step_costs.STEPS:
        raise KeyError(f"no measured step {key!r}; the steps: {', '.join(step_costs.STEPS)}")
    family = step_costs.STEPS[key].family
    fit = FITS[family] if family else {"a": 0.0, "b": 0.0, "g": 0.0}
    if not fitted:
        return Growth(0.0, fit["a"], fit["b"], fit["g"], 1.0, 1.0, 0, 0, family)
    if key not in STEP_FITS:
        raise KeyError(
            f"step {key!r} has no fit: measure its chapter (benchmarks/chapter_costs.py "
            "measure --steps) and refit (benchmarks/chapter_costs.py fits)"
        )
    return Growth(**STEP_FITS[key])


@dataclass(frozen=True)
class Step:
    """One expensive step of a plan: ``kind`` of :func:`growth`, scaled by ``scale``."""

    label: str
    kind: str
    scale: float
    size: Size
    group: str = ""

    def estimate(self) -> tuple[float, float, float, bool]:
        """(seconds, low, high, extrapolated) for this step."""
        g = growth(self.kind)
        t = g.seconds(self.size) * self.scale
        return t, t * g.low, t * g.high, g.extrapolated(self.size)


def _count(name: str, value: int, least: int = 0) -> int:
    """``value`` as a whole number of at least ``least``, or an error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
    return int(value)


@dataclass
class Plan:
    """The expensive steps of a chapter on one dataset size, to be estimated before they run.

    Steps are added with :meth:`runs`, :meth:`tests`, :meth:`subsets` and :meth:`evaluate`; a
    step this module cannot estimate is named with :meth:`unmodelled` and shown as such.
    """

    size: Size
    steps: list[Step] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    #: measured steps without a fit yet (listed as not estimated; their basis is recorded)
    pending: list[Step] = field(default_factory=list)

    def runs(
        self,
        systems: Iterable[str],
        *,
        splits: int = 1,
        group: str = "",
        size: Size | None = None,
        ahead: bool = False,
    ) -> Plan:
        """Training and top-100 lists of each roster system on ``splits`` splits (none cached).

        On implicit feedback (``size.implicit``) the systems that need ratings are left out, as
        the chapters leave them out (:func:`recmeta.recommenders.roster.for_implicit`).
        ``ahead``: the chapter makes them with :func:`recmeta.recommenders.make_ahead`, several
        at a time, so their time is scaled by :func:`runs_at_once`."""
        size = size or self.size
        splits = _count("splits", splits, 1)
        share = 1.0
        if ahead:
            from ..recommenders.ahead import train_jobs

            share = runs_at_once(train_jobs())
        names = list(systems)
        if size.implicit:
            # imported here: the book's own process reads this module without LensKit
            from ..recommenders import roster

            names, _left_out = roster.for_implicit(names, True)
        for name in names:
            growth(f"run:{name}")  # an unknown system fails here, with the reason
        for name in names:
            self.steps.append(
                Step(
                    f"runs: {name}" + (f" × {splits} splits" if splits > 1 else ""),
                    f"run:{name}",
                    float(splits) * share,
                    size,
                    group or "recommender runs",
                )
            )
        return self

    def tests(
        self,
        pairs: int,
        permutations: int,
        *,
        repeats: int = 1,
        label: str = "",
        size: Size | None = None,
    ) -> Plan:
        """``repeats`` × ``pairs`` paired permutation tests of ``permutations`` each, over the
        size's users: (c) scaled by pairs × permutations × repeats / (231 × 100,000)."""
        units = (
            float(_count("pairs", pairs))
            * _count("permutations", permutations)
            * _count("repeats", repeats, 1)
        )
        self.steps.append(
            Step(
                label or f"permutation tests: {pairs * repeats:,} pairs × {permutations:,}",
                "tests",
                units / UNITS["tests"],
                size or self.size,
                "significance",
            )
        )
        return self

    def subsets(
        self, sets: int, systems: int, measures: int, *, label: str = "", size: Size | None = None
    ) -> Plan:
        """Scoring ``sets`` incomplete test sets for ``systems`` at ``measures`` measures: (d)
        scaled by sets × systems / (1,000 × 22) × (measures / 7)^0.41."""
        sets, systems = _count("sets", sets), _count("systems", systems)
        measures = _count("measures", measures, 1)
        scale = sets * systems / UNITS["curve"] * (measures / CURVE_MEASURES) ** MEASURES_EXPONENT
        self.steps.append(
            Step(
                label or f"{sets:,} incomplete test sets × {systems} systems × {measures} measures",
                "curve",
                scale,
                size or self.size,
                "incomplete judgments",
            )
        )
        return self

    def evaluate(
        self,
        systems: int,
        measures: int,
        *,
        repeats: int = 1,
        label: str = "",
        size: Size | None = None,
    ) -> Plan:
        """The metric engine on ``systems`` runs at ``measures`` measures, ``repeats`` times."""
        scale = (
            _count("systems", systems)
            * _count("measures", measures)
            * _count("repeats", repeats, 1)
            / UNITS["evaluate"]
        )
        self.steps.append(
            Step(
                label or f"evaluation: {systems} systems × {measures} measures",
                "evaluate",
                scale,
                size or self.size,
                "evaluation",
            )
        )
        return self

    def include(self, other: Plan, group: str) -> Plan:
        """Add ``other``'s steps (another dataset's part of the chapter) under one ``group``.

        Its size stays its own: the part does not grow with this plan's dataset."""
        self.steps += [Step(s.label, s.kind, s.scale, s.size, group) for s in other.steps]
        self.pending += [Step(s.label, s.kind, s.scale, s.size, group) for s in other.pending]
        self.others += [f"{o} ({group})" for o in other.others if o not in self.others]
        return self

    def measured(
        self, chapter: str, settings: object, *, second: bool = False, size: Size | None = None
    ) -> Plan:
        """The steps of ``chapter`` that :mod:`recmeta.book.step_costs` costs from their measured
        times, counted from the chapter's ``settings``; ``second``: its part on a second dataset
        (without the page's ``rest``). They replace the plan's evaluation, permutation-test and
        incomplete-judgment steps (the measured steps hold that work, timed in the chapter's
        own code, and the page's ``rest`` holds every other cell); the recommender runs stay."""
        size = size or self.size
        self.steps = [s for s in self.steps if s.kind not in ANALYSIS_KINDS]
        self.others = []  # what the plan left unestimated is inside the measured steps
        for name, n in step_costs.units(chapter, settings, size, second=second).items():
            step = step_costs.STEPS[f"{chapter}/{name}"]
            label = f"{name}: {n:,.0f} × {step.unit}" if name != step_costs.REST else step.unit
            group = "rest of the page" if name == step_costs.REST else "chapter steps (measured)"
            if step.kind.removeprefix("step:") in STEP_FITS:
                self.steps.append(Step(label, step.kind, n, size, group))
            else:
                self.pending.append(Step(label, step.kind, n, size, group))
                self.others.append(f"{label} (not measured yet)")
        return self

    def basis(self) -> dict[str, float]:
        """Each measured step's units × its family's growth at its size, summed by kind: what
        ``benchmarks/chapter_costs.py fits`` divides the step's measured seconds by."""
        out: dict[str, float] = {}
        for s in [*self.steps, *self.pending]:
            if s.kind.startswith("step:"):
                key = s.kind.removeprefix("step:")
                out[key] = out.get(key, 0.0) + s.scale * step_growth(s.kind, fitted=False).seconds(
                    s.size
                )
        return out

    def unmodelled(self, what: str) -> Plan:
        """A step whose cost the scale benchmark did not measure (shown, not estimated)."""
        self.others.append(what)
        return self

    def frame(self) -> pd.DataFrame:
        """One row per step: group, step, kind (of :func:`growth`), seconds, low, high,
        extrapolated."""
        rows = []
        for s in self.steps:
            t, lo, hi, ex = s.estimate()
            rows.append(
                {
                    "group": s.group,
                    "step": s.label,
                    "kind": s.kind,
                    "seconds": t,
                    "low": lo,
                    "high": hi,
                    "extrapolated": ex,
                }
            )
        return pd.DataFrame(
            rows, columns=["group", "step", "kind", "seconds", "low", "high", "extrapolated"]
        )

    def seconds(self) -> tuple[float, float, float]:
        """Total (seconds, low, high)."""
        f = self.frame()
        return float(f["seconds"].sum()), float(f["low"].sum()), float(f["high"].sum())


def clock(seconds: float) -> str:
    """A measured time as a page states it: whole seconds under 90 s, else minutes and seconds,
    rounded to the second before it is split (419.6 s is 7 min 0 s, not 6 min 60 s)."""
    whole = round(seconds)
    return f"{whole} s" if whole < 90 else f"{whole // 60} min {whole % 60} s"


def duration(seconds: float) -> str:
    """A duration for prose: seconds, minutes or hours, two significant figures."""
    if seconds < 90:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 5_400:
        return f"{seconds / 60:.2g} min" if seconds < 600 else f"{seconds / 60:.0f} min"
    return f"{seconds / 3_600:.2g} h" if seconds < 36_000 else f"{seconds / 3_600:.0f} h"


@dataclass
class Estimate:
    """A chapter's plans at its own size and at the reference sizes (what :func:`show` prints)."""

    here: str
    plans: dict[str, Plan]

    def table(self) -> pd.DataFrame:
        """Steps (grouped) × sizes, in seconds; the last row is the total."""
        cols = {}
        for name, plan in self.plans.items():
            f = plan.frame().groupby("group", sort=False)[["seconds", "low", "high"]].sum()
            cols[name] = f["seconds"]
        t = pd.DataFrame(cols).fillna(0.0)
        t.loc["total"] = t.sum()
        return t

    def seconds(self) -> float:
        """The estimate for the chapter's own dataset."""
        return self.plans[self.here].seconds()[0]

    def markdown(self) -> str:
        heads = list(self.plans)
        lines = ["| step | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
        per = {n: p.frame() for n, p in self.plans.items()}
        groups = list(dict.fromkeys(g for f in per.values() for g in f["group"]))
        for group in [*groups, "total"]:
            cells = []
            for n in heads:
                f = per[n] if group == "total" else per[n][per[n]["group"] == group]
                if not len(f):
                    cells.append("–")
                    continue
                t, lo, hi = f["seconds"].sum(), f["low"].sum(), f["high"].sum()
                mark = " *" if f["extrapolated"].any() else ""
                cells.append(f"{duration(t)} ({duration(lo)}–{duration(hi)}){mark}")
            name = "**total**" if group == "total" else group
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def show(plan: Callable[[Size], Plan], here: Size, *, label: str = "this dataset") -> Estimate:
    """Display the estimate of ``plan`` at ``here`` and at :data:`REFERENCE_SIZES`; return it.

    ``plan`` builds the chapter's plan for a size (the chapter's settings already chosen).
    """
    from IPython.display import Markdown, display

    plans = {}
    if here not in REFERENCE_SIZES.values():
        plans[f"{label} ({here.users:,} users, {here.items:,} items)"] = plan(here)
    for name, size in REFERENCE_SIZES.items():
        size = replace(size, implicit=here.implicit)  # the chapter's own kind of data, scaled
        plans[f"{name} (this dataset)" if size == here else name] = plan(size)
    est = Estimate(next(k for k in plans if k not in REFERENCE_SIZES), plans)
    others = plans[est.here].others
    extrapolated = any(p.frame()["extrapolated"].any() for p in plans.values())
    here_plan = plans[est.here]
    measured = any(s.kind.startswith("step:") for s in here_plan.steps)
    runs = here_plan.frame()
    runs_s = float(runs.loc[runs["kind"].str.startswith("run:"), "seconds"].sum())
    note = (
        "**What this page will cost.** "
        + (
            "The recommender runs are estimated from the growth fits of `benchmarks/scale.py` "
            "(CPU seconds of its 2-core machine); the chapter's own steps and the rest of the "
            "page from their times measured on the project's 2-core machine "
            "(`benchmarks/chapter_costs.py`). "
            if measured
            else "The chapter's expensive steps with these settings, estimated from the growth "
            "fits of `benchmarks/scale.py` in CPU seconds of its 2-core machine. "
        )
        + "In parentheses: the range the fits' residuals give. "
        "Runs already in the run cache cost nothing; the estimate counts every run as new"
        + (
            f" (with every run in the cache: {duration(here_plan.seconds()[0] - runs_s)})."
            if runs_s
            else "."
        )
        + (" * extrapolated beyond the largest size measured for a step." if extrapolated else "")
        + (f" Not estimated: {'; '.join(others)}." if others else "")
    )
    display(Markdown(note + "\n\n" + est.markdown()))
    return est
