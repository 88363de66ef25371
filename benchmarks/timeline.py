"""A chapter executed alone from empty run and analysis caches, with the start and end of every
analysis in each of its processes: where the page and its worker spend their time, and where one
waits for the other (``benchmarks/README.md``).

    .venv/bin/python benchmarks/timeline.py statistical-biases [--out DIR] [--min 1.5]
    .venv/bin/python benchmarks/timeline.py --show DIR/timeline.tsv
    .venv/bin/python benchmarks/timeline.py --cores DIR/samples.tsv [--window 5]

The chapter runs as ``recmeta run CHAPTER --no-html`` with ``benchmarks/timeline`` on
``PYTHONPATH``: its ``sitecustomize`` wraps ``recmeta.analyses.cached_call`` in every process the
chapter starts and logs each call. Printed per process: the outermost analyses of at least
``--min`` seconds (start and end in seconds from the first analysis), then the time inside
analyses and the span from the first start to the last end. A step a process waits for is an
analysis too (it reads the entry the other process writes), so a wait shows as a long call.

Each process also samples itself every half second (``samples.tsv``): the cores it used and the
innermost ``recmeta`` function of its main thread. ``--cores`` prints them by windows of
``--window`` seconds: the cores each process used, their sum, and where the busiest process
was; a sum well below the machine's cores is time a core sat idle.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(chapter: str, out: Path) -> Path:
    """Execute ``chapter`` from empty caches under ``out``; returns the log."""
    out.mkdir(parents=True, exist_ok=True)
    log, samples = out / "timeline.tsv", out / "samples.tsv"
    log.unlink(missing_ok=True)
    samples.unlink(missing_ok=True)
    env = {
        **os.environ,
        "RECMETA_CACHE": str(out / "runs"),
        "RECMETA_ANALYSES": str(out / "analyses"),
        "RECMETA_RESULTS": str(out / "results"),
        "TQDM_DISABLE": "1",
        "TIMELINE_LOG": str(log),
        "TIMELINE_SAMPLES": str(samples),
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


def show_cores(samples: Path, window: float) -> None:
    """Print the cores each process used per ``window`` seconds (see the module's docstring)."""
    rows = []
    for line in samples.read_text().splitlines():
        pid, t, cores, where = line.split("\t")
        rows.append((pid, float(t), float(cores), where))
    t0 = min(r[1] for r in rows)
    total: dict[str, float] = defaultdict(float)
    for pid, _, cores, _ in rows:
        total[pid] += cores
    pids = [p for p, c in sorted(total.items(), key=lambda x: -x[1]) if c * 0.5 >= 1.0]
    print(f"{'from':>6} " + " ".join(f"{p:>8}" for p in pids) + "     sum  busiest process in")
    end = max(r[1] for r in rows) - t0
    at = 0.0
    while at < end:
        part = [r for r in rows if at <= r[1] - t0 < at + window]
        use = {}
        for p in pids:
            mine = [r[2] for r in part if r[0] == p]
            use[p] = sum(mine) / len(mine) if mine else 0.0
        busiest = max(pids, key=lambda p: use[p])
        where = Counter(r[3] for r in part if r[0] == busiest and r[3]).most_common(2)
        names = ", ".join(f"{w} ({n})" for w, n in where)
        cells = " ".join(f"{use[p]:8.2f}" for p in pids)
        print(f"{at:6.0f} {cells} {sum(use.values()):7.2f}  {names}")
        at += window


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chapter", nargs="?", help="a chapter's name, e.g. statistical-biases")
    ap.add_argument("--out", type=Path, help="where the caches, pages and log go")
    ap.add_argument("--min", type=float, default=1.5, help="shortest analysis printed (s)")
    ap.add_argument("--show", type=Path, help="print the timeline of an earlier log")
    ap.add_argument("--cores", type=Path, help="print the cores used, from an earlier samples.tsv")
    ap.add_argument("--window", type=float, default=5.0, help="seconds per line of --cores")
    args = ap.parse_args()
    if args.show:
        show(args.show, args.min)
        return
    if args.cores:
        show_cores(args.cores, args.window)
        return
    if not args.chapter:
        ap.error("name a chapter, or --show a log")
    out = args.out or Path(tempfile.mkdtemp(prefix="timeline-"))
    log = run(args.chapter, out)
    show(log, args.min)
    show_cores(out / "samples.tsv", args.window)


if __name__ == "__main__":
    main()
