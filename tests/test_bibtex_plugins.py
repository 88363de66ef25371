"""The book's extension that registers its pybtex plugins once (book/_ext/bibtex_plugins.py)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pybtex.plugin as pp
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = runpy.run_path(str(ROOT / "book" / "_ext" / "bibtex_plugins.py"))


def test_registered_plugins_are_the_entry_points_classes(monkeypatch) -> None:
    monkeypatch.setattr(pp, "_RUNTIME_PLUGINS", {})
    found = {(g, n): pp.find_plugin(g, n) for g, n in EXT["PLUGINS"]}  # by the entry points
    EXT["_register"](None)

    def no_scan(*args, **kwargs):
        raise AssertionError("pybtex scanned the entry points")

    monkeypatch.setattr(pp, "entry_points", no_scan)
    for (group, name), cls in found.items():
        assert pp.find_plugin(group, name) is cls
    # the defaults sphinxcontrib-bibtex asks for without a name are among them
    assert pp.find_plugin("pybtex.style.names") is found["pybtex.style.names", "plain"]
    assert pp.find_plugin("pybtex.style.labels") is found["pybtex.style.labels", "number"]
    with pytest.raises(AssertionError, match="scanned"):  # anything else is still looked up
        pp.find_plugin("pybtex.backends", "latex")
