"""No result number typed into a chapter's prose: results come from executed code.

Chapters are moved to the ledger one at a time; those not yet moved are listed here and must
still hold typed numbers (a chapter that is clean is taken off the list, so the list only shrinks).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recmeta.book import chapters
from recmeta.ledger import prose

ROOT = Path(__file__).resolve().parents[1]

#: chapters whose prose still states results in typed numbers (to be moved to the ledger)
NOT_YET_CONVERTED: set[str] = set()


@pytest.mark.parametrize("chapter", [c.name for c in chapters.discover(ROOT)])
def test_chapter_prose_has_no_typed_result_numbers(chapter):
    found = prose.typed_numbers((ROOT / "notebooks" / f"{chapter}.md").read_text())
    if chapter in NOT_YET_CONVERTED:
        assert found, f"{chapter} has no typed number left: take it off NOT_YET_CONVERTED"
        return
    listed = "\n".join(f"  line {f.line}: {f.text!r} in {f.context!r}" for f in found)
    assert not found, f"typed numbers in {chapter}.md (compute them or take them from the ledger):\n{listed}"
