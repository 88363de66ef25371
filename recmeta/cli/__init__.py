"""The ``recmeta`` command line.

Each subcommand lives in its own module of this package exposing ``register(subparsers)``,
which adds a parser and sets ``func`` (called with the parsed arguments; its return value is
the exit code): ``data``, ``evaluate`` (trec_eval's drop-in), ``runs``, ``run`` (chapters),
``claims`` and ``compare``.

When the first argument names a subcommand, only that subcommand's module is imported and only
its parser built (every parser is built for ``recmeta --help`` and anything else), and what a
command runs (the metric engine, the data loaders, LensKit through the recommenders, the
ledgers) is imported inside its handler. That keeps ``recmeta evaluate`` from loading what it
never uses: its start-up is part of the time ``benchmarks/trec_eval.py`` compares with
trec_eval's.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand -> the module that adds it, in the order they appear in ``recmeta --help``
COMMANDS = {
    "data": "recmeta.cli.data",
    "evaluate": "recmeta.cli.evaluate",
    "runs": "recmeta.cli.runs",
    "run": "recmeta.cli.chapters",
    "claims": "recmeta.cli.claims",
    "compare": "recmeta.cli.compare",
}
COMMAND_MODULES = list(COMMANDS.values())


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of ``command`` alone (its module alone imported)."""
    parser = argparse.ArgumentParser(
        prog="recmeta", description="Evaluation of recommender systems, re-derived and re-run."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in [COMMANDS[command]] if command in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (KeyError, ValueError, RuntimeError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"recmeta: error: {msg}", file=sys.stderr)
        return 2
