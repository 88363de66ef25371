"""``recmeta data``: list, fetch and describe datasets (registered releases or files).

    recmeta data list
    recmeta data fetch ml-100k ml-latest-small [--seed DIR] [--offline]
    recmeta data stats ml-100k path/to/ratings.csv [--json]
    recmeta data stats u.data --columns user,item,rating,timestamp      # no header row
    recmeta data stats mine.csv --columns user=uid,item=song,rating=none # implicit feedback

Also home of the ``--columns`` option every command that takes a dataset shares
(:func:`add_columns_option`, :func:`notices`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import warnings
from collections.abc import Iterator
from typing import TextIO

NAMES_HELP = "registered release, or path of a ratings file (CSV, TSV, .dat, Parquet)"
COLUMNS_HELP = (
    "the file's columns: user=NAME,item=NAME,rating=NAME,timestamp=NAME (rating=none: "
    "implicit feedback), or for a file without a header row its columns in order, e.g. "
    "user,item,rating,timestamp ('-' skips one). Default: the names user/userId/user_id, "
    "item/itemId/movieId, rating/score, timestamp/time"
)


def add_columns_option(parser: argparse.ArgumentParser, what: str = "the dataset file") -> None:
    """The shared ``--columns`` option (see :func:`recmeta.data.parse_columns`)."""
    parser.add_argument("--columns", metavar="SPEC", default=None, help=f"{what}: {COLUMNS_HELP}")


@contextlib.contextmanager
def notices() -> Iterator[None]:
    """Print the data's notices (columns read by their names) on stderr as plain lines, as they
    come (before a chapter starts, not after it)."""
    from ..data import ColumnsRecognised

    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, ColumnsRecognised):
            print(f"recmeta: note: {message}", file=sys.stderr, flush=True)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always", ColumnsRecognised)
        warnings.showwarning = show
        yield


def _data_fetch(args: argparse.Namespace) -> int:
    from .. import data

    for name in args.names:
        if data.is_path(name):  # one's own file: nothing to download, check that it loads
            with notices():
                df = data.load(name, columns=args.columns)
            kind = "interactions (implicit feedback)" if data.is_implicit(df) else "ratings"
            print(f"{name}: a local file, {len(df):,} {kind}; nothing to fetch")
            continue
        if args.columns:
            raise ValueError(
                f"--columns applies to files of one's own, not to the release {name!r}"
            )
        path = data.fetch(name, seed=args.seed, download=not args.offline)
        print(f"{name}: {path}")
    return 0


def _data_stats(args: argparse.Namespace) -> int:
    from .. import data

    with notices():
        rows = [
            data.stats(
                data.load(
                    n, download=not args.offline, columns=args.columns if data.is_path(n) else None
                ),
                data.describe_source(n),
            )
            for n in args.names
        ]
    if args.json:
        print(json.dumps(rows if len(rows) > 1 else rows[0], indent=2))
        return 0
    for r in rows:
        width = max(len(k) for k in r)
        for k, v in r.items():
            if isinstance(v, float):
                v = f"{v:.6g}"
            elif isinstance(v, dict):
                v = ", ".join(f"{kk:g}: {vv}" for kk, vv in v.items()) or "none (implicit feedback)"
            print(f"{k:<{width}}  {v}")
        print()
    return 0


def _data_list(args: argparse.Namespace) -> int:
    from .. import data

    for d in data.REGISTRY.values():
        cached = (data.cache_dir() / d.ratings_path).exists()
        print(
            f"{d.name:<16} {d.n_ratings:>11,} ratings  "
            f"{'cached' if cached else 'not cached':<10}  {d.url}"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="list, fetch and describe the registered datasets")
    dsub = p.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser("fetch", help="download (or copy from a pre-filled folder) and verify")
    f.add_argument("names", nargs="+", metavar="NAME", help=NAMES_HELP)
    f.add_argument("--seed", metavar="DIR", help="folder holding already extracted releases")
    f.add_argument("--offline", action="store_true", help="never download")
    add_columns_option(f, "a file's columns")
    f.set_defaults(func=_data_fetch)
    s = dsub.add_parser("stats", help="users, items, ratings, density, Gini indices")
    s.add_argument("names", nargs="+", metavar="NAME", help=NAMES_HELP)
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--offline", action="store_true", help="never download")
    add_columns_option(s, "the files' columns")
    s.set_defaults(func=_data_stats)
    ls = dsub.add_parser("list", help="the registry and what is cached")
    ls.set_defaults(func=_data_list)
