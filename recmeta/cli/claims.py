"""``recmeta claims``: print the stored ledgers (the papers' claims and our verdicts).

The ledgers are those the chapters stored when they last ran (see :mod:`recmeta.ledger.store`);
nothing is recomputed. ``--quick`` reads the quick profile's, otherwise the full profile's.

The table gives each claim's kind, the paper's value with its margin and dataset, ours and the
verdict, the tallies per kind under each ledger, and a legend: what each verdict and each kind
means, in the words of :data:`recmeta.ledger.MEANING`. ``--json`` prints the records
(:data:`JSON_KEYS`); ``--check`` lists every record that breaks the ledger's acceptance rules
(:func:`recmeta.ledger.audit.problems`) and exits with 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import pandas as pd

from ..ledger import COLUMNS

#: keys of each record printed by ``--json``, in order: the ledger's own columns
JSON_KEYS = COLUMNS


def _known_chapters(stored: pd.DataFrame) -> set[str]:
    """Chapters with a registered ledger, a notebook in the project, or a stored ledger."""
    from .. import papers
    from ..data import project_root

    notebooks = project_root() / "notebooks"
    names = (
        {p.stem for p in notebooks.glob("*.md") if p.name != "README.md"}
        if notebooks.is_dir()
        else set()
    )
    return names | set(papers.ledgers()) | set(stored["chapter"])


def _command(chapter: str | None, dataset: str | None, quick: bool) -> str:
    parts = ["recmeta run", chapter or "CHAPTER"]
    if dataset:
        parts.append(f"--dataset {dataset}")
    if quick:
        parts.append("--quick")
    return " ".join(parts)


def _missing_message(chapters: list[str], dataset: str | None, profile: str, quick: bool) -> str:
    where = f"profile {profile}" + (f", dataset {dataset}" if dataset else "")
    book = "make quick-book" if quick else "make book"
    targets: list[str | None] = list(chapters) if chapters else [None]
    cmds = " or ".join(f"`{_command(c, dataset, quick)}`" for c in targets)
    what = f"for {', '.join(chapters)} " if chapters else ""
    return (
        f"no stored ledger {what}({where}). A chapter stores its ledger when it runs: {cmds}; "
        f"`{book}` runs every chapter on its default dataset."
    )


def _value(x: Any) -> Any:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if hasattr(x, "item"):
        return x.item()
    return x


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _value(r.get(k)) for k in JSON_KEYS} for r in frame.to_dict("records")]


def _table(frame: pd.DataFrame) -> str:
    """An aligned text table per stored ledger, with the verdict counts under it."""
    from ..ledger import ours_text, paper_text, tally_by_kind

    blocks = []
    for (chapter, dataset, profile), part in frame.groupby(
        ["chapter", "dataset", "profile"], sort=False
    ):
        rows = [
            (
                r["claim"],
                str(r.get("kind") or "—"),
                str(r["source"]),
                paper_text(r),
                ours_text(r),
                str(r["verdict"]),
                str(r["reason"]),
            )
            for r in part.to_dict("records")
        ]
        head = ("claim", "kind", "source", "paper", "ours", "verdict", "reason")
        widths = [max(len(x[i]) for x in (head, *rows)) for i in range(len(head) - 1)]
        lines = [
            f"{chapter} — dataset {dataset}, profile {profile}"
            + (f", written {part['written'].iloc[0]}" if "written" in part else "")
        ]
        for row in (head, *rows):
            lines.append(
                "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1]
            )
        for kind, tally in tally_by_kind(part).iterrows():
            lines.append(f"{kind}: " + "; ".join(f"{n} {v}" for v, n in tally.items() if n))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _legend() -> str:
    """One line per verdict and per kind, saying what it means, and how intervals are read."""
    from ..ledger import MEANING, Kind, Verdict
    from ..ledger.estimate import INTERVALS
    from ..ledger.kinds import KIND_MEANING

    lines = ["Verdicts:"]
    lines += [f"  {v.value}: {MEANING[v]}" for v in Verdict]
    lines += ["Kinds:"]
    lines += [f"  {k.value}: {KIND_MEANING[k]}" for k in Kind]
    lines += [f"Intervals: {INTERVALS}."]
    return "\n".join(lines)


def _check(frame: pd.DataFrame) -> int:
    """Print the breaches of the acceptance rules; 1 if any, else 0."""
    from ..ledger.audit import problems

    found = problems(frame)
    for p in found:
        print(p)
    ledgers = frame[["chapter", "dataset", "profile"]].drop_duplicates().shape[0]
    where = f"{len(frame)} record(s) of {ledgers} stored ledger(s)"
    if found:
        print(f"recmeta: {len(found)} problem(s) in {where}", file=sys.stderr)
        return 1
    print(f"no problem in {where}")
    return 0


def _claims(args: argparse.Namespace) -> int:
    from ..ledger import store

    profile = "quick" if args.quick else "full"
    roots = [args.results] if args.results else store.default_roots()
    everything = pd.concat([store.available(r) for r in roots], ignore_index=True)
    known = _known_chapters(everything)
    unknown = [c for c in args.chapters if c not in known]
    if unknown:
        names = ", ".join(sorted(known)) or "none"
        raise KeyError(f"unknown chapter(s) {', '.join(unknown)}; known chapters: {names}")
    frame = store.load_newest(roots, dataset=args.dataset, profile=profile)
    if args.chapters:
        frame = frame[frame["chapter"].isin(args.chapters)]
        order = {c: i for i, c in enumerate(args.chapters)}
        frame = frame.sort_values("chapter", key=lambda s: s.map(order), kind="stable")
    missing = [c for c in args.chapters if c not in set(frame["chapter"])]
    status = 0
    if len(frame):
        if args.check:
            status = _check(frame)
        elif args.json:
            print(json.dumps(_records(frame), indent=2, ensure_ascii=False))
        else:
            print(_table(frame))
            print()
            print(_legend())
    if frame.empty or missing:
        message = _missing_message(missing, args.dataset, profile, args.quick)
        other = "full" if args.quick else "quick"
        there = store.load_newest(roots, dataset=args.dataset, profile=other)
        wanted = missing or sorted(set(there["chapter"]))
        have = sorted(set(there["chapter"]) & set(wanted))
        if have:
            flag = "without --quick" if args.quick else "with --quick"
            cmd = " ".join(
                [
                    "recmeta claims",
                    *args.chapters,
                    *([f"--dataset {args.dataset}"] if args.dataset else []),
                    *([] if args.quick else ["--quick"]),
                ]
            )
            message += (
                f" The {other} profile has stored ledgers for {', '.join(have)}: run "
                f"`{cmd}` ({flag}) to print them."
            )
        print(f"recmeta: {message}", file=sys.stderr)
        return 2
    return status


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "claims", help="the papers' claims and our verdicts, as the chapters last stored them"
    )
    p.add_argument(
        "chapters",
        nargs="*",
        metavar="CHAPTER",
        help="chapter names (default: every stored chapter)",
    )
    p.add_argument(
        "--dataset", help="only this dataset (registered name or the CSV path the chapter ran on)"
    )
    p.add_argument(
        "--quick", action="store_true", help="the quick profile's ledgers (default: full)"
    )
    p.add_argument("--json", action="store_true", help="JSON records instead of a table")
    p.add_argument(
        "--check",
        action="store_true",
        help="list the records that break the ledger's acceptance rules (kind and rule named, "
        "a margin on every value rule, no graded magnitude on other data, every 'agrees' inside "
        "paper ± margin with both ends placed by the replicates); exit 1 if any",
    )
    p.add_argument(
        "--results",
        metavar="DIR",
        default=None,
        help="folder of stored ledgers (default: $RECMETA_RESULTS, else _cache/results "
        "and the book's _build/results, the newest of each)",
    )
    p.set_defaults(func=_claims)
