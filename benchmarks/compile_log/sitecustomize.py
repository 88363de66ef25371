"""Records how long each Python process spends in numba's compiler (``benchmarks/compile.py``).

With this folder on ``PYTHONPATH`` and ``COMPILE_LOG`` naming a file, every Python process
that starts (test workers, the book's kernels, the processes they start) imports numba and
listens to its ``numba:compile`` event, which fires only when a kernel is compiled, not when it
is loaded from the cache. At exit a process that compiled anything appends one line: the time,
its pid, its seconds in the compiler, its number of top-level compilations, its command, and
its longest compilations. Importing numba costs each process some time, so a run measured this
way is not a timing of the suite.
"""

from __future__ import annotations

import atexit
import os
import sys
import time

_seconds: list[tuple[float, str]] = []


def _install() -> None:
    from numba.core import event

    class _Compilations(event.Listener):
        """Times the outermost compilation; a kernel's callees compile inside it."""

        def __init__(self) -> None:
            self.depth, self.start, self.name = 0, 0.0, ""

        def on_start(self, ev: event.Event) -> None:
            if self.depth == 0:
                self.start = time.perf_counter()
                self.name = str((ev.data or {}).get("dispatcher", ""))
            self.depth += 1

        def on_end(self, ev: event.Event) -> None:
            self.depth -= 1
            if self.depth == 0:
                _seconds.append((time.perf_counter() - self.start, self.name))

    event.register("numba:compile", _Compilations())


def _write() -> None:
    path = os.environ.get("COMPILE_LOG")
    if not _seconds or not path:
        return
    longest = sorted(_seconds, reverse=True)[:6]
    names = " ".join(f"{s:.1f}:{n.split('function ')[-1].split(' at ')[0]}" for s, n in longest)
    command = " ".join(sys.argv)[:80].replace(" ", "_")
    with open(path, "a") as f:
        f.write(
            f"{time.time():.0f} {os.getpid()} {sum(s for s, _ in _seconds):.2f} "
            f"{len(_seconds)} {command} {names}\n"
        )


if os.environ.get("COMPILE_LOG"):
    try:
        _install()
    except ImportError:  # a Python without numba (a tool's own environment)
        pass
    else:
        atexit.register(_write)
