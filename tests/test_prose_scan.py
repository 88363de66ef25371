"""The scanner of result numbers typed into a chapter's prose."""

from __future__ import annotations

import textwrap

import pytest

from recmeta.ledger.prose import Found, scan_chapters, typed_numbers


def _texts(md: str) -> list[str]:
    return [f.text for f in typed_numbers(textwrap.dedent(md))]


HEADER = """\
---
jupytext:
  text_representation:
    format_version: 0.13
    jupytext_version: 1.16.4
kernelspec:
  name: python3
---
"""


def test_catches_decimals_and_percentages_with_their_lines():
    md = HEADER + textwrap.dedent("""
        # A chapter

        Our precision is 0.58 on ML-100K, against .61 in the paper.
        About 12 % of the lists, 7.2 % of the users and 3% of the items; 1,234.5 in all.

        - a list item with τ = 0.91
        | metric | τ |
        |---|---|
        | P | 0.93 |
        """)
    found = typed_numbers(md)
    assert [f.text for f in found] == ["0.58", ".61", "12 %", "7.2 %", "3%", "1,234.5", "0.91", "0.93"]
    lines = md.splitlines()
    for f in found:
        assert f.context == lines[f.line - 1].strip()
        assert lines[f.line - 1][f.column - 1:].startswith(f.text)
    assert [f.line for f in found] == [12, 12, 13, 13, 13, 13, 15, 18]
    assert "line 12" in str(found[0])


def test_integers_versions_and_references_are_allowed():
    assert _texts("""
        We run 5 recommenders on 943 users in 2018, with 100,000 permutations (step 3).
        The engine of recmeta 1.2.3 follows §5.1, Fig. 5.2, Table 3.1, eq. (4.2) and Section 2.3.
        1. a numbered list
        """) == []


@pytest.mark.parametrize("md", [
    # a code cell, its metadata (figure captions) included
    """
    ```{code-cell} ipython3
    ---
    mystnb:
      figure:
        caption: precision 0.58 at 10 %
    ---
    x = 0.58
    ```
    """,
    # other fenced blocks: plain, a language, tildes, a code directive, math
    "```\ncutoff = 0.5\n```\n",
    "```python\nalpha = 0.05\n```\n",
    "~~~\n0.5\n~~~\n",
    "```{math}\nx = 0.5\n```\n",
    # display math on one line and over several
    "$$ p = 0.0077 $$\n",
    "$$\n\\tau = 0.92\n$$ (eq-tau)\n",
    # an amsmath block
    "\\begin{align}\na &= 0.5 \\\\\nb &= 12\\%\n\\end{align}\n",
    # inline math, inline code, roles
    "The level $\\alpha = 0.05$ and $p < 0.01$ here.\n",
    "Set `threshold=3.5` and ``x = `0.5` `` there.\n",
    "As {cite}`valcarce2018robustness` and {cite:p}`sakai2006` show.\n",
    "Ours is {glue:text}`tau_p:.3f` against the paper's {glue}`paper_tau`.\n",
    "See {eq}`eq-3.2`, {numref}`fig-5.1` and {doc}`../book/metrics`.\n",
    # directive option lines, targets, comments, cell breaks, links
    "```{figure} images/fig-1.5.png\n:name: fig-1.5\n:width: 80%\n\nA caption.\n```\n",
    ":label: tab-0.5\n",
    "(sec-5.1)=\n## Robustness\n",
    "% a comment with 0.58\n",
    "<!-- hidden 0.58 -->\n",
    '+++ {"version": 1.5}\n',
    "The [release notes](https://example.org/v0.5/notes.html), <https://example.org/0.5> and "
    "https://example.org/1.5/x.\n",
])
def test_skipped_constructs(md):
    assert _texts(md) == []


def test_prose_inside_directives_is_scanned():
    md = "```{note}\n:class: tip\nThe paper's 0.58 would be typed here.\n```\n\nAfter: 0.7\n"
    found = typed_numbers(md)
    assert [(f.line, f.text) for f in found] == [(3, "0.58"), (6, "0.7")]
    colon = ":::{admonition} Note\n:class: tip\nTyped 12 % here.\n:::\n"
    assert _texts(colon) == ["12 %"]


def test_line_numbers_after_skipped_blocks():
    md = HEADER + textwrap.dedent("""
        ```{code-cell} ipython3
        a = 0.1
        b = 0.2
        ```

        $$
        x = 0.3
        $$

        Then 0.4 here, $0.5$ not, and `0.6` not; then 0.7.
        """)
    found = typed_numbers(md)
    assert [(f.line, f.text) for f in found] == [(19, "0.4"), (19, "0.7")]
    assert md.splitlines()[18].strip().startswith("Then 0.4")


def test_math_spanning_lines_and_blank_lines_end_inline_constructs():
    assert _texts("A sum $a +\nb = 0.5$ here.\n") == []
    # an unclosed `$` does not swallow the next paragraph
    assert _texts("Costs $5 only.\n\nThen 0.25.\n") == ["0.25"]


def test_scan_chapters(tmp_path):
    nb = tmp_path / "notebooks"
    nb.mkdir()
    (nb / "alpha.md").write_text(HEADER + "\nA typed 0.58.\n")
    (nb / "beta.md").write_text(HEADER + "\nAll {glue:text}`x` here.\n")
    (nb / "README.md").write_text("0.58\n")
    result = scan_chapters(tmp_path)
    assert set(result) == {"alpha", "beta"}
    assert result["alpha"] == [Found(10, 9, "0.58", "A typed 0.58.")]
    assert result["beta"] == []
    assert scan_chapters(nb) == result  # the notebooks folder itself works too
    with pytest.raises(FileNotFoundError):
        scan_chapters(tmp_path / "missing")
