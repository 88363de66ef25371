"""Runs made on a Ray cluster equal the runs made in this process (slow: starts a local cluster).

What this test does is what ``recmeta.recommenders`` tells a reader to do on several machines, with one
machine standing in for the cluster: start a cluster (here ``ray.init(num_cpus=2)``; on
machines ``ray start --head`` and ``ray start --address=...``, then ``RAY_ADDRESS``), then make
the runs with ``use_ray=True``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from recmeta import recommenders
from recmeta.data import splits
from recmeta.recommenders import lists, roster

from .test_runs import assert_same_lists

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

SYSTEMS = ["pop", "iknn-imp-20", "uknn-30"]  # a one-product path and both k-NN families


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        ray.shutdown()
    address = os.environ.pop("RAY_ADDRESS", None)  # a fresh local cluster, whatever is set
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if address is not None:
        os.environ["RAY_ADDRESS"] = address


@pytest.fixture(scope="module")
def split(ml100k):
    return splits.holdout_per_user(ml100k.loc[ml100k["user"] <= 300], 0.2, seed=4)


def test_runs_on_ray_equal_local_runs(cluster, split, tmp_path):
    systems = roster.systems(SYSTEMS)
    kw = dict(dataset="ml-100k-300", split="holdout-0.2", seed=4, depth=50, block=64,
              progress=False)
    local = recommenders.make(systems, split.train, root=tmp_path / "local", **kw)
    on_ray = recommenders.make(systems, split.train, root=tmp_path / "ray", use_ray=True, **kw)
    assert set(on_ray["system"]) == set(SYSTEMS)
    for name in SYSTEMS:
        a = local.loc[local["system"] == name].drop(columns="system").reset_index(drop=True)
        b = on_ray.loc[on_ray["system"] == name].drop(columns="system").reset_index(drop=True)
        assert a["user"].nunique() == split.train["user"].nunique()
        assert_same_lists(b, a)
    # the blocks really ran in Ray's worker processes: the workers hold the shipped model,
    # this process never fetched one
    assert not lists._WORKER_MODELS

    @ray.remote(num_cpus=1)
    def held() -> tuple[int, int]:
        return os.getpid(), len(lists._WORKER_MODELS)

    seen = ray.get([held.remote() for _ in range(4)])
    assert all(pid != os.getpid() for pid, _ in seen)
    assert any(n > 0 for _, n in seen)


def test_lenskit_pipeline_on_ray_equals_the_fast_path(cluster, split):
    """LensKit's own per-user pipeline, run in the Ray workers, against our k-NN kernel here."""
    model = recommenders.train(roster.get("uknn-30"), split.train, seed=4, n=20)
    fast = recommenders.top_n(model, depth=20, progress=False)
    lenskit = recommenders.top_n(model, depth=20, engine="lenskit", use_ray=True, block=100,
                         progress=False)
    assert_same_lists(fast, lenskit)
    assert np.array_equal(np.sort(fast["user"].unique()), np.sort(lenskit["user"].unique()))


def test_candidate_scores_on_ray(cluster, split):
    model = recommenders.train(roster.get("iknn-imp-20"), split.train, seed=4)
    pairs = split.test[["user", "item"]].reset_index(drop=True)
    here = recommenders.score_candidates(model, pairs, block=64, progress=False)
    there = recommenders.score_candidates(model, pairs, block=64, use_ray=True, progress=False)
    assert there[["user", "item"]].equals(here[["user", "item"]])
    assert np.allclose(there["score"], here["score"], rtol=1e-6, equal_nan=True)
    assert here["score"].notna().mean() > 0.9
