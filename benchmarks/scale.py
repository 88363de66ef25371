"""Benchmark: how the book's pipeline grows with users and items, up to ML-20M's shape.

    .venv/bin/python benchmarks/scale.py bench --sizes ml-100k,half --phases runs,metrics,tests,curve
    .venv/bin/python benchmarks/scale.py bench --sizes s64,s16 --systems pop,bias,wrmf-50
    .venv/bin/python benchmarks/scale.py report benchmarks/results/scale-*.json > table.md

Sizes (users, items, ratings): ``ml-100k``; ``ml-latest-small`` (610 users, 9,724 items);
``half``, the half-million-rating MovieLens subset
(users 1-2,999 of ML-1M's ratings file, partial; :mod:`benchdata`); and synthetic tables shaped
like ML-20M (:func:`benchdata.ml20m_like`) on two ladders. Ladder A (``s64``, ``s16``, ``s4``,
``s1``) scales users and items of ML-20M together by f = 1/64, 1/16, 1/4, 1 and the ratings by
f^1.5 (smaller tables are denser, as real ones are); ladder B (``u64``, ``s16``, ``u4``) keeps
``s16``'s 1,672 items and 36.1 ratings per user and varies the users by the same factors, which
separates the two exponents.

Phases, each in a fresh process per size (and per system for the runs), after a setup that is
not timed (reading the split, building judgments and runs):

* ``runs``: ``recmeta.recommenders.make`` of one roster system into an empty cache folder of this
  benchmark: train on the per-user 80/20 holdout (seed 0), top-100 over AllItems, write;
* ``metrics``: ``recmeta.metrics.evaluate`` of 22 systems' runs at the book's metrics (P, R,
  nDCG, AP at 10 and 100, RR, bpref@100, infAP@100; relevant = rating >= 4);
* ``tests``: ``recmeta.metaeval.significance.permutation_test`` on all 231 pairs of the 22 systems' per-user
  nDCG@100 (users with a relevant test item), 100,000 permutations;
* ``curve``: one robustness curve on the robustness chapter's code path
  (:mod:`recmeta.papers.valcarce2018`): 20 shares x 50 samples of the test ratings
  (``incompleteness.random_ratings``), each scored by the engine's ``Subsets`` (as the chapter does) at @100 for
  its seven metrics, then Kendall's tau against the full test set.

Phases after ``runs`` take the 22 roster systems' runs from this benchmark's cache; where fewer
were made at a size (the roster does not fit the budget on the largest ones), the runs that
exist are repeated with each user's list rotated by 1, 2, ... positions to make 22 systems (same
lengths and hits, other orders: :func:`rotated`), and the record says how many were real.

Each child process is watched by the parent: wall time, CPU time of the process (all threads),
resident memory (the child samples its own every 20 ms during the phase; the parent samples the
process tree every 0.2 s and ends it above ``--mem-gb``); a child past ``--timeout`` or the
memory budget is ended and recorded as such, never dropped. Records go to a JSON file as they
come (``--out``); ``report`` turns one or more files into the tables and the growth fits
(``time = c * users^a * items^b`` by least squares in logs over the synthetic sizes, and
``time = c * ratings^a`` over every size), with the time at ML-20M's shape measured or
extrapolated (a system measured on the small sizes only is scaled like its family's
representative: :data:`FAMILY`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import benchdata  # noqa: E402

from recmeta.book.fitting import fit_growth, power_fit as fit  # noqa: E402

ML20M_U, ML20M_I, ML20M_R = benchdata.ML20M_SHAPE
#: synthetic sizes: name -> (users, items, ratings)
SYNTHETIC: dict[str, tuple[int, int, int]] = {
    **{f"s{d}": (round(ML20M_U / d), round(ML20M_I / d), round(ML20M_R / d**1.5))
       for d in (64, 16, 4, 1)},
    **{f"u{d}": (round(ML20M_U / d), round(ML20M_I / 16), round(ML20M_U / d * ML20M_R / 16**1.5
                                                                 / round(ML20M_U / 16)))
       for d in (64, 4)},
}
#: the real tables: ML-100K, the half-million subset, and ml-latest-small (the book's second
#: dataset: 16 items per user where the others have 2 to 4, so the fits see how the runs grow
#: with the items)
REAL = ["ml-100k", "half", "ml-latest-small"]
SIZES = [*REAL, *SYNTHETIC]
PHASES = ["runs", "metrics", "tests", "curve"]
N_SYSTEMS = 22
BOOK_METRICS = ["P@10", "P@100", "R@10", "R@100", "nDCG@10", "nDCG@100", "AP@10", "AP@100", "RR",
                "bpref@100", "infAP@100"]
CURVE_METRICS = ["P", "R", "AP", "nDCG", "RR", "bpref", "infAP"]
THRESHOLD = 4
SPLIT = "holdout-0.2"


# ------------------------------------------------------------------------------- data and split
def size_dir(work: Path, size: str) -> Path:
    return work / size.replace("/", "_")


def prepare(work: Path, size: str) -> dict:
    """Ratings of ``size`` and their per-user 80/20 split (seed 0), written once under ``work``."""
    folder = size_dir(work, size)
    meta_path = folder / "meta.json"
    if meta_path.exists():
        return json.loads(meta_path.read_text())
    from recmeta.data import splits

    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if size in SYNTHETIC:
        df = benchdata.ml20m_like(*SYNTHETIC[size], seed=0)
    elif size in REAL:
        _, df = benchdata.load(size, work)
    else:
        raise ValueError(f"unknown size {size!r}; choose from {', '.join(SIZES)}")
    generated = time.perf_counter() - t0
    split = splits.holdout_per_user(df, 0.2, seed=0)
    split.train.reset_index(drop=True).to_parquet(folder / "train.parquet")
    split.test.reset_index(drop=True).to_parquet(folder / "test.parquet")
    meta = {"size": size, "users": int(df["user"].nunique()), "items": int(df["item"].nunique()),
            "ratings": int(len(df)), "train": int(len(split.train)), "test": int(len(split.test)),
            "generate_s": generated}
    meta_path.write_text(json.dumps(meta))
    return meta


def read_split(work: Path, size: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = size_dir(work, size)
    return pd.read_parquet(folder / "train.parquet"), pd.read_parquet(folder / "test.parquet")


# ------------------------------------------------------------------------------- child side
def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Watch:
    """Wall and CPU seconds (this process, all threads) of a block, and its peak resident MB
    (sampled every 20 ms by a thread)."""

    def __enter__(self):
        self.before = _rss_mb()
        self.peak = self.before
        self._stop = threading.Event()

        def sample():
            while not self._stop.wait(0.02):
                self.peak = max(self.peak, _rss_mb())

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())


def _run_key_path(work: Path, size: str, name: str, train: pd.DataFrame) -> Path:
    from recmeta.recommenders import cache, roster

    s = roster.get(name)
    key = cache.RunKey(size, SPLIT, 0, s.name, s.config_key(), "top-all-100",
                       cache.fingerprint(train, None))
    return key.path(size_dir(work, size) / "runs")


def _all_runs(work: Path, size: str, train: pd.DataFrame, judgments) -> tuple[object, list[str]]:
    """The roster's runs made at ``size`` as one ``Runs``, topped up to 22 systems by rotating
    the lists of the real ones (:func:`rotated`).

    Each system's frame becomes a ``Runs`` on its own before ``Runs.concat`` maps the item codes
    to one shared index, which holds one system's rows in memory at a time (one frame of all 22
    systems, as ``recommenders.make`` returns it, takes about 290 bytes per ranked position with
    ``Runs.from_frame``'s work arrays, measured on the subset: about 82 GiB at ML-20M's shape).
    The rotated copies carry no tie blocks (the phases read the stored order)."""
    import dataclasses

    from recmeta.metrics import Runs
    from recmeta.recommenders import cache, roster

    parts, real = [], []
    for name in roster.names():
        path = _run_key_path(work, size, name, train)
        if path.exists():
            parts.append(Runs.from_frame(cache.read_frame(path), judgments, system=name))
            real.append(name)
    if not parts:
        raise RuntimeError(f"no runs made at {size} yet: run the 'runs' phase first")
    run = Runs.concat(parts)
    ranks, names, shift = [run.ranks], list(real), 1
    while len(names) < N_SYSTEMS:
        for k in range(min(len(real), N_SYSTEMS - len(names))):
            ranks.append(rotated(run.ranks[k], shift)[None])
            names.append(f"{real[k]}~{shift}")
        shift += 1
    run = dataclasses.replace(run, systems=pd.Index(names, name="system"),
                              ranks=np.concatenate(ranks), tied=None)
    return run, real


def rotated(ranks: np.ndarray, shift: int) -> np.ndarray:
    """Lists (users × depth of item codes, -1 = none) with each user's list rotated by ``shift``:
    position p takes the item of position (p + shift) mod n_u, n_u the list's length."""
    n = (ranks >= 0).sum(axis=1, keepdims=True)
    pos = np.arange(ranks.shape[1])[None, :]
    src = (pos + shift) % np.maximum(n, 1)
    out = np.take_along_axis(ranks, src, axis=1)
    return np.where(pos < n, out, -1).astype(ranks.dtype)


def child(work: Path, size: str, phase: str, system: str | None) -> dict:
    """Run one phase at one size in this process; returns the measurements."""
    from recmeta import recommenders
    from recmeta.metrics import Judgments
    from recmeta.recommenders import roster

    t0 = time.perf_counter()
    train, test = read_split(work, size)
    out: dict = {}
    if phase == "runs":
        path = _run_key_path(work, size, system, train)
        if path.exists():
            path.unlink()
        setup = time.perf_counter() - t0
        with Watch() as w:
            frame = recommenders.make([roster.get(system)], train, dataset=size, split=SPLIT, seed=0,
                              depth=100, root=size_dir(work, size) / "runs", progress=False)
        out["rows"] = int(len(frame))
        if system.startswith("iknn"):  # item k-NN's fast path needs dense item x item matrices
            out["path"] = "fast" if _dense_fits(train) else "lenskit"
    else:
        judgments = Judgments.from_frame(test, threshold=THRESHOLD)
        run, real = _all_runs(work, size, train, judgments)
        out["real_systems"] = len(real)
        out["positions"] = int((run.ranks >= 0).sum())
        setup = time.perf_counter() - t0
        if phase == "metrics":
            from recmeta.metrics import evaluate

            # load (or compile) the compiled pass outside the timing: the same call once, since
            # large inputs take a threaded variant of the pass
            evaluate(judgments, run, BOOK_METRICS)
            with Watch() as w:
                res = evaluate(judgments, run, BOOK_METRICS)
            out["values"] = int(len(res))
        elif phase == "tests":
            from recmeta.metaeval import significance
            from recmeta.metrics import score_matrix

            scores = significance.evaluated_users(score_matrix(judgments, run, "nDCG@100"))
            out["users_tested"] = int(scores.shape[1])
            significance.permutation_test(scores[:2], seed=0, n_permutations=10)
            with Watch() as w:
                p = significance.permutation_test(scores, seed=20180702, n_permutations=100_000)
            out["pairs"] = int(p.size)
        elif phase == "curve":
            out.update(_curve(judgments, run))
            w = out.pop("_watch")
        else:
            raise ValueError(f"unknown phase {phase!r}; choose from {', '.join(PHASES)}")
    out.update({"setup_s": setup, "wall_s": w.wall, "cpu_s": w.cpu, "rss_before_mb": w.before,
                "peak_mb": w.peak, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                / 1024})
    return out


def _dense_fits(train: pd.DataFrame) -> bool:
    """Whether item k-NN's dense matrices fit ``recmeta.recommenders.components.knn.dense_cap()`` here."""
    from recmeta.recommenders.components import knn

    return knn.item_matrices_bytes(train["item"].nunique()) <= knn.dense_cap()


def _curve(judgments, run) -> dict:
    """One robustness curve as the chapter computes it (``valcarce2018.analyse``, sparsity)."""
    from recmeta.metaeval import agreement, incompleteness
    from recmeta.metrics import Subsets

    measures = [f"{m}@100" for m in CURVE_METRICS]
    # load the compiled code once, outside the timing
    warm = Subsets(judgments, run, measures, infap="pooled")
    warm.means(np.ones((1, len(judgments.to_frame())), dtype=bool))
    del warm
    with Watch() as w:
        subsets = Subsets(judgments, run, measures, infap="pooled")
        full = np.stack(list(subsets.score(None).values()))  # measures × systems × users
        with np.errstate(invalid="ignore"):
            means = np.nanmean(full, axis=-1)
        test = judgments.to_frame()
        masks = incompleteness.random_ratings(test, incompleteness.sparsity_shares(), 50,
                                              seed=20180702)
        sparse = subsets.means(masks.keep)["mean"]  # masks × measures × systems
        tau = np.array([agreement.kendall_tau(m_j, means) for m_j in sparse])
    return {"_watch": w, "masks": len(masks), "tau_at_5pct_mean": float(
        np.nanmean(tau[masks.share == masks.share.min()]))}


# ------------------------------------------------------------------------------- parent side
def _tree_rss_mb(pid: int) -> float:
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def run_child(work: Path, size: str, phase: str, system: str | None, timeout: float,
              mem_gb: float) -> dict:
    """One child process; returns its record with ``status`` ok / timeout / memory / error."""
    result = work / f".child-{os.getpid()}.json"
    result.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "child", "--work", str(work),
           "--size", size, "--phase", phase, "--result", str(result)]
    if system:
        cmd += ["--system", system]
    load0 = os.getloadavg()[0]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    status, tree_peak = "ok", 0.0
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
    reader.start()
    while proc.poll() is None:
        tree_peak = max(tree_peak, _tree_rss_mb(proc.pid))
        if tree_peak > mem_gb * 1024:
            status = "memory"
        elif time.perf_counter() - t0 > timeout:
            status = "timeout"
        if status != "ok":
            os.killpg(proc.pid, 9)
            proc.wait()
            break
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    reader.join(timeout=5)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec = {"size": size, "phase": phase, "system": system, "status": status,
           "child_wall_s": wall, "child_cpu_s": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
           "tree_peak_mb": tree_peak, "load_before": load0, "load_after": os.getloadavg()[0],
           "timeout_s": timeout, "mem_gb": mem_gb}
    if status == "ok" and proc.returncode != 0:
        rec["status"] = "error"
        rec["error"] = "".join(err_lines[-15:])
    if result.exists():
        rec.update(json.loads(result.read_text()))
        result.unlink()
    return rec


def bench(args) -> None:
    from recmeta.recommenders import roster

    work = Path(args.work)
    out = Path(args.out)
    records = json.loads(out.read_text()) if out.exists() else []
    systems = roster.names() if args.systems == "all" else args.systems.split(",")
    for size in args.sizes.split(","):
        t0 = time.perf_counter()
        meta = prepare(work, size)
        print(f"{size}: {meta['users']:,} users, {meta['items']:,} items, {meta['ratings']:,} "
              f"ratings (ready in {time.perf_counter() - t0:.1f} s; generated in "
              f"{meta['generate_s']:.1f} s)", flush=True)
        for phase in args.phases.split(","):
            for system in (systems if phase == "runs" else [None]):
                rec = run_child(work, size, phase, system, args.timeout, args.mem_gb)
                rec.update({k: meta[k] for k in ("users", "items", "ratings", "train", "test")})
                records.append(rec)
                out.write_text(json.dumps(records, indent=1))
                what = f"{phase}{':' + system if system else ''}"
                print(f"  {what:<22} {rec['status']:<7} wall {rec.get('wall_s', float('nan')):8.2f} s"
                      f"  cpu {rec.get('cpu_s', float('nan')):8.2f} s  peak "
                      f"{rec.get('peak_mb', rec['tree_peak_mb']):7.0f} MB  (child {rec['child_wall_s']:.1f} s,"
                      f" load {rec['load_before']:.1f})", flush=True)
                if rec["status"] == "error":
                    print(rec["error"], flush=True)
        if args.clean:
            shutil.rmtree(size_dir(work, size) / "runs", ignore_errors=True)


# ------------------------------------------------------------------------------- report
LADDER_A = ["s64", "s16", "s4", "s1"]
#: systems measured on the small sizes only are scaled to ML-20M's shape like the system of their
#: family that was measured on the large ones (its fitted or measured growth from s16)
FAMILY = {"iknn-20": "iknn-imp-20", "iknn-imp-100": "iknn-imp-20", "uknn-30": "uknn-imp-30",
          "uknn-imp-100": "uknn-imp-30", "kr-x": "wrmf-50", "wrmf-100": "wrmf-50",
          "biasedmf-50": "wrmf-50", "funksvd-50": "flexmf-bpr", "biasedsvd-50": "bias",
          "flexmf-warp": "flexmf-bpr", "flexmf-logistic": "flexmf-bpr", "kr-z": "kr-y"}


def predict(f: dict, *xs: float) -> float:
    return float(np.exp(f["coef"][0] + sum(a * np.log(x) for a, x in zip(f["coef"][1:], xs))))


def _frame(records: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(records)
    df["system"] = df["system"].fillna("")
    df["rise_mb"] = df["peak_mb"] - df["rss_before_mb"]
    # the last record of each (size, phase, system) counts
    return df.drop_duplicates(["size", "phase", "system"], keep="last").reset_index(drop=True)


def _cell(r: pd.Series, what: str = "wall_s") -> str:
    if r["status"] != "ok":
        return f"{r['status']} (> {r['timeout_s']:.0f} s)" if r["status"] == "timeout" else r["status"]
    return f"{r[what]:,.2f}" if r[what] < 10 else f"{r[what]:,.0f}"


def _exp(f: dict, i: int) -> str:
    a, se = f["coef"][i], f["se"][i]
    return f"{a:.2f}" if np.isnan(se) else f"{a:.2f} ± {se:.2f}"


def _fits(df: pd.DataFrame, what: str = "wall_s") -> dict | None:
    """The two growth models where ``df`` (one phase or system) ran: users and items over the
    synthetic sizes (``"ui"``, needs 4 sizes and two shapes), ratings over every size (``"r"``)."""
    ok = df[(df["status"] == "ok") & df["size"].isin(SYNTHETIC) & (df[what] > 0)]
    out = {}
    if len(ok) >= 4 and ok["users"].nunique() > 1 and (ok["users"] / ok["items"]).nunique() > 1:
        out["ui"] = fit(ok[what].to_numpy(), ok["users"].to_numpy(float), ok["items"].to_numpy(float))
    every = df[(df["status"] == "ok") & (df[what] > 0)]  # real datasets too
    if len(every) >= 3 and every["ratings"].nunique() >= 3:
        out["r"] = fit(every[what].to_numpy(), every["ratings"].to_numpy(float))
    return out or None


def _local_slope(df: pd.DataFrame, what: str) -> str:
    """Exponent of ratings between the two largest sizes of ladder A where ``df`` ran."""
    ok = df[(df["status"] == "ok") & df["size"].isin(LADDER_A) & (df[what] > 0)]
    ok = ok.sort_values("ratings").tail(2)
    if len(ok) < 2:
        return ""
    t, r = ok[what].to_numpy(), ok["ratings"].to_numpy(float)
    return f"{np.log(t[1] / t[0]) / np.log(r[1] / r[0]):.2f} ({ok['size'].iat[0]}→{ok['size'].iat[1]})"


def _fit_text(f: dict | None) -> tuple[str, str, str, str]:
    if not f:
        return "", "", "", ""
    ui = f.get("ui")
    r = f.get("r")
    a = _exp(ui, 1) if ui else ""
    b = _exp(ui, 2) if ui else ""
    res = []
    if ui:
        res.append(f"×{ui['factor'].min():.2f}–{ui['factor'].max():.2f} (n={ui['n']})")
    ra = _exp(r, 1) if r else ""
    if r:
        res.append(f"ratings: ×{r['factor'].min():.2f}–{r['factor'].max():.2f} (n={r['n']})")
    return a, b, ra, "; ".join(res)


def _extrapolate(f: dict | None, users: float, items: float, ratings: float) -> float | None:
    if not f:
        return None
    if "ui" in f:
        return predict(f["ui"], users, items)
    return predict(f["r"], ratings)


def report(records: list[dict]) -> str:
    """Markdown: sizes, one table per phase, growth fits, extrapolations and memory limits."""
    df = _frame(records)
    order = [s for s in SIZES if s in set(df["size"])]
    sizes = df.drop_duplicates("size").set_index("size").loc[order]
    lines = ["### Sizes", "", "| size | users | items | ratings | train | test |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, r in sizes.iterrows():
        lines.append(f"| {name} | {r['users']:,} | {r['items']:,} | {r['ratings']:,} | "
                     f"{r['train']:,} | {r['test']:,} |")

    # (a) runs: systems × sizes
    runs_df = df[df["phase"] == "runs"]
    if len(runs_df):
        lines += ["", "### (a) Runs, per system: wall s / CPU s / peak MB", "",
                  "| system | " + " | ".join(order) + " |", "|---|" + "---:|" * len(order)]
        for system in [s for s in dict.fromkeys(runs_df["system"])]:
            cells = []
            for size in order:
                r = runs_df[(runs_df["system"] == system) & (runs_df["size"] == size)]
                if not len(r):
                    cells.append("not run")
                    continue
                r = r.iloc[0]
                cells.append(_cell(r) if r["status"] != "ok" else
                             f"{_cell(r)} / {_cell(r, 'cpu_s')} / {r['peak_mb']:,.0f}")
            lines.append(f"| {system} | " + " | ".join(cells) + " |")
        tot = []
        for size in order:
            r = runs_df[runs_df["size"] == size]
            n_ok = int((r["status"] == "ok").sum())
            tot.append(f"{r.loc[r['status'] == 'ok', 'wall_s'].sum():,.0f} s ({n_ok} systems)"
                       if len(r) else "")
        lines.append("| **sum of the measured** | " + " | ".join(tot) + " |")

    # (b)-(d): one row per size
    titles = {"metrics": "(b) Metric engine: `evaluate`, 22 systems, 11 measures",
              "tests": "(c) Permutation tests: 231 pairs, 100,000 permutations",
              "curve": "(d) One robustness curve: 20 shares × 50 samples, 7 metrics @100"}
    for phase, title in titles.items():
        p = df[df["phase"] == phase]
        if not len(p):
            continue
        lines += ["", f"### {title}", "",
                  "| size | users | items | ratings | runs (real systems) | wall s | CPU s | "
                  "peak MB | rise MB | status |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for size in order:
            r = p[p["size"] == size]
            if not len(r):
                m = sizes.loc[size]
                lines.append(f"| {size} | {m['users']:,} | {m['items']:,} | {m['ratings']:,} | | | "
                             "| | | not run (time budget) |")
                continue
            r = r.iloc[0]
            ok = r["status"] == "ok"
            real = r.get("real_systems")
            lines.append(
                f"| {size} | {r['users']:,} | {r['items']:,} | {r['ratings']:,} | "
                f"{'' if pd.isna(real) else int(real)} | {_cell(r) if ok else ''} | "
                f"{_cell(r, 'cpu_s') if ok else ''} | {r['peak_mb']:,.0f} | {r['rise_mb']:,.0f} | "
                f"{r['status']} |" if ok else
                f"| {size} | {r['users']:,} | {r['items']:,} | {r['ratings']:,} | | | | "
                f"({r['tree_peak_mb']:,.0f}) | | {_cell(r)} |")

    # fits
    lines += ["", "### Growth: t ≈ c · users^a · items^b (synthetic sizes) and t ≈ c · ratings^a "
              "(every size), for wall and CPU seconds", "",
              "| phase / system | wall: a (users) | b (items) | a (ratings) | CPU: a (users) | "
              "b (items) | a (ratings) | CPU: a (ratings), two largest of ladder A | "
              "residual factors (wall) | ML-20M shape: wall s | CPU s | peak MB |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    groups = [("runs", s) for s in dict.fromkeys(runs_df["system"])] + \
             [(p, "") for p in ("metrics", "tests", "curve")]
    for phase, system in groups:
        g = df[(df["phase"] == phase) & (df["system"] == system)]
        if not len(g):
            continue
        ft, fc = _fits(g, "wall_s"), _fits(g, "cpu_s")
        a, b, ra, res = _fit_text(ft)
        ca, cb, cra, _ = _fit_text(fc)
        full = g[(g["size"] == "s1") & (g["status"] == "ok")]
        if len(full):
            wall = f"{full['wall_s'].iloc[0]:,.0f} (measured)"
            cpu = f"{full['cpu_s'].iloc[0]:,.0f} (measured)"
            peak = f"{full['peak_mb'].iloc[0]:,.0f} (measured)"
        else:
            w, _ = _at_full(g, "wall_s", df)
            c, _ = _at_full(g, "cpu_s", df)
            how = (f"via {FAMILY[system]}" if system in FAMILY and not (ft and "ui" in ft)
                   else "extrapolated")
            wall = f"{w:,.0f} ({how})" if w else ""
            cpu = f"{c:,.0f} ({how})" if c else ""
            peak = ""  # memory: see "where 24 GB runs out" (power laws fit it badly)
        label = f"(a) {system}" if phase == "runs" else {"metrics": "(b) metrics", "tests":
                                                          "(c) permutation tests",
                                                          "curve": "(d) robustness curve"}[phase]
        lines.append(f"| {label} | {a} | {b} | {ra} | {ca} | {cb} | {cra} | "
                     f"{_local_slope(g, 'cpu_s')} | {res} | {wall} | "
                     f"{cpu} | {peak} |")
    lines += ["", *summary(df)]
    return "\n".join(lines)


def _at_full(g: pd.DataFrame, what: str, df: pd.DataFrame | None = None) -> tuple[float | None, bool]:
    """``what`` at ML-20M's shape: measured there, else extrapolated from the fits; a runs system
    without a users-and-items fit is scaled from s16 like its family's representative
    (:data:`FAMILY`), given ``df`` (all records)."""
    full = g[(g["size"] == "s1") & (g["status"] == "ok")]
    if len(full):
        return float(full[what].iloc[0]), True
    system = g["system"].iat[0]
    f = _fits(g, what)
    if (df is not None and what != "peak_mb" and system in FAMILY and not (f and "ui" in f)):
        rep = df[(df["phase"] == "runs") & (df["system"] == FAMILY[system])]
        mine = g[(g["size"] == "s16") & (g["status"] == "ok")]
        theirs = rep[(rep["size"] == "s16") & (rep["status"] == "ok")]
        top, _ = _at_full(rep, what)
        if len(mine) and len(theirs) and top:
            return float(mine[what].iat[0]) * top / float(theirs[what].iat[0]), False
    if what == "peak_mb":  # power laws fit memory badly: see "where 24 GB runs out"
        return None, False
    return _extrapolate(_fits(g, what), ML20M_U, ML20M_I, ML20M_R), False


def summary(df: pd.DataFrame) -> list[str]:
    """The three sizes of the issue side by side: ML-100K, the subset, ML-20M's shape."""
    lines = ["### The three sizes: wall s / CPU s / peak MB (ML-20M shape: measured, or time "
             "extrapolated from the fits)", "",
             "| phase | ML-100K | half-million subset | ML-20M shape |", "|---|---:|---:|---:|"]

    def cell(g: pd.DataFrame, size: str) -> str:
        r = g[(g["size"] == size)]
        if not len(r):
            return "not run"
        r = r.iloc[0]
        if r["status"] != "ok":
            return _cell(r)
        return f"{_cell(r)} / {_cell(r, 'cpu_s')} / {r['peak_mb']:,.0f}"

    runs_df = df[df["phase"] == "runs"]
    if len(runs_df):
        row, measured, missing = [], 0, []
        for size in ("ml-100k", "half"):
            r = runs_df[(runs_df["size"] == size) & (runs_df["status"] == "ok")]
            row.append(f"{r['wall_s'].sum():,.0f} / {r['cpu_s'].sum():,.0f} / "
                       f"{r['peak_mb'].max():,.0f} ({len(r)} systems)" if len(r) else "not run")
        wall = cpu = peak = 0.0
        for system in dict.fromkeys(runs_df["system"]):
            g = runs_df[runs_df["system"] == system]
            w, m1 = _at_full(g, "wall_s", df)
            c, _ = _at_full(g, "cpu_s", df)
            if w is None or c is None:
                missing.append(system)
                continue
            measured += m1
            wall, cpu = wall + w, cpu + c
            if m1:
                peak = max(peak, _at_full(g, "peak_mb")[0])
        n = runs_df["system"].nunique()
        row.append(f"{wall:,.0f} / {cpu:,.0f} / {peak:,.0f} (peak of the measured; {measured} of "
                   f"{n} systems measured, "
                   f"{n - measured - len(missing)} extrapolated"
                   + (f"; no fit: {', '.join(missing)}" if missing else "") + ")")
        lines.append("| (a) whole roster, sum over systems (peak: largest) | " + " | ".join(row) + " |")
    for phase, label in (("metrics", "(b) metric engine"), ("tests", "(c) permutation tests"),
                         ("curve", "(d) robustness curve")):
        g = df[df["phase"] == phase]
        if not len(g):
            continue
        w, measured = _at_full(g, "wall_s")
        c, _ = _at_full(g, "cpu_s")
        p = f"{_at_full(g, 'peak_mb')[0]:,.0f}" if measured else "see below"
        full = ("" if w is None else f"{w:,.0f} / {c:,.0f} / {p} "
                f"({'measured' if measured else 'extrapolated'})")
        lines.append(f"| {label} | {cell(g, 'ml-100k')} | {cell(g, 'half')} | {full} |")
    return lines


def fits_module(files: list[str]) -> str:
    """The source of ``recmeta/book/cost_fits.py``: :func:`recmeta.book.fitting.fit_growth` of the records
    in ``files`` (named by their file names, in the order given)."""
    records = [r for f in files for r in json.loads(Path(f).read_text())]
    fits = fit_growth(records, FAMILY)
    names = ", ".join(f"benchmarks/results/{Path(f).name}" for f in files)
    body = "\n".join(f"    {k!r}: {v!r}," for k, v in fits.items())
    return (f'"""Growth fits of the scale benchmark, read by :mod:`recmeta.book.costs`.\n\n'
            f"Generated by ``benchmarks/scale.py fits`` from {names}; do not edit.\n"
            f'"""\n\nFITS: dict[str, dict] = {{\n{body}\n}}\n')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="measure phases at sizes, one child process each")
    b.add_argument("--sizes", default="ml-100k,half", help=f"comma-separated from {SIZES}")
    b.add_argument("--phases", default=",".join(PHASES))
    b.add_argument("--systems", default="all", help="roster systems of the runs phase")
    b.add_argument("--timeout", type=float, default=900, help="seconds per child")
    b.add_argument("--mem-gb", type=float, default=12, help="resident memory budget per child")
    b.add_argument("--work", default=os.environ.get("RECMETA_SCALE_WORK",
                                                    str(Path(tempfile.gettempdir()) / "recmeta-scale")),
                   help="folder for the generated data, splits and runs (about 3 GB with s1)")
    b.add_argument("--out", default=str(HERE / "results" / "scale.json"))
    b.add_argument("--clean", action="store_true", help="delete each size's runs when done")
    c = sub.add_parser("child", help="(internal) one phase in this process")
    c.add_argument("--work", required=True)
    c.add_argument("--size", required=True)
    c.add_argument("--phase", required=True, choices=PHASES)
    c.add_argument("--system")
    c.add_argument("--result", required=True)
    r = sub.add_parser("report", help="tables and fits from result files")
    r.add_argument("files", nargs="+")
    f = sub.add_parser("fits", help="the growth fits the package's cost estimates read "
                                    "(recmeta/book/cost_fits.py)")
    f.add_argument("files", nargs="+")
    f.add_argument("--out", default=str(HERE.parent / "recmeta" / "book" / "cost_fits.py"))
    args = ap.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")
    if args.cmd == "bench":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        bench(args)
    elif args.cmd == "child":
        rec = child(Path(args.work), args.size, args.phase, args.system)
        Path(args.result).write_text(json.dumps(rec))
    elif args.cmd == "fits":
        Path(args.out).write_text(fits_module(args.files))
    else:
        records = [r for f in args.files for r in json.loads(Path(f).read_text())]
        print(report(records))


if __name__ == "__main__":
    main()
