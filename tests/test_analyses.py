"""The analysis cache: keys by content, hits without recomputation, refusals, damaged entries."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from recmeta import analyses


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv(analyses.ENV_VAR, str(tmp_path / "analyses"))
    return tmp_path / "analyses"


CALLS: list[object] = []


@analyses.analysis
def mean_of(frame: pd.DataFrame, column: str = "x") -> float:
    CALLS.append(column)
    return float(frame[column].mean())


@dataclasses.dataclass(frozen=True)
class Knobs:
    seeds: tuple[int, ...]
    alpha: float


class Study:
    def __init__(self, frame: pd.DataFrame, knobs: Knobs) -> None:
        self.frame, self.knobs, self.results, self.calls = frame, knobs, {}, 0

    def analysis_key(self) -> object:
        return (self.frame, self.knobs)

    @analyses.analysis_method
    def table(self, scale: float) -> pd.DataFrame:
        self.calls += 1
        out = self.frame[["x"]] * scale
        self.results["table"] = out
        self.results["note"] = f"scaled by {scale}"
        return out


def frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 4.0], "y": ["a", "b", "c"]})


def test_second_call_is_read_not_computed(root):
    CALLS.clear()
    before = dict(analyses.ANALYSIS_COUNTS)
    assert mean_of(frame()) == pytest.approx(7 / 3)
    assert mean_of(frame()) == pytest.approx(7 / 3)  # a new, equal frame: same key
    assert CALLS == ["x"]
    assert analyses.ANALYSIS_COUNTS["cached"] - before["cached"] == 1
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == 1
    entries = list(root.rglob("*.pkl"))
    assert len(entries) == 1 and not list(root.rglob("*.tmp"))


def test_any_change_of_an_input_is_a_new_key():
    base = analyses.token(frame())
    changed = [
        frame().assign(x=[1.0, 2.0, 4.5]),  # a value
        frame().assign(x=[1, 2, 4]),  # a dtype
        frame().rename(columns={"y": "z"}),  # a column name
        frame().set_axis([0, 1, 3]),  # the index
        frame()[["y", "x"]],  # the column order
    ]
    tokens = [analyses.token(f) for f in changed]
    assert base not in tokens and len(set(tokens)) == len(tokens)
    assert analyses.token(Knobs((1, 2), 0.1)) != analyses.token(Knobs((1, 2), 0.1 + 1e-17 + 1e-16))
    assert analyses.token(Knobs((1, 2), 0.1)) != analyses.token(Knobs((2, 1), 0.1))
    assert analyses.token(np.arange(4)) != analyses.token(np.arange(4).reshape(2, 2))
    assert analyses.token(1) != analyses.token(1.0) != analyses.token("1")


def test_mapping_and_set_order_do_not_matter():
    assert analyses.token({"a": 1, "b": 2}) == analyses.token({"b": 2, "a": 1})
    assert analyses.token({3, 1, 2}) == analyses.token({2, 3, 1})
    assert analyses.token([1, 2]) != analyses.token([2, 1])


def test_the_code_is_part_of_the_key(monkeypatch):
    one = analyses.digest("f", 1)
    monkeypatch.setattr(analyses, "code_version", lambda: "another version of the package")
    assert analyses.digest("f", 1) != one
    assert analyses.code_version() == "another version of the package"


def test_unknown_values_are_refused_by_name(root):
    class Opaque:
        pass

    with pytest.raises(TypeError, match="Opaque.*analysis_key"):
        analyses.token(Opaque())
    with pytest.raises(TypeError, match="local function"):
        analyses.token(lambda x: x)
    with pytest.raises(TypeError, match="Opaque"):
        mean_of(frame(), column=Opaque())  # type: ignore[arg-type]


def test_a_method_restores_the_results_it_wrote(root):
    a = Study(frame(), Knobs((1,), 0.5))
    first = a.table(2.0)
    b = Study(frame(), Knobs((1,), 0.5))
    second = b.table(2.0)
    assert (a.calls, b.calls) == (1, 0)
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    assert b.results.keys() == {"table", "note"} and b.results["note"] == "scaled by 2.0"
    c = Study(frame(), Knobs((1,), 0.6))  # other settings: computed
    c.table(2.0)
    assert c.calls == 1


def test_off_computes_every_time(monkeypatch, tmp_path):
    monkeypatch.setenv(analyses.ENV_VAR, "off")
    CALLS.clear()
    mean_of(frame())
    mean_of(frame())
    assert CALLS == ["x", "x"]
    assert analyses.cache_dir() is None


def test_a_damaged_entry_is_computed_again_and_replaced(root):
    CALLS.clear()
    mean_of(frame())
    (entry,) = root.rglob("*.pkl")
    entry.write_bytes(b"not a pickle")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert mean_of(frame()) == pytest.approx(7 / 3)
    assert any("could not be read" in str(w.message) for w in caught)
    assert CALLS == ["x", "x"]
    assert mean_of(frame()) == pytest.approx(7 / 3) and CALLS == ["x", "x"]


def test_the_page_says_how_many_analyses_it_read(root):
    from recmeta.book import execution

    record = execution.start("page", profile="quick", dataset=None, seed=1)
    assert "analysis cache" not in record.markdown()  # nothing read: nothing said
    mean_of(frame().assign(x=[5.0, 6.0, 7.0]))
    mean_of(frame().assign(x=[5.0, 6.0, 7.0]))
    facts = record.facts()
    assert (facts["analyses_cached"], facts["analyses_computed"]) == (1, 1)
    assert "1 of 2 analyses read from the analysis cache" in record.markdown()


def test_a_package_ledger_is_read_back_and_a_test_ledger_is_not_cached(root):
    from recmeta import papers
    from recmeta.ledger import Claim, Ledger, not_reproduced

    ledger = papers.get("multigraded-relevance")
    before = dict(analyses.ANALYSIS_COUNTS)
    first = ledger.evaluate({}, dataset="ml-100k", profile="quick", strict=False)
    again = ledger.evaluate({}, dataset="ml-100k", profile="quick", strict=False)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert analyses.ANALYSIS_COUNTS["cached"] - before["cached"] == 1
    row = ledger.row(first["claim"].iloc[0], {}, dataset="ml-100k", profile="quick", strict=False)
    assert row["verdict"] == first["verdict"].iloc[0]
    # a row is keyed by the results its claim needs: one it cannot read changes nothing, and
    # an evaluation reads back the rows the chapter's text cited before it
    claim = first["claim"].iloc[1]
    cited = ledger.row(claim, {}, dataset="ml-1m", profile="quick", strict=False)
    before = dict(analyses.ANALYSIS_COUNTS)
    read = ledger.row(claim, {"unread": 1}, dataset="ml-1m", profile="quick", strict=False)
    assert pd.Series(read).equals(pd.Series(cited))  # NaN equal to NaN
    assert analyses.ANALYSIS_COUNTS["cached"] - before["cached"] == 1
    before = dict(analyses.ANALYSIS_COUNTS)
    whole = ledger.evaluate({}, dataset="ml-1m", profile="quick", strict=False)
    assert analyses.ANALYSIS_COUNTS["cached"] - before["cached"] == 1  # the cited row
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == len(whole)  # rest + frame
    assert whole.set_index("claim").loc[claim, "verdict"] == cited["verdict"]
    # a claim whose rule is not the package's code: its ledger has no key, nothing is stored
    own = Ledger("a-test-chapter")
    own.add(Claim(id="t.one", chapter="a-test-chapter", statement="s", source="§1", rule="r",
                  evaluate=lambda r: not_reproduced("a test")))
    assert own.analysis_key() is None
    stored = len(list(root.rglob("*.pkl")))
    own.evaluate({}, dataset="ml-100k", profile="quick")
    assert len(list(root.rglob("*.pkl"))) == stored


def test_a_ledger_hashes_each_result_once_per_evaluation(root, monkeypatch):
    from recmeta.ledger import Claim, Ledger, not_reproduced

    own = Ledger("a-test-chapter")
    for k in range(3):
        own.add(Claim(id=f"t.{k}", chapter="a-test-chapter", statement="s", source="§1",
                      rule="r", needs=("big",),
                      evaluate=lambda r: not_reproduced(f"{len(r['big'])} rows")))
    # its rules are this file's, which the key does not cover: give the ledger a key
    monkeypatch.setattr(Ledger, "analysis_key", lambda self: ("a-test-chapter",))
    hashed: list[int] = []
    token = analyses.token
    monkeypatch.setattr(analyses, "token", lambda obj: hashed.append(id(obj)) or token(obj))
    big = pd.DataFrame({"x": np.arange(1_000)})
    results = {"big": big, "small": 1}
    first = own.evaluate(results, dataset="ml-100k", profile="quick")
    assert hashed.count(id(big)) == 1  # for the evaluation's key and all three rows
    assert set(first["reason"]) == {"1000 rows"}
    # each row is stored under the result's digest: a row asked for alone is read back
    before = dict(analyses.ANALYSIS_COUNTS)
    row = own.row("t.1", {"big": big.copy()}, dataset="ml-100k", profile="quick")
    assert analyses.ANALYSIS_COUNTS["cached"] - before["cached"] == 1
    assert row["reason"] == "1000 rows"
    # another content under the same name is another key
    before = dict(analyses.ANALYSIS_COUNTS)
    row = own.row("t.1", {"big": big.iloc[:10]}, dataset="ml-100k", profile="quick")
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == 1
    assert row["reason"] == "10 rows"
    # with the cache off nothing is keyed, so nothing is hashed; the rows are the same
    monkeypatch.setenv(analyses.ENV_VAR, "off")
    hashed.clear()
    before = dict(analyses.ANALYSIS_COUNTS)
    off = own.evaluate(results, dataset="ml-100k", profile="quick")
    alone = own.row("t.2", results, dataset="ml-100k", profile="quick")
    assert hashed == []
    # the evaluation, its three rows and the row asked for alone, each computed
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == 5
    pd.testing.assert_frame_equal(off, first)
    assert alone["claim"] == "t.2" and alone["reason"] == "1000 rows"


@dataclasses.dataclass(frozen=True)
class Plan:
    size: int

    @analyses.analysis_method
    def grid(self, step: int) -> list[int]:
        CALLS.append(("grid", self.size, step))
        return list(range(0, self.size, step))


def test_a_dataclass_method_is_keyed_by_its_fields(root):
    CALLS.clear()
    assert Plan(10).grid(3) == Plan(10).grid(3) == [0, 3, 6, 9]
    assert Plan(12).grid(3) == [0, 3, 6, 9]
    assert CALLS == [("grid", 10, 3), ("grid", 12, 3)]


def test_a_chapter_computes_with_lenskits_thread_limits_from_its_start():
    """Set at the chapter's start, not at its first training: an analysis then sums its matrix
    products the same way whether the runs were trained or read from the run cache."""
    import os
    import subprocess
    import sys

    script = (
        "from threadpoolctl import threadpool_info\n"
        "from lenskit.config import lenskit_config\n"
        "from recmeta.book import execution\n"
        "execution.start('page', profile='quick')\n"
        "blas = {i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}\n"
        "print(blas == {lenskit_config().parallel.num_backend_threads})\n"
    )
    limits = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in limits}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.stdout.strip().endswith("True"), out.stdout + out.stderr
