"""Formatting shared by the report's tables and figures: names of tests, Markdown and LaTeX."""

from __future__ import annotations

import pandas as pd

__all__ = ["CORRECTION_NAMES", "TEST_NAMES", "interval_columns", "markdown_table", "tex"]

#: the test behind each ``p_value=`` choice, as a sentence names it
TEST_NAMES = {
    "permutation": "paired permutation test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "tukey": "randomised Tukey HSD test",
}
#: the correction behind each ``correction=`` choice, as a sentence names it
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "none": "no"}


def interval_columns(interval: str) -> tuple[str, str]:
    """The summary's columns of the ends of a ``"bootstrap"`` or ``"t"`` interval."""
    if interval == "bootstrap":
        return "boot_low", "boot_high"
    if interval == "t":
        return "t_low", "t_high"
    raise ValueError(f"interval must be 'bootstrap' or 't', got {interval!r}")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-style Markdown table (no dependency on tabulate)."""
    cols = [str(c) for c in frame.columns]
    rows = [[str(v).replace("|", "\\|") for v in r] for r in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def tex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (α, ≤ and – as LaTeX writes them)."""
    out = str(text).replace("\\", "\x00")
    for a, b in (
        ("&", r"\&"),
        ("%", r"\%"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
        ("$", r"\$"),
        ("~", r"\textasciitilde{}"),
        ("^", r"\textasciicircum{}"),
    ):
        out = out.replace(a, b)
    out = out.replace("\x00", r"\textbackslash{}")
    return out.replace("α", r"$\alpha$").replace("≤", r"$\le$").replace("–", "--")
