"""The ``recmeta`` command line.

Each subcommand lives in its own module of this package exposing ``register(subparsers)``,
which adds a parser and sets ``func`` (called with the parsed arguments; its return value is
the exit code): ``data``, ``evaluate`` (trec_eval's drop-in), ``runs``, ``run`` (chapters),
``claims`` and ``compare``.

Every parser is built at start-up, so a subcommand's module imports at its top only what its
parser needs; what a command runs (the metric engine, the data loaders, LensKit through the
recommenders, the ledgers) is imported inside its handler. That keeps ``recmeta evaluate`` from
loading what it never uses: its start-up is part of the time ``benchmarks/trec_eval.py``
compares with trec_eval's.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: modules that add a subcommand, in the order they appear in ``recmeta --help``
COMMAND_MODULES = [
    "recmeta.cli.data",
    "recmeta.cli.evaluate",
    "recmeta.cli.runs",
    "recmeta.cli.chapters",
    "recmeta.cli.claims",
    "recmeta.cli.compare",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recmeta", description="Evaluation of recommender systems, re-derived and re-run."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (KeyError, ValueError, RuntimeError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"recmeta: error: {msg}", file=sys.stderr)
        return 2
