"""Find result numbers typed into a chapter's prose.

A chapter's text must take every result from computed values — myst-nb ``glue`` roles such as
``{glue:text}`` with the name ``tau_p:.3f``, or Markdown generated in a cell — so that a re-run on
another dataset cannot leave a false sentence behind. The paper's printed values go the same way:
they live in the chapter's ledger (:mod:`recmeta.ledger`) and reach the text through ``glue``.
:func:`typed_numbers` lists the numbers that break this rule in a MyST Markdown notebook.

*Flagged*: decimal numbers (``0.58``, ``.58``, ``3.4``, ``1,234.5``, ``2.5e-3``) and
percentages (``12 %``, ``12%``, ``7.2 %``, ``12 percent``) in prose, headings, lists, tables and
the bodies of prose directives (``{note}``, ``{admonition}``, ``{figure}`` captions, ...).

*Allowed*: integers (parameters, years, counts, section numbers); version-like numbers
(``1.2.3``); a decimal right after a reference word or sign (``§5.1``, ``Fig. 5.2``,
``Table 3.1``, ``Eq. 4.2``, ``Section 2.3``; each number needs its own); and everything inside

- the jupytext YAML header;
- fenced blocks of code (``{code-cell}`` cells, plain or language fences, ``{code-block}``,
  ``{math}``, ``{raw}``, ...) — a code cell's metadata, captions included, is code;
- display math (``$$ ... $$``, on one line or several) and ``\\begin{...} ... \\end{...}`` blocks;
- inline math ``$...$`` and inline code ```...```;
- roles with their backquoted text: ``{cite}``, ``{glue:text}``, ``{glue}``, ``{eq}``,
  ``{numref}``, ``{doc}``, any ``{name}``;
- directive option lines (``:name:``, ``:label:``, ``:width: 80%``) and option blocks;
- MyST targets ``(label)=``, comments ``% ...`` and ``<!-- ... -->``, cell breaks ``+++``;
- link targets ``[text](url)``, autolinks ``<https://...>`` and bare URLs.

A decimal that is a parameter rather than a result (a threshold, a significance level) belongs in
inline math (``$\\alpha = 0.05$``) or comes from the parameters cell through ``glue``.
Indented code blocks are read as prose (in notebooks, indentation is for lists).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from ..data import project_root

__all__ = ["Found", "typed_numbers", "scan_chapters", "SKIPPED_DIRECTIVES"]

#: directives whose body is code or math, not prose
SKIPPED_DIRECTIVES = frozenset(
    {
        "code-cell",
        "code",
        "code-block",
        "sourcecode",
        "literalinclude",
        "math",
        "raw",
        "eval-rst",
        "bibliography",
        "toctree",
        "tableofcontents",
        "mermaid",
        "graphviz",
        "jupyter-execute",
        "ipython",
        "testcode",
        "testoutput",
        "doctest",
        "parsed-literal",
    }
)


@dataclass(frozen=True)
class Found:
    """A number typed into the prose: 1-based ``line`` and ``column``, the ``text``, its line."""

    line: int
    column: int
    text: str
    context: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.text!r} in: {self.context}"


_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(.*?)\s*$")
_DIRECTIVE = re.compile(r"^\{([^}\s]+)\}")
_OPTION = re.compile(r"^\s*:[A-Za-z][\w-]*:(\s|$)")
_TARGET = re.compile(r"^\s*\([^()\s]+\)=\s*$")
_COMMENT = re.compile(r"^\s*%")
_CELL_BREAK = re.compile(r"^\s*\+\+\+")
_LINK_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$")
_BEGIN = re.compile(r"^\s*\\begin\{([^}]+)\}")

_NO_BLANK = r"(?:(?!\n[ \t]*\n)[\s\S])"
_INLINE = [
    re.compile(r"<!--[\s\S]*?-->"),
    re.compile(r"\{[A-Za-z][\w:.+-]*\}(`+)" + _NO_BLANK + r"+?(?<!`)\1(?!`)"),  # roles
    re.compile(r"(?<!`)(`+)(?!`)" + _NO_BLANK + r"+?(?<!`)\1(?!`)"),  # code spans
    re.compile(r"(?<!\\)\$\$" + _NO_BLANK + r"+?\$\$"),  # display math inside a line
    re.compile(
        r"(?<![\\$])\$(?![\s$])(?:\\.|[^$\\\n]|\n(?![ \t]*\n))+?(?<![\s\\])\$(?!\d)"
    ),  # inline math
    re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)"),  # link targets
    re.compile(r"<[A-Za-z][\w+.-]*:[^>\s]*>"),  # autolinks
    re.compile(r"\b(?:https?|ftp)://[^\s<>)\]]+"),  # bare URLs
]

_INT = r"(?:\d{1,3}(?:,\d{3})+|\d+)"
_PERCENT = re.compile(
    r"(?<![\w.])" + _INT + r"(?:\.\d+)?[ \u00a0\u202f]?(?:%|(?:percent|per cent)\b)"
)
_DECIMAL = re.compile(r"(?<![\w.])" + _INT + r"?\.\d+(?:[eE][-+]?\d+)?(?!\.?\d)")
_REFERENCE = re.compile(
    r"(?:§§?|\b(?:sections?|secs?\.|figures?|figs?\.|tables?|tabs?\.|equations?|eqs?\.|chapters?|"
    r"ch\.|appendix|algorithms?|alg\.|theorems?|thm\.|lemmas?|definitions?|def\.|propositions?|"
    r"prop\.|corollary|versions?|v))\s*\(?\s*$",
    re.IGNORECASE,
)


def _blank(s: str) -> str:
    """``s`` with every character but newlines replaced by a space (offsets are kept)."""
    return re.sub(r"[^\n]", " ", s)


def _mask_lines(lines: list[str]) -> list[str]:
    """Blank the lines that are not prose: header, code fences, math blocks, options, targets."""
    out = list(lines)
    n = len(lines)
    i = 0
    if n and lines[0].strip() == "---":  # jupytext header (only when it is closed)
        end = next((j for j in range(1, n) if lines[j].strip() == "---"), None)
        if end is not None:
            for j in range(end + 1):
                out[j] = ""
            i = end + 1
    prose_fences: list[tuple[str, int]] = []  # open directives whose body is prose
    skip: tuple[str, int] | None = None  # open fence whose body is skipped
    math = False
    env: str | None = None
    options = False  # right after a directive's opening line
    yaml_options = False
    for j in range(i, n):
        line = lines[j]
        s = line.strip()
        if skip is not None:
            out[j] = ""
            if re.fullmatch(re.escape(skip[0]) + f"{{{skip[1]},}}", s):
                skip = None
            continue
        if math:
            out[j] = ""
            math = "$$" not in s
            continue
        if env is not None:
            out[j] = ""
            if f"\\end{{{env}}}" in s:
                env = None
            continue
        if yaml_options:
            out[j] = ""
            yaml_options = s != "---"
            continue
        m = _FENCE.match(line)
        if m:
            out[j] = ""
            options = False
            mark, info = m.group(1), m.group(2)
            char, length = mark[0], len(mark)
            if (
                not info
                and prose_fences
                and prose_fences[-1][0] == char
                and length >= prose_fences[-1][1]
            ):
                prose_fences.pop()
                continue
            d = _DIRECTIVE.match(info)
            if d is None and char == ":":
                continue  # a bare ':::' closing nothing open, or not a directive
            if d is None or d.group(1) in SKIPPED_DIRECTIVES:
                skip = (char, length)
            else:
                prose_fences.append((char, length))
                options = True
            continue
        if options:
            if _OPTION.match(line):
                out[j] = ""
                continue
            if s == "---":
                out[j] = ""
                yaml_options = True
                continue
            options = False
        if s.startswith("$$"):
            out[j] = ""
            math = s.count("$$") < 2
            continue
        b = _BEGIN.match(line)
        if b:
            out[j] = ""
            env = None if f"\\end{{{b.group(1)}}}" in s else b.group(1)
            continue
        if (
            _OPTION.match(line)
            or _TARGET.match(line)
            or _COMMENT.match(line)
            or _CELL_BREAK.match(line)
            or _LINK_DEF.match(line)
        ):
            out[j] = ""
    return out


def _mask_inline(text: str) -> str:
    for pattern in _INLINE:
        text = pattern.sub(lambda m: _blank(m.group(0)), text)
    return text


def typed_numbers(markdown_text: str) -> list[Found]:
    """Decimal numbers and percentages typed into the prose of a MyST Markdown notebook.

    Returns them in order of appearance; see the module docstring for what is skipped.
    """
    lines = markdown_text.splitlines()
    masked_lines = _mask_lines(lines)
    # blanked lines keep their length so offsets map back to the original line and column
    masked = "\n".join(m if m else " " * len(o) for m, o in zip(masked_lines, lines, strict=True))
    masked = _mask_inline(masked)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    hits: list[tuple[int, int]] = [m.span() for m in _PERCENT.finditer(masked)]
    taken = list(hits)
    for m in _DECIMAL.finditer(masked):
        a, b = m.span()
        if any(a < e and s < b for s, e in taken):
            continue
        row = bisect_right(starts, a) - 1
        if _REFERENCE.search(masked[starts[row] : a]):
            continue
        hits.append((a, b))
    found = []
    for a, b in sorted(hits):
        row = bisect_right(starts, a) - 1
        found.append(Found(row + 1, a - starts[row] + 1, masked[a:b], lines[row].strip()))
    return found


def scan_chapters(root: str | os.PathLike | None = None) -> dict[str, list[Found]]:
    """:func:`typed_numbers` of every chapter: ``{chapter name: findings}``, every chapter listed.

    ``root`` is the project folder (its ``notebooks/`` is scanned) or a folder of notebooks;
    by default the project folder (:func:`recmeta.data.project_root`). ``README.md`` is skipped.
    """

    base = Path(root) if root is not None else project_root()
    folder = base / "notebooks" if (base / "notebooks").is_dir() else base
    if not folder.is_dir():
        raise FileNotFoundError(f"no folder of chapters at {folder}")
    return {
        p.stem: typed_numbers(p.read_text(encoding="utf-8"))
        for p in sorted(folder.glob("*.md"))
        if p.name != "README.md"
    }
