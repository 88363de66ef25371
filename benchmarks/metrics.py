"""Metric engine benchmark: recmeta vs pytrec_eval vs ranx on the same synthetic inputs.

The size of an ML-1M all-items evaluation: 20 systems × 6,040 users × depth 100 over 3,706
items, about 165 judged items per user (grades 1–5, relevant >= 4). Suite at cut-offs
{5, 10, 20, 50, 100}: P, R, AP, nDCG at each cut-off, plus RR and bpref (22 measures that all
three libraries have); infAP is timed for recmeta and pytrec_eval only (ranx lacks it).

Run by hand (not a test):

    .venv/bin/python benchmarks/metrics.py                      # full size
    .venv/bin/python benchmarks/metrics.py --users 600 --systems 4   # quick look

pytrec_eval is timed on ``--pytrec-systems`` systems and extrapolated linearly to all (its cost
is the same for every system). Construction of each library's inputs is timed apart from
evaluation; ranx's numba JIT compile is timed apart on a tiny input. Peak memory is the largest
increase of the process resident set size over the phase, sampled every 5 ms.
"""

from __future__ import annotations

import argparse
import gc
import os
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
        return self

    def _watch(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss())
        self.mb = (self.peak - self.base) / 2**20


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_data(n_sys, n_users, n_items, depth, judged, seed=0):
    """Synthetic judgments and runs. Systems differ in how strongly they favour judged items."""
    rng = np.random.default_rng(seed)
    pop = rng.zipf(1.6, n_items).astype(float)  # long-tailed item popularity
    p = pop / pop.sum()
    users, items, grades = [], [], []
    for u in range(n_users):
        k = int(np.clip(rng.poisson(judged), 20, n_items // 2))
        its = rng.choice(n_items, size=k, replace=False, p=p)
        users.append(np.full(k, u))
        items.append(its)
        grades.append(rng.integers(1, 6, size=k).astype(float))
    test = pd.DataFrame({"user": np.concatenate(users), "item": np.concatenate(items),
                         "rating": np.concatenate(grades)})
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


def run_recmeta(test, ranks, n_items):
    from recmeta.metrics import Judgments, Runs, evaluate

    out = {}
    with PeakRSS() as build:
        j = Judgments.from_frame(test, threshold=4, items=pd.RangeIndex(n_items),
                                 users=pd.RangeIndex(ranks.shape[1]))
        runs = Runs.from_orders(ranks, j)
    with PeakRSS() as ev:
        res = evaluate(j, runs, suite(False))
    with PeakRSS() as ev_inf:
        res_inf = evaluate(j, runs, suite(True))
    out["build"], out["eval"], out["eval+infAP"] = build, ev, ev_inf
    return out, res, res_inf


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


def run_pytrec(qrels, runs, with_infap):
    import pytrec_eval

    measures = {f"{m}.{','.join(map(str, CUTS))}" for m in ("P", "recall", "map_cut", "ndcg_cut")}
    measures |= {"recip_rank", "bpref"} | ({"infAP"} if with_infap else set())
    with PeakRSS() as build:
        ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=4)
    with PeakRSS() as run:
        results = [ev.evaluate(r) for r in runs]
    return build, run, results


def run_ranx(qrels, runs):
    from ranx import Qrels, Run, evaluate

    metrics = [f"{m}@{k}" for m in ("precision", "recall", "map", "ndcg") for k in CUTS]
    metrics += ["mrr", "bpref"]
    binary = {q: {d: int(r >= 4) for d, r in docs.items()} for q, docs in qrels.items()}
    with PeakRSS() as jit:
        tiny_q = Qrels.from_dict({"q": {"a": 1, "b": 0}})
        tiny_r = Run.from_dict({"q": {"a": 1.0, "c": 0.5}})
        evaluate(tiny_q, tiny_r, metrics, threads=1)
    with PeakRSS() as build:
        rq = Qrels.from_dict(binary)
        rr = [Run.from_dict(r) for r in runs]
    with PeakRSS() as ev:
        for r in rr:
            evaluate(rq, r, metrics, threads=1, save_results_in_run=False)
    return jit, build, ev


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--users", type=int, default=6040)
    ap.add_argument("--items", type=int, default=3706)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--judged", type=int, default=165)
    ap.add_argument("--pytrec-systems", type=int, default=4,
                    help="systems timed with pytrec_eval (the rest extrapolated)")
    ap.add_argument("--ranx-systems", type=int, default=None,
                    help="systems timed with ranx (default: all)")
    args = ap.parse_args()

    t = time.perf_counter()
    test, ranks = make_data(args.systems, args.users, args.items, args.depth, args.judged)
    print(f"data: {args.systems} systems × {args.users} users × depth {args.depth}, "
          f"{len(test) / args.users:.1f} judged items per user "
          f"({time.perf_counter() - t:.1f} s to generate)")

    rm, res, _ = run_recmeta(test, ranks, args.items)
    n_py = min(args.pytrec_systems, args.systems)
    qrels, truns = trec_dicts(test, ranks, range(n_py))
    py_build, py_run, py_res = run_pytrec(qrels, truns, with_infap=False)
    _, py_run_inf, _ = run_pytrec(qrels, truns, with_infap=True)
    scale = args.systems / n_py

    # agreement on the systems pytrec_eval scored (mean over users with a relevant item)
    got = res.set_index(["system", "metric"])["value"]
    worst = 0.0
    for s in range(n_py):
        for name, trec in [("P@10", "P_10"), ("nDCG@100", "ndcg_cut_100"),
                           ("AP@100", "map_cut_100"), ("bpref", "bpref")]:
            vals = [v[trec] for q, v in py_res[s].items()
                    if any(r >= 4 for r in qrels[q].values())]
            worst = max(worst, abs(np.mean(vals) - got[(f"s{s}", name)]))
    del truns, py_res
    gc.collect()

    n_rx = args.ranx_systems or args.systems
    _, rx_runs = trec_dicts(test, ranks, range(n_rx))
    rx_jit, rx_build, rx_eval = run_ranx(qrels, rx_runs)
    rx_scale = args.systems / n_rx

    rows = [
        ("recmeta", "build (arrays in)", rm["build"].seconds, rm["build"].mb),
        ("recmeta", "evaluate 22 measures", rm["eval"].seconds, rm["eval"].mb),
        ("recmeta", "evaluate 23 (+infAP)", rm["eval+infAP"].seconds, rm["eval+infAP"].mb),
        ("pytrec_eval", "build evaluator", py_build.seconds, py_build.mb),
        ("pytrec_eval", f"evaluate 22 (×{scale:g} from {n_py})", py_run.seconds * scale,
         py_run.mb),
        ("pytrec_eval", f"evaluate 23 (×{scale:g} from {n_py})", py_run_inf.seconds * scale,
         py_run_inf.mb),
        ("ranx", "JIT compile", rx_jit.seconds, rx_jit.mb),
        ("ranx", "build Qrels/Run", rx_build.seconds * rx_scale, rx_build.mb),
        ("ranx", f"evaluate 22 (threads=1, ×{rx_scale:g})", rx_eval.seconds * rx_scale,
         rx_eval.mb),
    ]
    print(f"\n{'library':12} {'phase':34} {'seconds':>9} {'peak MB':>9}")
    for lib, phase, sec, mb in rows:
        print(f"{lib:12} {phase:34} {sec:9.2f} {mb:9.0f}")
    ours = rm["eval"].seconds
    print(f"\nspeed-up, evaluation of the 22 shared measures: "
          f"{py_run.seconds * scale / ours:.1f}× pytrec_eval, "
          f"{rx_eval.seconds * rx_scale / ours:.1f}× ranx (compile excluded); "
          f"with infAP: {py_run_inf.seconds * scale / rm['eval+infAP'].seconds:.1f}× pytrec_eval")
    print(f"largest |recmeta − pytrec_eval| over P@10, nDCG@100, AP@100, bpref means: {worst:.2e}")


if __name__ == "__main__":
    main()
