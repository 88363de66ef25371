"""The replication ledger: estimates, verdict rules, claims, ledgers, the store and ``recmeta claims``."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta import cli, papers
from recmeta.ledger import (
    COLUMNS,
    Claim,
    Estimate,
    Ledger,
    MissingResult,
    Outcome,
    Verdict,
    counts,
    format_estimate,
    not_reproduced,
    order_rule,
    rank_rule,
    sign_rule,
    store,
    to_markdown,
    top_set,
    value_rule,
    Margin,
)

A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED


# ---- estimates --------------------------------------------------------------------------------


def test_estimate_kinds_and_validation():
    e = Estimate.exact(0.5)
    assert (e.low, e.high, e.has_interval, e.width) == (0.5, 0.5, True, 0.0)
    p = Estimate.point(0.5)
    assert (p.low, p.high, p.has_interval, p.width) == (None, None, False, None)
    with pytest.raises(ValueError, match="low > high"):
        Estimate(0.5, 0.6, 0.4)
    with pytest.raises(ValueError, match="both ends"):
        Estimate(0.5, 0.4, None)
    with pytest.raises(ValueError, match="finite"):
        Estimate(float("nan"))
    with pytest.raises(ValueError, match="level"):
        Estimate.from_samples([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError, match="NaN"):
        Estimate.bootstrap_mean([1.0, np.nan, 2.0])


def test_bootstrap_mean_is_scipy_bootstrap():
    x = np.random.default_rng(7).gamma(0.5, size=300)
    ours = Estimate.bootstrap_mean(x, level=0.9, seed=11, n_resamples=2000)
    ref = stats.bootstrap((x,), np.mean, n_resamples=2000, confidence_level=0.9,
                          rng=np.random.default_rng(11)).confidence_interval
    assert ours.value == pytest.approx(x.mean())
    assert (ours.low, ours.high) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    pct = Estimate.bootstrap_mean(x, seed=3, n_resamples=500, ci_method="percentile")
    ref = stats.bootstrap((x,), np.mean, n_resamples=500, method="percentile",
                          rng=np.random.default_rng(3)).confidence_interval
    assert (pct.low, pct.high) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    assert "bootstrap" in ours.method and "90 %" in ours.method


def test_bootstrap_diff_is_the_bootstrap_of_paired_differences():
    rng = np.random.default_rng(1)
    a, b = rng.random(200), rng.random(200)
    d = Estimate.bootstrap_diff(a, b, seed=5, n_resamples=1000)
    m = Estimate.bootstrap_mean(a - b, seed=5, n_resamples=1000)
    assert (d.value, d.low, d.high) == (m.value, m.low, m.high)
    assert "paired" in d.method
    with pytest.raises(ValueError, match="length"):
        Estimate.bootstrap_diff(a, b[:-1])


def test_constant_values_give_a_zero_width_interval():
    e = Estimate.bootstrap_mean(np.full(50, 0.25))
    assert (e.value, e.low, e.high) == (0.25, 0.25, 0.25)
    assert Estimate.mean_se([2.0, 2.0, 2.0]).width == 0.0


def test_from_samples_and_mean_se():
    x = np.arange(101, dtype=float)
    e = Estimate.from_samples(x, level=0.9)
    assert (e.value, e.low, e.high) == (50.0, pytest.approx(5.0), pytest.approx(95.0))
    with pytest.raises(TypeError):
        Estimate.from_samples(x, value=3.0)  # a point with replicates: from_replicates
    # 81 of 101 replicates (0 to 80) below the point 80.5: z0 = Φ⁻¹(81/101), ends at
    # Φ(2 z0 ∓ 1.645), and quantile q of 0..100 is 100 q
    b = Estimate.from_replicates(80.5, x, level=0.9)
    z0 = stats.norm.ppf(81 / 101)
    lo, hi = stats.norm.cdf(2 * z0 - stats.norm.ppf(0.95)), stats.norm.cdf(2 * z0 + 1.6448536)
    assert (b.value, b.low) == (80.5, pytest.approx(100 * lo))
    # the upper level 0.99958 lies above 101/102: beyond the largest replicate, which is given
    assert hi > 101 / 102 and (b.high, b.high_open, b.low_open) == (100.0, True, False)
    assert "BC" in b.method and b.low > e.low  # moved towards the side the point sits on
    v = np.array([0.31, 0.35, 0.29, 0.33, 0.30])
    t = Estimate.mean_se(v, level=0.95)
    half = stats.t.ppf(0.975, df=4) * v.std(ddof=1) / np.sqrt(5)
    assert (t.low, t.high) == (pytest.approx(v.mean() - half), pytest.approx(v.mean() + half))


def test_format_estimate_shows_significant_digits_and_resolves_the_interval():
    assert format_estimate(Estimate(0.0058312, 0.0051, 0.00661)) == "0.00583 [0.00510, 0.00661]"
    # a narrow interval gets enough decimals to show two digits of its width
    assert format_estimate(Estimate(0.58123, 0.58091, 0.58154)) == "0.58123 [0.58091, 0.58154]"
    assert format_estimate(Estimate.point(12.345)) == "12.3"
    assert format_estimate(None) == "—"


# ---- verdict rules ----------------------------------------------------------------------------


M01 = Margin(0.005, 0.095, "hand-made")


def test_value_rule_agrees_only_when_our_whole_interval_is_inside_the_margin():
    out = value_rule(0.62, Estimate(0.58, 0.55, 0.66), M01)
    assert out.verdict is A and "0.62" in out.reason and out.margin == pytest.approx(0.1)
    assert out.rule == "value"
    # the paper's value inside our interval is not enough: the interval must fit in the band
    assert value_rule(0.62, Estimate(0.58, 0.50, 0.76), M01).verdict is I


def test_value_rule_a_wider_interval_never_turns_a_verdict_into_agrees():
    for paper in np.linspace(0.3, 0.9, 61):
        previous = None
        for half in np.linspace(0.0, 0.5, 26):
            v = value_rule(paper, Estimate(0.6, 0.6 - half, 0.6 + half), M01).verdict
            if previous is not None and previous is not A:
                assert v is not A
            if previous is I:
                assert v is I
            previous = v
    # without an interval nothing is concluded, however close the point
    out = value_rule(0.0077, Estimate.point(0.0077), Margin(0.00005, 0.0005, "hand-made"))
    assert out.verdict is I and "no interval" in out.reason


def test_value_rule_differs_outside_the_margin_and_says_on_which_side():
    m = Margin.printed(0.0077, 0.0005, "hand-made")
    assert m.rounding == pytest.approx(0.00005) and m.total == pytest.approx(0.00055)
    out = value_rule(0.0077, Estimate(0.0058, 0.0051, 0.0066), m)
    assert out.verdict is D and "below" in out.reason
    assert "above" in value_rule(0.3, Estimate(0.58, 0.50, 0.66), M01).reason
    # exact values: agree within the margin, differ beyond it
    assert value_rule(0.25, Estimate.exact(0.2504), Margin(0.0005, 0, "r")).verdict is A
    assert value_rule(0.25, Estimate.exact(0.2510), Margin(0.0005, 0, "r")).verdict is D
    with pytest.raises(ValueError, match="rounding"):
        Margin(-1, 0.1, "x")
    with pytest.raises(ValueError, match="reason"):
        Margin(0.1, 0.1, " ")
    with pytest.raises(TypeError, match="Margin"):
        value_rule(0.2, Estimate(0.2, 0.1, 0.3), 0.1)  # type: ignore[arg-type]


def test_sign_rule_three_ways():
    assert sign_rule(Estimate(0.02, 0.01, 0.03), "positive").verdict is A
    assert sign_rule(Estimate(-0.02, -0.03, -0.01), "negative").verdict is A
    out = sign_rule(Estimate(-0.02, -0.03, -0.01), "positive")
    assert out.verdict is D and "below 0" in out.reason
    # a difference whose band contains 0 is inconclusive, whichever side its point lies on
    for est in (Estimate(0.01, -0.005, 0.025), Estimate(-0.01, -0.025, 0.005), Estimate(0.01, 0.0, 0.02)):
        for expected in ("positive", "negative"):
            assert sign_rule(est, expected).verdict is I
    assert sign_rule(Estimate.point(0.5), "positive").verdict is I
    assert sign_rule(Estimate.exact(0.5), "positive").verdict is A
    with pytest.raises(ValueError):
        sign_rule(Estimate.exact(0.5), "up")  # type: ignore[arg-type]


def test_order_rule_unique_best():
    est = {"P": Estimate(0.93, 0.91, 0.95), "R": Estimate(0.85, 0.82, 0.88), "nDCG": Estimate(0.79, 0.76, 0.81)}
    out = order_rule(est, "P")
    assert out.verdict is A and out.ours == est["P"] and out.detail == "P > R > nDCG"
    out = order_rule(est, "nDCG")
    assert out.verdict is D and "expects nDCG" in out.reason
    assert order_rule(est, {"nDCG", "P"}).verdict is A
    # lower is better: nDCG is best, clear of R
    assert order_rule(est, "nDCG", higher_is_better=False).verdict is A


def test_rank_rule_checks_an_exact_set_jointly():
    # o1 is clearly above m2, m1 overlaps everything, o2 overlaps m2: each member's range alone
    # leaves "m1 and m2 are the two best" open, but o1 must then be in the top two: it differs
    est = {"o1": Estimate(10.0, 9.6, 10.4), "m1": Estimate(7.0, 4.8, 9.8),
           "m2": Estimate(5.0, 4.6, 5.4), "o2": Estimate(5.2, 4.8, 5.6)}
    out = rank_rule(est, ["m1", "m2"], 1, 2)
    assert out.verdict is D and "o1 is separated above m2" in out.reason
    # the same intervals, a claim that is not an exact set (two members in three ranks): open
    assert rank_rule(est, ["m1", "m2"], 1, 3).verdict is I
    # lower is better: the mirror image
    low = {k: Estimate(-e.value, -e.high, -e.low) for k, e in est.items()}
    assert rank_rule(low, ["m1", "m2"], 1, 2, higher_is_better=False).verdict is D
    # and when the members are clear of everyone else, it agrees, with the given value as ours
    clear = {**est, "o1": Estimate(3.0, 2.8, 3.2), "o2": Estimate(2.0, 1.8, 2.2)}
    out = rank_rule(clear, ["m1", "m2"], 1, 2, value=clear["m1"])
    assert out.verdict is A and out.ours == clear["m1"]


def test_order_rule_tie_at_the_top():
    est = {"R": Estimate(0.92, 0.89, 0.95), "P": Estimate(0.93, 0.91, 0.95), "nDCG": Estimate(0.80, 0.77, 0.83)}
    assert top_set(est) == ("P", "R")
    out = order_rule(est, "R")  # R is not our best, but tied with it
    assert out.verdict is I
    assert "P and R tie at the top" in out.reason and out.detail == "P ≈ R > nDCG"
    out = order_rule(est, "nDCG")
    assert out.verdict is D and "without the expected nDCG" in out.reason
    # point estimates (no interval) cannot be told apart
    pts = {"P": Estimate.point(0.9), "R": Estimate.point(0.5)}
    assert top_set(pts) == ("P", "R") and order_rule(pts, "P").verdict is I
    with pytest.raises(ValueError, match="no estimate"):
        order_rule(est, "MRR")
    with pytest.raises(ValueError, match="two items"):
        order_rule({"P": Estimate.exact(1.0)}, "P")


def test_outcome_needs_a_reason_and_not_reproduced():
    with pytest.raises(ValueError):
        Outcome(A, None, " ")
    out = not_reproduced("the paper's LibraryThing data is not public")
    assert out.verdict is N and out.ours is None
    assert Outcome("agrees", None, "x").verdict is A


# ---- claims and ledgers -----------------------------------------------------------------------


def _ledger(chapter: str = "demo-chapter") -> Ledger:
    led = Ledger(chapter, paper="demo2020")

    @led.claim("demo2020.eq3.random-precision", statement="random precision is 0.0077",
               source="§3, eq. 3", paper_value=0.0077, paper_dataset="ML-1M",
               rule="paper's value inside our bootstrap interval", needs=("random_p",))
    def _(results):
        return value_rule(0.0077, Estimate.bootstrap_mean(results["random_p"], seed=0, n_resamples=500),
                          Margin.printed(0.0077, 0.0005, "hand-made"))

    @led.claim("demo2020.fig5.precision-most-robust", statement="precision is the most robust metric",
               source="§5.1, Fig. 5a", paper_value="P", paper_dataset="ML-1M",
               rule="order rule on mean τ", needs=("tau",))
    def _(results):
        return order_rule({k: Estimate.from_samples(v) for k, v in results["tau"].items()}, "P")

    led.add(Claim("demo2020.tab3.librarything", chapter, "LibraryThing agrees", "Table 3", "not run",
                  lambda r: not_reproduced("LibraryThing is not available here")))
    return led


def _results() -> dict:
    rng = np.random.default_rng(0)
    return {"random_p": rng.normal(0.0058, 0.002, 400),
            "tau": {"P": rng.normal(0.9, 0.01, 50), "R": rng.normal(0.7, 0.01, 50)}}


def test_a_claim_missing_its_result_is_not_reproduced_and_names_it():
    frame = _ledger().evaluate({"tau": _results()["tau"]}, dataset="ml-100k", profile="quick")
    row = frame.set_index("claim").loc["demo2020.eq3.random-precision"]
    assert row["verdict"] == N.value and "'random_p'" in row["reason"]
    # the other claims are still evaluated
    assert frame.set_index("claim").loc["demo2020.fig5.precision-most-robust", "verdict"] == A.value
    assert _ledger()["demo2020.eq3.random-precision"].outcome({"random_p": None}).verdict is N


def test_a_claim_reads_only_what_it_declares():
    led = Ledger("demo-chapter")
    led.add(Claim("x.undeclared", "demo-chapter", "s", "src", "rule",
                  lambda r: value_rule(1.0, Estimate.exact(r["other"]), M01), needs=("declared",)))
    with pytest.raises(MissingResult, match="'other'"):
        led.evaluate({"declared": 1, "other": 1.0}, dataset="ml-100k", profile="full")
    frame = led.evaluate({"declared": 1, "other": 1.0}, dataset="ml-100k", profile="full", strict=False)
    assert frame.loc[0, "verdict"] == N.value and "MissingResult" in frame.loc[0, "reason"]


def test_ledger_rejects_duplicates_and_other_chapters():
    led = _ledger()
    with pytest.raises(ValueError, match="already has"):
        led.add(led["demo2020.tab3.librarything"])
    with pytest.raises(ValueError, match="belongs to chapter"):
        led.add(Claim("y", "other", "s", "src", "rule", lambda r: not_reproduced("x")))
    with pytest.raises(ValueError, match="claim id"):
        Claim("bad id", "c", "s", "src", "rule", lambda r: not_reproduced("x"))
    with pytest.raises(KeyError, match="no claim"):
        led["nope"]


def test_ledger_evaluate_frame():
    frame = _ledger().evaluate(_results(), dataset="ml-1m", profile="full")
    assert list(frame.columns) == list(COLUMNS)
    assert {"chapter", "claim", "statement", "source", "paper_value", "paper_dataset", "ours", "low", "high",
            "verdict", "reason", "dataset", "profile", "ours_text"} <= set(frame.columns)
    assert frame["claim"].tolist() == _ledger().ids
    assert frame[["ours", "low", "high"]].dtypes.eq(float).all()
    first = frame.iloc[0]
    assert first["verdict"] == D.value and first["low"] < first["ours"] < first["high"] < 0.0077
    second = frame.iloc[1]
    assert second["ours_text"] == "P > R" and second["paper_value"] == "P"
    third = frame.iloc[2]
    assert third["verdict"] == N.value and np.isnan(third["ours"])
    assert (frame["dataset"] == "ml-1m").all() and (frame["profile"] == "full").all()
    assert frame["kind"].tolist() == ["replication", "replication", "transfer"]
    assert frame["rule"].tolist() == ["value", "order", "none"]
    assert counts(frame).to_dict() == {"agrees": 1, "differs": 1, "inconclusive": 0, "holds": 0,
                                       "fails": 0, "shown, not graded": 0,
                                       "not reproduced here": 1}
    # on other data the paper's ML-1M magnitude is shown, not graded; the order is still graded
    other = _ledger().evaluate(_results(), dataset="ml-100k", profile="full")
    assert other["verdict"].tolist() == ["shown, not graded", "agrees", "not reproduced here"]
    assert other["kind"].tolist() == ["transfer", "transfer", "transfer"]
    assert other.loc[0, "margin"] == pytest.approx(0.00055) and "ML-1M" in other.loc[0, "reason"]
    with pytest.raises(ValueError, match="profile"):
        _ledger().evaluate(_results(), dataset="ml-100k", profile="fast")


def test_to_markdown_table():
    frame = _ledger().evaluate(_results(), dataset="ml-1m", profile="full")
    md = Ledger.to_markdown(frame)
    lines = md.strip().splitlines()
    assert lines[0] == "| Claim | Paper | Ours | Verdict | Why |"
    assert len(lines) == 2 + len(frame)
    assert "0.0077 ± 0.00055 (ML-1M)" in lines[2] and "differs" in lines[2]
    assert "| P > R |" in lines[3]
    assert "| — |" in lines[4]  # no value for the claim not reproduced
    both = pd.concat([frame, frame.assign(chapter="other", profile="quick")])
    assert to_markdown(both).startswith("| Chapter | Claim |")


# ---- the registry -----------------------------------------------------------------------------


@pytest.fixture
def registered():
    led = papers.register(_ledger())
    yield led
    papers.unregister(led.chapter)


def test_registry(registered):
    assert papers.get("demo-chapter") is registered
    assert "demo-chapter" in papers.ledgers()
    papers.register(registered)  # the same ledger twice is harmless
    with pytest.raises(ValueError, match="already has a ledger"):
        papers.register(_ledger())
    with pytest.raises(KeyError, match="demo-chapter"):
        papers.get("no-such-chapter")


def test_paper_modules_are_imported_lazily(tmp_path, monkeypatch):
    (tmp_path / "demo_paper_module.py").write_text(textwrap.dedent("""
        from recmeta import papers
        from recmeta.ledger import Ledger, not_reproduced, Claim

        LEDGER = papers.register(Ledger("lazy-chapter"))
        LEDGER.add(Claim("lazy.c1", "lazy-chapter", "s", "src", "rule", lambda r: not_reproduced("x")))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(papers, "PAPER_MODULES", ["demo_paper_module"])
    try:
        assert papers.get("lazy-chapter").ids == ["lazy.c1"]
    finally:
        papers.unregister("lazy-chapter")


# ---- the store ----------------------------------------------------------------------------------


def test_store_round_trip(tmp_path):
    frame = _ledger().evaluate(_results(), dataset="ml-100k", profile="full")
    path = store.save(frame, chapter="demo-chapter", dataset="ml-100k", profile="full", root=tmp_path)
    assert path == tmp_path / "demo-chapter" / "ml-100k--full.json"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    doc = json.loads(path.read_text())
    assert {"chapter", "dataset", "profile", "recmeta_version", "written", "records"} <= set(doc)
    back = store.load(root=tmp_path)
    pd.testing.assert_frame_equal(back[list(COLUMNS)], frame, check_dtype=False)
    assert back["paper_value"].tolist() == [0.0077, "P", None]
    # a re-run replaces the file
    store.save(frame.iloc[:1], chapter="demo-chapter", dataset="ml-100k", profile="full", root=tmp_path)
    assert len(store.load(root=tmp_path)) == 1


def test_store_write_is_atomic(tmp_path, monkeypatch):
    frame = _ledger().evaluate(_results(), dataset="ml-100k", profile="full")
    path = store.save(frame, chapter="demo-chapter", dataset="ml-100k", profile="full", root=tmp_path)
    before = path.read_bytes()

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(store.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        store.save(frame.iloc[:1], chapter="demo-chapter", dataset="ml-100k", profile="full", root=tmp_path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # the temporary file is removed
    assert path.read_bytes() == before  # and the stored ledger is untouched


def test_store_keeps_datasets_and_profiles_apart(tmp_path):
    led = _ledger()
    for ds in ("ml-100k", "ml-latest-small"):
        for prof in ("full", "quick"):
            store.save(led.evaluate(_results(), dataset=ds, profile=prof),
                       chapter="demo-chapter", dataset=ds, profile=prof, root=tmp_path)
    assert len(store.available(tmp_path)) == 4
    part = store.load(dataset="ml-latest-small", profile="quick", root=tmp_path)
    assert len(part) == len(led)
    assert set(part["dataset"]) == {"ml-latest-small"} and set(part["profile"]) == {"quick"}
    assert store.load(chapter="other", root=tmp_path).empty
    assert list(store.load(chapter="other", root=tmp_path).columns)[:len(COLUMNS)] == list(COLUMNS)
    with pytest.raises(ValueError, match="chapter"):
        store.save(led.evaluate(_results(), dataset="x", profile="full"), chapter="other",
                   dataset="x", profile="full", root=tmp_path)


def test_store_keys_of_csv_paths(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ka = store.dataset_key(tmp_path / "a" / "my ratings.csv")
    kb = store.dataset_key(str(tmp_path / "b" / "my ratings.csv"))
    assert ka != kb and ka.startswith("my_ratings-") and all(c.isalnum() or c in "._-" for c in ka)
    monkeypatch.chdir(tmp_path / "a")
    assert store.dataset_key("my ratings.csv") == ka  # relative paths resolve against the current folder
    assert store.dataset_key("ml-100k") == "ml-100k"
    csv = str(tmp_path / "a" / "my ratings.csv")
    frame = _ledger().evaluate(_results(), dataset=csv, profile="quick")
    path = store.save(frame, chapter="demo-chapter", dataset=csv, profile="quick", root=tmp_path / "store")
    assert path.name == f"{ka}--quick.json"
    back = store.load(dataset=csv, root=tmp_path / "store")
    assert set(back["dataset"]) == {csv}


def test_store_root_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    assert store.results_dir() == tmp_path
    monkeypatch.delenv(store.ENV_VAR)
    assert store.results_dir().parts[-2:] == ("_cache", "results")


# ---- recmeta claims -----------------------------------------------------------------------------


@pytest.fixture
def stored(tmp_path, monkeypatch, registered):
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    for prof in ("full", "quick"):
        store.save(registered.evaluate(_results(), dataset="ml-100k", profile=prof),
                   chapter="demo-chapter", dataset="ml-100k", profile=prof)
    return tmp_path


def test_claims_json(stored, capsys):
    assert cli.main(["claims", "--json", "--quick"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 3
    required = {"chapter", "claim", "source", "paper_value", "ours", "low", "high", "verdict",
                "statement", "reason", "dataset", "profile", "kind", "rule", "margin", "data_free",
                "tie_sensitive"}
    assert all(required <= set(r) for r in records)
    assert {r["profile"] for r in records} == {"quick"}
    assert records[0]["paper_value"] == 0.0077 and records[0]["verdict"] == "shown, not graded"
    assert records[0]["kind"] == "transfer" and records[0]["rule"] == "value"
    assert records[0]["margin"] == pytest.approx(0.00055) and records[0]["data_free"] is False
    assert records[2]["ours"] is None


def test_claims_table(stored, capsys):
    assert cli.main(["claims", "demo-chapter", "--dataset", "ml-100k"]) == 0
    out = capsys.readouterr().out
    assert "demo-chapter — dataset ml-100k, profile full" in out
    assert "demo2020.fig5.precision-most-robust" in out and "P > R" in out
    assert "transfer: 1 agrees; 1 shown, not graded; 1 not reproduced here" in out


def test_claims_missing_says_how_to_produce_it(stored, capsys):
    assert cli.main(["claims", "demo-chapter", "--dataset", "ml-latest-small", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "recmeta run demo-chapter --dataset ml-latest-small --quick" in err
    assert cli.main(["claims", "robustness"]) == 2  # a chapter of the book with nothing stored
    err = capsys.readouterr().err
    assert "recmeta run robustness" in err and "make book" in err


def test_claims_unknown_chapter(stored, capsys):
    assert cli.main(["claims", "no-such-chapter"]) == 2
    err = capsys.readouterr().err
    assert "no-such-chapter" in err and "demo-chapter" in err


# ---- the one renderer from a ledger row to a sentence ---------------------------------------

def _rendered_frame():
    led = Ledger("demo-render", paper=None)

    @led.claim("demo.value", statement="A value", source="§1", paper_value=0.9,
               paper_dataset="ML-1M", rule="value rule", needs=("x",))
    def _(r):
        return value_rule(0.9, Estimate(0.91, 0.87, 0.95, "bootstrap"), M01)

    @led.claim("demo.absent", statement="Not here", source="§2", paper_value=3,
               paper_dataset="LibraryThing", rule="not run", needs=())
    def _(r):
        return not_reproduced("LibraryThing is not available")

    return led, led.evaluate({"x": 1}, dataset="ml-100k", profile="quick")


def test_sentence_full_and_parts():
    from recmeta.ledger import row_of, sentence

    led, frame = _rendered_frame()
    row = row_of(frame, "demo.value")
    full = sentence(row)
    assert full.startswith("*A value* (§1); the paper's 0.9 ± 0.10 (ML-1M); ours (ml-100k): 0.910 [0.870, 0.950]")
    assert "(bootstrap)" in full and f"**{row['verdict']}**: {row['reason']}" in full
    assert full.endswith(".")
    short = sentence(row, parts=("ours", "verdict"))
    assert short == f"ours (ml-100k): 0.910 [0.870, 0.950]: **{row['verdict']}**."
    # the single-claim row equals the frame's row
    again = led.row("demo.value", {"x": 1}, dataset="ml-100k", profile="quick")
    assert again["verdict"] == row["verdict"] and again["ours"] == row["ours"]


def test_sentence_not_reproduced_always_gives_reason_and_bad_parts_refused():
    from recmeta.ledger import row_of, sentence

    _, frame = _rendered_frame()
    text = sentence(row_of(frame, "demo.absent"), parts=("paper",))
    assert text == "the paper's 3 (LibraryThing): **not reproduced here**: LibraryThing is not available."
    with pytest.raises(ValueError, match="unknown sentence part"):
        sentence(row_of(frame, "demo.absent"), parts=("nope",))
    with pytest.raises(KeyError, match="no claim 'x'"):
        row_of(frame, "x")


def test_an_open_end_never_supports_a_verdict():
    from recmeta.ledger import Estimate, Margin, Verdict, value_rule
    from recmeta.ledger.rules import clearly_above, equivalence_rule, sign_rule

    margin = Margin(0.0, 0.1, "test")
    inside = Estimate(0.5, 0.45, 0.55, "BC")
    assert value_rule(0.5, inside, margin).verdict is Verdict.AGREES
    # the same numbers with the upper end beyond every replicate: no longer inside
    open_high = Estimate(0.5, 0.45, 0.55, "BC", high_open=True)
    out = value_rule(0.5, open_high, margin)
    assert out.verdict is Verdict.INCONCLUSIVE
    assert "more resamples" in out.reason and ">0.55" in out.reason
    # an open end pointing away from the band keeps a "differs" its other end establishes
    above = Estimate(0.8, 0.7, 0.9, "BC", high_open=True)
    assert value_rule(0.5, above, margin).verdict is Verdict.DIFFERS
    below = Estimate(0.2, 0.1, 0.3, "BC", high_open=True)
    assert value_rule(0.5, below, margin).verdict is Verdict.INCONCLUSIVE
    # the sign rule and the order read the open end as unbounded
    assert sign_rule(Estimate(0.3, 0.1, 0.5, "BC"), "positive").verdict is Verdict.AGREES
    lower_open = Estimate(0.3, 0.1, 0.5, "BC", low_open=True)
    assert sign_rule(lower_open, "positive").verdict is Verdict.INCONCLUSIVE
    assert clearly_above(Estimate(1.0, 0.9, 1.1), Estimate(0.5, 0.4, 0.6))
    assert not clearly_above(Estimate(1.0, 0.9, 1.1), Estimate(0.5, 0.4, 0.6, high_open=True))
    assert equivalence_rule(open_high.shifted(0.5), 0.1).verdict is Verdict.INCONCLUSIVE
    assert open_high.shifted(0.5).high_open and open_high.unresolved == "high"
    with pytest.raises(ValueError, match="open end needs an interval"):
        Estimate(0.5, low_open=True)


def test_from_replicates_marks_the_end_beyond_every_replicate():
    from recmeta.ledger import Estimate

    reps = np.arange(99) / 98.0
    est = Estimate.from_replicates(reps[94] + 1e-9, reps)
    assert est.high_open and not est.low_open and est.high == 1.0
    assert est.reach == (est.low, np.inf)
    assert str(est).endswith(">1.000]")
