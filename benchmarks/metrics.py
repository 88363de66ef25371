"""Metric engine benchmark: recmeta vs pytrec_eval vs ranx on the same synthetic inputs.

The size of an ML-1M all-items evaluation: 20 systems × 6,040 users × depth 100 over 3,706
items, about 165 judged items per user (grades 1–5, relevant >= 4). Suite at cut-offs
{5, 10, 20, 50, 100}: P, R, AP, nDCG at each cut-off, plus RR and bpref (22 measures that all
three libraries have); infAP is timed for recmeta and pytrec_eval only (ranx lacks it).

Run by hand (not a test):

    .venv/bin/python benchmarks/metrics.py --pytrec-systems 4 --ranx-systems 4
    .venv/bin/python benchmarks/metrics.py --users 600 --systems 4   # quick look

The evaluations of the three libraries run in one process, interleaved, ``--repeats`` times;
each phase reports its best time (the machine may be shared: the load average is printed).
pytrec_eval and ranx are timed on ``--pytrec-systems`` / ``--ranx-systems`` systems and scaled
linearly to all (their cost is the same for every system). recmeta is timed as it runs by
default (threads for large inputs) and in the calling thread only. Construction of each
library's inputs is timed apart from evaluation. Compilation is timed apart: ranx's numba JIT
on a tiny input; recmeta's compiled pass in fresh processes with an empty numba cache (the cold
compile, once per machine) and then with that cache filled (what every later process pays).
``--masks N`` also times :func:`recmeta.metaeval.incompleteness.score_masks` on N random subsets of the
judgments (the meta-evaluation workload). CPU seconds are the process's (all its threads) over
the phase, scaled like the times; peak memory is the largest increase of the process resident
set size over the phase, sampled every 5 ms.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pandas as pd

CUTS = [5, 10, 20, 50, 100]


class PeakRSS:
    """Peak resident-set increase during a ``with`` block (sampled, any allocator)."""

    def __enter__(self):
        gc.collect()
        self.base = self.peak = _rss()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()
        self.t0 = time.perf_counter()
        self.c0 = time.process_time()
        return self

    def _watch(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0  # all threads of the process
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss())
        self.mb = (self.peak - self.base) / 2**20


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_data(n_sys, n_users, n_items, depth, judged, seed=0):
    """Synthetic judgments and runs. Systems differ in how strongly they favour judged items.

    Each user judges ``Poisson(judged)`` items (at least 20, at most half the catalogue) drawn
    without replacement with probability proportional to a Zipf popularity (Gumbel top-k: the
    k largest ``log p_i + Gumbel`` keys), grades uniform on 1–5.
    """
    rng = np.random.default_rng(seed)
    pop = rng.zipf(1.6, n_items).astype(float)  # long-tailed item popularity
    log_p = np.log(pop / pop.sum()).astype(np.float32)
    counts = np.clip(rng.poisson(judged, n_users), 20, n_items // 2)
    keys = log_p[None, :] + rng.gumbel(size=(n_users, n_items)).astype(np.float32)
    order = np.argsort(-keys, axis=1)
    del keys
    take = np.arange(n_items)[None, :] < counts[:, None]
    users = np.repeat(np.arange(n_users), counts)
    items = order[take]
    test = pd.DataFrame({"user": users, "item": items,
                         "rating": rng.integers(1, 6, size=users.size).astype(float)})
    judged_mask = np.zeros((n_users, n_items), dtype=np.float32)
    judged_mask[test["user"], test["item"]] = test["rating"].to_numpy(np.float32)
    ranks = np.empty((n_sys, n_users, depth), dtype=np.int32)
    for s in range(n_sys):
        strength = 0.3 + 1.5 * s / max(1, n_sys - 1)
        score = rng.random((n_users, n_items), dtype=np.float32)
        score += strength * (judged_mask / 5.0) + 0.2 * np.log(pop)[None, :].astype(np.float32)
        top = np.argpartition(-score, depth, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(score, top, axis=1), axis=1)
        ranks[s] = np.take_along_axis(top, order, axis=1)
    return test, ranks


def suite(with_infap=True):
    names = [f"{m}@{k}" for m in ("P", "R", "AP", "nDCG") for k in CUTS] + ["RR", "bpref"]
    return names + (["infAP"] if with_infap else [])


def run_recmeta_build(test, ranks, n_items):
    from recmeta.metrics import Judgments, Runs

    with PeakRSS() as build:
        j = Judgments.from_frame(test, threshold=4, items=pd.RangeIndex(n_items),
                                 users=pd.RangeIndex(ranks.shape[1]))
        runs = Runs.from_orders(ranks, j)
    return build, j, runs


def recmeta_eval(j, runs, names, serial=False):
    """Evaluate, optionally forcing the single-threaded pass; returns (PeakRSS, frame)."""
    from recmeta.metrics import evaluate

    try:
        from recmeta.metrics import _plan
    except ImportError:  # an engine without the compiled pass
        _plan = None
    saved = _plan.PARALLEL_MIN_POSITIONS if _plan else None
    if serial and _plan:
        _plan.PARALLEL_MIN_POSITIONS = np.iinfo(np.int64).max
    try:
        with PeakRSS() as ev:
            res = evaluate(j, runs, names)
    finally:
        if _plan:
            _plan.PARALLEL_MIN_POSITIONS = saved
    return ev, res


COMPILE_PROBE = """
import time
t0 = time.perf_counter()
import numpy as np
from recmeta.metrics import Judgments, Runs, score_matrices
t1 = time.perf_counter()
j = Judgments.from_grades(np.array([[3.0, 0.0, 2.0, 1.0]]), threshold=1)
r = Runs.from_orders(np.array([[0, 1, 2, 3]]), j)
t2 = time.perf_counter()
score_matrices(j, r, ["P@2", "nDCG@3", "AP", "RR", "bpref", "infAP"])
t3 = time.perf_counter()
print(t1 - t0, t3 - t2)
"""


def recmeta_compile(repeats: int) -> tuple[float, float, float]:
    """(import, cold first call, best cached first call) of a tiny evaluation, fresh processes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))

        def probe():
            out = subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            return float(out[0]), float(out[1])

        imp, cold = probe()
        warm = min(probe()[1] for _ in range(repeats))
    return imp, cold, warm


def trec_dicts(test, ranks, systems):
    qrels = {}
    for u, g in test.groupby("user"):
        qrels[str(u)] = dict(zip(g["item"].astype(str), g["rating"].astype(int)))
    runs = []
    depth = ranks.shape[2]
    score = [float(depth - d) for d in range(depth)]  # distinct scores: no ties to break
    for s in systems:
        runs.append({str(u): dict(zip(map(str, ranks[s, u]), score))
                     for u in range(ranks.shape[1])})
    return qrels, runs


def pytrec_evaluator(qrels, with_infap):
    import pytrec_eval

    measures = {f"{m}.{','.join(map(str, CUTS))}" for m in ("P", "recall", "map_cut", "ndcg_cut")}
    measures |= {"recip_rank", "bpref"} | ({"infAP"} if with_infap else set())
    with PeakRSS() as build:
        ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=4)
    return build, ev


def pytrec_eval_runs(ev, runs):
    with PeakRSS() as run:
        results = [ev.evaluate(r) for r in runs]
    return run, results


RANX_METRICS = [f"{m}@{k}" for m in ("precision", "recall", "map", "ndcg") for k in CUTS]
RANX_METRICS += ["mrr", "bpref"]


def ranx_build(qrels, runs):
    from ranx import Qrels, Run, evaluate

    binary = {q: {d: int(r >= 4) for d, r in docs.items()} for q, docs in qrels.items()}
    with PeakRSS() as jit:
        tiny_q = Qrels.from_dict({"q": {"a": 1, "b": 0}})
        tiny_r = Run.from_dict({"q": {"a": 1.0, "c": 0.5}})
        evaluate(tiny_q, tiny_r, RANX_METRICS, threads=1)
    with PeakRSS() as build:
        rq = Qrels.from_dict(binary)
        rr = [Run.from_dict(r) for r in runs]
    return jit, build, rq, rr


def ranx_eval(rq, rr):
    from ranx import evaluate

    with PeakRSS() as ev:
        for r in rr:
            evaluate(rq, r, RANX_METRICS, threads=1, save_results_in_run=False)
    return ev


def time_masks(j, runs, n_masks, seed=0):
    """Seconds per incomplete test set for score_masks (7 metrics at @100, random shares)."""
    from recmeta.metaeval import incompleteness

    rng = np.random.default_rng(seed)
    shares = np.linspace(1.0, 0.05, n_masks)
    keep = rng.random((n_masks, j.n_entries)) < shares[:, None]
    metrics = ["P@100", "R@100", "AP@100", "nDCG@100", "RR@100", "bpref@100", "infAP@100"]
    incompleteness.score_masks(j, runs, keep[:1], metrics)
    with PeakRSS() as m:
        incompleteness.score_masks(j, runs, keep, metrics)
    return m


def best(phases):
    """The repetition with the shortest time (its peak memory is reported with it)."""
    return min(phases, key=lambda p: p.seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--users", type=int, default=6040)
    ap.add_argument("--items", type=int, default=3706)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--judged", type=int, default=165)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved repetitions (best kept)")
    ap.add_argument("--pytrec-systems", type=int, default=4,
                    help="systems timed with pytrec_eval (the rest extrapolated)")
    ap.add_argument("--ranx-systems", type=int, default=None,
                    help="systems timed with ranx (default: all)")
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx")
    ap.add_argument("--no-compile", action="store_true", help="skip recmeta's compile timing")
    ap.add_argument("--masks", type=int, default=0, help="also time score_masks on N subsets")
    args = ap.parse_args()
    load_start = os.getloadavg()

    t = time.perf_counter()
    test, ranks = make_data(args.systems, args.users, args.items, args.depth, args.judged)
    print(f"data: {args.systems} systems × {args.users} users × depth {args.depth}, "
          f"{len(test) / args.users:.1f} judged items per user "
          f"({time.perf_counter() - t:.1f} s to generate)")

    rows = []
    if not args.no_compile:
        imp, cold, warm = recmeta_compile(args.repeats)
        rows += [("recmeta", "import recmeta.metrics (fresh process)", imp, None, None),
                 ("recmeta", "first call, empty numba cache (compile)", cold, None, None),
                 ("recmeta", "first call, numba cache filled", warm, None, None)]

    rm_build, j, runs = run_recmeta_build(test, ranks, args.items)
    grades = np.zeros((args.users, args.items), dtype=np.float32)  # 0 = unjudged
    grades[test["user"], test["item"]] = test["rating"]
    at = grades[np.arange(args.users)[None, :, None], ranks]
    print(f"ranked positions judged: {(at > 0).mean():.0%}, relevant: {(at >= 4).mean():.0%}")
    del grades, at

    n_py = min(args.pytrec_systems, args.systems)
    qrels, truns = trec_dicts(test, ranks, range(n_py))
    py_build, py_ev = pytrec_evaluator(qrels, with_infap=False)
    _, py_ev_inf = pytrec_evaluator(qrels, with_infap=True)
    scale = args.systems / n_py

    n_rx = min(args.ranx_systems or args.systems, args.systems)
    rx_scale = args.systems / n_rx
    if not args.no_ranx:
        _, rx_runs = trec_dicts(test, ranks, range(n_rx))
        rx_jit, rx_build, rq, rr = ranx_build(qrels, rx_runs)
        del rx_runs

    recmeta_eval(j, runs, suite(True))  # load the compiled code (timed apart above)
    recmeta_eval(j, runs, suite(True), serial=True)
    times = {key: [] for key in ("rm", "rm1", "rm_inf", "py", "py_inf", "rx")}
    for _ in range(args.repeats):
        ev, res = recmeta_eval(j, runs, suite(False))
        times["rm"].append(ev)
        times["rm1"].append(recmeta_eval(j, runs, suite(False), serial=True)[0])
        times["rm_inf"].append(recmeta_eval(j, runs, suite(True))[0])
        py_run, py_res = pytrec_eval_runs(py_ev, truns)
        times["py"].append(py_run)
        times["py_inf"].append(pytrec_eval_runs(py_ev_inf, truns)[0])
        if not args.no_ranx:
            times["rx"].append(ranx_eval(rq, rr))
        gc.collect()
    load_end = os.getloadavg()

    # agreement on the systems pytrec_eval scored (mean over users with a relevant item)
    got = res.set_index(["system", "metric"])["value"]
    worst = 0.0
    for s in range(n_py):
        for name, trec in [("P@10", "P_10"), ("nDCG@100", "ndcg_cut_100"),
                           ("AP@100", "map_cut_100"), ("bpref", "bpref"), ("RR", "recip_rank")]:
            vals = [v[trec] for q, v in py_res[s].items()
                    if any(r >= 4 for r in qrels[q].values())]
            worst = max(worst, abs(np.mean(vals) - got[(f"s{s}", name)]))

    rm, rm1, rm_inf = best(times["rm"]), best(times["rm1"]), best(times["rm_inf"])
    py, py_inf = best(times["py"]), best(times["py_inf"])
    rows += [
        ("recmeta", "build Judgments + Runs (arrays in)", rm_build.seconds, rm_build.cpu, rm_build.mb),
        ("recmeta", "evaluate 22 measures", rm.seconds, rm.cpu, rm.mb),
        ("recmeta", "evaluate 22, calling thread only", rm1.seconds, rm1.cpu, rm1.mb),
        ("recmeta", "evaluate 23 (+infAP)", rm_inf.seconds, rm_inf.cpu, rm_inf.mb),
        ("pytrec_eval", "build evaluator", py_build.seconds, py_build.cpu, py_build.mb),
        ("pytrec_eval", f"evaluate 22 (×{scale:g} from {n_py})", py.seconds * scale,
         py.cpu * scale, py.mb),
        ("pytrec_eval", f"evaluate 23 (×{scale:g} from {n_py})", py_inf.seconds * scale,
         py_inf.cpu * scale, py_inf.mb),
    ]
    if not args.no_ranx:
        rx = best(times["rx"])
        rows += [
            ("ranx", "JIT compile", rx_jit.seconds, rx_jit.cpu, rx_jit.mb),
            ("ranx", f"build Qrels/Run (×{rx_scale:g})", rx_build.seconds * rx_scale,
             rx_build.cpu * rx_scale, rx_build.mb),
            ("ranx", f"evaluate 22 (threads=1, ×{rx_scale:g})", rx.seconds * rx_scale,
             rx.cpu * rx_scale, rx.mb),
        ]
    if args.masks:
        m = time_masks(j, runs, args.masks)
        rows.append(("recmeta", f"score_masks, per test set (of {args.masks})",
                     m.seconds / args.masks, m.cpu / args.masks, m.mb))

    print(f"\nload average (1, 5, 15 min): start {load_start[0]:.1f} {load_start[1]:.1f} "
          f"{load_start[2]:.1f}, end {load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f}; "
          f"{os.cpu_count()} cores; best of {args.repeats} interleaved repetitions")
    print(f"\n{'library':12} {'phase':42} {'seconds':>9} {'cpu s':>9} {'peak MB':>9}")
    for lib, phase, sec, cpu, mb in rows:
        cpu_shown = "" if cpu is None else f"{cpu:9.3f}"
        mb_shown = "" if mb is None else f"{mb:9.0f}"
        print(f"{lib:12} {phase:42} {sec:9.3f} {cpu_shown:>9} {mb_shown:>9}")
    print(f"\nspeed-up, evaluation of the 22 shared measures: "
          f"{py.seconds * scale / rm.seconds:.1f}× pytrec_eval "
          f"({py.seconds * scale / rm1.seconds:.1f}× in the calling thread only)"
          + ("" if args.no_ranx else
             f", {best(times['rx']).seconds * rx_scale / rm.seconds:.1f}× ranx (compile excluded)")
          + f"; with infAP: {py_inf.seconds * scale / rm_inf.seconds:.1f}× pytrec_eval")
    print(f"largest |recmeta − pytrec_eval| over P@10, nDCG@100, AP@100, bpref, RR means: "
          f"{worst:.2e}")


if __name__ == "__main__":
    main()
