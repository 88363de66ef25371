"""Benchmark: what numba's first compilations cost a fresh clone.

    .venv/bin/python benchmarks/compile.py engine
    PYTHONPATH=benchmarks/compile_log COMPILE_LOG=/tmp/compile.txt make test
    .venv/bin/python benchmarks/compile.py report /tmp/compile.txt

The package's kernels are compiled with ``cache=True``: the first process that calls one with
new argument types compiles it and writes the result beside the module (``__pycache__``); later
processes load it. A fresh clone has no such files, so its first ``make test`` pays every
compilation once.

* ``engine``: the metric engine's two paths (:func:`recmeta.metrics._kernel.evaluate_lists`,
  which calls the compiled per-user block from threads, and the one-thread kernel
  ``evaluate_lists_serial`` around the same block),
  each compiled in a fresh process on a copy of the package without compiled files, in both
  orders. The second of each order shows what the first left in the cache for it. Each also
  prints how many variants of the shared per-user block (``_table_block``) it holds: numba
  compiles a called function once per argument types, and a literal constant (or a variable
  typed first as one, as ``x = 0`` before a loop that raises it is) makes a variant of its own.
* ``report``: the per-process records of ``benchmarks/compile_log/sitecustomize.py`` (one line
  per process that compiled anything: its seconds spent compiling, the number of top-level
  compilations, its command and its longest compilations), summed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: compiles the engine's kernel for a small input (one thread) or, with "threaded", the
#: threaded kernel; prints the seconds the call took
_CALL = """
import sys, time
import numpy as np
from recmeta.metrics import _plan, score_rankings
if sys.argv[1] == "threaded":
    _plan.PARALLEL_MIN_POSITIONS = 0
from recmeta.metrics import _kernel
start = time.perf_counter()
score_rankings(np.eye(4), ["AUC", "RR", "nDCG@10", "P@5", "infAP"])
took = time.perf_counter() - start
print(len(_kernel._table_block.signatures), took)
"""


def _fresh_copy(folder: Path) -> Path:
    """The package copied into ``folder`` without any compiled file."""
    shutil.copytree(
        ROOT / "recmeta", folder / "recmeta", ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    return folder


def engine() -> None:
    for order in (("serial", "threaded"), ("threaded", "serial")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = _fresh_copy(Path(tmp))
            # this environment without numba's own settings (a cache folder of its own would
            # serve compiled kernels) and the copy on the path
            env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
            env["PYTHONPATH"] = str(copy)
            times: list[float] = []
            compiled: list[int] = []
            for kind in order:
                done = subprocess.run(
                    [sys.executable, "-c", _CALL, kind],
                    cwd=copy,
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                )
                blocks, took = done.stdout.strip().splitlines()[-1].split()
                times.append(float(took))
                compiled.append(int(blocks))
            print(
                f"{order[0]} first: {times[0]:.1f} s, then {order[1]}: {times[1]:.1f} s "
                f"(together {sum(times):.1f} s; the per-user block compiled "
                f"{' and '.join(map(str, compiled))} times)"
            )


def report(path: Path) -> None:
    rows = [line.split(" ", 4) for line in path.read_text().splitlines() if line.strip()]
    total = sum(float(r[2]) for r in rows)
    count = sum(int(r[3]) for r in rows)
    print(f"{len(rows)} processes compiled: {total:.1f} s in {count} top-level compilations")
    for r in sorted(rows, key=lambda r: -float(r[2])):
        print(f"  {float(r[2]):6.1f} s  {int(r[3]):3d}  {r[4][:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("engine", help="the engine's two kernels compiled in fresh processes")
    rep = sub.add_parser("report", help="sum the records of compile_log/sitecustomize.py")
    rep.add_argument("path", type=Path)
    args = parser.parse_args()
    if args.what == "engine":
        engine()
    else:
        report(args.path)


if __name__ == "__main__":
    main()
