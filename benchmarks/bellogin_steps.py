"""The statistical-biases chapter's experiments one by one, in one process: wall and CPU seconds
of each :class:`recmeta.papers.bellogin2017.Study` method, and an exact comparison of two sets
of results.

    # with a warm run cache; PYTHONPATH picks the package version to measure
    python benchmarks/bellogin_steps.py measure ml-100k --profile full --results new.pkl
    python benchmarks/bellogin_steps.py compare old.pkl new.pkl

CPU seconds (``time.process_time``, every thread of the process) are the steadier measure on a
shared machine: two versions measured side by side get the same contention, and their CPU
seconds compare even when their wall times do not. ``compare`` checks every frame, series,
array and number of ``Study.results`` for equality to the last bit (NaN equal to NaN).
"""

from __future__ import annotations

import argparse
import pickle
import time
from typing import Any

import numpy as np
import pandas as pd

STEPS = [
    "table3",
    "coverage",
    "fig2",
    "wilcoxon",
    "nonpersonalised",
    "fig9",
    "ar_checks",
    "sparsity",
    "eq5",
    "lemma",
    "proof_step",
    "simulation",
    "positive_shares",
    "positive_ratio",
    "uniform_size",
    "fig6",
    "fig8",
    "identities",
]


def measure(args: argparse.Namespace) -> None:
    from recmeta import arrays
    from recmeta.book import chapters
    from recmeta.papers import bellogin2017 as b17

    arrays.keep_freed_memory()  # as a chapter's process (recmeta.book.execution.start)
    ratings = chapters.ratings(args.dataset, needs="graded")
    settings = b17.Settings.resolve(args.profile)
    study = b17.Study(ratings, settings, dataset=args.dataset)
    wall = cpu = 0.0
    print(f"{'step':18s} {'wall s':>8s} {'CPU s':>8s}")
    for step in args.steps or STEPS:
        t, c = time.perf_counter(), time.process_time()
        getattr(study, step)()
        dt, dc = time.perf_counter() - t, time.process_time() - c
        wall, cpu = wall + dt, cpu + dc
        print(f"{step:18s} {dt:8.1f} {dc:8.1f}", flush=True)
    print(f"{'total':18s} {wall:8.1f} {cpu:8.1f}")
    if args.results:
        kept = {k: v for k, v in study.results.items() if k != "settings"}
        with open(args.results, "wb") as fh:
            pickle.dump(kept, fh)


def _differences(a: Any, b: Any, path: str) -> list[str]:
    if isinstance(a, pd.DataFrame | pd.Series):
        check = (
            pd.testing.assert_frame_equal
            if isinstance(a, pd.DataFrame)
            else pd.testing.assert_series_equal
        )
        try:
            check(a, b, check_exact=True)
        except AssertionError as exc:
            return [f"{path}: {str(exc)[:200]}"]
        return []
    if isinstance(a, dict):
        out = [f"{path}: keys differ {set(a) ^ set(b)}"] if set(a) != set(b) else []
        return out + [d for k in a if k in b for d in _differences(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list | tuple):
        out = [f"{path}: lengths differ"] if len(a) != len(b) else []
        return out + [
            d
            for k, (x, y) in enumerate(zip(a, b, strict=False))
            for d in _differences(x, y, f"{path}[{k}]")
        ]
    if isinstance(a, np.ndarray):
        same = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    else:
        same = bool(a == b) or (a != a and b != b)
    return [] if same else [f"{path}: {a!r} != {b!r}"]


def compare(args: argparse.Namespace) -> None:
    with open(args.before, "rb") as fh:
        before = pickle.load(fh)
    with open(args.after, "rb") as fh:
        after = pickle.load(fh)
    diffs = _differences(before, after, "")
    print("\n".join(diffs) if diffs else f"identical: {len(before)} results")
    if diffs:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(required=True)
    m = sub.add_parser("measure", help="time each experiment of the Study")
    m.add_argument("dataset")
    m.add_argument("--profile", choices=["quick", "full"], default="full")
    m.add_argument("--steps", nargs="+", choices=STEPS, help="these experiments only")
    m.add_argument("--results", help="pickle the Study's results here")
    m.set_defaults(func=measure)
    c = sub.add_parser("compare", help="exact comparison of two pickled results")
    c.add_argument("before")
    c.add_argument("after")
    c.set_defaults(func=compare)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
