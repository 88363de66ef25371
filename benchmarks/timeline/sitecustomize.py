"""Loaded at start-up by ``benchmarks/timeline.py`` (on ``PYTHONPATH``): in every process of a
chapter (its kernel, a spawned worker) it wraps ``recmeta.analyses.cached_call`` when that module
is imported, appending one line per call to ``$TIMELINE_LOG``: the process, the analysis, its
start and end (seconds since the epoch). Nothing is wrapped without ``$TIMELINE_LOG``."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import time
from typing import Any

_LOG = os.environ.get("TIMELINE_LOG")


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
