"""Chapters of the book as re-runnable experiments.

Every chapter is a MyST Markdown notebook in ``notebooks/`` whose first code cell carries the tag
``parameters``: every knob of the chapter (dataset, seeds, sizes, recommenders) is a plain
assignment there. A chapter re-runs on another dataset or with other sizes by overriding those
assignments, nothing else; :func:`run` does it with papermill, which injects the overrides in a
cell right after the parameters cell.

Two profiles: ``full`` (the book's default) and ``quick`` (small sizes, for CI and for a first
try). A chapter reads the profile with :func:`profile`, which honours ``$RECMETA_PROFILE``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["PROFILES", "profile", "ratings", "Chapter", "find", "discover", "run", "ChapterError"]

PROFILES = ("full", "quick")
ENV_VAR = "RECMETA_PROFILE"


class ChapterError(RuntimeError):
    """A chapter could not be found or failed while executing."""


def profile(default: str = "full") -> str:
    """The active profile: ``$RECMETA_PROFILE`` if set, else ``default``."""
    value = os.environ.get(ENV_VAR) or default
    if value not in PROFILES:
        raise ValueError(f"{ENV_VAR}={value!r} is not a profile; use one of {PROFILES}.")
    return value


def ratings(dataset: str, **columns: str | None) -> pd.DataFrame:
    """Ratings frame of a chapter's ``dataset`` parameter.

    A registered name (``ml-100k``, ``ml-latest-small``, ...) loads that release; a path to a CSV
    file loads your own data, with columns ``user, item, rating[, timestamp]`` unless ``columns``
    maps them (see :func:`recmeta.data.from_csv`).
    """
    from . import data

    if dataset in data.REGISTRY:
        return data.load(dataset)
    path = Path(dataset)
    if path.suffix.lower() in {".csv", ".tsv"} or path.exists():
        if not columns:
            head = pd.read_csv(path, nrows=0, sep="\t" if path.suffix == ".tsv" else ",").columns
            columns = {"timestamp": "timestamp"} if "timestamp" in head else {}
        return data.from_csv(path, sep="\t" if path.suffix == ".tsv" else ",", **columns)
    known = ", ".join(sorted(data.REGISTRY))
    raise KeyError(f"dataset {dataset!r} is neither a registered release ({known}) nor a CSV file.")


@dataclass(frozen=True)
class Chapter:
    """A chapter notebook and the defaults of its parameters cell."""

    name: str
    path: Path
    title: str
    parameters: dict[str, object]


def _root(root: str | os.PathLike | None) -> Path:
    r = Path(root) if root is not None else Path.cwd()
    if not (r / "notebooks").is_dir():
        raise ChapterError(
            f"no notebooks/ folder under {r.resolve()}; run from the project folder or pass --root."
        )
    return r


def _read(path: Path) -> Chapter:
    import jupytext

    nb = jupytext.read(path)
    title = next(
        (line.lstrip("# ").strip() for c in nb.cells if c.cell_type == "markdown"
         for line in c.source.splitlines() if line.startswith("# ")),
        path.stem,
    )
    params: dict[str, object] = {}
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    if cell is not None:
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    params[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    params[node.targets[0].id] = ast.unparse(node.value)
    return Chapter(path.stem, path, title, params)


def discover(root: str | os.PathLike | None = None) -> list[Chapter]:
    """All chapters of the project, in file-name order."""
    paths = sorted(_root(root).glob("notebooks/*.md"))
    return [_read(p) for p in paths if p.name != "README.md"]


def find(name: str, root: str | os.PathLike | None = None) -> Chapter:
    chapters = {c.name: c for c in discover(root)}
    if name not in chapters:
        raise ChapterError(f"no chapter {name!r}; chapters: {', '.join(chapters) or 'none'}.")
    return chapters[name]


def _coerce(text: str) -> object:
    """A ``--set`` value: a Python literal if it parses as one, else the string itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_assignments(items: list[str], known: dict[str, object]) -> dict[str, object]:
    """``["k=v", ...]`` to a dict, refusing names the parameters cell does not define."""
    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        if key not in known:
            raise ValueError(f"the chapter has no parameter {key!r}; its parameters: {', '.join(known)}")
        out[key] = _coerce(value)
    return out


def run(
    name: str,
    *,
    dataset: str | None = None,
    overrides: dict[str, object] | None = None,
    quick: bool = False,
    out: str | os.PathLike = "_build/runs",
    root: str | os.PathLike | None = None,
    html: bool = True,
) -> Path:
    """Execute chapter ``name`` with its parameters overridden; return the executed notebook.

    Writes ``<out>/<name>.ipynb`` (and ``.html``). The run cache of recommender outputs is shared
    with the book build, so a re-run trains no model that was trained before with the same inputs.
    A failing cell raises :class:`ChapterError` naming the cell and the error.
    """
    import jupytext
    import papermill as pm

    root_path = _root(root).resolve()
    chapter = find(name, root_path)
    params = dict(overrides or {})
    if dataset is not None:
        if "dataset" not in chapter.parameters:
            raise ChapterError(f"chapter {name!r} has no 'dataset' parameter.")
        params["dataset"] = dataset
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    src = out_dir / f"{name}.input.ipynb"
    dst = out_dir / f"{name}.ipynb"
    jupytext.write(jupytext.read(chapter.path), src)
    env_before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = "quick" if quick else (env_before or "full")
    try:
        pm.execute_notebook(
            str(src), str(dst), parameters=params, kernel_name="python3",
            cwd=str(root_path), progress_bar=sys.stderr.isatty(),
        )
    except pm.PapermillExecutionError as exc:
        raise ChapterError(
            f"chapter {name!r} failed in cell {exc.exec_count} ({exc.ename}: {exc.evalue}); "
            f"the executed notebook with the traceback is {dst}"
        ) from exc
    finally:
        if env_before is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = env_before
        src.unlink(missing_ok=True)
    if html:
        subprocess.run(
            [sys.executable, "-m", "nbconvert", "--to", "html", "--log-level", "WARN", str(dst)],
            check=True,
        )
    return dst
