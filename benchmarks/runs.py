"""Benchmark: the whole roster on ML-100K, and recmeta's run generation vs ``lenskit.batch``.

    .venv/bin/python benchmarks/runs.py                  # whole roster, then the comparison
    .venv/bin/python benchmarks/runs.py --systems pop,wrmf-50 --depth 100

Phase 1 makes the roster's runs as a user would (``recmeta.recommenders.make`` into an empty temporary
cache: train every system on the per-user 80/20 split, top-100 over AllItems) and reports the
wall time per system, the total and the process's peak resident memory. Phase 2 times, on the
same trained pipelines, ``lenskit.batch.recommend`` (n=depth, all users) against
``recmeta.recommenders.top_n`` and checks that both give the same lists up to tied scores.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np
import pandas as pd


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="ml-100k")
    ap.add_argument("--systems", default="all")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=None, help="LensKit batch threads (default: LensKit's)")
    ap.add_argument("--skip-lenskit", action="store_true", help="phase 1 only")
    args = ap.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")

    from lenskit.batch import recommend

    from recmeta import data, recommenders
    from recmeta.data import splits
    from recmeta.recommenders import roster

    df = data.load(args.dataset, download=False)
    split = splits.holdout_per_user(df, 0.2, seed=args.seed)
    systems = roster.systems(args.systems)
    print(f"{args.dataset}: {len(split.train)} training ratings, {split.train['user'].nunique()} users, "
          f"{split.train['item'].nunique()} items; {len(systems)} systems; depth {args.depth}")

    rows, models = [], {}
    with tempfile.TemporaryDirectory() as root:
        t_all = time.perf_counter()
        for s in systems:
            t0 = time.perf_counter()
            m = recommenders.train(s, split.train, seed=args.seed, n=args.depth)
            t1 = time.perf_counter()
            out = recommenders.top_n(m, depth=args.depth, progress=False)
            t2 = time.perf_counter()
            from recmeta.recommenders import cache

            key = cache.RunKey(args.dataset, "holdout-0.2", args.seed, s.name, s.config_key(),
                               f"top-all-{args.depth}", cache.fingerprint(split.train))
            cache.write_frame(out, key.path(root), key)
            t3 = time.perf_counter()
            models[s.name] = (m, out)
            fast = recommenders.fast_scorer(m) is not None
            rows.append({"system": s.name, "path": "fast" if fast else "lenskit",
                         "train_s": t1 - t0, "lists_s": t2 - t1, "total_s": t3 - t0})
            print(f"  {s.name:<16} train {t1 - t0:6.2f}s  lists {t2 - t1:6.2f}s ({rows[-1]['path']})",
                  flush=True)
        wall = time.perf_counter() - t_all
    table = pd.DataFrame(rows)
    print(f"\nwhole roster: {wall:.1f} s wall, peak RSS {_peak_mb():.0f} MB")

    if args.skip_lenskit:
        print(table.to_string(index=False, float_format="%.2f"))
        return
    ratios = []
    for name, (m, ours) in models.items():
        if recommenders.fast_scorer(m) is None:
            continue
        t0 = time.perf_counter()
        recs = recommend(m.pipeline, list(m.data.users.ids()), n=args.depth, n_jobs=args.n_jobs)
        t1 = time.perf_counter()
        lk = recs.to_df().rename(columns={"user_id": "user", "item_id": "item"})
        lk = recommenders.rank_frame(lk[["user", "item", "score"]], args.depth)
        same = ours.merge(lk, on=["user", "rank"], suffixes=("", "_lk"))
        agree = float((same["item"] == same["item_lk"]).mean())
        dmax = float(np.max(np.abs(same["score"] - same["score_lk"])))
        t_ours = table.loc[table.system == name, "lists_s"].item()
        ratios.append({"system": name, "lenskit_s": t1 - t0, "recmeta_s": t_ours,
                       "speed-up": (t1 - t0) / t_ours, "same item at rank": agree, "max |Δscore|": dmax})
        print(f"  {name:<16} lenskit {t1 - t0:6.2f}s  recmeta {t_ours:6.3f}s  "
              f"x{(t1 - t0) / t_ours:6.1f}  same item {agree:.4f}  max|dscore| {dmax:.1e}", flush=True)
    r = pd.DataFrame(ratios)
    print(table.merge(r, on="system", how="left").to_markdown(index=False, floatfmt=".3g")
          if _has_tabulate() else table.merge(r, on="system", how="left").to_string(index=False))
    print(f"\ntotal list time, fast-path systems: lenskit {r['lenskit_s'].sum():.1f}s, "
          f"recmeta {r['recmeta_s'].sum():.2f}s (x{r['lenskit_s'].sum() / r['recmeta_s'].sum():.0f})")


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
