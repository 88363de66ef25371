"""The chapters' measured steps (recmeta.book.step_costs): every step a chapter runs is in its
plan, every step of the plan is one the chapter runs, the systems left out on implicit data are
left out of the plan, the timers time what they wrap, and the shipped fits are the records'.
No test here times anything: the times are data (benchmarks/results/chapter-costs.jsonl)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

from recmeta.book import costs, step_costs
from recmeta.recommenders import roster

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "results" / "chapter-costs.jsonl"
CHAPTERS = sorted({s.chapter for s in step_costs.STEPS.values()})
ML100K = costs.REFERENCE_SIZES["ML-100K"]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "chapter_costs_bench", ROOT / "benchmarks" / "chapter_costs.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _quick_settings(chapter: str):
    """The settings each chapter's estimate cell passes, in the quick profile."""
    from recmeta.papers import bellogin2017, krichene2020, scheel2011, valcarce2018, valcarce2020

    if chapter == "statistical-biases":
        return bellogin2017.Settings.resolve("quick", seed=0)
    if chapter == "sampled-metrics":
        return krichene2020.Settings.resolve(
            "quick", dataset="ml-100k", second_dataset="ml-latest-small"
        )
    if chapter == "robustness":
        return valcarce2018.Settings.resolve("quick")
    if chapter == "assessing-ranking-metrics":
        return valcarce2020.Settings.resolve("quick")
    if chapter == "multigraded-relevance":
        return scheel2011.Settings.resolve("quick")
    return {
        "systems": ["pop", "bias", "biasedmf-50", "iknn-imp-20"],
        "pipelines": {"mine": {}},
        "metrics": ["P@10", "nDCG@10"],
        "n_permutations": 1_000,
        "n_bootstrap": 1_000,
    }


def _resolve(target: str):
    module, _, qual = target.partition(":")
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _called_names(path: Path) -> set[str]:
    """Names called in a notebook or a module (``f(`` and ``x.f(``)."""
    return set(re.findall(r"([A-Za-z_]\w*)\s*\(", path.read_text(encoding="utf-8")))


def test_every_chapter_with_an_estimate_passes_its_settings():
    """The estimate cell of every chapter hands its settings over, so the plan it prints holds
    the measured steps (a cell without them would print the old, partial estimate)."""
    for chapter in CHAPTERS:
        source = (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
        call = source[source.index("execution.estimate(") :]
        call = call[: call.index("```")]
        assert "settings=" in call, chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_plan_holds_every_step_of_the_chapter(chapter):
    """Every measured step of the chapter is in its quick plan (with positive units), and every
    step's functions exist and are called by the chapter's notebook or its study's code."""
    settings = _quick_settings(chapter)
    plan = costs.Plan(ML100K).measured(chapter, settings)
    kinds = set(plan.frame()["kind"]) | {s.kind for s in plan.pending}
    sources = {ROOT / "notebooks" / f"{chapter}.md"}
    sources |= set((ROOT / "recmeta" / "papers").rglob("*.py"))
    sources |= set((ROOT / "recmeta" / "compare").rglob("*.py"))
    called = set().union(*(_called_names(p) for p in sources))
    for step in step_costs.chapter_steps(chapter):
        if chapter == "statistical-biases" and step.name == "fig9":
            assert settings.engine_designs  # the quick profile's first dataset runs Fig. 9
        assert step.kind in kinds, step.kind
        for target in step.targets:
            assert callable(_resolve(target)), target
            assert target.rpartition(".")[2].rpartition(":")[2] in called, target
    # the scale benchmark's analysis phases are replaced by the measured steps
    assert not set(plan.frame()["kind"]) & set(costs.ANALYSIS_KINDS)


def test_the_measured_steps_are_what_the_chapters_ran():
    """The converse, from the measured records: every step that took time in a chapter's
    execution is a step of its plan (the records name the timed functions' steps), and the time
    outside every named step (the page's ``rest``: imports, small cells, figures) is the
    size of a start-up, not of a step: under 45 s or under 30 % of the chapter's time."""
    bench = _bench()
    rows = bench.fitting_rows(bench._records(RECORDS))
    assert {r["chapter"] for r in rows} == set(CHAPTERS)
    assert {r["dataset"] for r in rows} == {"ml-100k", "ml-latest-small"}
    for row in rows:
        basis = row["basis"]
        seconds = bench.step_seconds(row)
        for key, t in seconds.items():
            if t > 0.5:
                assert key in basis, (row["chapter"], row["dataset"], key)
        rest, page = seconds[f"{row['chapter']}/rest"], bench.page_seconds(row)
        assert 0 < rest < max(45.0, 0.3 * page), (row["chapter"], row["dataset"], rest)


def test_shipped_step_fits_are_the_records():
    text = _bench().fits_module(RECORDS)
    assert (ROOT / "recmeta" / "book" / "step_fits.py").read_text() == text
    from recmeta.book.step_fits import STEP_FITS

    assert set(STEP_FITS) <= set(step_costs.STEPS)
    for key, fit in STEP_FITS.items():
        assert fit["low"] <= 1 <= fit["high"] and fit["n"] >= 1, key


def test_implicit_plans_leave_out_the_systems_that_need_ratings():
    """On implicit feedback the systems that need ratings are in neither the runs nor the
    measured steps' units (robustness's masks, tests and bootstraps; your own experiment's
    comparison), counted here by hand."""
    from recmeta.papers import valcarce2018

    names = list(roster.names())
    runnable, left_out = roster.for_implicit(names, True)
    assert left_out
    s = valcarce2018.Settings.resolve("quick", systems=names)
    implicit = costs.Size(943, 1_682, 100_000, implicit=True)
    plan = valcarce2018.cost_plan(implicit, names, **s.study_kwargs()).measured("robustness", s)
    f = plan.frame()
    runs = sorted(f.loc[f["kind"].str.startswith("run:"), "kind"].str.removeprefix("run:"))
    assert runs == sorted(runnable)
    n, measures = len(runnable), len(s.metrics) * len(s.cutoffs)
    sets = len(s.sparsity_shares) * s.n_samples + len(s.popularity_shares)
    pairs = n * (n - 1) // 2
    u = step_costs.units("robustness", s, implicit)
    assert u["masks"] == sets * n
    assert u["bootstrap tests"] == pytest.approx(s.n_bootstrap / 1000 * pairs * measures)
    assert u["permutation tests"] == pytest.approx(pairs * measures * s.n_permutations / 1e6)
    # explicit data: every system counted
    explicit = costs.Size(943, 1_682, 100_000)
    e = valcarce2018.cost_plan(explicit, names, **s.study_kwargs()).measured("robustness", s)
    ef = e.frame()
    assert ef["kind"].str.startswith("run:").sum() == len(names)
    assert step_costs.units("robustness", s, explicit)["masks"] == sets * len(names)
    # your own experiment: the comparison's pairs count the runnable systems and the pipelines
    own = _quick_settings("your-own-experiment")
    u = step_costs.units("your-own-experiment", own, implicit)
    n_own = len(roster.for_implicit(own["systems"], True)[0]) + 1
    draws = 1 + 2 / 180  # 1,000 permutations and 1,000 resamples
    assert u["compare"] == pytest.approx(2 * (n_own * (n_own - 1) // 2) * 2 * draws)
    assert step_costs.units("your-own-experiment", own, explicit)["compare"] == pytest.approx(
        2 * 10 * 2 * draws
    )


def test_the_second_dataset_part_has_no_rest_and_its_own_units():
    from recmeta.papers import valcarce2020

    cfg = valcarce2020.Settings.resolve("quick")
    main = step_costs.units("assessing-ranking-metrics", cfg, ML100K)
    second = step_costs.units("assessing-ranking-metrics", cfg, ML100K, second=True)
    assert main["rest"] == 1 and "rest" not in second and "scorer check" not in second
    assert main["folds"] == len(cfg.folds) and second["folds"] == len(cfg.second_folds)
    with pytest.raises(KeyError, match="no measured steps for chapter 'nosuch'"):
        step_costs.units("nosuch", cfg, ML100K)


def test_timers_record_exclusive_seconds(monkeypatch):
    """install_timers wraps a step's functions where they are defined and where they were
    imported, and a step's seconds exclude the steps it calls."""
    import time

    mod = types.ModuleType("recmeta_timer_probe")

    def inner():
        time.sleep(0.05)

    def outer():
        time.sleep(0.05)
        mod.inner()
        mod.inner()

    mod.inner, mod.outer = inner, outer
    user = types.ModuleType("recmeta_timer_user")  # imported ``outer`` by name
    user.outer = outer
    monkeypatch.setitem(sys.modules, "recmeta_timer_probe", mod)
    monkeypatch.setitem(sys.modules, "recmeta_timer_user", user)
    steps = {
        f"probe/{name}": step_costs.MeasuredStep(
            "probe", name, (f"recmeta_timer_probe:{name}",), "", "call"
        )
        for name in ("outer", "inner")
    }
    monkeypatch.setattr(step_costs, "STEPS", steps)
    from recmeta.recommenders import cached

    monkeypatch.setattr(cached, "_make_one", cached._make_one)  # restored after the test
    monkeypatch.setenv("RECMETA_CHAPTER", "probe")
    times = step_costs.install_timers()
    user.outer()
    assert set(times) == {"outer", "inner"}
    assert 0.09 <= times["inner"] < 0.5
    assert 0.04 <= times["outer"] < times["inner"]  # its own 0.05 s, not its children's
    assert mod.outer is user.outer and getattr(mod.outer, "__recmeta_timed__", False)


def test_only_steps_that_grow_with_the_data_are_marked_extrapolated():
    big = costs.REFERENCE_SIZES["ML-20M shape"]
    plan = costs.Plan(big).measured(
        "multigraded-relevance", _quick_settings("multigraded-relevance")
    )
    f = plan.frame().set_index("kind")
    assert not f.loc["step:multigraded-relevance/rest", "extrapolated"]
    assert not f.loc["step:multigraded-relevance/swaps", "extrapolated"]  # data-free
    assert f.loc["step:multigraded-relevance/scales", "extrapolated"]  # grows, beyond 100,836
    # a data-free step costs the same at every size; one that grows costs more on more data
    small = costs.Plan(ML100K).measured(
        "multigraded-relevance", _quick_settings("multigraded-relevance")
    )
    g = small.frame().set_index("kind")
    assert f.loc["step:multigraded-relevance/swaps", "seconds"] == pytest.approx(
        g.loc["step:multigraded-relevance/swaps", "seconds"]
    )
    assert (
        f.loc["step:multigraded-relevance/scales", "seconds"]
        > 10 * g.loc["step:multigraded-relevance/scales", "seconds"]
    )
