"""The run cache: keys, atomic writes under SIGKILL, resuming an interrupted run, list/clear."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from recmeta import recommenders
from recmeta.data import splits
from recmeta.recommenders import cache, cached, lists
from recmeta.recommenders.roster import System

POP = System("pop", "lenskit.basic:PopScorer", {"score": "count"})
KRZ = System("kr-z", "recmeta.recommenders.components.itemcf:ItemCFScorer", {"q": 1.0, "k_prime": 10})


@pytest.fixture(scope="module")
def split(ml100k):
    return splits.holdout_per_user(ml100k.loc[ml100k["user"] <= 100], 0.2, seed=1)


def _key(**kw):
    base = dict(dataset="ml-100k", split="holdout-0.2", seed=1, system="pop",
                config={"component": "x", "config": {"a": 1}}, kind="top-all-100", data="abc")
    return cache.RunKey(**{**base, **kw})


def test_key_covers_everything_that_determines_a_run(tmp_path):
    k = _key()
    assert k.lenskit  # LensKit version is part of the key
    variants = [_key(dataset="ml-1m"), _key(split="kfold-5"), _key(seed=2), _key(system="bias"),
                _key(config={"component": "x", "config": {"a": 2}}), _key(kind="top-test-100"),
                _key(data="abd"), _key(lenskit="0.0")]
    digests = {v.digest() for v in variants} | {k.digest()}
    assert len(digests) == len(variants) + 1
    assert k.path(tmp_path) == _key().path(tmp_path)
    assert k.path(tmp_path).is_relative_to(tmp_path / "ml-100k")


def test_fingerprint_sees_values():
    a = pd.DataFrame({"user": [1, 2], "item": [3, 4], "rating": [5.0, 4.0]})
    b = a.assign(rating=[5.0, 3.0])
    assert cache.fingerprint(a) == cache.fingerprint(a.copy())
    assert cache.fingerprint(a) != cache.fingerprint(b)
    assert cache.fingerprint(a, None) != cache.fingerprint(a, a)


def test_write_read_roundtrip_with_key(tmp_path):
    df = pd.DataFrame({"user": [1, 1], "item": [5, 6], "rank": [1, 2], "score": [0.5, 0.25]})
    p = cache.write_frame(df, tmp_path / "a" / "b.parquet", _key())
    pd.testing.assert_frame_equal(cache.read_frame(p), df)
    assert cache.read_key(p)["system"] == "pop"
    assert not list(p.parent.glob(".*"))  # no temp file left


def test_every_column_kind_reads_back_as_written(tmp_path):
    # every column kind the runs hold (ids, ranks, scores with NaN and -inf, float32, text,
    # flags) must come back with its values and its dtype
    rng = np.random.default_rng(0)
    n = 5_000
    df = pd.DataFrame(
        {
            "user": np.repeat(np.arange(50), 100),
            "item": rng.permutation(n).astype(np.int32),
            "rank": np.tile(np.arange(1, 101), 50).astype(np.int16),
            "score": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
            "low": np.full(n, -np.inf),
            "score32": rng.random(n).astype(np.float32),
            "name": rng.choice(["a", "b", "ü"], n),
            "hit": rng.random(n) < 0.5,
        }
    )
    p = cache.write_frame(df, tmp_path / "kinds.parquet", _key())
    pd.testing.assert_frame_equal(cache.read_frame(p), df, check_exact=True)
    assert np.array_equal(cache.read_frame(p)["score"], df["score"], equal_nan=True)
    # the encoding parquet_options states: ids, ranks and text dictionary-coded, floats plain
    # (flags too: parquet packs them in bits), every column LZ4-compressed
    meta = pq.ParquetFile(p).metadata.row_group(0)
    chunks = {meta.column(k).path_in_schema: meta.column(k) for k in range(meta.num_columns)}
    for name, chunk in chunks.items():
        assert chunk.compression == "LZ4", name
        assert chunk.has_dictionary_page == (df[name].dtype.kind not in "fb"), name


def test_kill_mid_write_leaves_old_file_intact(tmp_path):
    """SIGKILL a writer after it wrote its temp file and before the rename: no corrupt file."""
    target = tmp_path / "run.parquet"
    old = pd.DataFrame({"user": [1], "item": [2], "rank": [1], "score": [1.0]})
    cache.write_frame(old, target, _key())
    child = textwrap.dedent(f"""
        import os, sys, time
        import numpy as np, pandas as pd
        from recmeta.recommenders import cache
        real = os.fsync
        def stall(fd):
            real(fd)
            print("written", flush=True)
            time.sleep(60)
        os.fsync = stall
        big = pd.DataFrame({{"user": np.arange(200_000), "item": 1, "rank": 1, "score": 0.5}})
        cache.write_frame(big, {str(target)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
        tmps = list(tmp_path.glob(".run.parquet.*.tmp"))
        assert len(tmps) == 1 and tmps[0].stat().st_size > 0
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    pd.testing.assert_frame_equal(cache.read_frame(target), old)
    listed = cache.entries(tmp_path)
    assert listed["path"].tolist() == [str(target)]  # the temp file is not a run
    cache.clear(tmp_path, system="nothing")  # removes stale temp files only
    assert not list(tmp_path.glob(".*.tmp")) and target.exists()


def test_make_caches_and_reuses(tmp_path, split, monkeypatch):
    a = recommenders.make([POP, KRZ], split.train, dataset="ml-100k", split="holdout", seed=1, depth=10,
                  root=tmp_path, progress=False)
    assert a.columns.tolist() == ["system", "user", "item", "rank", "score"]
    assert set(a["system"]) == {"pop", "kr-z"}
    listed = cache.entries(tmp_path)
    assert sorted(listed["system"]) == ["kr-z", "pop"] and (listed["status"] == "complete").all()

    def no_training(*args, **kw):
        raise AssertionError("a cached run was recomputed")

    monkeypatch.setattr(cached, "train", no_training)
    b = recommenders.make([POP, KRZ], split.train, dataset="ml-100k", split="holdout", seed=1, depth=10,
                  root=tmp_path, progress=False)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(AssertionError, match="recomputed"):  # another depth is another run
        recommenders.make([POP], split.train, dataset="ml-100k", split="holdout", seed=1, depth=11,
                  root=tmp_path, progress=False)


def test_candidate_runs_are_cached(tmp_path, split):
    pairs = split.test[["user", "item"]].reset_index(drop=True)
    a = recommenders.make([KRZ], split.train, dataset="ml-100k", split="holdout", pairs=pairs,
                  root=tmp_path, progress=False)
    assert len(a) == len(pairs) and (a[["user", "item"]].values == pairs.values).all()
    assert cache.entries(tmp_path)["kind"].tolist() == ["candidates"]


def test_interrupted_run_resumes_where_it_stopped(tmp_path, split, monkeypatch):
    kw = dict(dataset="ml-100k", split="holdout", seed=1, depth=10, block=16, progress=False)
    fresh = recommenders.make([KRZ], split.train, root=tmp_path / "fresh", **kw)

    real = lists._fast_block
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C in block 4
        return real(*args, **kwargs)

    monkeypatch.setattr(lists, "_fast_block", failing)
    root = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        recommenders.make([KRZ], split.train, root=root, **kw)
    listed = cache.entries(root)
    assert listed["status"].tolist() == ["interrupted (3 blocks)"]
    assert listed["system"].tolist() == ["kr-z"]

    seen = []

    def counting(model, f, ids, *args, **kwargs):
        seen.extend(ids.tolist())
        return real(model, f, ids, *args, **kwargs)

    monkeypatch.setattr(lists, "_fast_block", counting)
    resumed = recommenders.make([KRZ], split.train, root=root, **kw)
    n_users = split.train["user"].nunique()
    assert len(seen) == n_users - 3 * 16  # only the users not done before
    pd.testing.assert_frame_equal(resumed, fresh)
    assert cache.entries(root)["status"].tolist() == ["complete"]


def test_clear_by_system_and_all(tmp_path, split):
    recommenders.make([POP, KRZ], split.train, dataset="ml-100k", split="holdout", depth=5,
              root=tmp_path, progress=False)
    assert cache.clear(tmp_path, system="pop") == 1
    assert cache.entries(tmp_path)["system"].tolist() == ["kr-z"]
    assert cache.clear(tmp_path, dataset="other") == 0
    assert cache.clear(tmp_path) == 1
    assert cache.entries(tmp_path).empty


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    assert cache.cache_dir() == Path(tmp_path)
    monkeypatch.delenv(cache.ENV_VAR)
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root / "notebooks")  # as when a chapter executes
    assert cache.cache_dir() == root / "_cache" / "runs"


def test_cli_runs_make_list_clear(tmp_path, monkeypatch, capsys, ml100k):
    from recmeta.cli import main

    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    assert main(["runs", "make", "--dataset", "ml-100k", "--systems", "pop", "--depth", "5",
                 "--offline"]) == 0
    assert main(["runs", "list"]) == 0
    out = capsys.readouterr().out
    assert "pop" in out and "top-all-5" in out
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    assert main(["runs", "clear"]) == 2  # refuses without --yes when it cannot ask
    assert main(["runs", "clear", "--yes"]) == 0
    assert cache.entries(tmp_path).empty
    assert main(["runs", "make", "--dataset", "ml-100k", "--systems", "nope", "--offline"]) == 2


def _make_pop_run(args):
    root, ratings = args
    from recmeta import recommenders
    from recmeta.recommenders import roster

    return len(recommenders.make([roster.get("pop")], ratings, dataset="tiny", split="all", root=root,
                         block=2, progress=False))


def test_two_processes_making_the_same_run_share_it(tmp_path):
    """Concurrent makers of one run: one makes it under the lock, the other reads it."""
    import multiprocessing as mp

    rng = np.random.default_rng(0)
    ratings = pd.DataFrame({"user": np.repeat(np.arange(12), 5),
                            "item": rng.integers(0, 40, 60), "rating": 4.0}).drop_duplicates(["user", "item"])
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        sizes = pool.map(_make_pop_run, [(str(tmp_path), ratings)] * 2)
    assert sizes[0] == sizes[1] > 0
    assert not list(tmp_path.rglob("*.parts"))
    assert len(list(tmp_path.rglob("*.parquet"))) == 1
