"""``recmeta data``: list, fetch and describe datasets (registered releases or CSV files).

    recmeta data list
    recmeta data fetch ml-100k ml-latest-small [--seed DIR] [--offline]
    recmeta data stats ml-100k path/to/ratings.csv [--json]
"""

from __future__ import annotations

import argparse
import json


def _data_fetch(args: argparse.Namespace) -> int:
    from .. import data

    for name in args.names:
        if data.is_path(name):  # one's own file: nothing to download, check that it loads
            df = data.load(name)
            kind = "interactions (implicit feedback)" if data.is_implicit(df) else "ratings"
            print(f"{name}: a local file, {len(df):,} {kind}; nothing to fetch")
            continue
        path = data.fetch(name, seed=args.seed, download=not args.offline)
        print(f"{name}: {path}")
    return 0


def _data_stats(args: argparse.Namespace) -> int:
    from .. import data

    rows = [data.stats(data.load(n, download=not args.offline), data.describe_source(n))
            for n in args.names]
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
        print(f"{d.name:<16} {d.n_ratings:>11,} ratings  {'cached' if cached else 'not cached':<10}  {d.url}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="list, fetch and describe the registered datasets")
    dsub = p.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser("fetch", help="download (or copy from a pre-filled folder) and verify")
    f.add_argument("names", nargs="+", metavar="NAME", help="registered release, or path of a CSV file")
    f.add_argument("--seed", metavar="DIR", help="folder holding already extracted releases")
    f.add_argument("--offline", action="store_true", help="never download")
    f.set_defaults(func=_data_fetch)
    s = dsub.add_parser("stats", help="users, items, ratings, density, Gini indices")
    s.add_argument("names", nargs="+", metavar="NAME", help="registered release, or path of a CSV file")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--offline", action="store_true", help="never download")
    s.set_defaults(func=_data_stats)
    ls = dsub.add_parser("list", help="the registry and what is cached")
    ls.set_defaults(func=_data_list)
