"""`make setup` prepares the environment without building anything; the README starts with it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_setup_runs_the_bootstrap_and_builds_nothing():
    r = subprocess.run(["make", "-n", "setup"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    commands = [line for line in r.stdout.splitlines()
                if line.strip() and not line.startswith("echo ")]
    assert any(line.startswith("scripts/bootstrap.sh") for line in commands)
    for word in ("jupyter-book", "pytest", "recmeta run", "install-browser"):
        assert not any(word in line for line in commands), (word, commands)
    book = subprocess.run(["make", "-n", "book"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert "jupyter-book build" in book.stdout  # the dry run does show a build where there is one


def test_bootstrap_installs_what_recmeta_run_needs():
    make = (ROOT / "Makefile").read_text()
    extras = re.search(r"^setup:\n\tscripts/bootstrap\.sh (\S+)", make, re.MULTILINE).group(1).split(",")
    pyproject = (ROOT / "pyproject.toml").read_text()
    for extra in extras:
        assert re.search(rf"^{extra} = \[", pyproject, re.MULTILINE), extra
    book = pyproject.split("\nbook = [", 1)[1].split("]", 1)[0]
    assert "book" in extras
    for package in ("papermill", "nbconvert", "jupytext", "ipykernel"):  # what chapters.run imports
        assert package in book, package


def test_readme_rerun_section_starts_with_make_setup():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Re-running one chapter", 1)[1].split("\n## ", 1)[0]
    first = next(line for line in section.splitlines() if line.strip() and not line.startswith("```"))
    assert first.startswith("make setup")
