"""Sphinx extension: read recmeta's docstrings as the plain text they are written in.

The docstrings carry formulas such as ``|R_u|`` or ``σ|PR|/(t|U|)``; in reStructuredText a pair
of bars is a substitution reference. This extension escapes bars outside literals and tables
before autodoc parses a docstring, so the formulas show as written.
"""

from __future__ import annotations

import re

_LITERAL = re.compile(r"(``.*?``)")


def _escape(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith(("+-", "+=")) or (
        stripped.startswith("|") and stripped.endswith("|") and " | " in stripped
    ):  # a grid-table row
        return line
    parts = _LITERAL.split(line)
    return "".join(p if p.startswith("``") else p.replace("|", r"\|") for p in parts)


def _process(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = [_escape(line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
