"""The chapters' own steps (protocol trials, bootstraps, simulations, ...), costed from their
measured times on this project's machine.

The scale benchmark (:mod:`recmeta.book.costs`) measured the recommender runs, the metric engine,
the permutation tests and the robustness curve; a chapter spends most of its time elsewhere, in
steps of its own. Each such step is a :class:`MeasuredStep`: the functions that do it (wrapped by
``benchmarks/chapter_costs.py`` to time them; a step's time excludes the other steps it calls),
the unit its cost counts (a trial, a resample, a system pair, ...) and, for a step whose cost
grows with the dataset, the phase of the scale benchmark whose exponents it borrows. Its cost is

    t = exp(log_c) · units · users^a · items^b · ratings^g

with ``a, b, g`` of that phase (0 for a step that does not depend on the dataset) and ``log_c``
fitted by ``benchmarks/chapter_costs.py fits`` from the measured times: the mean over the
measured executions of ``log(t / basis)``, where ``basis`` is ``units · users^a · items^b ·
ratings^g`` summed over the parts of the execution (a chapter's second dataset runs the same
functions). The fits are :data:`recmeta.book.step_fits.STEP_FITS`. Each chapter also has a
step ``rest``, one unit per page: the kernel's start, the imports and every cell outside the
named steps.

:func:`units` counts each chapter's steps from its settings (any object with the settings'
attributes, or a mapping), so that the plan holds exactly the steps the chapter runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MeasuredStep", "STEPS", "chapter_steps", "units", "install_timers", "REST"]

#: the step of every chapter that holds what no named step does
REST = "rest"


@dataclass(frozen=True)
class MeasuredStep:
    """One step of a chapter: ``targets`` are ``module:qualified.name`` of the functions that do
    it; ``family`` the phase of the scale benchmark whose growth it borrows ('' if the step does
    not depend on the dataset); ``unit`` what one unit of its cost is."""

    chapter: str
    name: str
    targets: tuple[str, ...]
    family: str
    unit: str

    @property
    def kind(self) -> str:
        """The step's kind in a :class:`recmeta.book.costs.Plan` (``step:<chapter>/<name>``)."""
        return f"step:{self.chapter}/{self.name}"


_STEPS: list[MeasuredStep] = []
#: every chapter's measured steps, by ``<chapter>/<name>``
STEPS: dict[str, MeasuredStep] = {}
#: each chapter's unit counts: (settings, size, second dataset?) → {step name: units}
_UNITS: dict[str, Callable[[Any, Any, bool], dict[str, float]]] = {}


def _step(chapter: str, name: str, targets: str | tuple[str, ...], family: str, unit: str) -> None:
    _STEPS.append(
        MeasuredStep(
            chapter, name, (targets,) if isinstance(targets, str) else targets, family, unit
        )
    )


def _get(settings: Any, name: str) -> Any:
    if isinstance(settings, Mapping):
        return settings[name]
    return getattr(settings, name)


def _n(settings: Any, name: str) -> int:
    """``len`` of a sequence setting, or the value of a count."""
    value = _get(settings, name)
    return len(value) if hasattr(value, "__len__") else int(value)


# ------------------------------------------------------------------------- the chapters' steps
B17 = "recmeta.papers.bellogin2017"
KR = "recmeta.papers.krichene2020"
V18 = "recmeta.papers.valcarce2018"
V20 = "recmeta.papers.valcarce2020"
SCH = "recmeta.papers.scheel2011"
SIG = "recmeta.metaeval.significance"
LEDGER = "recmeta.papers:report"

for _ch in (
    "statistical-biases",
    "sampled-metrics",
    "robustness",
    "assessing-ranking-metrics",
    "multigraded-relevance",
):
    _step(_ch, "ledger", LEDGER, "evaluate", "ledger at the quick profile's resamples")
    _step(_ch, REST, (), "", "start-up, imports, small cells and figures (one page)")

# statistical biases: the protocol trials of each experiment of the Study
_S = f"{B17}.study:Study"
_P = f"{B17}.study_popularity:PopularityStudy"
_step("statistical-biases", "fig2", f"{_S}.fig2", "evaluate", "split seed (8 designs)")
_step("statistical-biases", "non-personalised", f"{_P}.nonpersonalised", "evaluate", "split seed")
_step("statistical-biases", "fig9", f"{_P}.fig9", "evaluate", "metric seed (engine designs)")
_step("statistical-biases", "AR checks", f"{_S}.ar_checks", "evaluate", "σ × check seed")
_step("statistical-biases", "sparsity", f"{_S}.sparsity", "evaluate", "removal rate × seed")
_step("statistical-biases", "eq5", f"{_S}.eq5", "evaluate", "σ × check seed")
_step(
    "statistical-biases",
    "lemma",
    f"{_S}.lemma",
    "evaluate",
    "size seed × (removal rate + target size)",
)
_step("statistical-biases", "simulation", f"{_P}.simulation", "evaluate", "α × simulation seed")
_step("statistical-biases", "fig8", f"{_P}.fig8", "evaluate", "design seed")
_step(
    "statistical-biases",
    "checks",
    (
        f"{_S}.table3",
        f"{_S}.coverage",
        f"{_S}.wilcoxon",
        f"{_S}.proof_step",
        f"{_P}.positive_shares",
        f"{_P}.positive_ratio",
        f"{_P}.uniform_size",
        f"{_P}.identities",
    ),
    "evaluate",
    "study (Table 3, coverage, Wilcoxon, proof step, positive shares, identities)",
)


def _statistical_biases(s: Any, size: Any, second: bool) -> dict[str, float]:
    seeds, check, sigmas = _n(s, "seeds"), _n(s, "check_seeds"), _n(s, "sigmas")
    return {
        "fig2": seeds,
        "non-personalised": seeds,
        "fig9": _n(s, "metric_seeds") if _get(s, "engine_designs") else 0,
        "AR checks": sigmas * check,
        "sparsity": _n(s, "removed_rates") * seeds,
        "eq5": sigmas * check,
        "lemma": _n(s, "size_seeds") * (_n(s, "removed_rates") + _n(s, "target_sizes")),
        "simulation": _n(s, "alphas") * _n(s, "sim_seeds"),
        "fig8": _n(s, "design_seeds"),
        "checks": 1,
        "ledger": _get(s, "resamples") / 999,
    }


# sampled metrics: the running example's simulations (data-free) and the real-data study
_step("sampled-metrics", "law check", f"{KR}.example:law_check", "", "1,000 draws of r̃")
_step("sampled-metrics", "m grid", f"{KR}.example:m_grid", "", "grid point of Fig. 2")
_step(
    "sampled-metrics",
    "example tables",
    (
        f"{KR}.example:table1_frame",
        f"{KR}.example:closed_form_checks",
        f"{KR}.example:collapse_table",
        f"{KR}.example:least_squares_at_paper_size",
        f"{KR}.example:fig4_frames",
        f"{KR}.example:corrections_table",
        f"{KR}.example:laws_table",
        "recmeta.sampled.evaluation:sampled_evaluation",
    ),
    "",
    "running example (Tables 1–2, Figs. 3–4, corrections)",
)
_step(
    "sampled-metrics",
    "real study",
    f"{KR}.movielens:real_study",
    "evaluate",
    "sampled evaluation (repetition × m of Fig. 6, plus 290 for the fixed part)",
)
_step(
    "sampled-metrics", "multi approximation", f"{KR}.example:multi_approximation", "", "1,000 draws"
)
_step(
    "sampled-metrics",
    "tie rules",
    f"{KR}.claims:tie_dependence",
    "evaluate",
    "ledger under one tie rule",
)
_step("sampled-metrics", "ledger", f"{KR}.claims:report", "evaluate", "ledger evaluation")


def _sampled_metrics(s: Any, size: Any, second: bool) -> dict[str, float]:
    quick = _get(s, "profile") == "quick"
    # measured on ml-latest-small, quick (20 repetitions × 4 m) against full (100 × 10): the
    # real study took 11.7 s and 40.6 s, a fixed part worth about 290 repetition × m; the
    # ledger and its tie rules about the same time with 1,999 and 9,999 resamples
    real = _n(s, "real_repetitions") * _n(s, "fig6_ms") + 290
    if second:  # the real-data study and its ledger again
        return {"real study": real, "ledger": 1}
    return {
        "law check": _n(s, "check_draws") / 1_000,
        "m grid": 25 if quick else 60,
        "example tables": 1 if quick else 3,  # Table 2's repetitions and Fig. 4's extra m
        "real study": real,
        "multi approximation": (5_000 if quick else 50_000) / 1_000,
        "tie rules": 4,
        "ledger": 1,
    }


def _runnable(systems: Any, size: Any) -> list[str]:
    from ..recommenders import roster

    return roster.for_implicit(list(systems), bool(getattr(size, "implicit", False)))[0]


# robustness: the analysis of the runs (masks, tests, bootstraps)
_step(
    "robustness",
    "masks",
    "recmeta.metrics:Subsets.score",
    "curve",
    "incomplete test set × system",
)
_step(
    "robustness",
    "permutation tests",
    f"{SIG}:permutation_test",
    "tests",
    "10⁶ permutations × system pair",
)
_step(
    "robustness",
    "bootstrap tests",
    f"{SIG}:bootstrap_t_pvalues",
    "tests",
    "1,000 resamples × system pair × measure",
)
_step(
    "robustness",
    "analysis",
    f"{V18}.study:analyse",
    "evaluate",
    "1,000 resamples × system × measure",
)


def _robustness(s: Any, size: Any, second: bool) -> dict[str, float]:
    n_sys = len(_runnable(_get(s, "systems"), size))
    measures = _n(s, "metrics") * _n(s, "cutoffs")
    pairs = n_sys * (n_sys - 1) // 2
    sets = _n(s, "sparsity_shares") * _n(s, "n_samples") + _n(s, "popularity_shares")
    boot = _n(s, "n_bootstrap") / 1_000
    return {
        "masks": sets * n_sys,
        "permutation tests": pairs * measures * _n(s, "n_permutations") / 1e6,
        "bootstrap tests": boot * pairs * measures,
        "analysis": boot * n_sys * measures,
        "ledger": _n(s, "n_bootstrap") / 100,
    }


# assessing ranking metrics: folds, scorers, incomplete test sets, tests and bootstraps
_step("assessing-ranking-metrics", "folds", f"{V20}.folds:kfold_study", "evaluate", "fold")
_step(
    "assessing-ranking-metrics",
    "scorer check",
    (f"{V20}.folds:scorer", f"{V20}.tables:scorer_check"),
    "evaluate",
    "scorer (the engine's against trec_eval's infAP)",
)
_step(
    "assessing-ranking-metrics",
    "masks",
    "recmeta.metrics:Subsets.score",
    "curve",
    "incomplete test set × fold × system",
)
_step(
    "assessing-ranking-metrics",
    "tests",
    f"{SIG}:pvalue_table",
    "tests",
    "10⁶ permutations × system pair × (1 + fold)",
)
_step(
    "assessing-ranking-metrics",
    "analysis",
    f"{V20}.study:run",
    "evaluate",
    "1,000 resamples × bootstrapped incomplete test set × system",
)


_step(
    "assessing-ranking-metrics",
    "ledger inputs",
    (f"{V20}.study:Results.ledger_inputs", f"{V20}.tables:area_table"),
    "evaluate",
    "1,000 resamples (the ledger's bootstraps and the curves' areas)",
)


def _assessing(s: Any, size: Any, second: bool) -> dict[str, float]:
    systems = _get(s, "second_systems" if second else "systems")
    folds = _n(s, "second_folds" if second else "folds")
    samples = _n(s, "second_samples" if second else "n_samples")
    n_sys = len(systems)
    shares = 3 * _n(s, "shares") * samples + _n(s, "popular_shares") + _n(s, "shares")
    pairs = n_sys * (n_sys - 1) // 2 * 9
    # the curves' bootstrap draws among the first ``boot_masks`` masks of each share at most
    cap = _get(s, "boot_masks")
    boot_samples = samples if cap is None else min(samples, int(cap))
    boot_sets = 3 * _n(s, "shares") * boot_samples + _n(s, "popular_shares") + _n(s, "shares")
    return {
        "folds": folds,
        "scorer check": 0 if second else 1,
        "masks": shares * folds * n_sys,
        "tests": pairs * (1 + folds) * _n(s, "n_permutations") / 1e6,
        "analysis": _n(s, "n_boot") / 1_000 * boot_sets * n_sys,
        "ledger inputs": _n(s, "n_boot") / 1_000,
        "ledger": _n(s, "n_boot") / 1_000,
    }


# multi-graded relevance: artificial rankings (data-free) and the real data's scales
_step(
    "multigraded-relevance",
    "swaps",
    (f"{SCH}.swaps:swap_studies", f"{SCH}.swaps:level_count_table"),
    "",
    "100 rankings × swap count",
)
_step(
    "multigraded-relevance",
    "single swaps",
    (f"{SCH}.swaps:one_swap_study", f"{SCH}.swaps:single_swap_study"),
    "",
    "100 rankings",
)
_step(
    "multigraded-relevance",
    "scales",
    (f"{SCH}.scales:holdout", f"{SCH}.scales:scale_experiment"),
    "evaluate",
    "dataset × 1,000 resamples",
)


_step(
    "multigraded-relevance",
    "virtual users",
    f"{SCH}.virtual:virtual_experiment",
    "evaluate",
    "level count of the virtual users' sweep",
)
_step(
    "multigraded-relevance",
    "figures",
    tuple(
        f"{SCH}.figures:{f}"
        for f in (
            "plot_swap_study",
            "plot_thresholds",
            "plot_level_counts",
            "plot_virtual_bars",
            "plot_virtual_levels",
        )
    ),
    "",
    "page of figures",
)


def _multigraded(s: Any, size: Any, second: bool) -> dict[str, float]:
    scales = {
        "scales": _n(s, "n_boot") / 1_000,
        "virtual users": _n(s, "virtual_levels"),
        "ledger": _n(s, "n_boot") / 1_999,
    }
    if second:  # the real-data sections again
        return scales
    reps = _n(s, "repetitions") / 100
    return {
        "swaps": reps * _n(s, "max_swaps") * _n(s, "levels"),
        "single swaps": reps,
        "figures": 1,
        **scales,
    }


# your own experiment: the comparison's tests and bootstraps, the pipelines, the sampled report
_step(
    "your-own-experiment",
    "pipelines",
    ("recmeta.compare.experiment:train_pipelines", "lenskit.batch:recommend"),
    "evaluate",
    "own LensKit pipeline (training and its lists)",
)
_step(
    "your-own-experiment",
    "compare",
    "recmeta.compare.workflow:compare",
    "tests",
    "system pair × measure (and its draws: 180,000 count as one more)",
)
_step("your-own-experiment", REST, (), "", "start-up, imports, small cells and figures (one page)")


def _own(s: Any, size: Any, second: bool) -> dict[str, float]:
    n = len(_runnable(_get(s, "systems"), size)) + _n(s, "pipelines")
    pairs = n * (n - 1) // 2 * _n(s, "metrics")
    # per pair, a part that does not depend on the draws and one that does: measured on
    # ml-latest-small, 12.5 s with 11,000 draws (quick) and 19 s with 110,000 (full), so the
    # fixed part is worth about 180,000 draws
    draws = (_get(s, "n_permutations") + _get(s, "n_bootstrap")) / 1_000
    return {"pipelines": _n(s, "pipelines"), "compare": 2 * pairs * (1 + draws / 180)}


STEPS.update({s.chapter + "/" + s.name: s for s in _STEPS})
_UNITS.update(
    {
        "statistical-biases": _statistical_biases,
        "sampled-metrics": _sampled_metrics,
        "robustness": _robustness,
        "assessing-ranking-metrics": _assessing,
        "multigraded-relevance": _multigraded,
        "your-own-experiment": _own,
    }
)


def chapter_steps(chapter: str) -> list[MeasuredStep]:
    """The measured steps of ``chapter`` (its ``rest`` step last)."""
    return [s for s in STEPS.values() if s.chapter == chapter]


def units(chapter: str, settings: Any, size: Any, *, second: bool = False) -> dict[str, float]:
    """The units of each step ``chapter`` runs with ``settings`` on data of ``size`` (steps it
    does not run with them are absent); ``second``: the part of the chapter on its second
    dataset (no ``rest``)."""
    if chapter not in _UNITS:
        raise KeyError(
            f"no measured steps for chapter {chapter!r}; chapters with steps: "
            f"{', '.join(sorted(_UNITS))}"
        )
    counted = {k: float(v) for k, v in _UNITS[chapter](settings, size, second).items() if v}
    unknown = set(counted) - {s.name for s in chapter_steps(chapter)}
    if unknown:
        raise KeyError(f"{chapter}: units for steps without a definition: {sorted(unknown)}")
    if second:
        counted.pop(REST, None)
    else:
        counted[REST] = 1.0
    return counted


def install_timers() -> dict[str, float]:
    """Wrap the targets of the executing chapter's steps (``$RECMETA_CHAPTER``) and the
    training of recommender runs so that each adds its exclusive seconds to the returned
    mapping (step name → seconds; ``train`` for the runs trained). For the chapter benchmark."""
    import functools
    import importlib
    import os
    import sys
    import time

    chapter = os.environ.get("RECMETA_CHAPTER", "")
    times: dict[str, float] = {}
    stack: list[float] = []  # seconds spent in the children of each active timer

    def timed(name: str, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            stack.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - t0
                inner = stack.pop()
                times[name] = times.get(name, 0.0) + elapsed - inner
                if stack:
                    stack[-1] += elapsed

        wrapper.__recmeta_timed__ = True  # type: ignore[attr-defined]
        return wrapper

    targets = [("train", "recmeta.recommenders.cached:_make_one")]
    targets += [(s.name, t) for s in chapter_steps(chapter) for t in s.targets]
    for name, target in targets:
        module_name, _, qual = target.partition(":")
        module = importlib.import_module(module_name)
        owner: Any = module
        *path, attr = qual.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, attr)
        if getattr(original, "__recmeta_timed__", False):
            continue
        wrapped = timed(name, original)
        setattr(owner, attr, wrapped)
        if owner is module:  # the names other modules imported from it
            for other in list(sys.modules.values()):
                if getattr(other, "__name__", "").startswith("recmeta") and (
                    getattr(other, attr, None) is original
                ):
                    setattr(other, attr, wrapped)
    return times
