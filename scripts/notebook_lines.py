"""Count the code in the chapters: non-blank, non-comment lines inside ``{code-cell}`` fences.

    python scripts/notebook_lines.py [notebooks/*.md] [--max N]

Prints one row per notebook (code lines, cells, ``def`` statements, lines that build text in
f-strings) and the total; with ``--max N`` exits 1 when the total exceeds N, or when any
notebook holds a ``def``. The chapters call the package and plot; their logic lives in
``recmeta`` (notebooks/README.md).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}")
FSTRING = re.compile(r"""\bf["']""")


def code_lines(text: str) -> tuple[list[str], int]:
    """The non-blank, non-comment lines inside the code cells of a MyST notebook (a cell's
    option block included, as it is part of the cell), and the number of cells."""
    lines: list[str] = []
    cells = 0
    fence = None
    for raw in text.splitlines():
        if fence is None:
            m = FENCE.match(raw)
            if m:
                fence, cells = m.group(1), cells + 1
            continue
        if raw.strip() == fence:
            fence = None
            continue
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            lines.append(raw)
    return lines, cells


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--max", type=int, default=None, help="fail above this many code lines")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.paths or sorted(
        p for p in (root / "notebooks").glob("*.md") if p.name != "README.md"
    )
    total = defs_total = 0
    print(f"{'notebook':<34} {'code lines':>10} {'cells':>6} {'def':>4} {'f-string lines':>15}")
    for p in paths:
        lines, cells = code_lines(p.read_text(encoding="utf-8"))
        defs = sum(1 for s in lines if re.match(r"\s*(async\s+)?def\s", s))
        fstr = sum(1 for s in lines if FSTRING.search(s))
        total += len(lines)
        defs_total += defs
        print(f"{p.name:<34} {len(lines):>10} {cells:>6} {defs:>4} {fstr:>15}")
    print(f"{'total':<34} {total:>10} {'':>6} {defs_total:>4}")
    if args.max is not None and (total > args.max or defs_total):
        print(
            f"over the limit: {total} code lines (max {args.max}), {defs_total} def(s)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
