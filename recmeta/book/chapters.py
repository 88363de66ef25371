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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import pandas as pd

from .. import data
from ..data import is_path, parse_columns, project_root
from ..ledger import PROFILES
from .execution import PROFILE_TEXT, Execution, start

if TYPE_CHECKING:
    from ..data import ColumnNames, Columns

__all__ = [
    "PROFILES",
    "GRADED_ONLY",
    "profile",
    "ratings",
    "threshold",
    "Execution",
    "start",
    "Chapter",
    "find",
    "discover",
    "describe",
    "PROFILE_TEXT",
    "run",
    "page",
    "ChapterError",
]


ENV_VAR = "RECMETA_PROFILE"


class ChapterError(RuntimeError):
    """A chapter could not be found or failed while executing."""


def profile(default: str = "full") -> str:
    """The active profile: ``$RECMETA_PROFILE`` if set, else ``default``."""
    value = os.environ.get(ENV_VAR) or default
    if value not in PROFILES:
        raise ValueError(f"{ENV_VAR}={value!r} is not a profile; use one of {PROFILES}.")
    return value


#: chapters that need graded relevance, and why; they refuse implicit-feedback data
GRADED_ONLY: dict[str, str] = {
    "statistical-biases": "relevance is a rating threshold (5 stars by default)",
    "assessing-ranking-metrics": "relevance is a rating threshold and ERR weighs the grades",
    "multigraded-relevance": "µAP, NDCNG and nDCG with rating gains need several grades",
}


def ratings(
    dataset: str | os.PathLike,
    *,
    needs: str | None = None,
    columns: Columns = None,
    **named: Unpack[ColumnNames],
) -> pd.DataFrame:
    """Ratings frame of a chapter's ``dataset`` parameter (see :func:`recmeta.data.load`).

    A registered name (``ml-100k``, ``ml-latest-small``, ...) loads that release; a path loads
    a ratings file of your own (CSV, TSV, ``.dat``, Parquet), its columns recognised by their
    usual names (``userId``, ``movieId``, ...) unless ``columns`` (the chapter's ``columns``
    parameter, e.g. ``"user=uid,item=song"``) names them; the columns taken are printed. A file
    without ratings loads as implicit feedback. ``needs="graded"`` (chapters of
    :data:`GRADED_ONLY`) refuses such data with the reason and the chapters that do run on it.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", data.ColumnsRecognised)
        df = data.load(dataset, columns=columns, **named)
    for w in caught:
        if issubclass(w.category, data.ColumnsRecognised):
            print(f"Note: {w.message}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if needs not in (None, "graded"):
        raise ValueError(f"needs={needs!r}: use None or 'graded'")
    if needs == "graded" and data.is_implicit(df):
        here = _calling_chapter()
        why = GRADED_ONLY.get(here, "the chapter needs graded relevance")
        runnable = ", ".join(_implicit_chapters())
        raise data.DataError(
            f"{data.describe_source(dataset)} has no rating column (implicit feedback), and this "
            f"chapter cannot run on it: {why}. Chapters that run on implicit feedback: {runnable}. "
            "If the file does hold ratings under another name, map it (rating=...)."
        )
    return df


def _implicit_chapters() -> list[str]:
    """Chapters of the project that run on implicit feedback (those not in GRADED_ONLY)."""

    try:
        return [c.name for c in discover(project_root()) if c.name not in GRADED_ONLY]
    except ChapterError:
        return ["datasets", "sampled-metrics", "robustness"]


def _calling_chapter() -> str:
    """Name of the chapter being executed, from ``$RECMETA_CHAPTER`` (set by :func:`run`)."""
    return os.environ.get("RECMETA_CHAPTER", "")


def threshold(df: pd.DataFrame, value: float) -> float | None:
    """The relevance threshold a chapter applies to ``df``: ``value``, or None for implicit data.

    With implicit feedback every interaction is relevant and the threshold is ignored; the
    function says so once, in the chapter's output.
    """

    if data.is_implicit(df):
        print(
            f"Implicit feedback (no ratings): every interaction is relevant; the threshold "
            f"{value:g} is ignored."
        )
        return None
    return value


@dataclass(frozen=True)
class Chapter:
    """A chapter notebook and the defaults of its parameters cell.

    ``descriptions``: each parameter's comment in that cell; ``profile_sizes``: for parameters
    whose value the chapter sets by profile (``n = n or (5 if quick else 50)``), the quick and
    the full value as written in the chapter.
    """

    name: str
    path: Path
    title: str
    parameters: dict[str, object]
    descriptions: dict[str, str] = field(default_factory=dict)
    profile_sizes: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def implicit(self) -> bool:
        """Whether the chapter runs on implicit feedback (data without ratings) too."""
        return self.name not in GRADED_ONLY


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
        (
            line.lstrip("# ").strip()
            for c in nb.cells
            if c.cell_type == "markdown"
            for line in c.source.splitlines()
            if line.startswith("# ")
        ),
        path.stem,
    )
    params: dict[str, object] = {}
    notes: dict[str, str] = {}
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    if cell is not None:
        comments = _comments(cell.source)
        lines = cell.source.splitlines()
        for node in ast.parse(cell.source).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                name = node.targets[0].id
                try:
                    params[name] = ast.literal_eval(node.value)
                except ValueError:
                    params[name] = ast.unparse(node.value)
                above = node.lineno - 1  # a comment on the line of its own just above
                if node.lineno in comments:
                    notes[name] = comments[node.lineno]
                elif above in comments and lines[above - 1].lstrip().startswith("#"):
                    notes[name] = comments[above]
    sizes: dict[str, tuple[str, str]] = {}
    for c in nb.cells:
        if c.cell_type == "code" and c is not cell:
            sizes.update(_profile_sizes(c.source, set(params)))
    return Chapter(path.stem, path, title, params, notes, sizes)


def _comments(source: str) -> dict[int, str]:
    """The comment on each line of ``source`` (line numbers from 1), at its end or alone."""
    import io
    import tokenize

    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _profile_sizes(source: str, names: set[str]) -> dict[str, tuple[str, str]]:
    """``{parameter: (quick value, full value)}`` of the assignments ``x = ... if quick else ...``
    in a cell (as ``x = x or (...)``, ``x = x if x is not None else (...)`` or ``x = (...)``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with IPython magics
        return {}
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in names
        ):
            continue
        value = node.value
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            value = value.values[-1]
        elif isinstance(value, ast.IfExp) and not _is_quick(value.test):
            value = value.orelse
        if isinstance(value, ast.IfExp) and _is_quick(value.test):
            out[node.targets[0].id] = (ast.unparse(value.body), ast.unparse(value.orelse))
    return out


def _is_quick(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "quick"


def describe(chapter: Chapter) -> str:
    """The text ``recmeta run --list`` prints for a chapter: data it takes, parameters with
    their meaning, and what the quick profile changes."""
    lines = [f"{chapter.name}: {chapter.title}"]
    if {"dataset", "datasets"} & set(chapter.parameters):
        data_text = (
            "ratings, or implicit feedback (a file without a rating column)"
            if chapter.implicit
            else f"ratings only (not implicit feedback: {GRADED_ONLY[chapter.name]})"
        )
        lines.append(f"  data: {data_text}")
    lines.append("  parameters (--set NAME=VALUE):")
    for k, v in chapter.parameters.items():
        line = f"    {k} = {v!r}"
        if k in chapter.descriptions:
            line += f"  # {chapter.descriptions[k]}"
        if k in chapter.profile_sizes:
            quick, full = chapter.profile_sizes[k]
            line += f" [if None: quick {quick}, full {full}]"
        lines.append(line)
    return "\n".join(lines)


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
            raise ValueError(
                f"the chapter has no parameter {key!r}; its parameters: {', '.join(known)}"
            )
        out[key] = _coerce(value)
    return out


def run(
    name: str,
    *,
    dataset: str | None = None,
    columns: str | None = None,
    overrides: dict[str, object] | None = None,
    quick: bool = False,
    out: str | os.PathLike = "_build/runs",
    root: str | os.PathLike | None = None,
    html: bool = True,
) -> Path:
    """Execute chapter ``name`` with its parameters overridden; return the executed notebook.

    ``dataset`` and ``columns`` (a ratings file's columns, :func:`recmeta.data.parse_columns`)
    go into the parameters of the same names; the file is read once before the chapter starts,
    so a bad file fails here, with its line and value. Writes ``<out>/<name>.ipynb`` (and
    ``.html``). The run cache of recommender outputs is shared
    with the book build, so a re-run trains no model that was trained before with the same inputs.
    A failing cell raises :class:`ChapterError` naming the cell and the error.
    """
    import logging

    import jupytext
    import papermill as pm

    # papermill tries to read types from the parameters cell's comments and warns when it cannot;
    # the parameters are plain literals, so those warnings say nothing to the reader
    logging.getLogger("papermill.translators").setLevel(logging.ERROR)
    root_path = _root(root).resolve()
    chapter = find(name, root_path)
    params = dict(overrides or {})
    if dataset is not None:
        if "dataset" not in chapter.parameters:
            raise ChapterError(f"chapter {name!r} has no 'dataset' parameter.")

        if data.is_path(dataset):  # the notebook runs in the project folder: pass an absolute path
            path = Path(dataset).resolve()
            if not path.is_file():
                raise ChapterError(f"no such ratings file: {dataset}")
            mine = data.load(path, columns=columns)
            if name in GRADED_ONLY and data.is_implicit(mine):
                raise ChapterError(
                    f"{path.name} has no rating column (implicit feedback), and chapter {name!r} "
                    f"cannot run on it: {GRADED_ONLY[name]}. Chapters that run on implicit "
                    f"feedback: {', '.join(_implicit_chapters())}."
                )
            dataset = str(path)
        params["dataset"] = dataset
    if columns is not None:
        if dataset is None or not is_path(dataset):
            raise ChapterError(
                "--columns names the columns of a ratings file: give it with --dataset PATH"
            )
        if "columns" not in chapter.parameters:
            raise ChapterError(f"chapter {name!r} has no 'columns' parameter.")
        parse_columns(columns)  # refuse a bad mapping before the chapter starts
        params["columns"] = columns
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    src = out_dir / f"{name}.input.ipynb"
    dst = out_dir / f"{name}.ipynb"
    jupytext.write(jupytext.read(chapter.path), src)
    env_before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = "quick" if quick else (env_before or "full")
    os.environ["RECMETA_CHAPTER"] = name
    try:
        pm.execute_notebook(
            str(src),
            str(dst),
            parameters=params,
            kernel_name="python3",
            cwd=str(root_path),
            progress_bar=sys.stderr.isatty(),
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
        page(dst, root=root_path, out=out_dir)
    return dst


def page(
    notebook: str | os.PathLike,
    *,
    root: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
) -> Path:
    """The HTML page of an executed chapter, rendered as the book renders it; returns its path.

    The notebook is built, without executing it again, by Jupyter Book with the book's own
    configuration (``_config.yml``: MyST extensions, bibliography, offline MathJax), so glue
    (the provenance line under the title), ``{cite}`` roles (with the page's reference list) and
    math render as in the book; ``{doc}`` links to other chapters become plain text. The page
    and its assets (``_static``, ``_images``, search) are written to ``out`` (default: the
    notebook's folder) as ``<name>.html``.
    """
    import json
    import shutil
    import tempfile

    import yaml

    nb_path = Path(notebook)
    name = nb_path.stem
    root_path = _root(root).resolve()
    out_dir = Path(out) if out is not None else nb_path.parent
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise ChapterError(
            "the page needs Jupyter Book: pip install 'recmeta[book]' (make setup "
            "installs it), or pass --no-html"
        )
    config = yaml.safe_load((root_path / "_config.yml").read_text())
    config["execute"] = {"execute_notebooks": "off"}
    config["exclude_patterns"] = ["_build"]
    sources = [root_path / b for b in config.get("bibtex_bibfiles", [])]
    bib = [b.name for b in sources]
    config["bibtex_bibfiles"] = bib
    config.setdefault("sphinx", {}).pop("local_extensions", None)  # the book's own pages
    nb = json.loads(nb_path.read_text())
    if bib and any("{cite" in "".join(c.get("source", "")) for c in nb["cells"]):
        nb["cells"].append(
            {
                "cell_type": "markdown",
                "id": "recmeta-references",
                "metadata": {},
                "source": "## References\n\n```{bibliography}\n:filter: docname in docnames\n```\n",
            }
        )
    with tempfile.TemporaryDirectory(prefix=f"recmeta-page-{name}-") as tmp:
        here = Path(tmp)
        (here / "_config.yml").write_text(yaml.safe_dump(config))
        (here / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": name}))
        for b in sources:
            shutil.copy(b, here / b.name)
        (here / f"{name}.ipynb").write_text(json.dumps(nb))
        r = subprocess.run(
            [str(jb), "build", str(here), "--path-output", str(here)],
            capture_output=True,
            text=True,
        )
        built = here / "_build" / "html"
        if r.returncode != 0 or not (built / f"{name}.html").exists():
            raise ChapterError(
                f"the page of {name!r} could not be built (the executed notebook is "
                f"{nb_path}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
            )
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copytree(
            built,
            out_dir,
            dirs_exist_ok=True,
            ignore=lambda folder, names: ["index.html"] if folder == str(built) else [],
        )
    return out_dir / f"{name}.html"
