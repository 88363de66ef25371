"""Tallies of verdicts per kind and dataset in two stores of ledgers, and every changed verdict
with its interval before and after: ``python scripts/verdict_changes.py BEFORE AFTER
[--profile full]``.

``BEFORE`` and ``AFTER`` are result roots as :mod:`recmeta.ledger.store` writes them. A ledger
stored before claims had kinds takes, claim by claim, the kind the same claim has in ``AFTER``
(on the same dataset); a claim only in one store is listed as added or removed. Prints Markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from recmeta.ledger import store


def _load(root: Path, profile: str) -> pd.DataFrame:
    frame = store.load(root=root, profile=profile)
    if frame.empty:
        raise SystemExit(f"no stored ledgers of profile {profile} under {root}")
    return frame


def _md(frame: pd.DataFrame) -> str:
    flat = frame.reset_index()
    head = "| " + " | ".join(map(str, flat.columns)) + " |"
    rows = ["| " + " | ".join(map(str, r)) + " |" for r in flat.itertuples(index=False)]
    return "\n".join([head, "|" + "---|" * len(flat.columns), *rows])


def _interval(low: object, high: object) -> str:
    """``[low, high]`` with four significant digits, ``—`` without an interval."""
    if pd.isna(low) or pd.isna(high):  # type: ignore[arg-type]
        return "—"
    return f"[{float(low):.4g}, {float(high):.4g}]"  # type: ignore[arg-type]


def tallies(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per chapter, dataset, kind and verdict (verdicts as columns)."""
    return (
        frame.groupby(["chapter", "dataset", "kind", "verdict"], dropna=False)
        .size()
        .unstack("verdict", fill_value=0)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--profile", default="full")
    args = parser.parse_args(argv)
    before, after = _load(args.before, args.profile), _load(args.after, args.profile)
    key = ["chapter", "dataset", "claim"]
    kinds = after.set_index(key)["kind"]
    if "kind" not in before or before["kind"].isna().all():
        before = before.assign(kind=[kinds.get(tuple(k), "removed") for k in before[key].values])
    for name, frame in (("Before", before), ("After", after)):
        print(f"## {name}: verdicts per chapter, dataset and kind\n")
        print(_md(tallies(frame)) + "\n")
        print(f"{name}, all chapters:\n")
        by = frame.groupby(["dataset", "kind"]).verdict.value_counts().unstack(fill_value=0)
        print(_md(by) + "\n")
    joined = (
        before.set_index(key)[["verdict", "low", "high"]]
        .rename(columns={"verdict": "verdict_before", "low": "low_before", "high": "high_before"})
        .join(after.set_index(key)[["verdict", "kind", "reason", "low", "high"]], how="outer")
    )
    changed = joined[joined["verdict_before"].fillna("—") != joined["verdict"].fillna("—")]
    print(f"## Changed verdicts ({len(changed)} of {len(joined)})\n")
    print(
        "| chapter | dataset | claim | kind | before | after | interval before | interval after "
        "| why (after) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (chapter, dataset, claim), r in changed.iterrows():
        why = str(r["reason"]).replace("|", "\\|")
        print(
            f"| {chapter} | {dataset} | {claim} | {r['kind']} | {r['verdict_before']} | "
            f"{r['verdict']} | {_interval(r['low_before'], r['high_before'])} | "
            f"{_interval(r['low'], r['high'])} | {why} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
