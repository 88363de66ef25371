"""A pytest plugin that records each test's wall and CPU seconds (``benchmarks/suite.py``).

Loaded by ``PYTHONPATH=benchmarks/suite_cpu PYTEST_ADDOPTS="-p suite_cpu"``; it appends one JSON
line per test to ``$SUITE_CPU`` (in every xdist worker): the worker, the test, its start and
end, the CPU seconds of the worker's own process (``self``) and of the child processes it
waited for during the test (``children``: a book build's Sphinx and notebook kernels, ruff,
mypy). Nothing is recorded without ``$SUITE_CPU``.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator

import pytest

_OUT = os.environ.get("SUITE_CPU")


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not _OUT:
        yield
        return
    me, kids = _cpu()
    start = time.time()
    yield
    me2, kids2 = _cpu()
    row = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "test": item.nodeid,
        "start": start,
        "end": time.time(),
        "self": me2 - me,
        "children": kids2 - kids,
    }
    with open(_OUT, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
