"""Benchmark: the run cache's parquet encoding against pyarrow's defaults, on real runs.

    .venv/bin/python benchmarks/run_cache.py [FOLDER]    # default: $RECMETA_CACHE or _cache/runs

Every run stored under FOLDER (after ``make book``, the full profile's 286 runs: top-100 lists
and whole-grid candidate scores) is written with pyarrow's defaults (dictionary coding on every
column, Snappy) and with :func:`recmeta.recommenders.cache.parquet_options`, then read back as
:func:`~recmeta.recommenders.cache.read_frame` reads it; each read must equal the run. Times are
the best of two per run after a first call (``benchdata.best``), summed over the runs, with the
files' total size.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import best  # noqa: E402

from recmeta.recommenders import cache  # noqa: E402


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else cache.cache_dir()
    files = sorted(p for p in folder.rglob("*.parquet") if not p.name.startswith("."))
    if not files:
        raise SystemExit(f"no runs under {folder}: build the book first (make book)")
    ways = {
        "pyarrow's defaults": lambda schema: {},
        "recmeta (parquet_options)": cache.parquet_options,
    }
    totals = {w: [0.0, 0.0, 0] for w in ways}
    rows = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.parquet"
        for path in files:
            table = pq.read_table(path)
            frame = table.to_pandas()
            rows += table.num_rows
            for way, options in ways.items():
                kw = options(table.schema)
                totals[way][0] += best(lambda t=table, kw=kw: pq.write_table(t, out, **kw), 2)[0]
                totals[way][1] += best(lambda: cache.read_frame(out), 2)[0]
                totals[way][2] += out.stat().st_size
                if not cache.read_frame(out).equals(frame):
                    raise AssertionError(f"{path.name} reads back changed ({way})")
    print(f"{len(files)} runs, {rows:,} rows, under {folder}\n")
    print("| encoding | write (s) | read (s) | size (MB) |\n|---|---:|---:|---:|")
    for way, (w, r, size) in totals.items():
        print(f"| {way} | {w:.2f} | {r:.2f} | {size / 1e6:,.0f} |")
    (dw, dr, ds), (ow, o_r, os_) = totals.values()
    print(
        f"\nratios (defaults / ours): write {dw / ow:.2f}, read {dr / o_r:.2f}, size {ds / os_:.2f}"
    )


if __name__ == "__main__":
    main()
