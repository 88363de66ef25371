"""Compare two stores of evaluated ledgers claim by claim: ``python scripts/ledger_diff.py A B
[CHAPTER ...]``.

``A`` and ``B`` are result roots as :mod:`recmeta.ledger.store` writes them
(``<root>/<chapter>/<dataset>--<profile>.json``, e.g. ``_build/results`` after a book build).
Every stored ledger present in either root (of the chapters named, if any) is compared record by
record, every column, values to the last digit (NaN equals NaN); the time written and the package
version are not compared. Prints each difference and exits 1 if there is any, 0 if the stores are
identical.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def diff(a_root: Path, b_root: Path, chapters: list[str] | None = None) -> list[str]:
    """Every difference between the stores under ``a_root`` and ``b_root``, as text lines."""
    found: list[str] = []
    files = sorted(
        {
            p.relative_to(root)
            for root in (a_root, b_root)
            for p in root.glob("*/*.json")
            if not chapters or p.parent.name in chapters
        }
    )
    if not files:
        return [f"no stored ledgers under {a_root} or {b_root}"]
    for rel in files:
        pa, pb = a_root / rel, b_root / rel
        if not pa.exists() or not pb.exists():
            found.append(f"{rel}: only in {a_root if pa.exists() else b_root}")
            continue
        ra = {r["claim"]: r for r in json.loads(pa.read_text())["records"]}
        rb = {r["claim"]: r for r in json.loads(pb.read_text())["records"]}
        for claim in sorted(set(ra) ^ set(rb)):
            found.append(f"{rel}: claim {claim} only in {a_root if claim in ra else b_root}")
        if [k for k in ra if k in rb] != [k for k in rb if k in ra]:
            found.append(f"{rel}: the claims are in another order")
        for claim in (c for c in ra if c in rb):
            for col in sorted(set(ra[claim]) | set(rb[claim])):
                x, y = ra[claim].get(col), rb[claim].get(col)
                if not _same(x, y):
                    found.append(f"{rel}: {claim}.{col}: {x!r} != {y!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = Path(args[0]), Path(args[1])
    lines = diff(a, b, args[2:] or None)
    for line in lines:
        print(line)
    n = len([p for p in a.glob("*/*.json") if not args[2:] or p.parent.name in args[2:]])
    print(
        f"{len(lines)} difference(s) over {n} stored ledger(s)"
        if lines
        else f"identical: {n} stored ledger(s), every claim and column"
    )
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
