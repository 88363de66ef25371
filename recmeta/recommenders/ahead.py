"""Runs made ahead, several at a time, in worker processes.

Most of the roster trains on one core (FlexMF's WARP, the longest, runs no faster on two), so a
chapter that trains its runs one after the other leaves the other cores idle. :func:`make_ahead`
makes the runs a chapter is about to ask :func:`~recmeta.recommenders.make` for, in ``jobs``
spawned processes, the costliest first; each worker writes its run to the run cache through
``make`` itself (same keys, same seeds, same code), and the chapter's own ``make`` calls then
read them. A run made ahead counts as made, not cached, in ``RUN_COUNTS`` when it is read.
The workers stay for the process's next call (a chapter's second dataset) until
:func:`close_workers`, which a chapter's last cell calls.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from tqdm import tqdm

from . import cached
from .roster import System

__all__ = ["Task", "close_workers", "make_ahead", "train_jobs"]

#: ``make``'s keywords a task may set; the others (engine, Ray, blocks) stay at their defaults
_OPTIONS = frozenset(
    {"dataset", "split", "seed", "depth", "candidates", "test", "pairs", "root", "progress"}
)


@dataclass(frozen=True)
class Task:
    """One run for :func:`make_ahead`: ``make([system], train, **options)``."""

    system: System
    train: pd.DataFrame
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.options) - _OPTIONS)
        if unknown:
            raise ValueError(
                f"make_ahead cannot pass {unknown} to make: it takes {sorted(_OPTIONS)}"
            )
        for need in ("dataset", "split"):
            if need not in self.options:
                raise ValueError(f"a task for make_ahead needs make's {need!r} keyword")


def _paths(tasks: list[Task]) -> list[str]:
    """The run-cache paths of ``tasks``: one :func:`~.cached.run_keys` call (one fingerprint of
    the frames) for the tasks that share their training frame and options, as a chapter's
    systems on one split do."""
    groups: dict[tuple[int, int], list[int]] = {}
    for k, task in enumerate(tasks):
        groups.setdefault((id(task.train), id(task.options)), []).append(k)
    paths = [""] * len(tasks)
    for members in groups.values():
        first = tasks[members[0]]
        opts = {k: v for k, v in first.options.items() if k not in ("root", "progress")}
        keys = cached.run_keys([tasks[m].system for m in members], first.train, **opts)
        for m, key in zip(members, keys, strict=True):
            paths[m] = str(key.path(first.options.get("root")))
    return paths


def train_jobs() -> int:
    """How many runs :func:`make_ahead` makes at once: ``$RECMETA_TRAIN_JOBS``, else one per
    core."""
    raw = os.environ.get("RECMETA_TRAIN_JOBS", "").strip()
    if not raw:
        return max(1, os.cpu_count() or 1)
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"RECMETA_TRAIN_JOBS must be a whole number >= 1, got {raw!r}")
    return int(raw)


def make_ahead(
    tasks: Iterable[Task],
    *,
    jobs: int | None = None,
    cost: Callable[[Task], float] | None = None,
    progress: bool | None = None,
) -> int:
    """Make the tasks' runs that the run cache lacks, ``jobs`` at a time (default
    :func:`train_jobs`), in spawned processes; returns how many were made.

    With one job, or fewer than two runs missing, nothing is done here: the chapter's own
    ``make`` calls train them as before. ``cost`` (estimated seconds of a task) orders the runs
    longest first, so the longest does not start last; without it they keep the given order.
    A worker's error is raised here, with the run it was making.
    """
    jobs = train_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    tasks = list(tasks)
    todo: dict[str, Task] = {}
    for task, path in zip(tasks, _paths(tasks), strict=True):
        if path not in todo and not os.path.exists(path):
            todo[path] = task
    if jobs == 1 or len(todo) < 2:
        return 0
    order = list(todo)
    if cost is not None:
        order.sort(key=lambda p: -cost(todo[p]))
    pool = _pool(jobs)
    futures = {
        pool.submit(_make_one_run, todo[p].system, todo[p].train, dict(todo[p].options)): p
        for p in order
    }
    bar = tqdm(total=len(futures), desc="runs made ahead", disable=progress is False or None)
    for future, path in futures.items():
        try:
            future.result()
        except BaseException as err:
            close_workers()  # the runs not started are dropped, the running ones finish
            if not isinstance(err, Exception):
                raise
            task = todo[path]
            raise RuntimeError(
                f"making the run of {task.system.name} ({task.options['split']}) in a "
                f"worker failed: {err}"
            ) from err
        cached.MADE_AHEAD.add(path)
        bar.update()
    bar.close()
    return len(order)


#: the workers of the last :func:`make_ahead` call and what they were started with
_WORKERS: dict[str, Any] = {"pool": None, "key": None}


def _pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` spawned workers, kept for the next :func:`make_ahead` call of this process.

    A worker imports LensKit and torch when it starts (about 6 CPU seconds), so a chapter that
    makes runs for two datasets starts its workers once. They are reused only while what a
    spawned process inherits is the same (environment, import path, working folder); otherwise
    they are stopped and new ones started. The pool starts a worker when a task needs one; a
    worker's error stops them all (the next call starts new ones).
    """
    key = (ProcessPoolExecutor, jobs, sorted(os.environ.items()), list(sys.path), os.getcwd())
    pool = _WORKERS["pool"]
    if pool is not None and _WORKERS["key"] == key:
        return pool
    close_workers()
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    _WORKERS.update(pool=pool, key=key)
    return pool


def close_workers() -> None:
    """Stop the workers :func:`make_ahead` keeps (a chapter's last cell calls it; at exit the
    pool's own handler stops them)."""
    pool, _WORKERS["pool"] = _WORKERS["pool"], None
    _WORKERS["key"] = None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _make_one_run(system: System, train: pd.DataFrame, options: dict[str, Any]) -> None:
    """In a worker: make one run into the run cache (its frame stays there)."""
    cached.make([system], train, **{"progress": False, **options})
