"""The set-up's list of modules whose bytecode it writes (scripts/compile_imports.py)."""

from __future__ import annotations

import importlib.util
import runpy
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GROUPS = runpy.run_path(str(ROOT / "scripts" / "compile_imports.py"))["GROUPS"]
NAMES = sorted({n for groups in GROUPS.values() for g in groups for n in g.split()})


def test_every_extra_of_the_project_has_its_group() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(GROUPS) == {""} | set(project["optional-dependencies"])


@pytest.mark.parametrize("name", NAMES)
def test_every_listed_module_exists(name: str) -> None:
    # the tests' environment has every extra installed; a renamed module fails the set-up
    assert importlib.util.find_spec(name) is not None, name
