"""Cost estimates (recmeta.book.costs): the fit against statsmodels, the shipped fits against the
benchmark's records, and plans counted by hand."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta.book import chapters, costs, fitting
from recmeta.papers import valcarce2018, valcarce2020
from recmeta.recommenders import roster

ROOT = Path(__file__).resolve().parents[1]
RESULTS = sorted((ROOT / "benchmarks" / "results").glob("scale-*.json"))


def _scale_module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(
            "scale_bench", ROOT / "benchmarks" / "scale.py"
        )
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_power_fit_matches_statsmodels_ols():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    u, i = rng.uniform(1e3, 1e5, 12), rng.uniform(1e3, 3e4, 12)
    y = 2e-6 * u**1.1 * i**0.3 * np.exp(rng.normal(0, 0.1, 12))
    f = fitting.power_fit(y, u, i)
    ref = sm.OLS(np.log(y), sm.add_constant(np.column_stack([np.log(u), np.log(i)]))).fit()
    np.testing.assert_allclose(f["coef"], ref.params, rtol=1e-10)
    np.testing.assert_allclose(f["se"], ref.bse, rtol=1e-8)
    np.testing.assert_allclose(np.log(f["factor"]), ref.resid, atol=1e-12)


def _records(law, sizes, system="", phase="runs"):
    return [
        {
            "size": f"x{k}",
            "phase": phase,
            "system": system,
            "status": "ok",
            "users": u,
            "items": i,
            "ratings": r,
            "cpu_s": law(u, i, r),
        }
        for k, (u, i, r) in enumerate(sizes)
    ]


#: (users, items, ratings) of six sizes that separate the three exponents
SIX_SIZES = [
    (1_000, 500, 20_000),
    (4_000, 500, 60_000),
    (4_000, 2_000, 300_000),
    (16_000, 2_000, 500_000),
    (16_000, 8_000, 4_000_000),
    (64_000, 8_000, 6_000_000),
]


def test_fit_growth_recovers_known_laws_and_borrows_exponents():
    sizes = SIX_SIZES
    rep = _records(lambda u, i, r: 3e-5 * u**0.8 * i**0.5 * r**0.2, sizes, "rep")
    # a system measured on three small sizes only, 4 times slower than its representative
    small = _records(lambda u, i, r: 1.2e-4 * u**0.8 * i**0.5 * r**0.2, sizes[:3], "small")
    tests = _records(lambda u, i, r: 1e-3 * u**1.0, sizes, phase="tests")
    fits = fitting.fit_growth(rep + small + tests, {"small": "rep"})
    assert set(fits) == {"run:rep", "run:small", "tests"}
    r = fits["run:rep"]
    assert (r["a"], r["b"], r["g"]) == pytest.approx((0.8, 0.5, 0.2), abs=1e-9)
    assert r["log_c"] == pytest.approx(math.log(3e-5)) and r["via"] == ""
    s = fits["run:small"]
    assert s["via"] == "rep" and s["log_c"] == pytest.approx(math.log(1.2e-4))
    assert s["largest"] == 300_000 and s["n"] == 3
    assert fits["tests"]["a"] == pytest.approx(1.0) and fits["tests"]["b"] == pytest.approx(
        0.0, abs=1e-9
    )
    with pytest.raises(ValueError, match="family representative"):
        fitting.fit_growth(rep + small, {})


def test_a_family_member_borrows_exponents_at_as_many_sizes_as_its_own_fit_needs():
    sizes = SIX_SIZES
    rep = _records(lambda u, i, r: 3e-5 * u**0.8 * i**0.5 * r**0.2, sizes, "rep")
    # measured at as many sizes as the representative, on another law: a fit of its own would
    # recover that law's exponents; as a member of rep's family it keeps rep's
    member = _records(lambda u, i, r: 1e-4 * u**0.3 * i**1.5 * r**0.1, sizes, "member")
    assert len(sizes) >= fitting.OWN_FIT_SIZES
    alone = fitting.fit_growth(rep + member, {})["run:member"]
    assert (alone["a"], alone["b"], alone["g"]) == pytest.approx((0.3, 1.5, 0.1), abs=1e-9)
    borrowed = fitting.fit_growth(rep + member, {"member": "rep"})["run:member"]
    assert borrowed["via"] == "rep" and borrowed["n"] == len(sizes)
    assert (borrowed["a"], borrowed["b"], borrowed["g"]) == pytest.approx((0.8, 0.5, 0.2))


def test_shipped_fits_are_the_benchmark_records():
    assert RESULTS, "benchmarks/results/scale-*.json missing"
    scale = _scale_module()
    names = ["scale-real-and-small.json", "scale-large.json", "scale-ml20m.json",
             "scale-ml-latest-small.json"]
    files = [str(ROOT / "benchmarks" / "results" / n) for n in names]
    shipped = (ROOT / "recmeta" / "book" / "cost_fits.py").read_text()
    refit = scale.fits_module(files)
    # the same text but for the last digits of the least-squares floats, which differ between
    # CPUs (the BLAS's kernels): every key, count and label equal, every float to 1e-9
    assert shipped.split("FITS")[0] == refit.split("FITS")[0]
    ours, theirs = ({}, {})
    exec(shipped, ours)
    exec(refit, theirs)
    assert ours["FITS"].keys() == theirs["FITS"].keys()
    for name, fit in ours["FITS"].items():
        other = theirs["FITS"][name]
        assert fit.keys() == other.keys(), name
        for key, value in fit.items():
            if isinstance(value, float):
                assert value == pytest.approx(other[key], rel=1e-9, abs=1e-12), (name, key)
            else:
                assert value == other[key], (name, key)


def test_every_roster_system_has_a_growth_and_an_unknown_one_is_refused():
    for name in roster.names():
        g = costs.growth(f"run:{name}")
        assert g.low <= 1 <= g.high
    with pytest.raises(KeyError, match="benchmarks/scale.py bench"):
        costs.Plan(costs.REFERENCE_SIZES["ML-100K"]).runs(["my-own-model"])


def test_plan_scales_steps_as_documented():
    size = costs.REFERENCE_SIZES["half-million subset"]
    tests = costs.growth("tests").seconds(size)
    curve = costs.growth("curve").seconds(size)
    plan = costs.Plan(size).tests(231, 100_000).tests(462, 50_000, repeats=3)
    np.testing.assert_allclose(plan.frame()["seconds"], [tests, 3 * tests])
    plan = costs.Plan(size).subsets(1_000, 22, 7).subsets(500, 11, 77)
    np.testing.assert_allclose(plan.frame()["seconds"], [curve, curve / 4 * 11**0.41])
    # a run at the representative's reference size: the fit itself, times the splits
    plan = costs.Plan(size).runs(["pop", "bias"], splits=2)
    want = 2 * (costs.growth("run:pop").seconds(size) + costs.growth("run:bias").seconds(size))
    assert plan.seconds()[0] == pytest.approx(want)
    assert not plan.frame()["extrapolated"].any()
    big = costs.Plan(costs.REFERENCE_SIZES["ML-20M shape"]).runs(["iknn-20"])  # measured ≤ half
    assert big.frame()["extrapolated"].all()
    # counts that are not whole numbers, or negative, are refused by name
    for bad in (
        lambda p: p.tests(-1, 10),
        lambda p: p.tests(3, 2.5),
        lambda p: p.runs(["pop"], splits=0),
        lambda p: p.subsets(10, 3, 0),
        lambda p: p.evaluate(True, 3),
    ):
        with pytest.raises(ValueError, match="must be a whole number"):
            bad(costs.Plan(size))


def test_fitted_growth_matches_a_measured_record():
    # pop at ML-20M's shape, measured by the benchmark: the fit's prediction, times the
    # residual factor range it reports, must cover the measured CPU seconds (to rounding: the
    # record can be the one with the largest residual, so the bound itself)
    records = [r for f in RESULTS for r in json.loads(f.read_text())]
    rec = [
        r
        for r in records
        if r["phase"] == "runs"
        and r["system"] == "pop"
        and r["size"] == "s1"
        and r["status"] == "ok"
    ][-1]
    g = costs.growth("run:pop")
    t = g.seconds(costs.Size(rec["users"], rec["items"], rec["ratings"]))
    assert g.low * t * (1 - 1e-12) <= rec["cpu_s"] <= g.high * t * (1 + 1e-12)


def test_robustness_plan_counts_by_hand():
    size = costs.REFERENCE_SIZES["ML-100K"]
    plan = valcarce2018.cost_plan(
        size,
        ["pop", "bias", "wrmf-50"],
        metrics=["P", "AP"],
        cutoffs=[10, 100],
        sparsity_shares=[1.0, 0.5],
        n_samples=3,
        popularity_shares=[1.0, 0.9],
        n_permutations=1_000,
        threshold=4,
    )
    f = plan.frame().set_index("group")
    per_set = costs.growth("curve").seconds(size) * 3 / 22_000 * (4 / 7) ** 0.41
    # every incomplete test set once for the curves (2 shares × 3 masks + 2 popularity
    # shares), and each random mask once more for its per-user scores (two-level bootstrap)
    got = f.loc["incomplete judgments", "seconds"].tolist()
    assert got == pytest.approx([per_set * (2 * 3 + 2), per_set * 2 * 3])
    want_tests = costs.growth("tests").seconds(size) * (3 * 4) * 1_000 / (231 * 100_000)
    assert f.loc["significance", "seconds"] == pytest.approx(want_tests)
    assert plan.others


def test_assessing_plan_counts_folds():
    size = costs.REFERENCE_SIZES["ML-100K"]
    shares = {
        "ratings": [1, 0.5],
        "items": [1, 0.5],
        "users": [1, 0.5],
        "popular": [1, 0.9, 0.8],
        "large-users": [1, 0.5],
    }
    one = valcarce2020.cost_plan(
        size, ["pop", "bias"], folds=[0], shares=shares, n_samples=4, n_permutations=100
    ).frame()
    two = valcarce2020.cost_plan(
        size, ["pop", "bias"], folds=[0, 3], shares=shares, n_samples=4, n_permutations=100
    ).frame()
    sets = 2 * 2 * 4 + 3  # ratings and items, 4 masks a share; popular; users cost no pass
    curve = costs.growth("curve").seconds(size)
    assert one.loc[one["group"] == "incomplete judgments", "seconds"].iat[0] == pytest.approx(
        curve * sets * 2 / 22_000 * (9 / 7) ** 0.41
    )
    for group in ("recommender runs", "incomplete judgments"):
        assert two.loc[two["group"] == group, "seconds"].sum() == pytest.approx(
            2 * one.loc[one["group"] == group, "seconds"].sum()
        )


def test_execution_shows_the_estimate_and_sets_it_beside_the_time(monkeypatch, capsys):
    import pandas as pd

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj.data))
    ex = chapters.start("robustness", profile="quick", dataset="ml-100k", seed=0)
    frame = pd.DataFrame({"user": np.arange(10) % 5, "item": np.arange(10), "rating": 4})
    second = pd.DataFrame({"user": np.arange(30) % 6, "item": np.arange(30), "rating": 4})
    est = ex.estimate(
        lambda s: costs.Plan(s).runs(["pop"]).unmodelled("the bootstrap"),
        frame,
        second=("other", second, lambda s: costs.Plan(s).tests(10, 1_000)),
    )
    assert "What this page will cost" in shown[0] and "Not estimated: the bootstrap" in shown[0]
    assert "second dataset (other)" in shown[0]
    table = est.table()
    assert list(table.columns)[0].startswith("ml-100k (5 users, 10 items)")
    # the second dataset's part has its own size: the same in every column
    row = table.loc["second dataset (other)"]
    assert row.nunique() == 1
    assert ex.estimated == pytest.approx(est.seconds())
    assert "estimated beforehand" in ex.markdown()
    # the runs' share counts every dataset's runs (the second dataset's part has tests only)
    here = est.plans[est.here].frame()
    assert ex.estimated_runs == pytest.approx(here.loc[here["kind"] == "run:pop", "seconds"].sum())
    ex2 = chapters.start("robustness", profile="quick", dataset="ml-100k", seed=0)
    ex2.estimate(
        lambda s: costs.Plan(s).tests(10, 1_000),
        frame,
        second=("other", second, lambda s: costs.Plan(s).runs(["bias"])),
    )
    assert ex2.estimated_runs > 0 and ex2.estimated_runs < ex2.estimated


def test_a_reference_size_is_not_shown_twice(monkeypatch):
    monkeypatch.setattr("IPython.display.display", lambda obj: None)
    est = costs.show(lambda s: costs.Plan(s).runs(["pop"]), costs.REFERENCE_SIZES["ML-100K"])
    assert list(est.plans) == ["ML-100K (this dataset)", "half-million subset", "ML-20M shape"]
    assert est.here == "ML-100K (this dataset)"


def test_statistical_biases_plan_counts_the_roster_trainings():
    from recmeta.papers import bellogin2017 as b17

    size = costs.REFERENCE_SIZES["ML-100K"]
    # quick: wrmf-50 on the coin-flip and uniform splits of one seed, and on the simulated data
    # of α = 0 and 2 (every other α and the last): 4 trainings, as the run cache of a quick run
    # holds; full: 3 systems × (2 × 3 seeds + 5 of the 9 α)
    quick = b17.cost_plan(size, b17.Settings.resolve("quick", seed=0)).frame()
    assert list(quick["step"]) == ["runs: wrmf-50 × 4 splits"]
    full = b17.cost_plan(size, b17.Settings.resolve("full", seed=0)).frame()
    assert sorted(full["step"]) == [
        "runs: plsa-50 × 11 splits",
        "runs: uknn-30 × 11 splits",
        "runs: wrmf-50 × 11 splits",
    ]
    want = 11 * sum(
        costs.growth(f"run:{n}").seconds(size) for n in ("plsa-50", "uknn-30", "wrmf-50")
    )
    assert full["seconds"].sum() == pytest.approx(want)
    # the second dataset's quick run trains no roster system
    assert b17.cost_plan(size, b17.Settings.resolve("quick", secondary=True, seed=0)).frame().empty


def test_implicit_data_plans_only_the_systems_that_run_on_it():
    """On implicit feedback the systems that need ratings are left out of the plan, as the
    chapters leave them out of the study (robustness: the runs and the test pairs)."""
    from recmeta.papers import valcarce2018 as v
    from recmeta.recommenders import roster

    names = roster.names()
    runnable, left_out = roster.for_implicit(names, True)
    assert left_out, "the roster has systems that learn from ratings"
    kw = {"sparsity_shares": [1.0, 0.5], "n_samples": 2, "popularity_shares": [1.0]}
    kw["n_permutations"] = 10
    explicit = v.cost_plan(costs.Size(943, 1682, 100_000), names, **kw).frame()
    implicit = v.cost_plan(costs.Size(943, 1682, 100_000, implicit=True), names, **kw).frame()
    runs = implicit.loc[implicit["kind"].str.startswith("run:"), "kind"].str.removeprefix("run:")
    assert sorted(runs) == sorted(runnable)
    assert explicit["kind"].str.startswith("run:").sum() == len(names)
    frame = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1]})
    assert costs.Size.of(frame).implicit and not costs.Size.of(frame.assign(rating=4.0)).implicit


def test_the_book_layer_loads_without_lenskit_and_counts_runs_once_they_are_made():
    # the book's own process (Jupyter Book's extension) reads the profile and the estimates
    # through recmeta.book: LensKit and PyTorch stay out of it until a chapter trains something
    import subprocess

    code = (
        "import sys; from recmeta.book import chapters, costs, execution; "
        "print(execution.run_counts(), "
        "sorted(m for m in ('lenskit', 'torch') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "{'cached': 0, 'made': 0} []"
    from recmeta import recommenders
    from recmeta.book import execution

    assert execution.run_counts() == recommenders.RUN_COUNTS
    assert execution.run_counts() is not recommenders.RUN_COUNTS  # a copy, to subtract later


def test_runs_made_ahead_are_estimated_at_their_measured_share(monkeypatch):
    size = costs.REFERENCE_SIZES["ML-100K"]
    systems = ["pop", "wrmf-50", "flexmf-warp"]
    one_at_a_time = costs.Plan(size).runs(systems).seconds()[0]
    for jobs, share in (("1", 1.0), ("2", 0.71), ("8", 0.71)):
        monkeypatch.setenv("RECMETA_TRAIN_JOBS", jobs)
        got = costs.Plan(size).runs(systems, ahead=True).seconds()[0]
        assert got == pytest.approx(one_at_a_time * share)
        # the chapters that make their runs ahead say so in their plans
        plan = valcarce2018.cost_plan(
            size,
            systems,
            metrics=["P"],
            cutoffs=[10],
            sparsity_shares=[1.0],
            n_samples=1,
            popularity_shares=[1.0],
            n_permutations=10,
            threshold=4,
        ).frame()
        runs = plan.loc[plan["group"] == "recommender runs", "seconds"].sum()
        assert runs == pytest.approx(one_at_a_time * share)
        folds = valcarce2020.cost_plan(
            size,
            systems,
            folds=[0, 1],
            shares={"ratings": [1.0]},
            n_samples=1,
            n_permutations=10,
        ).frame()
        runs = folds.loc[folds["group"] == "recommender runs", "seconds"].sum()
        assert runs == pytest.approx(2 * one_at_a_time * share)


def test_a_measured_time_is_rounded_before_it_is_split_into_minutes():
    from recmeta.book.costs import clock

    assert clock(419.6) == "7 min 0 s"  # not "6 min 60 s"
    assert [clock(x) for x in (0.4, 89.4, 89.6, 150.0, 3_601.2)] == [
        "0 s", "89 s", "1 min 30 s", "2 min 30 s", "60 min 1 s"]
