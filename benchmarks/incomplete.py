"""Benchmark: metrics on many incomplete versions of one test set (the robustness workload).

The inputs of the robustness chapter on ML-100K: a per-user 80/20 holdout (seed 0, 20,000
judged entries, 943 users, relevant >= 4), 20 systems with top-100 lists, and random subsets of
the test ratings (:func:`recmeta.metaeval.incompleteness.random_ratings` over the chapter's 20 shares,
``--samples`` masks per share). The runs are the seeded synthetic rankings of
``benchmarks/significance.py`` (popularity-tilted, training items excluded); ``--roster`` takes
the first 20 roster systems from the run cache instead.

Three workloads, each timed per incomplete test set (best of ``--repeats``):

* ``curve``: 7 metrics at @100 (P, R, AP, nDCG, RR, bpref, infAP), arithmetic means — the
  robustness curve of ``benchmarks/significance.py --skip-tests``;
* ``chapter``: the same 7 metrics at the robustness chapter's 11 cut-offs (77 measures),
  arithmetic means, infAP read as Valcarce et al. (2018, eq. 8), every ranked item pooled;
* ``assessing``: the 9 metrics of Valcarce et al. (2020) at @100, arithmetic and geometric
  means, pooled infAP.

Each route the installed package offers is timed: ``recmeta.metrics.Subsets`` (one compiled pass
per mask over the judged positions of the lists), and where they exist the routes it replaced
(``incompleteness.score_masks`` evaluating ``Judgments.subset`` per mask; ``assessing.HitScorer``,
numpy formulas over the judged positions, one call per cut-off). Means of every route are
compared with the first route's.

Run: ``python benchmarks/incomplete.py`` (``--samples 50`` for the chapter's 1,000 masks).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

METRICS7 = ("P", "R", "AP", "nDCG", "RR", "bpref", "infAP")
METRICS9 = ("P", "R", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP")
CUTOFFS = (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)


def _data(use_roster: bool, seed: int):
    from significance import roster_runs, synthetic_runs

    from recmeta.book import chapters
    from recmeta.data import splits
    from recmeta.metrics import Judgments

    split = splits.holdout_per_user(chapters.ratings("ml-100k"), 0.2, seed=0)
    judgments = Judgments.from_frame(split.test, threshold=4)
    if use_roster:
        return judgments, roster_runs(split.train, judgments, 20, 0), "roster runs"
    return judgments, synthetic_runs(split.train, judgments, 20, seed), "synthetic runs"


def _best(fn, repeats: int) -> tuple[float, float, object]:
    """(best wall seconds, CPU seconds of that repeat, result) of ``fn()``."""
    best = (np.inf, np.inf, None)
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        if t < best[0]:
            best = (t, c, out)
    return best


def _nanmeans(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from recmeta.metrics import GMEAN_FLOOR

    return np.nanmean(x, axis=1), np.exp(np.nanmean(np.log(np.maximum(x, GMEAN_FLOOR)), axis=1))


def routes(judgments, runs, keep, workload: str):
    """{route: function returning (masks × measures × systems) arithmetic means [, geometric]}."""
    import recmeta.metrics as M

    if workload == "curve":
        names, infap, cut_list, metrics = [f"{m}@100" for m in METRICS7], "trec_eval", [100], METRICS7
    elif workload == "chapter":
        names = [f"{m}@{k}" for m in METRICS7 for k in CUTOFFS]
        infap, cut_list, metrics = "pooled", list(CUTOFFS), METRICS7
    else:
        names, infap, cut_list, metrics = [f"{m}@100" for m in METRICS9], "pooled", [100], METRICS9
    both = workload == "assessing"
    out = {}
    if hasattr(M, "Subsets"):
        sub = M.Subsets(judgments, runs, names, infap=infap)
        aggs = ("mean", "gmean") if both else ("mean",)
        def subsets():
            means = sub.means(keep, aggregates=aggs)
            return tuple(means[a] for a in aggs)

        out["Subsets"] = subsets
    try:
        from recmeta.assessing import HitScorer
    except ImportError:
        HitScorer = None
    if HitScorer is not None:
        scorers = {k: HitScorer(judgments, runs, k, infap="trec" if infap == "trec_eval" else "pooled")
                   for k in cut_list}

        def hits():
            mean = np.empty((keep.shape[0], len(names), len(runs.systems)))
            gmean = np.empty_like(mean)
            for j in range(keep.shape[0]):
                for c, k in enumerate(cut_list):
                    s = scorers[k].score(keep[j])
                    for i, m in enumerate(metrics):
                        col = (i * len(cut_list) + c) if workload == "chapter" else i
                        mean[j, col], g = _nanmeans(s[m]) if both else (np.nanmean(s[m], axis=1), None)
                        if both:
                            gmean[j, col] = g
            return (mean, gmean) if both else (mean,)

        out["HitScorer"] = hits
    if workload == "curve" and not hasattr(M, "Subsets"):
        from recmeta.metaeval import incompleteness

        out["Judgments.subset + score_matrices"] = lambda: (
            incompleteness.score_masks(judgments, runs, keep, names),)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10, help="random masks per share")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20180702)
    parser.add_argument("--roster", action="store_true", help="roster runs from the run cache")
    parser.add_argument("--workloads", default="curve,chapter,assessing")
    args = parser.parse_args(argv)

    from recmeta.metaeval import incompleteness

    judgments, runs, source = _data(args.roster, args.seed)
    masks = incompleteness.random_ratings(judgments.to_frame(), incompleteness.sparsity_shares(),
                                          args.samples, seed=args.seed)
    keep = masks.keep
    load = os.getloadavg()
    print(f"{len(keep)} incomplete test sets of {judgments.n_entries:,} judged entries, "
          f"{len(judgments.users)} users, {len(runs.systems)} systems ({source}); "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; best of {args.repeats}")
    print(f"{'workload':10} {'route':34} {'ms/set':>8} {'CPU ms/set':>10} {'max |Δ| vs first':>17}")
    for workload in args.workloads.split(","):
        first = None
        for name, fn in routes(judgments, runs, keep, workload).items():
            fn_small = (lambda f=fn: f())
            fn_small()  # compile / warm up
            sec, cpu, res = _best(fn_small, args.repeats)
            gap = "" if first is None else f"{max(np.nanmax(np.abs(a - b)) for a, b in zip(res, first)):.1e}"
            first = res if first is None else first
            print(f"{workload:10} {name:34} {1000 * sec / len(keep):8.2f} "
                  f"{1000 * cpu / len(keep):10.2f} {gap:>17}")


if __name__ == "__main__":
    main()
