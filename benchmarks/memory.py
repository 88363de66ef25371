"""Benchmark: peak memory of turning the roster's runs into the metric engine's arrays.

    .venv/bin/python benchmarks/memory.py --users 10000 --systems 22

Two paths, each in a fresh process, on the same synthetic lists (``--systems`` systems ×
``--users`` users × 100 items out of ``--items``, scores with ties, written once to parquet
files as the run cache holds them):

* ``one frame``: every system's file read and concatenated into one frame, as
  ``recmeta.recommenders.make`` returns it, then ``Runs.from_frame`` (the chapters' path before
  ``runs.make_runs``);
* ``per system``: one file read and turned into ``Runs`` at a time, then ``Runs.concat``
  (``recmeta.recommenders.make_runs``).

Reported: the process's peak resident memory above its level after imports, and that per ranked
position; the two results are checked equal.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write(folder: Path, systems: int, users: int, items: int, depth: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    u = np.repeat(np.arange(1, users + 1), depth)
    for s in range(systems):
        item = np.concatenate([rng.choice(items, depth, replace=False) for _ in range(users)]) + 1
        score = np.round(rng.random(users * depth), 2)  # two decimals: ties
        rank = np.tile(np.arange(1, depth + 1), users)
        pd.DataFrame({"user": u, "item": item, "score": score, "rank": rank}).to_parquet(
            folder / f"s{s:02d}.parquet")
    test = pd.DataFrame({"user": np.repeat(np.arange(1, users + 1), 5),
                         "item": rng.integers(1, items + 1, users * 5), "rating": 5})
    test.drop_duplicates(["user", "item"]).to_parquet(folder / "test.parquet")


def child(folder: Path, path: str) -> dict:
    from recmeta.metrics import Judgments, Runs

    files = sorted(folder.glob("s*.parquet"))
    judgments = Judgments.from_frame(pd.read_parquet(folder / "test.parquet"), threshold=4)
    base = _rss_mb()
    if path == "one":
        frame = pd.concat([pd.read_parquet(f).assign(system=f.stem) for f in files],
                          ignore_index=True)
        frame = frame[["system", *[c for c in frame.columns if c != "system"]]]
        runs = Runs.from_frame(frame, judgments)
        del frame
    else:
        parts = []
        for f in files:
            frame = pd.read_parquet(f).assign(system=f.stem)
            parts.append(Runs.from_frame(frame, judgments))
            del frame
        runs = Runs.concat(parts)
    rise = _peak_mb() - base
    np.save(folder / f"ranks-{path}.npy", runs.ranks)
    np.save(folder / f"tied-{path}.npy", runs.tied)
    return {"path": path, "rise_mb": rise, "positions": int((runs.ranks >= 0).sum()),
            "result_mb": (runs.ranks.nbytes + runs.tied.nbytes) / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=22)
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--items", type=int, default=5_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), args.child[1])))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write(folder, args.systems, args.users, args.items, args.depth, args.seed)
        out = {}
        for path in ("one", "per-system"):
            res = subprocess.run([sys.executable, __file__, "--child", str(folder), path],
                                 capture_output=True, text=True, check=True)
            out[path] = json.loads(res.stdout.strip().splitlines()[-1])
        for what in ("ranks", "tied"):
            if not np.array_equal(np.load(folder / f"{what}-one.npy"),
                                  np.load(folder / f"{what}-per-system.npy")):
                raise SystemExit(f"the two paths give different {what}")
    one, per = out["one"], out["per-system"]
    n = one["positions"]
    print(f"{args.systems} systems × {args.users:,} users × {args.depth} ({n:,} ranked positions), "
          f"{args.items:,} items; the two paths give the same arrays")
    print(f"{'path':<12}{'peak rise MB':>14}{'bytes/position':>16}")
    for name, r in (("one frame", one), ("per system", per)):
        print(f"{name:<12}{r['rise_mb']:>14,.0f}{r['rise_mb'] * 2**20 / n:>16,.0f}")
    print(f"result arrays (ranks, tie blocks): {one['result_mb']:,.0f} MB; "
          f"per system / one frame: {per['rise_mb'] / one['rise_mb']:.2f}")


if __name__ == "__main__":
    main()
