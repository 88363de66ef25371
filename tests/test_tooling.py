"""The package passes its linter and its type checker, as configured in pyproject.toml.

``ruff check`` (lint rules, ``[tool.ruff.lint]``), ``ruff format --check`` (the format,
``[tool.ruff.format]``) and ``mypy`` (``[tool.mypy]``: the files it checks and how strictly) run
on ``recmeta/`` with the tools of the interpreter running the tests (the ``test`` extra installs
them). Their caches are kept in ``_cache/`` (ignored by git), so a second run takes seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_cache"
BIN = Path(sys.executable).parent


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _ruff() -> str:
    ruff = BIN / "ruff"
    assert ruff.exists(), f"ruff is not installed beside {sys.executable}: pip install -e '.[test]'"
    return str(ruff)


def _report(done: subprocess.CompletedProcess[str]) -> str:
    return f"`{' '.join(done.args)}` exited with {done.returncode}:\n{done.stdout}{done.stderr}"


def test_ruff_check():
    done = _run([_ruff(), "check", "--cache-dir", str(CACHE / "ruff"), "recmeta"])
    assert done.returncode == 0, _report(done)


def test_ruff_format():
    done = _run([_ruff(), "format", "--check", "--cache-dir", str(CACHE / "ruff"), "recmeta"])
    assert done.returncode == 0, _report(done)


def test_mypy():
    # no file argument: the files checked are pyproject.toml's (`files = ["recmeta"]`)
    done = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(CACHE / "mypy"),
        ]
    )
    assert done.returncode == 0, _report(done)
    assert "Success: no issues found" in done.stdout, _report(done)
