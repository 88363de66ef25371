"""``recmeta run``: execute one chapter with its parameters overridden."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect

from .. import papers
from ..book import chapters
from ..data.validation import plain
from .data import add_columns_option, notices


def _run(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    if not args.chapter:
        raise ValueError("name a chapter (recmeta run --list shows them)")
    chapter = chapters.find(args.chapter, args.root)
    overrides = chapters.parse_assignments(args.set, chapter.parameters)
    with notices():
        path = chapters.run(
            args.chapter,
            dataset=args.dataset,
            columns=args.columns,
            overrides=overrides,
            quick=args.quick,
            out=args.out,
            root=args.root,
            html=not args.no_html,
        )
    print(path)
    if not args.no_html:
        print(path.with_suffix(".html"))
    return 0


def _list(args: argparse.Namespace) -> int:
    """The chapters (or the one named), what data they take, their parameters and profiles."""
    stray = [
        f"--{k.replace('_', '-')}"
        for k in ("dataset", "columns", "set", "quick", "no_html")
        if getattr(args, k)
    ]
    if stray:
        raise ValueError(
            f"--list takes no {', '.join(stray)}: it lists the chapters; to run one, "
            "drop --list (recmeta run CHAPTER ...)"
        )
    if args.chapter:
        found = [chapters.find(args.chapter, args.root)]
    else:
        found = chapters.discover(args.root)
    print(
        "Profiles: "
        + "; ".join(
            f"{p}{' (--quick)' if p == 'quick' else ' (default)'}: {text}"
            for p, text in chapters.PROFILE_TEXT.items()
        )
        + ". A parameter set to None takes its "
        "value from the profile, as shown in [brackets]."
    )
    for c in found:
        print()
        sizes = {**paper_sizes(c), **c.profile_sizes}
        print(chapters.describe(dataclasses.replace(c, profile_sizes=sizes)))
    return 0


def _text(value: object) -> str:
    value = plain(value)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list) and len(value) > 6:
        return f"{len(value)} values, {value[0]!r} to {value[-1]!r}"
    return repr(value)


def paper_sizes(chapter: chapters.Chapter) -> dict[str, tuple[str, str]]:
    """``{parameter: (quick value, full value)}`` for the chapter's parameters left at ``None``,
    read from its paper's ``Settings.resolve`` in each profile (empty for a chapter without one)."""
    for name in papers.PAPER_MODULES:
        module = importlib.import_module(name)
        ledger = getattr(module, "LEDGER", None)
        settings = getattr(module, "Settings", None)
        if ledger is None or ledger.chapter != chapter.name or settings is None:
            continue
        params = inspect.signature(settings.resolve).parameters
        needed = {
            k: chapter.parameters[k]
            for k, p in params.items()
            if p.kind is p.KEYWORD_ONLY and p.default is p.empty and k in chapter.parameters
        }
        quick, full = (settings.resolve(profile, **needed) for profile in ("quick", "full"))
        return {
            k: (_text(getattr(quick, k)), _text(getattr(full, k)))
            for k, v in chapter.parameters.items()
            if v is None and hasattr(quick, k) and hasattr(full, k)
        }
    return {}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="execute a chapter with overridden parameters")
    p.add_argument("chapter", nargs="?", help="chapter name (file name in notebooks/ without .md)")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the chapters (or the one named): the data each takes, its "
        "parameters with their meaning, and what --quick changes",
    )
    p.add_argument(
        "--dataset",
        help="registered dataset name or path of a ratings file (CSV, TSV, .dat, Parquet)",
    )
    add_columns_option(p, "the --dataset file's columns")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter (Python literal or string); repeatable",
    )
    p.add_argument("--quick", action="store_true", help="the quick profile (small sizes)")
    p.add_argument("--out", default="_build/runs", help="output folder (default _build/runs)")
    p.add_argument("--root", default=None, help="project folder (default: current folder)")
    p.add_argument(
        "--no-html",
        action="store_true",
        help="skip the HTML page (rendered by Jupyter Book as the book renders it)",
    )
    p.set_defaults(func=_run)
