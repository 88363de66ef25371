"""``recmeta evaluate``: score TREC run files against a qrels file, as trec_eval does.

Two ways to call it. As trec_eval (positional files; its flags and measure names)::

    recmeta evaluate -q -m all_trec test.qrels a.run      # same lines as trec_eval's

prints trec_eval 10.0's lines, byte for byte (``--trec-eval 9.0.8`` follows 9.0.8, the release
pytrec_eval is built on). Flags: ``-q`` per topic, ``-c`` every topic of the qrels (missing
ones score 0; without it trec_eval 10.0 stops at a qrels topic the run lacks), ``-M N`` the
first N documents only, ``-l N`` relevance level, ``-J`` judged documents only, ``-N N``
collection size (``utility``), ``-n`` no summary; ``-m`` takes trec_eval's names (``P.5,10``,
``ndcg_cut.10``, ``rbp.p=0.8``, ``official``, ``all_trec``), single values (``P_10``) and
recmeta's names (``nDCG(gain=exp)@10``); see :mod:`recmeta.metrics._trec_eval`.

The recmeta way, for several runs at once::

    recmeta evaluate --qrels test.qrels --run a.run --run b.run -m P@10 -m nDCG@100 --threshold 4

prints one line per system and metric (or JSON). Its rules differ from trec_eval's on purpose: a
user with relevant judgments but no line in a run scores 0 (trec_eval's ``-c``; the coverage
penalty of Valcarce et al. 2020), and users without a relevant judgment are left out of the
averages. The trec_eval layout is chosen when the files are positional or a trec_eval flag or
name is used; ``--format`` overrides.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score TREC run files against qrels (a drop-in for trec_eval)",
        description="Score TREC run files against a qrels file. As trec_eval: "
        "`recmeta evaluate [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-m MEASURE ...] QRELS RUN`, "
        "with trec_eval 10.0's output layout and measure names (P.5,10, ndcg_cut.10, map, "
        "rbp.p=0.8, official, all_trec, P_10). The recmeta way: --qrels FILE --run FILE "
        "[--run FILE ...] with names "
        "such as P@10, R@100, AP@100, nDCG@10, RR, ERR@20, bpref@100, infAP@100, AUC, muAP, "
        "NDCNG@10, SRecall(gamma=1)@10; quote names with parentheses in the shell.",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="QRELS RUN",
        help="as trec_eval: the qrels file, then the run file ('-' = stdin)",
    )
    p.add_argument("--qrels", metavar="FILE", help="qrels: qid iter docno rel")
    p.add_argument(
        "--run",
        action="append",
        metavar="FILE",
        help="run file: qid Q0 docno rank score tag (repeat for several runs)",
    )
    p.add_argument(
        "-m",
        "--metric",
        "--measure",
        action="append",
        metavar="NAME",
        dest="metric",
        help="metric or trec_eval measure (repeat for several); trec_eval's default is 'official'",
    )
    p.add_argument(
        "-q",
        "--query_eval_wanted",
        action="store_true",
        dest="query",
        help="trec_eval -q: values per topic too",
    )
    p.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        action="store_true",
        dest="complete",
        help="trec_eval -c: average over every topic of the qrels (missing = 0)",
    )
    p.add_argument(
        "-n",
        "--nosummary",
        action="store_true",
        dest="nosummary",
        help="trec_eval -n: no summary lines",
    )
    p.add_argument(
        "-J",
        "--Judged_docs_only",
        action="store_true",
        dest="judged_only",
        help="trec_eval -J: drop unjudged documents before evaluating",
    )
    p.add_argument(
        "-M",
        "--Max_retrieved_per_topic",
        type=int,
        default=None,
        metavar="N",
        dest="max_ret",
        help="trec_eval -M: evaluate the first N documents per topic",
    )
    p.add_argument(
        "-l",
        "--level_for_rel",
        type=int,
        default=None,
        metavar="N",
        dest="level",
        help="trec_eval -l: grade >= N is relevant (default 1)",
    )
    p.add_argument(
        "-N",
        "--Number_docs_in_coll",
        type=int,
        default=0,
        metavar="N",
        dest="num_docs",
        help="trec_eval -N: number of documents in the collection (read by utility)",
    )
    p.add_argument(
        "--trec-eval",
        choices=["10.0", "9.0.8"],
        default="10.0",
        dest="trec_version",
        help="the trec_eval release whose rules to follow (default 10.0; 9.0.8 is pytrec_eval's)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relevance threshold: grade >= threshold is relevant (trec_eval -l; default 1)",
    )
    p.add_argument(
        "--aggregate",
        choices=["mean", "gmean"],
        default="mean",
        help="average over users: arithmetic or geometric (zeros floored at 1e-5)",
    )
    p.add_argument("--depth", type=int, default=None, help="truncate runs at this depth (-M)")
    p.add_argument("--per-user", action="store_true", help="one value per user as well (-q)")
    p.add_argument("--json", action="store_true", help="JSON records (same as --format json)")
    p.add_argument(
        "--format",
        choices=["trec_eval", "table", "json"],
        default=None,
        help="output layout; trec_eval's is the default when its files, flags or "
        "measure names are used, else table",
    )
    p.set_defaults(func=run)


def _trec_mode(args: argparse.Namespace) -> bool:
    from recmeta.metrics import is_trec_name

    if args.format == "trec_eval" or args.files:
        return True
    flags = args.query or args.complete or args.nosummary or args.judged_only
    flags = flags or args.max_ret is not None or args.level is not None or args.num_docs
    flags = flags or args.trec_version != "10.0"
    return bool(flags or any(is_trec_name(m) or _trec_pass_only(m) for m in args.metric or []))


def _trec_pass_only(name: str) -> bool:
    """ir_measures' names the engine's passes lack (``P(rel=2)@5``, ``RBP``, ``Judged@10``)."""
    from recmeta.metrics import MEASURES as REGISTRY, MetricNameError, parse_metric

    try:
        spec = parse_metric(name)
    except MetricNameError:
        return False
    return dict(spec.params).get("rel") is not None or not REGISTRY[spec.name].engine


def run(args: argparse.Namespace) -> int:
    if args.files and (args.qrels or args.run):
        raise ValueError("give the files either as QRELS RUN or with --qrels/--run, not both")
    if args.files and len(args.files) != 2:
        raise ValueError(
            f"expected two files, QRELS then RUN; got {len(args.files)}: {' '.join(args.files)}"
        )
    if not args.files and not (args.qrels and args.run):
        raise ValueError(
            "name the qrels and the run: `recmeta evaluate QRELS RUN` or --qrels FILE --run FILE"
        )
    if args.json:
        args.format = "json"
    return _run_trec(args) if _trec_mode(args) else _run_table(args)


def _run_trec(args: argparse.Namespace) -> int:
    from recmeta.metrics import qrels_columns, run_columns, trec_eval

    if args.files:
        qrels_path, run_path = args.files
    else:
        if len(args.run) != 1:
            raise ValueError(
                "trec_eval's layout scores one run per call; give one --run "
                "(or drop the trec_eval flags for the recmeta table)"
            )
        qrels_path, run_path = args.qrels, args.run[0]
    if args.format == "table":
        raise ValueError(
            "--format table is for --qrels/--run with recmeta's names; with "
            "trec_eval's files, flags or names use --format trec_eval or json"
        )
    if args.level is not None and args.threshold is not None:
        raise ValueError("give the relevance level once: -l or --threshold")
    level = (
        args.level
        if args.level is not None
        else (args.threshold if args.threshold is not None else 1)
    )
    if args.max_ret is not None and args.depth is not None:
        raise ValueError("give the depth once: -M or --depth")
    max_ret = args.max_ret if args.max_ret is not None else args.depth
    if args.aggregate != "mean":
        raise ValueError(
            "--aggregate is for the recmeta table; with trec_eval's names ask for "
            "gm_map, gm_bpref or gm_NAME"
        )
    qrels = qrels_columns(qrels_path)  # ids dictionary-encoded; trec_eval checks duplicates
    run = run_columns(run_path)
    result = trec_eval(
        qrels,
        run,
        args.metric or ["official"],
        level=level,
        complete=args.complete,
        max_ret=max_ret,
        judged_only=args.judged_only,
        num_docs=args.num_docs,
        version=args.trec_version,
    )
    if result.skipped:
        print(
            "recmeta: note: not computed (no implementation in recmeta): "
            + ", ".join(result.skipped),
            file=sys.stderr,
        )
    if result.ignored:
        print(
            "recmeta: note: ignored, as trec_eval does (an earlier -m gave that measure's "
            "parameters): " + ", ".join(result.ignored),
            file=sys.stderr,
        )
    query = args.query or args.per_user
    if args.format == "json":  # streamed, as the text is
        for chunk in result.json_chunks(query, not args.nosummary):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
    else:
        result.write(sys.stdout, query, not args.nosummary)
    return 0


def _run_table(args: argparse.Namespace) -> int:
    import pandas as pd

    from recmeta.metrics import Judgments, Runs, evaluate, parse_metric

    if not args.metric:
        raise ValueError("name the metrics with -m (e.g. -m P@10 -m nDCG@100)")
    for name in args.metric:
        parse_metric(name)  # fail early with the list of known names
    threshold = args.threshold if args.threshold is not None else 1.0
    judgments = Judgments.from_qrels(args.qrels, threshold=threshold)
    runs = Runs.from_trec(args.run, judgments, depth=args.depth)
    frames = [evaluate(judgments, runs, args.metric, aggregate=args.aggregate).assign(user="all")]
    if args.per_user:
        frames.insert(0, evaluate(judgments, runs, args.metric, per_user=True))
    table = pd.concat(frames, ignore_index=True)[["system", "metric", "user", "value"]]
    table["user"] = table["user"].astype(str)
    if args.format == "json":
        import json

        json.dump(table.to_dict(orient="records"), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    several = len(runs.systems) > 1
    for row in table.itertuples(index=False):
        cells = ([row.system] if several else []) + [row.metric, row.user, f"{row.value:.4f}"]
        print("\t".join(cells))
    if runs.dropped_users:
        print(
            f"recmeta: note: {runs.dropped_users} run user(s) without qrels were not evaluated",
            file=sys.stderr,
        )
    return 0
