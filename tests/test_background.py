"""A study's steps computed in a worker equal the steps computed here, and count once."""

from __future__ import annotations

import os
import pickle
import time

import numpy as np
import pandas as pd
import pytest

from recmeta import analyses
from recmeta.book import background


class Toy:
    """A study of three steps; each records the process that computed it."""

    def __init__(self, values: np.ndarray, *, pause: float = 0.0, fail: str = "") -> None:
        self.values, self.pause, self.fail = values, pause, fail
        self.results: dict[str, object] = {}

    def analysis_key(self) -> tuple[object, ...]:
        return (self.values, self.pause, self.fail)

    def steps(self) -> list[str]:
        return ["total", "spread", "largest"]

    def _step(self, name: str, value: float) -> float:
        if name == self.fail:
            raise ArithmeticError(f"{name} broke on purpose")
        if name == "total":
            time.sleep(self.pause)
        self.results[name] = value
        self.results[f"{name} pid"] = os.getpid()
        return value

    @analyses.analysis_method
    def total(self) -> float:
        return self._step("total", float(self.values.sum()))

    @analyses.analysis_method
    def spread(self) -> float:
        return self._step("spread", float(self.values.std()))

    @analyses.analysis_method
    def largest(self) -> float:
        return self._step("largest", float(self.values.max()))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(analyses.ENV_VAR, str(tmp_path / "analyses"))
    return tmp_path / "analyses"


def _values() -> np.ndarray:
    return np.random.default_rng(7).normal(size=1_000)


def test_steps_in_a_worker_equal_steps_here_and_count_once(cache):
    before = dict(analyses.ANALYSIS_COUNTS)
    study = Toy(_values(), pause=1.0)
    ahead = background.start(study, jobs=2)
    assert ahead.active
    here = ahead.finish()
    # the worker took the first step (it sleeps); at least the last was never started there
    assert "total" not in here and "largest" in here
    values = {name: getattr(study, name)() for name in study.steps()}
    v = _values()
    assert values == {"total": v.sum(), "spread": v.std(), "largest": v.max()}
    assert study.results["total pid"] != os.getpid()
    assert study.results["largest pid"] == os.getpid()
    # three analyses computed, whether here or there, and none read back yet
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == 3
    assert analyses.ANALYSIS_COUNTS["cached"] == before["cached"]
    assert not analyses.COMPUTED_AHEAD
    study.total()
    assert analyses.ANALYSIS_COUNTS["cached"] == before["cached"] + 1


def test_a_step_asked_for_meanwhile_waits_for_the_worker_or_is_taken_back(cache):
    before = dict(analyses.ANALYSIS_COUNTS)
    study = Toy(_values(), pause=1.0)
    ahead = background.start(study, jobs=2)
    time.sleep(0.5)  # the worker has taken "total" (it sleeps), the others wait
    assert study.largest() == _values().max()  # not started: computed here
    assert study.results["largest pid"] == os.getpid()
    # started: the worker's, once written; meanwhile this process computes the step nobody
    # has started
    assert study.total() == _values().sum()
    assert study.results["total pid"] != os.getpid()
    assert study.results["spread pid"] == os.getpid()
    assert analyses.method_entry(study, "spread").exists()
    assert study.spread() == _values().std()  # read
    assert ahead.finish() == ["spread"]
    assert analyses.ANALYSIS_COUNTS["computed"] - before["computed"] == 3
    assert analyses.ANALYSIS_COUNTS["cached"] == before["cached"]
    assert not analyses.CLAIMED


def test_steps_the_cache_holds_start_no_worker(cache):
    study = Toy(_values())
    for name in study.steps():
        getattr(study, name)()
    ahead = background.start(Toy(_values()), jobs=2)
    assert not ahead.active and ahead.finish() == []


def test_nothing_runs_ahead_with_one_job_or_without_the_cache(cache, monkeypatch):
    assert not background.start(Toy(_values()), jobs=1).active
    assert not background.start(None).active
    monkeypatch.setenv(analyses.ENV_VAR, "off")
    assert not background.start(Toy(_values()), jobs=2).active


def test_a_failing_step_is_raised_with_its_name(cache):
    ahead = background.start(Toy(_values(), fail="total"), jobs=2)
    with pytest.raises(RuntimeError, match="step 'total' of Toy") as err:
        ahead.finish()
    assert "broke on purpose" in str(err.value)


def test_unknown_steps_are_refused():
    with pytest.raises(ValueError, match="no step"):
        background.start((Toy(_values()), ["total", "median"]), jobs=2)


def test_a_bellogin_study_pickles_as_its_inputs(ml100k):
    from recmeta.papers import bellogin2017 as b17

    ratings = ml100k.loc[ml100k["user"] <= 50].reset_index(drop=True)
    study = b17.Study(ratings, b17.Settings.resolve("quick", seed=1), dataset="ml-100k")
    study.results["kept"] = 1
    copy = pickle.loads(pickle.dumps(study))
    assert type(copy) is b17.Study and copy.dataset == "ml-100k"
    assert analyses.token(copy) == analyses.token(study)
    assert "kept" not in copy.results
    assert set(copy.steps()) <= {n for n in dir(copy) if callable(getattr(copy, n))}


def test_a_bellogin_study_in_a_worker_gives_the_results_computed_here(
    ml100k, tmp_path, monkeypatch
):
    from pandas.testing import assert_frame_equal

    from recmeta.papers import bellogin2017 as b17

    ratings = ml100k.loc[ml100k["user"] <= 120].reset_index(drop=True)
    settings = b17.Settings.resolve("quick", seed=1)
    steps = ["coverage", "fig2", "wilcoxon", "nonpersonalised", "positive_shares", "fig8"]
    monkeypatch.setenv(analyses.ENV_VAR, "off")
    here = b17.Study(ratings, settings, dataset="ml-100k")
    for name in steps:
        getattr(here, name)()
    monkeypatch.setenv(analyses.ENV_VAR, str(tmp_path / "analyses"))
    there = b17.Study(ratings, settings, dataset="ml-100k")
    ahead = background.start((there, steps), jobs=2)
    assert ahead.active
    assert "coverage" not in ahead.finish()  # the worker took the first step at once
    for name in steps:
        getattr(there, name)()
    for name in steps:
        a, b = here.results[name], there.results[name]
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            for k in a:
                if isinstance(a[k], pd.DataFrame):
                    assert_frame_equal(a[k], b[k], check_exact=True)
                else:
                    assert a[k] == b[k]
        else:
            assert_frame_equal(a, b, check_exact=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("wait", [0.0, 3.0])  # the parent ends before the worker starts, after
def test_a_worker_ends_with_the_process_that_started_it(tmp_path, wait):
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import os, sys, time\n"
        "import numpy as np\n"
        "os.environ['RECMETA_ANALYSES'] = sys.argv[1]\n"
        "from recmeta.book import background\n"
        "from tests.test_background import Toy\n"
        "ahead = background.start(Toy(np.arange(3.0), pause=120.0), jobs=2)\n"
        "while not ahead.pool._processes:\n"  # spawned, perhaps not yet started
        "    time.sleep(0.01)\n"
        f"time.sleep({wait})\n"
        "print(*ahead.pool._processes, flush=True)\n"
        "os._exit(0)\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "analyses")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
    )
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid), "the worker outlived the process that started it"
