"""Runs made ahead in worker processes equal the runs made in this one, and count as made."""

from __future__ import annotations

from concurrent.futures import Future

import pandas as pd
import pytest

from recmeta import recommenders
from recmeta.recommenders import ahead, roster

SYSTEMS = ["random", "pop", "bias", "iknn-imp-20"]


@pytest.fixture(scope="module")
def train(ml100k):
    return ml100k.loc[ml100k["user"] <= 150].reset_index(drop=True)


def _options(root, split="ahead-test"):
    return {"dataset": "ml-100k", "split": split, "seed": 3, "depth": 20, "root": str(root)}


def test_runs_made_ahead_equal_runs_made_here_and_count_as_made(tmp_path, train):
    systems = roster.systems(SYSTEMS)
    here = recommenders.make(systems, train, progress=False, **_options(tmp_path / "here"))
    opts = _options(tmp_path / "ahead")
    costs = []
    made = recommenders.make_ahead(
        [recommenders.Task(s, train, opts) for s in systems],
        jobs=2,
        cost=lambda t: costs.append(t.system.name) or 0.0,
        progress=False,
    )
    assert made == len(systems)
    assert sorted(costs) == sorted(SYSTEMS)  # every missing run is priced, once
    before = dict(recommenders.RUN_COUNTS)
    there = recommenders.make(systems, train, progress=False, **opts)
    assert recommenders.RUN_COUNTS["made"] - before["made"] == len(systems)
    assert recommenders.RUN_COUNTS["cached"] == before["cached"]
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    # read again, the same runs are cached runs
    recommenders.make(systems, train, progress=False, **opts)
    assert recommenders.RUN_COUNTS["cached"] - before["cached"] == len(systems)
    # nothing is missing now: nothing to make
    assert (
        recommenders.make_ahead([recommenders.Task(s, train, opts) for s in systems], jobs=2) == 0
    )
    # a second call (another split) reuses the workers, and its runs equal runs made here
    pool = ahead._WORKERS["pool"]
    workers = set(pool._processes)
    assert len(workers) == 2
    two = roster.systems(SYSTEMS[:2])
    other = _options(tmp_path / "ahead", split="ahead-test-2")
    assert recommenders.make_ahead([recommenders.Task(s, train, other) for s in two], jobs=2) == 2
    assert ahead._WORKERS["pool"] is pool and set(pool._processes) == workers
    pd.testing.assert_frame_equal(
        recommenders.make(two, train, progress=False, **other),
        recommenders.make(two, train, progress=False, **_options(tmp_path / "here2")),
        check_exact=True,
    )
    recommenders.cached.MADE_AHEAD.clear()
    processes = list(pool._processes.values())
    ahead.close_workers()
    assert ahead._WORKERS["pool"] is None and not any(p.is_alive() for p in processes)


def test_one_job_or_one_missing_run_is_left_to_make(tmp_path, train):
    systems = roster.systems(SYSTEMS[:2])
    opts = _options(tmp_path)
    tasks = [recommenders.Task(s, train, opts) for s in systems]
    assert recommenders.make_ahead(tasks, jobs=1) == 0
    assert recommenders.make_ahead(tasks[:1], jobs=2) == 0
    assert not list(tmp_path.rglob("*.parquet"))


class InProcessPool:
    """A stand-in for the process pool: runs each task here when submitted, in order."""

    submitted: list[str] = []

    def __init__(self, *a, **k):
        InProcessPool.submitted = []

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def shutdown(self, wait=True, *, cancel_futures=False):
        pass

    def submit(self, fn, system, *args):
        InProcessPool.submitted.append(system.name)
        done: Future = Future()
        try:
            done.set_result(fn(system, *args))
        except Exception as err:  # the pool hands a worker's error to its future
            done.set_exception(err)
        return done


def test_a_workers_error_names_the_run(tmp_path, train, monkeypatch):
    monkeypatch.setattr(ahead, "ProcessPoolExecutor", InProcessPool)
    # a system that learns from ratings, given interactions without them, fails
    bias, pop = roster.systems(["bias", "pop"])
    tasks = [
        recommenders.Task(bias, train.drop(columns="rating"), _options(tmp_path)),
        recommenders.Task(pop, train, _options(tmp_path)),
    ]
    with pytest.raises(RuntimeError, match="run of bias .*ahead-test.* failed"):
        recommenders.make_ahead(tasks, jobs=2, progress=False)
    recommenders.cached.MADE_AHEAD.clear()


def test_workers_are_started_again_when_what_they_inherit_changed(tmp_path, train, monkeypatch):
    monkeypatch.setattr(ahead, "ProcessPoolExecutor", InProcessPool)
    two = roster.systems(SYSTEMS[:2])
    pools = []
    for split, env in (("a", None), ("b", None), ("c", "1"), ("d", "1")):
        if env:
            monkeypatch.setenv("RECMETA_AHEAD_TEST", env)
        opts = _options(tmp_path, split=split)
        tasks = [recommenders.Task(s, train, opts) for s in two]
        assert recommenders.make_ahead(tasks, jobs=2) == 2
        pools.append(ahead._WORKERS["pool"])
    assert pools[0] is pools[1] and pools[2] is pools[3] and pools[1] is not pools[2]
    ahead.close_workers()
    assert ahead._WORKERS["pool"] is None
    recommenders.cached.MADE_AHEAD.clear()


def test_tasks_and_jobs_are_checked(tmp_path, train, monkeypatch):
    (pop,) = roster.systems(["pop"])
    with pytest.raises(ValueError, match="cannot pass \\['engine'\\]"):
        recommenders.Task(pop, train, {**_options(tmp_path), "engine": "fast"})
    with pytest.raises(ValueError, match="needs make's 'split'"):
        recommenders.Task(pop, train, {"dataset": "ml-100k"})
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        recommenders.make_ahead([], jobs=0)
    monkeypatch.setenv("RECMETA_TRAIN_JOBS", "3")
    assert ahead.train_jobs() == 3
    monkeypatch.delenv("RECMETA_TRAIN_JOBS")
    assert ahead.train_jobs() >= 1
    for bad in ("two", "0", "-1", "1.5"):
        monkeypatch.setenv("RECMETA_TRAIN_JOBS", bad)
        with pytest.raises(ValueError, match="RECMETA_TRAIN_JOBS"):
            ahead.train_jobs()


def test_the_costliest_runs_are_submitted_first(tmp_path, train, monkeypatch):
    monkeypatch.setattr(ahead, "ProcessPoolExecutor", InProcessPool)
    systems = roster.systems(SYSTEMS)
    price = {"random": 1.0, "pop": 4.0, "bias": 2.0, "iknn-imp-20": 3.0}
    tasks = [recommenders.Task(s, train, _options(tmp_path)) for s in systems]
    made = recommenders.make_ahead(
        tasks, jobs=2, cost=lambda t: price[t.system.name], progress=False
    )
    assert made == 4 and InProcessPool.submitted == ["pop", "iknn-imp-20", "bias", "random"]
    recommenders.cached.MADE_AHEAD.clear()


def test_paths_are_make_keys_one_fingerprint_per_split(tmp_path, train, monkeypatch):
    systems = roster.systems(SYSTEMS[:3])
    other = train.iloc[1:]
    a, b = _options(tmp_path), _options(tmp_path, split="another")
    tasks = [recommenders.Task(s, f, o) for f, o in ((train, a), (other, a), (train, b))
             for s in systems]
    want = []
    for t in tasks:
        (key,) = recommenders.cached.run_keys(
            [t.system], t.train, **{k: v for k, v in t.options.items() if k != "root"}
        )
        want.append(str(key.path(t.options["root"])))
    hashed = []
    real = recommenders.cache.fingerprint
    monkeypatch.setattr(recommenders.cache, "fingerprint", lambda *f: hashed.append(1) or real(*f))
    assert ahead._paths(tasks) == want and len(set(want)) == len(tasks)
    assert len(hashed) == 3  # once per (frame, options), not once per system


def test_pairs_scored_beside_the_lists_equal_pairs_scored_alone_and_train_once(
    tmp_path, train, monkeypatch
):
    """``make(also_pairs=...)``: one training per model for its lists and its candidate
    scores, which equal those of a model trained for them alone (seeded systems included)."""
    from recmeta.recommenders import cached

    systems = roster.systems(SYSTEMS + ["ease-250", "biasedmf-50", "flexmf-bpr", "plsa-50"])
    users = train["user"].unique()[::3]
    pairs = pd.DataFrame({"user": users.repeat(2), "item": [1, 50] * len(users)}).merge(
        train[["user", "item"]], how="left", indicator=True
    )
    pairs = pairs.loc[pairs["_merge"] == "left_only", ["user", "item"]].reset_index(drop=True)
    alone_opts = _options(tmp_path / "alone")
    alone = recommenders.make(systems, train, pairs=pairs, progress=False, **alone_opts)
    lists_alone = recommenders.make(systems, train, progress=False, **alone_opts)

    trained = []
    real_train = cached.train
    monkeypatch.setattr(
        cached, "train", lambda s, *a, **k: trained.append(s.name) or real_train(s, *a, **k)
    )
    opts = _options(tmp_path / "beside")
    lists = recommenders.make(systems, train, also_pairs=pairs, progress=False, **opts)
    assert trained == [s.name for s in systems]
    before = dict(recommenders.RUN_COUNTS)
    scores = recommenders.make(systems, train, pairs=pairs, progress=False, **opts)
    assert trained == [s.name for s in systems]  # nothing trained again
    assert recommenders.RUN_COUNTS["made"] - before["made"] == len(systems)
    assert recommenders.RUN_COUNTS["cached"] == before["cached"]
    pd.testing.assert_frame_equal(scores, alone, check_exact=True)
    pd.testing.assert_frame_equal(lists, lists_alone, check_exact=True)
    with pytest.raises(ValueError, match="also_pairs goes with top-N lists"):
        recommenders.make(systems, train, pairs=pairs, also_pairs=pairs, **opts)
