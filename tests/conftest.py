"""Shared test set-up: the data cache, and the built book's worker.

Tests read the MovieLens releases through recmeta's own cache (``$RECMETA_DATA``, default
``data/`` in the project). When the cache is empty, it is filled from a folder of extracted
releases (``$RECMETA_SEED``, default ``../shared/data`` beside the project) — the same path
``scripts/bootstrap.sh`` takes — so no test needs the network.

``make test`` runs the tests on one worker per core (pytest-xdist, ``--dist loadfile``): every
test that reads the built book is in ``test_book.py``, so the book is built once, on one worker,
while the other workers run the rest. The longest files go first (:data:`LONGEST_FIRST`), so the
suite ends on short files and no worker waits long for another.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from recmeta.arrays import keep_freed_memory

ROOT = Path(__file__).resolve().parents[1]


def _one_thread_per_worker() -> None:
    """With a pytest-xdist worker per core, let each worker compute on one thread.

    OpenBLAS, OpenMP (PyTorch) and MKL start a thread per core in every process; with as many
    workers as cores they oversubscribe the machine, and OpenBLAS's waiting threads then make a
    3,706 × 101 QR factorisation take seconds instead of milliseconds. The variables reach the
    kernels and chapter runs the tests start; ``threadpoolctl`` limits the pools this process
    has already loaded.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < (os.cpu_count() or 1):
        return
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    os.environ["RECMETA_TRAIN_JOBS"] = "1"  # chapters make their runs one at a time too
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


_one_thread_per_worker()
# the allocator as the chapters' processes set it (recmeta.book.execution.start)
keep_freed_memory()
os.environ.setdefault("RECMETA_DATA", str(ROOT / "data"))
# chapters run by the tests store their ledgers apart from the project's own store
os.environ["RECMETA_RESULTS"] = tempfile.mkdtemp(prefix="recmeta-test-results-")
# and compute every analysis: a test that breaks a function on purpose must see it computed,
# not read back (tests/test_analyses.py turns the cache on, in a folder of its own)
os.environ["RECMETA_ANALYSES"] = "off"
SEED = Path(os.environ.get("RECMETA_SEED", ROOT.parent / "shared" / "data"))


#: the test files that take longest, longest first (seconds of one worker in a fresh clone's
#: ``make test``: the book 292, the chapter runs 91, the toy books 73, ruff and mypy 51, the
#: experiment reports 47, the robustness study 46, the recommender components 44). pytest-xdist
#: hands out whole files in the order collected (``--no-loadscope-reorder`` in the Makefile; by
#: default it sorts them by their number of tests): a long file handed out last kept one worker
#: busy for 45 s while the other had nothing left (mypy, in ``test_tooling.py``)
LONGEST_FIRST = (
    "test_book.py",
    "test_chapter_runs.py",
    "test_book_cache.py",
    "test_tooling.py",
    "test_experiment.py",
    "test_valcarce2018.py",
    "test_components.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of :data:`LONGEST_FIRST` first, in its order; the rest keep theirs."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def ml100k():
    """The ML-100K ratings frame (fetched into the cache from the seed folder if needed)."""
    from recmeta import data

    data.fetch("ml-100k", seed=SEED if SEED.exists() else None)
    return data.load("ml-100k")


@pytest.fixture(scope="session")
def ml_latest_small():
    from recmeta import data

    data.fetch("ml-latest-small", seed=SEED if SEED.exists() else None)
    return data.load("ml-latest-small")


@pytest.fixture(scope="session")
def built_book(tmp_path_factory, ml100k, ml_latest_small):
    out = tmp_path_factory.mktemp("book")
    env = {**os.environ, "RECMETA_PROFILE": "quick", "TQDM_DISABLE": "1"}
    jb = Path(sys.executable).parent / "jupyter-book"
    r = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "--warningiserror", "--keep-going"],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    return out / "_build" / "html"

