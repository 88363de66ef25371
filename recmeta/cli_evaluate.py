"""``recmeta evaluate``: score TREC run files against a qrels file, like trec_eval.

    recmeta evaluate --qrels test.qrels --run a.run --run b.run -m P@10 -m nDCG@100 --threshold 4

Differences from trec_eval, on purpose: a user with relevant judgments but no line in a run
scores 0 (trec_eval's ``-c``; the coverage penalty of Valcarce et al. 2020), and users without a
relevant judgment are left out of the averages.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score TREC run files against qrels (trec_eval-compatible metrics)",
        description="Score TREC run files against a qrels file. Metric names such as P@10, "
        "R@100, AP@100, nDCG@10, RR, ERR@20, bpref@100, infAP@100, AUC, muAP, NDCNG@10, "
        "SRecall(gamma=1)@10; quote names with parentheses in the shell.",
    )
    p.add_argument("--qrels", required=True, metavar="FILE", help="qrels: qid iter docno rel")
    p.add_argument("--run", required=True, action="append", metavar="FILE",
                   help="run file: qid Q0 docno rank score tag (repeat for several runs)")
    p.add_argument("-m", "--metric", required=True, action="append", metavar="NAME",
                   help="metric name (repeat for several)")
    p.add_argument("--threshold", type=float, default=1.0,
                   help="relevance threshold: grade >= threshold is relevant (trec_eval -l; "
                   "default 1)")
    p.add_argument("--aggregate", choices=["mean", "gmean"], default="mean",
                   help="average over users: arithmetic or geometric (zeros floored at 1e-5)")
    p.add_argument("--depth", type=int, default=None, help="truncate runs at this depth")
    p.add_argument("--per-user", action="store_true", help="one value per user as well")
    p.add_argument("--json", action="store_true", help="JSON records instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from recmeta.metrics import Judgments, Runs, evaluate, parse_metric

    for name in args.metric:
        parse_metric(name)  # fail early with the list of known names
    judgments = Judgments.from_qrels(args.qrels, threshold=args.threshold)
    runs = Runs.from_trec(args.run, judgments, depth=args.depth)
    frames = [evaluate(judgments, runs, args.metric, aggregate=args.aggregate)
              .assign(user="all")]
    if args.per_user:
        frames.insert(0, evaluate(judgments, runs, args.metric, per_user=True))
    table = pd.concat(frames, ignore_index=True)[["system", "metric", "user", "value"]]
    table["user"] = table["user"].astype(str)
    if args.json:
        json.dump(table.to_dict(orient="records"), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    several = len(runs.systems) > 1
    for row in table.itertuples(index=False):
        cells = ([row.system] if several else []) + [row.metric, row.user, f"{row.value:.4f}"]
        print("\t".join(cells))
    if runs.dropped_users:
        print(f"recmeta: note: {runs.dropped_users} run user(s) without qrels were not "
              "evaluated", file=sys.stderr)
    return 0
