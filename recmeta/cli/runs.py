"""``recmeta runs``: make, list and clear cached recommender runs.

    recmeta runs make --dataset ml-100k --split holdout --seed 42 --systems pop,kr-y,plsa-50
    recmeta runs make --dataset ml-100k --split holdout --candidates test --depth 50
    recmeta runs make --dataset ml-1m --split holdout --use-ray      # blocks of users as Ray tasks
    recmeta runs list
    recmeta runs clear --system pop --yes

Runs are cached under ``$RECMETA_CACHE`` (default ``_cache/runs``); ``make`` prints where.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .data import add_columns_option, notices

if TYPE_CHECKING:
    from recmeta.data.splits import Split

SPLITS = ("holdout", "coin-flip", "leave-last-out", "kfold")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="make, list and clear cached recommender runs")
    rsub = p.add_subparsers(dest="runs_command", required=True)

    m = rsub.add_parser("make", help="train roster systems on a split and cache their top-N lists")
    m.add_argument(
        "--dataset",
        required=True,
        help="registered dataset name (e.g. ml-100k) or path of a ratings file",
    )
    add_columns_option(m)
    m.add_argument(
        "--split",
        choices=SPLITS,
        default="holdout",
        help="holdout: per-user 80/20; coin-flip: each rating to test w.p. 0.2; "
        "leave-last-out; kfold: fold --fold of 5",
    )
    m.add_argument("--test-fraction", type=float, default=0.2, help="test share (default 0.2)")
    m.add_argument("--fold", type=int, default=0, help="fold number for --split kfold")
    m.add_argument("--seed", type=int, default=0, help="split and training seed")
    m.add_argument("--systems", default="all", help="comma-separated roster names (default all)")
    m.add_argument(
        "--candidates",
        choices=["all", "test"],
        default="all",
        help="all: AllItems; test: items with a test rating (TestItems)",
    )
    m.add_argument("--depth", type=int, default=100, help="list length (default 100)")
    m.add_argument("--engine", choices=["auto", "fast", "lenskit"], default="auto")
    m.add_argument(
        "--use-ray",
        action="store_true",
        help="send the blocks of users to a Ray cluster as tasks (needs "
        "`pip install 'recmeta[ray]'`; joins RAY_ADDRESS if set, else starts a "
        "local cluster); see the README's Ray section",
    )
    m.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="with --use-ray, Ray tasks in flight (default: the cluster's CPUs); "
        "else LensKit's batch threads",
    )
    m.add_argument("--offline", action="store_true", help="never download the dataset")
    m.set_defaults(func=_make)

    ls = rsub.add_parser("list", help="list cached runs")
    ls.set_defaults(func=_list)

    c = rsub.add_parser("clear", help="delete cached runs")
    c.add_argument("--dataset", default=None, help="only this dataset")
    c.add_argument("--system", default=None, help="only this system")
    c.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    c.set_defaults(func=_clear)


def _split(args: argparse.Namespace) -> tuple[Split, str]:
    from recmeta import data
    from recmeta.data import splits

    with notices():
        df = data.load(args.dataset, download=not args.offline, columns=args.columns)
    f = args.test_fraction
    if args.split == "holdout":
        return splits.holdout_per_user(df, f, seed=args.seed), f"holdout-{f:g}"
    if args.split == "coin-flip":
        return splits.coin_flip(df, f, seed=args.seed), f"coin-flip-{f:g}"
    if args.split == "leave-last-out":
        return splits.leave_last_out(df), "leave-last-out"
    folds = splits.kfold(df, 5, seed=args.seed)
    if not 0 <= args.fold < 5:
        raise ValueError(f"--fold must lie in 0..4, got {args.fold}")
    return folds[args.fold], f"kfold-5-{args.fold}"


def _make(args: argparse.Namespace) -> int:
    from recmeta import recommenders
    from recmeta.recommenders import cache, roster

    systems = roster.systems(args.systems)
    split, name = _split(args)
    df = recommenders.make(
        systems,
        split.train,
        dataset=args.dataset,
        split=name,
        seed=args.seed,
        depth=args.depth,
        candidates=args.candidates,
        test=split.test,
        engine=args.engine,
        use_ray=args.use_ray,
        n_jobs=args.n_jobs,
    )
    print(
        f"{len(systems)} systems, {df['user'].nunique()} users, {len(df)} rows; "
        f"cache: {cache.cache_dir()}"
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    from recmeta.recommenders import cache

    table = cache.entries()
    if table.empty:
        print(f"no cached runs in {cache.cache_dir()}")
        return 0
    show = (
        table.drop(columns=["path"])
        .assign(MB=(table["bytes"] / 1e6).round(2))
        .drop(columns="bytes")
    )
    print(show.to_string(index=False))
    return 0


def _clear(args: argparse.Namespace) -> int:
    from recmeta.recommenders import cache

    table = cache.entries()
    if args.dataset:
        table = table.loc[table["dataset"] == args.dataset]
    if args.system:
        table = table.loc[table["system"] == args.system]
    if table.empty:
        print("nothing to clear")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise RuntimeError(f"would delete {len(table)} cached runs; pass --yes to confirm")
        if input(f"delete {len(table)} cached runs in {cache.cache_dir()}? [y/N] ").lower() != "y":
            return 1
    n = cache.clear(dataset=args.dataset, system=args.system)
    print(f"deleted {n} cached runs")
    return 0
