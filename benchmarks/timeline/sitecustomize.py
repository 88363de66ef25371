"""Loaded at start-up by ``benchmarks/timeline.py`` (on ``PYTHONPATH``): in every process of a
chapter (its kernel, a spawned worker) it wraps ``recmeta.analyses.cached_call`` when that module
is imported, appending one line per call to ``$TIMELINE_LOG``: the process, the analysis, its
start and end (seconds since the epoch). Nothing is wrapped without ``$TIMELINE_LOG``.

With ``$TIMELINE_SAMPLES`` it also starts a thread that every half second appends the process,
the time, the cores the process used since the last sample (its CPU seconds over the seconds
passed, all threads) and the innermost ``recmeta`` function its main thread is in."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import threading
import time
from typing import Any

_LOG = os.environ.get("TIMELINE_LOG")
_SAMPLES = os.environ.get("TIMELINE_SAMPLES")
_EVERY = 0.5  # seconds between samples


def _where(main: int | None) -> str:
    """The innermost function of ``recmeta`` on the main thread's stack ('' outside it)."""
    frame = sys._current_frames().get(main) if main is not None else None
    while frame is not None:
        if f"{os.sep}recmeta{os.sep}" in frame.f_code.co_filename:
            return frame.f_code.co_qualname
        frame = frame.f_back
    return ""


def _sample() -> None:
    main = threading.main_thread().ident
    last_t, last_c = time.time(), sum(os.times()[:2])
    with open(str(_SAMPLES), "a", buffering=1) as fh:
        while True:
            time.sleep(_EVERY)
            t, c = time.time(), sum(os.times()[:2])
            cores = (c - last_c) / (t - last_t)
            fh.write(f"{os.getpid()}\t{t:.2f}\t{cores:.2f}\t{_where(main)}\n")
            last_t, last_c = t, c


def _wrap(module: Any) -> None:
    inner = module.cached_call

    def cached_call(name: str, key: Any, compute: Any, **kw: Any) -> Any:
        start = time.time()
        try:
            return inner(name, key, compute, **kw)
        finally:
            with open(str(_LOG), "a") as fh:
                fh.write(f"{os.getpid()}\t{name}\t{start:.3f}\t{time.time():.3f}\n")

    module.cached_call = cached_call


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "recmeta.analyses":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _wrap(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _LOG:
    sys.meta_path.insert(0, _Finder())
if _SAMPLES:
    threading.Thread(target=_sample, daemon=True, name="timeline-samples").start()
