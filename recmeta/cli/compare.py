"""``recmeta compare``: compare TREC runs with intervals, effect sizes and corrected tests.

    recmeta compare a.run b.run c.run --qrels test.qrels -m nDCG@10 -m RR --threshold 4

prints, for every metric, each system's mean with its bootstrap interval and compact letters,
every pair's mean difference and standardised mean difference with intervals, the p-values of
the permutation, t, Wilcoxon and randomised Tukey HSD tests with Holm and Benjamini–Hochberg
corrections, and the number of users a paired t-test needs (:mod:`recmeta.compare`).
``--train`` (a ratings file: CSV with user, item[, rating]) adds the random and popularity
references; ``--sampled M`` corrects metrics of lists ranking one relevant item among M sampled
ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from .data import add_columns_option, notices

if TYPE_CHECKING:
    import pandas as pd


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare TREC runs: intervals, effect sizes, corrected significance tests",
        description="Compare TREC run files (one system per run tag) on a qrels file: means with "
        "bootstrap intervals, all pairs with effect sizes, permutation / t / Wilcoxon / Tukey HSD "
        "p-values, Holm and Benjamini-Hochberg corrections, and the users needed to detect a "
        "difference.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files: qid Q0 docno rank score tag")
    p.add_argument("--qrels", required=True, metavar="FILE", help="qrels: qid iter docno rel")
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        metavar="NAME",
        help="metric name, e.g. nDCG@10 (repeat for several; default nDCG@10)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        help="relevance threshold: grade >= threshold is relevant (default 1)",
    )
    p.add_argument("--depth", type=int, default=None, help="truncate runs at this depth")
    p.add_argument(
        "--train",
        metavar="FILE",
        help="training ratings (a ratings file: CSV, TSV, .dat or Parquet with user, "
        "item[, rating]) for the random and popularity references",
    )
    add_columns_option(p, "the --train file's columns")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence level of the intervals (default 0.95)",
    )
    p.add_argument(
        "--test",
        dest="p_value",
        default="permutation",
        choices=["permutation", "t", "wilcoxon", "tukey"],
        help="the test that decides significance (default permutation)",
    )
    p.add_argument(
        "--correction",
        default="holm",
        choices=["holm", "bh", "none"],
        help="multiple-comparison correction over the pairs (default holm)",
    )
    p.add_argument(
        "--permutations",
        type=int,
        default=100_000,
        help="random permutations of the permutation test (default 100000)",
    )
    p.add_argument("--bootstrap", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument(
        "--tukey",
        type=int,
        default=10_000,
        help="permutations of the randomised Tukey HSD test; 0 skips it (default 10000)",
    )
    p.add_argument(
        "--difference",
        type=float,
        default=None,
        help="smallest difference of interest, for the number of users needed",
    )
    p.add_argument(
        "--power", type=float, default=0.8, help="power for the sample size (default 0.8)"
    )
    p.add_argument(
        "--sampled",
        type=int,
        default=None,
        metavar="M",
        help="the lists rank one relevant item among M sampled items: correct the metrics",
    )
    p.add_argument(
        "--n-candidates",
        type=int,
        default=None,
        metavar="N",
        help="with --sampled: items ranked without sampling (default: from --train)",
    )
    p.add_argument(
        "--estimator",
        default="BV 0.1",
        help="with --sampled: the correction (rank-estimate, cls, 'BV 0.1', ...)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    p.add_argument(
        "--format",
        default="text",
        choices=["text", "markdown", "latex", "json"],
        help="output: text/markdown tables, a LaTeX table, or JSON records",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from recmeta.compare import Sampling, compare_trec
    from recmeta.metrics import parse_metric

    metrics = args.metric or ["nDCG@10"]
    for name in metrics:
        parse_metric(name)  # fail early with the list of known names
    train = args.train
    if train is not None:
        from recmeta import data

        with notices():
            train = data.load(train, columns=args.columns)
    elif args.columns:
        raise ValueError("--columns names the columns of the --train file; give --train too")
    sampled = None
    if args.sampled is not None:
        sampled = Sampling(m=args.sampled, n=args.n_candidates, estimator=args.estimator)
    report = compare_trec(
        args.runs,
        args.qrels,
        metrics,
        threshold=args.threshold,
        depth=args.depth,
        train=train,
        alpha=args.alpha,
        confidence=args.confidence,
        p_value=args.p_value,
        correction=args.correction,
        n_permutations=args.permutations,
        n_bootstrap=args.bootstrap,
        n_tukey=args.tukey,
        difference=args.difference,
        power=args.power,
        sampled=sampled,
        seed=args.seed,
    )
    if args.format == "json":
        out = {
            "systems": _records(report.summary),
            "pairs": _records(report.pairs),
            "references": _records(report.references),
            "power": _records(report.power),
            "coverage": _records(report.coverage),
            "notes": report.notes,
            "method": report.describe(),
        }
        json.dump(out, sys.stdout, indent=1, default=_plain)
        sys.stdout.write("\n")
        return 0
    if args.format == "latex":
        print(report.to_latex())
        return 0
    print(report.to_markdown())
    print()
    print(report.describe())
    return 0


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a frame as JSON-ready dicts (NaN becomes null)."""
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def _plain(x):
    """JSON for numpy scalars (NaN becomes null)."""
    import math

    try:
        v = x.item()
    except AttributeError:
        return str(x)
    return None if isinstance(v, float) and math.isnan(v) else v
