"""Benchmark: the k-NN fast path against LensKit's per-user path, and Ray's overhead on one machine.

    .venv/bin/python benchmarks/knn.py                          # ML-100K and the half-million subset
    .venv/bin/python benchmarks/knn.py --datasets ml-100k --systems iknn-20,uknn-30
    .venv/bin/python benchmarks/knn.py --datasets half --roster # + the whole roster on the subset
    .venv/bin/python benchmarks/knn.py --datasets ml-100k --ray --skip-knn   # Ray's overhead

Data: ML-100K, and the half-million-rating MovieLens subset in ``../shared/data/ml-1m-partial``
(the first 487,650 lines of the ML-1M ratings file: users 1-2,999; *not* ML-1M), converted once
to a CSV with the header ``user,item,rating,timestamp`` in a temporary folder and loaded as a
reader loads their own data (``recmeta.data.load(path)``). Split: per-user 80/20 holdout, seed 0.

Part 1 (k-NN): for each of the roster's six k-NN systems, train once, then make the top-100
lists over AllItems for every user twice in a row, with ``recmeta.recommenders.top_n`` on the fast path
(``engine="fast"``, :mod:`recmeta.recommenders.components.knn`) and on LensKit's per-user path
(``engine="lenskit"``, ``lenskit.batch`` with LensKit's default threads), and compare the lists.
Wall and CPU seconds of this process; the speed-up is the ratio of wall times measured side by
side, so both paths see the same machine load.

Part 2 (``--roster``): the whole roster made as ``recmeta runs make`` makes it (train, lists,
cache into an empty temporary cache), per system and in total, with the peak resident memory.

Part 3 (``--ray``): Ray's overhead on this machine. Starts a local cluster with
``ray.init(num_cpus=N)`` (timed), then makes the same lists with ``use_ray=False`` (after one
warm-up call) and twice with ``use_ray=True`` (the first call also starts the worker processes
and ships the model), for a few systems, on the fast path and on LensKit's per-user path.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdata import PARTIAL, load  # noqa: E402

KNN = ["iknn-20", "iknn-imp-20", "iknn-imp-100", "uknn-30", "uknn-imp-30", "uknn-imp-100"]
TOL = 2e-5


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


class Clock:
    """Wall and CPU seconds of a block (CPU: this process, all threads)."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def agreement(fast: pd.DataFrame, slow: pd.DataFrame) -> dict[str, float]:
    """Share of (user, rank) positions with the same item, largest score difference there, and
    users whose lists differ beyond ties: an item scoring clearly above the user's last listed
    score (by more than ``TOL``, relative) in one list but missing from the other list."""
    m = fast.merge(slow, on=["user", "rank"], suffixes=("_f", "_s"), how="outer")
    same = float((m["item_f"] == m["item_s"]).mean())
    dscore = float(np.nanmax(np.abs(m["score_f"] - m["score_s"]))) if len(m) else 0.0
    bad = 0
    for _, g in m.groupby("user"):
        last = min(g["score_s"].min(), g["score_f"].min())
        cut = last + TOL * max(1.0, abs(last))
        sure_f = set(g.loc[g["score_f"] > cut, "item_f"])
        sure_s = set(g.loc[g["score_s"] > cut, "item_s"])
        if sure_f - set(g["item_s"]) or sure_s - set(g["item_f"]):
            bad += 1
    return {"same item": same, "max dscore": dscore, "users beyond ties": bad}


def part_knn(label: str, split, systems: list[str], depth: int) -> pd.DataFrame:
    from recmeta import recommenders
    from recmeta.recommenders import roster

    rows = []
    for name in systems:
        with Clock() as tr:
            model = recommenders.train(roster.get(name), split.train, seed=0, n=depth)
        recommenders.top_n(model, users=split.train["user"].iloc[:1], depth=depth, engine="fast",
                   progress=False)  # load the compiled kernels once, outside the timing
        load0 = _load()
        with Clock() as fa:
            fast = recommenders.top_n(model, depth=depth, engine="fast", progress=False)
        with Clock() as lk:
            slow = recommenders.top_n(model, depth=depth, engine="lenskit", progress=False)
        agree = agreement(fast, slow)
        rows.append({"data": label, "system": name, "train s": tr.wall,
                     "LensKit s": lk.wall, "LensKit CPU s": lk.cpu,
                     "fast s": fa.wall, "fast CPU s": fa.cpu,
                     "speed-up": lk.wall / fa.wall, **agree, "load": f"{load0} -> {_load()}"})
        r = rows[-1]
        print(f"  {label} {name:<13} LensKit {lk.wall:6.2f}s  fast {fa.wall:5.2f}s  "
              f"x{r['speed-up']:5.1f}  same {agree['same item']:.4f}  "
              f"beyond ties {agree['users beyond ties']}  load {r['load']}", flush=True)
    return pd.DataFrame(rows)


def part_roster(label: str, split, depth: int) -> pd.DataFrame:
    from recmeta import recommenders
    from recmeta.recommenders import roster

    rows = []
    with tempfile.TemporaryDirectory() as root, Clock() as total:
        for s in roster.systems("all"):
            with Clock() as c:
                recommenders.make([s], split.train, dataset=label, split="holdout-0.2", seed=0,
                          depth=depth, root=root, progress=False)
            rows.append({"system": s.name, "wall s": c.wall, "CPU s": c.cpu})
            print(f"  {s.name:<16} {c.wall:7.1f}s", flush=True)
    print(f"whole roster on {label}: {total.wall:.0f} s wall ({total.wall / 60:.1f} min), "
          f"{total.cpu:.0f} s CPU, peak RSS {_peak_mb():.0f} MB, load {_load()}")
    return pd.DataFrame(rows)


def part_ray(label: str, split, systems: list[str], depth: int, cpus: int) -> pd.DataFrame:
    import ray

    from recmeta import recommenders
    from recmeta.recommenders import roster

    with Clock() as start:
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    print(f"ray.init(num_cpus={cpus}): {start.wall:.1f} s")
    rows = []
    try:
        for name in systems:
            model = recommenders.train(roster.get(name), split.train, seed=0, n=depth)
            for engine in ("fast", "lenskit"):
                recommenders.top_n(model, depth=depth, engine=engine, progress=False)  # warm-up
                with Clock() as here:
                    a = recommenders.top_n(model, depth=depth, engine=engine, progress=False)
                with Clock() as first:  # the first call ships the model to the workers
                    b = recommenders.top_n(model, depth=depth, engine=engine, use_ray=True,
                                   progress=False)
                with Clock() as again:
                    recommenders.top_n(model, depth=depth, engine=engine, use_ray=True, progress=False)
                agree = agreement(a, b)
                rows.append({"data": label, "system": name, "engine": engine,
                             "local s": here.wall, "Ray s (first)": first.wall,
                             "Ray s (again)": again.wall,
                             "overhead s": again.wall - here.wall,
                             "users beyond ties": agree["users beyond ties"], "load": _load()})
                print(f"  {name:<13} {engine:<8} local {here.wall:6.2f}s  Ray {first.wall:6.2f}s "
                      f"/ {again.wall:6.2f}s  beyond ties {agree['users beyond ties']}",
                      flush=True)
    finally:
        ray.shutdown()
    out = pd.DataFrame(rows)
    out.attrs["init s"] = start.wall
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="ml-100k,half",
                    help="comma-separated: ml-100k, ml-latest-small, half (the subset)")
    ap.add_argument("--systems", default=",".join(KNN), help="k-NN systems of part 1")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--partial", type=Path, default=PARTIAL, help="the partial ratings .dat.gz")
    ap.add_argument("--skip-knn", action="store_true", help="skip part 1")
    ap.add_argument("--roster", action="store_true", help="part 2: the whole roster")
    ap.add_argument("--ray", action="store_true", help="part 3: Ray's overhead")
    ap.add_argument("--ray-systems", default="pop,iknn-imp-20,uknn-30")
    ap.add_argument("--ray-cpus", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")

    from recmeta.data import splits

    pd.set_option("display.width", 200)
    print(f"{os.cpu_count()} CPUs, load average {_load()}")
    tables = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.datasets.split(","):
            label, df = load(name.strip(), Path(folder), args.partial)
            split = splits.holdout_per_user(df, 0.2, seed=0)
            tr = split.train
            print(f"\n{label}: {len(tr):,} training ratings, {tr['user'].nunique():,} users, "
                  f"{tr['item'].nunique():,} items")
            if not args.skip_knn:
                tables.append(part_knn(label, split, args.systems.split(","), args.depth))
            if args.roster:
                print(part_roster(label, split, args.depth).to_markdown(index=False,
                                                                       floatfmt=".1f"))
            if args.ray:
                ray_table = part_ray(label, split, args.ray_systems.split(","), args.depth,
                                     args.ray_cpus)
                print(f"\nRay on one machine ({label}; ray.init {ray_table.attrs['init s']:.1f} s)")
                print(ray_table.to_markdown(index=False, floatfmt=".2f"))
    if tables:
        table = pd.concat(tables, ignore_index=True)
        print("\nk-NN lists: LensKit's per-user path vs recmeta's fast path (top-100, AllItems)")
        print(table.to_markdown(index=False, floatfmt=".2f"))
        print(f"\npeak RSS {_peak_mb():.0f} MB; load average at the end {_load()}")


if __name__ == "__main__":
    main()
