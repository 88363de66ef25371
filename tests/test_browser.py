"""The link checker of scripts/browser_check.py (the browser check of every page of the built
book is in test_book.py, with the other tests of the one build)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("browser_check", ROOT / "scripts" / "browser_check.py")
browser_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(browser_check)


def test_link_checker_finds_a_broken_link(tmp_path):
    (tmp_path / "index.html").write_text('<a href="missing.html">x</a><img src="ok.png"><a href="https://x.org">y</a>')
    (tmp_path / "ok.png").write_bytes(b"")
    assert browser_check.internal_link_problems(tmp_path) == ["index.html: broken link missing.html"]
