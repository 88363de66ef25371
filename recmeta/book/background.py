"""Studies' experiments computed in a worker process while the chapter goes on.

A chapter that computes its second dataset's experiments at its ledger, after the first
dataset's, leaves a core idle on a machine with two. :func:`start` hands studies' analysis
methods (:func:`recmeta.analyses.analysis_method`) to one spawned worker, which takes them one at
a time in the given order, computes them on a copy of each study and writes each result to the
analysis cache. A step the chapter asks for meanwhile is read once the worker has written it,
or is taken back and computed in the chapter's process if the worker has not started it; while
the worker computes it, the chapter's process computes the steps nobody has started, from the
last, instead of waiting idle. :meth:`Ahead.finish` computes in the chapter's process
the steps nobody has started, from the last, while the worker goes on from the first, so both
cores work to the end; after it the chapter's own calls read every result from the cache.

The results are those of the chapter's process: the same code on the same pickled inputs. What
the worker computed counts as computed in the page's provenance, and its recommender runs as
made or read (``analyses.ANALYSIS_COUNTS``, ``recommenders.RUN_COUNTS``). Nothing runs ahead
with the analysis cache off (``RECMETA_ANALYSES=off``: there would be nowhere to leave the
results) or with one job (``RECMETA_TRAIN_JOBS=1``, as when the book executes two chapters side
by side): every step is then computed in the chapter's process, when it is asked for.

Only statistical biases uses it: its experiments are Python and numpy passes on one core. The
robustness and assessing chapters' analyses already compute on both cores (matrix products), and
their runs train two at a time: a worker beside them did not shorten their pages
(``benchmarks/README.md``).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import analyses, arrays

__all__ = ["Ahead", "start"]

#: in a worker: the studies it holds, by content, so a study's steps share what it keeps
_STUDIES: dict[bytes, Any] = {}


def _jobs() -> int:
    # the package's one reading of $RECMETA_TRAIN_JOBS; imported here, as it loads LensKit
    from ..recommenders.ahead import train_jobs

    return train_jobs()


def _run_counts() -> dict[str, int]:
    """This process's run counts; none while no recommender module is loaded (nothing was run,
    and loading LensKit would cost a worker seconds)."""
    cached = sys.modules.get("recmeta.recommenders.cached")
    return {} if cached is None else cached.RUN_COUNTS


@dataclass(frozen=True)
class _Task:
    """A study's analysis method ``name``."""

    label: str
    study: Any
    name: str

    def entry(self) -> Path:
        path = analyses.method_entry(self.study, self.name)
        assert path is not None  # only asked with the cache on
        return path


def _pool() -> ProcessPoolExecutor:
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(1, mp_context=context, initializer=_one_job, initargs=(os.getpid(),))


def _count(runs: Mapping[str, int], counted: Mapping[str, int]) -> None:
    """Add a worker's run and analysis counts to this process's."""
    if any(runs.values()):
        from ..recommenders import cached

        for k, v in runs.items():
            cached.RUN_COUNTS[k] += v
    for k, v in counted.items():
        analyses.ANALYSIS_COUNTS[k] += v


class Ahead:
    """Studies' steps handed to a worker (see :func:`start`)."""

    def __init__(self, tasks: Sequence[_Task], jobs: int) -> None:
        self.pending: list[_Task] = []  # started nowhere yet
        self.done: list[tuple[_Task, Future[tuple[dict, dict, bool]]]] = []  # handed over
        self.folded: set[str] = set()  # the tasks whose counts are this process's
        self.lock = threading.Lock()
        self.pool: ProcessPoolExecutor | None = None
        self.feeder: threading.Thread | None = None
        self.claims: list[str] = []
        self.paths: dict[int, str] = {}
        self.here: list[str] = []  # the steps nobody had started, computed in this process
        if not tasks or jobs < 2 or analyses.cache_dir() is None:
            return
        # what the cache holds is read, not handed over (a re-run starts no worker)
        # each task's cache entry, keyed once (the key hashes the study's data)
        entries = {id(t): t.entry() for t in tasks}
        self.pending = [t for t in tasks if not entries[id(t)].exists()]
        if not self.pending:
            return
        self.paths = {id(t): str(entries[id(t)]) for t in self.pending}
        self.claims = list(self.paths.values())
        for task in self.pending:  # this process's call of the step waits for the worker's
            analyses.CLAIMED[self.paths[id(task)]] = functools.partial(self._claim, task)
        self.pool = _pool()
        self.feeder = threading.Thread(target=self._feed, daemon=True)
        self.feeder.start()

    def _take(self, *, last: bool) -> _Task | None:
        with self.lock:
            if not self.pending:
                return None
            task = self.pending.pop(-1 if last else 0)
            analyses.CLAIMED.pop(self.paths[id(task)], None)
            return task

    def _feed(self) -> None:
        """Hand the worker the first pending step, wait for it, and so on (in a thread)."""
        assert self.pool is not None
        while True:
            with self.lock:
                if not self.pending:
                    return
                task = self.pending.pop(0)
                future = self.pool.submit(_compute, task)
                self.done.append((task, future))
            if future.exception() is not None:  # the error is raised by finish
                return

    def _claim(self, task: _Task) -> None:
        """This process asks for ``task``'s entry: take the task back if nobody started it,
        else compute the steps nobody has started, from the last, until the worker has written
        it (no core idles while this process waits)."""
        with self.lock:
            if any(t is task for t in self.pending):
                self.pending = [t for t in self.pending if t is not task]
                return
            future = next((f for t, f in self.done if t is task), None)
        if future is None:
            return
        while not future.done() and not self._failed():
            other = self._take(last=True)
            if other is None:
                break
            self._here(other)
        if future.exception() is not None:
            return  # computed here (finish raises the worker's error)
        self._fold(task, future)

    def _here(self, task: _Task) -> None:
        """Compute in this process a step nobody has started (taken with :meth:`_take`)."""
        path = self.paths[id(task)]
        fresh = not os.path.exists(path)
        getattr(task.study, task.name)()
        if fresh:  # computed ahead of the chapter's own call, as in the worker
            analyses.COMPUTED_AHEAD.add(path)
        self.here.append(task.name)

    def _fold(self, task: _Task, future: Future[tuple[dict, dict, bool]]) -> None:
        """Count the worker's analyses and runs of ``task`` as this process's, once."""
        try:
            runs, counted, computed = future.result()
        except Exception as err:
            raise RuntimeError(f"{task.label}, computed in a worker, failed: {err}") from err
        with self.lock:
            if task.label in self.folded:
                return
            self.folded.add(task.label)
        _count(runs, counted)
        if computed:  # the worker counted it: reading it here counts nothing
            analyses.COMPUTED_AHEAD.add(self.paths[id(task)])

    def _failed(self) -> bool:
        with self.lock:
            futures = [f for _, f in self.done]
        return any(f.done() and f.exception() is not None for f in futures)

    @property
    def active(self) -> bool:
        """Whether a worker took the steps (else :meth:`finish` does nothing)."""
        return self.pool is not None

    def finish(self) -> list[str]:
        """Compute here the steps nobody has started, from the last, while the worker finishes
        its own; count the worker's analyses and runs as this process's. Returns the steps
        computed here because nobody had started them (here or while the chapter waited for
        a step of the worker's). The chapter's next call of each step reads it and counts
        nothing more.

        A worker's error is raised with the step it was computing."""
        if self.pool is None:
            return []
        try:
            while not self._failed() and (task := self._take(last=True)) is not None:
                self._here(task)
            assert self.feeder is not None
            self.feeder.join()
            for task, future in list(self.done):
                self._fold(task, future)
        finally:
            with self.lock:
                for key in self.claims:
                    analyses.CLAIMED.pop(key, None)
                self.pending.clear()
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
        return list(self.here)


def start(*parts: Any, jobs: int | None = None) -> Ahead:
    """Hand studies' analysis methods to a spawned worker, which takes them in order; call
    :meth:`Ahead.finish` before reading the results of the last part. A part is a study (its
    ``steps()``) or a ``(study, step names)`` pair; None parts are skipped. A step the chapter
    calls meanwhile is read from the worker once written (the chapter waits for it if the worker
    is computing it), or computed here if the worker has not started it. A step that needs
    another's result calls that step.

    A study must pickle (its class rebuilt from the inputs of its ``analysis_key``); one job
    (default ``$RECMETA_TRAIN_JOBS``, else one per core) or the analysis cache off give an
    :class:`Ahead` that does nothing."""
    tasks: list[_Task] = []
    for part in parts:
        if part is None:
            continue
        study, steps = part if isinstance(part, tuple) else (part, None)
        names = list(study.steps() if steps is None else steps)
        missing = [s for s in names if not callable(getattr(study, s, None))]
        if missing:
            raise ValueError(f"{type(study).__name__} has no step {missing}")
        data = getattr(study, "dataset", None)
        kind = type(study).__name__ + (f" ({data})" if data is not None else "")
        tasks += [_Task(f"the step {n!r} of {kind}", study, n) for n in names]
    return Ahead(tasks, _jobs() if jobs is None else int(jobs))


def _one_job(parent: int) -> None:
    """A worker makes its own runs one at a time (the chapter's process uses the other core),
    and ends when the chapter's process ``parent`` has ended (an interrupted kernel leaves no
    worker), even before the worker started."""
    os.environ["RECMETA_TRAIN_JOBS"] = "1"
    arrays.keep_freed_memory()  # as the chapter's process (execution.start)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _deltas(runs: Mapping[str, int], counts: Mapping[str, int]) -> tuple[dict, dict]:
    return (
        {k: v - runs.get(k, 0) for k, v in _run_counts().items()},
        {k: v - counts[k] for k, v in analyses.ANALYSIS_COUNTS.items()},
    )


def _compute(task: _Task) -> tuple[dict[str, int], dict[str, int], bool]:
    """In a worker: one step, on the copy of its study kept for its content; returns the runs
    and analyses it counted, and whether it computed the step (not read it)."""
    study = _STUDIES.setdefault(analyses.token(task.study), task.study)
    runs, counts = dict(_run_counts()), dict(analyses.ANALYSIS_COUNTS)
    computed = not task.entry().exists()
    getattr(study, task.name)()
    return (*_deltas(runs, counts), computed)
