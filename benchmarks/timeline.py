"""A chapter executed alone from empty run and analysis caches, with the start and end of every
analysis in each of its processes: where the page and its worker spend their time, and where one
waits for the other (``benchmarks/README.md``).

    .venv/bin/python benchmarks/timeline.py statistical-biases [--out DIR] [--min 1.5]
    .venv/bin/python benchmarks/timeline.py --show DIR/timeline.tsv

The chapter runs as ``recmeta run CHAPTER --no-html`` with ``benchmarks/timeline`` on
``PYTHONPATH``: its ``sitecustomize`` wraps ``recmeta.analyses.cached_call`` in every process the
chapter starts and logs each call. Printed per process: the outermost analyses of at least
``--min`` seconds (start and end in seconds from the first analysis), then the time inside
analyses and the span from the first start to the last end. A step a process waits for is an
analysis too (it reads the entry the other process writes), so a wait shows as a long call.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(chapter: str, out: Path) -> Path:
    """Execute ``chapter`` from empty caches under ``out``; returns the log."""
    out.mkdir(parents=True, exist_ok=True)
    log = out / "timeline.tsv"
    log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "RECMETA_CACHE": str(out / "runs"),
        "RECMETA_ANALYSES": str(out / "analyses"),
        "RECMETA_RESULTS": str(out / "results"),
        "TQDM_DISABLE": "1",
        "TIMELINE_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(
            [str(HERE / "timeline"), str(HERE.parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    recmeta = Path(sys.executable).with_name("recmeta")
    cmd = [str(recmeta), "run", chapter, "--no-html", "--out", str(out / "pages")]
    subprocess.run(cmd, env=env, check=True)
    return log


def show(log: Path, least: float) -> None:
    """Print each process's outermost analyses (see the module's docstring)."""
    calls = []
    for line in log.read_text().splitlines():
        pid, name, start, end = line.split("\t")
        short = name.rsplit(".", 2)
        calls.append((pid, ".".join(short[-2:]), float(start), float(end)))
    t0 = min(c[2] for c in calls)
    by: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for pid, name, start, end in calls:
        by[pid].append((start - t0, end - t0, name))
    for pid, spans in by.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        outer: list[tuple[float, float, str]] = []
        for s in spans:
            if outer and s[1] <= outer[-1][1]:
                continue  # inside the call before it
            outer.append(s)
        print(f"process {pid}")
        print(f"  {'start':>7} {'end':>7} {'seconds':>7}  analysis")
        for a, b, name in outer:
            if b - a >= least:
                print(f"  {a:7.1f} {b:7.1f} {b - a:7.1f}  {name}")
        inside = sum(b - a for a, b, _ in outer)
        print(f"  inside analyses {inside:.1f} s; from {outer[0][0]:.1f} to {outer[-1][1]:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chapter", nargs="?", help="a chapter's name, e.g. statistical-biases")
    ap.add_argument("--out", type=Path, help="where the caches, pages and log go")
    ap.add_argument("--min", type=float, default=1.5, help="shortest analysis printed (s)")
    ap.add_argument("--show", type=Path, help="print the timeline of an earlier log")
    args = ap.parse_args()
    if args.show:
        show(args.show, args.min)
        return
    if not args.chapter:
        ap.error("name a chapter, or --show a log")
    out = args.out or Path(tempfile.mkdtemp(prefix="timeline-"))
    show(run(args.chapter, out), args.min)


if __name__ == "__main__":
    main()
