"""Evaluated ledgers on disk, so ``recmeta claims`` can print them without re-running a chapter.

One JSON file per chapter, dataset and profile:
``<root>/<chapter>/<dataset-key>--<profile>.json``, holding the chapter, dataset, profile, the
recmeta version, the time written (UTC) and the ledger's rows as records. A new evaluation of the
same chapter, dataset and profile replaces the file.

The *dataset key* is the dataset's name when it is a plain name (``ml-100k``); a path to a ratings
file becomes its file stem plus a short hash of the resolved path (``ratings-3f2a9c1b0d``), so
two files of the same name in different folders stay apart. A relative path is resolved against
the current folder, as the chapters do.

Writes are atomic: a temporary file in the same folder, then ``os.replace``; a reader never sees
half a file. The root is ``$RECMETA_RESULTS`` if set, else ``_cache/results`` in the project
folder (see :func:`recmeta.data.project_root`; git ignores ``_cache/``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..data import project_root
from ..files import write_text_atomic
from .table import COLUMNS

__all__ = [
    "ENV_VAR",
    "results_dir",
    "default_roots",
    "dataset_key",
    "path_for",
    "save",
    "load",
    "load_newest",
    "available",
]

ENV_VAR = "RECMETA_RESULTS"
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_DATA_SUFFIXES = {".csv", ".tsv", ".txt", ".dat", ".parquet", ".gz", ".zip"}
_SEP = "--"
_META = ("chapter", "dataset", "profile", "recmeta_version", "written")


def results_dir() -> Path:
    """The store's root: ``$RECMETA_RESULTS`` if set, else ``_cache/results`` in the project
    folder."""

    env = os.environ.get(ENV_VAR)
    return Path(env) if env else project_root() / "_cache" / "results"


def default_roots() -> list[Path]:
    """Where ``recmeta claims`` looks: :func:`results_dir`, and, unless ``$RECMETA_RESULTS`` is set,
    the store of the book's last build too (``_build/results`` in the project folder)."""

    roots = [results_dir()]
    if not os.environ.get(ENV_VAR):
        roots.append(project_root() / "_build" / "results")
    return roots


def load_newest(roots: list[Path], **filters: Any) -> pd.DataFrame:
    """:func:`load` over several roots; where two hold the same chapter, dataset and profile, the
    ledger written last wins."""
    frames = [f for f in (load(root=r, **filters) for r in roots) if len(f)]
    if not frames:
        return load(root=roots[0], **filters)
    out = pd.concat(frames, ignore_index=True)
    key = ["chapter", "dataset", "profile"]
    newest = out.groupby(key)["written"].transform("max")
    return out[out["written"] == newest].reset_index(drop=True)


def _root(root: str | os.PathLike | None) -> Path:
    return Path(root) if root is not None else results_dir()


def _is_plain(name: str) -> bool:
    return (
        bool(_PLAIN.match(name))
        and _SEP not in name
        and Path(name).suffix.lower() not in _DATA_SUFFIXES
    )


def dataset_key(dataset: str | os.PathLike) -> str:
    """A file-name-safe key of ``dataset``: a plain name as is, a path as ``<stem>-<hash>``.

    The hash is the first 10 hex digits of the SHA-256 of the resolved path.
    """
    text = os.fspath(dataset)
    if not text.strip():
        raise ValueError("the dataset is empty")
    if _is_plain(text):
        return text
    path = Path(text).expanduser().resolve()
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", path.name.split(".")[0]).strip("._-") or "data"
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    return f"{stem}-{digest}"


def _check_name(kind: str, value: str) -> str:
    if not _is_plain(value):
        raise ValueError(f"{kind} {value!r} must be letters, digits and . _ - (no '{_SEP}')")
    return value


def path_for(
    chapter: str, dataset: str | os.PathLike, profile: str, root: str | os.PathLike | None = None
) -> Path:
    """Where the ledger of ``chapter`` on ``dataset`` in ``profile`` is stored."""
    _check_name("chapter", chapter)
    _check_name("profile", profile)
    return _root(root) / chapter / f"{dataset_key(dataset)}{_SEP}{profile}.json"


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (pd.Timestamp, datetime)):
        return x.isoformat()
    raise TypeError(f"cannot store a {type(x).__name__} in a ledger file")


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    obj = frame.astype(object)
    return obj.where(frame.notna(), None).to_dict("records")


def save(
    frame: pd.DataFrame,
    *,
    chapter: str,
    dataset: str | os.PathLike,
    profile: str,
    root: str | os.PathLike | None = None,
) -> Path:
    """Write an evaluated ledger (a frame of :meth:`Ledger.evaluate`) atomically; returns the
    path."""

    if "chapter" in frame and len(frame) and not (frame["chapter"] == chapter).all():
        others = sorted(set(frame["chapter"].astype(str)) - {chapter})
        raise ValueError(f"the frame holds rows of chapter(s) {others}, not only {chapter!r}")
    path = path_for(chapter, dataset, profile, root)
    doc = {
        "chapter": chapter,
        "dataset": os.fspath(dataset),
        "dataset_key": dataset_key(dataset),
        "profile": profile,
        "recmeta_version": __version__,
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "columns": [str(c) for c in frame.columns],
        "records": _records(frame),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False, default=_jsonable)
    write_text_atomic(path, text)
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the stored ledger {path}: {exc}") from exc
    if not isinstance(doc, dict) or "records" not in doc or any(k not in doc for k in _META):
        raise ValueError(f"{path} is not a stored ledger (missing keys)")
    return doc


def _files(
    root: Path, chapter: str | None, dataset: str | os.PathLike | None, profile: str | None
) -> list[Path]:
    if not root.is_dir():
        return []
    key = dataset_key(dataset) if dataset is not None else "*"
    pattern = f"{chapter or '*'}/{key}{_SEP}{profile or '*'}.json"
    return sorted(p for p in root.glob(pattern) if p.is_file())


def load(
    chapter: str | None = None,
    dataset: str | os.PathLike | None = None,
    profile: str | None = None,
    root: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Every stored ledger row matching the filters (``None`` matches all), with ``written`` and
    ``recmeta_version`` columns; an empty frame with the ledger's columns when nothing matches."""
    frames = []
    for path in _files(_root(root), chapter, dataset, profile):
        doc = _read(path)
        part = pd.DataFrame(doc["records"], columns=doc.get("columns") or None)
        for k in _META:
            part[k] = doc[k]
        frames.append(part)
    columns = [*COLUMNS, "recmeta_version", "written"]
    if not frames:
        return pd.DataFrame(
            {
                c: pd.Series(dtype=float if c in ("ours", "low", "high", "margin") else object)
                for c in columns
            }
        )
    out = pd.concat(frames, ignore_index=True)
    if set(columns) <= set(out.columns):
        out = out[[*columns, *(c for c in out.columns if c not in columns)]]
    for c in ("ours", "low", "high", "margin"):
        if c in out:
            out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    if "paper_value" in out:
        out["paper_value"] = out["paper_value"].astype(object)
    return out


def available(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """What is stored: one row per file with chapter, dataset, dataset_key, profile, claims,
    recmeta_version, written and path."""
    rows = []
    for path in _files(_root(root), None, None, None):
        doc = _read(path)
        rows.append(
            {
                "chapter": doc["chapter"],
                "dataset": doc["dataset"],
                "dataset_key": doc.get("dataset_key", dataset_key(doc["dataset"])),
                "profile": doc["profile"],
                "claims": len(doc["records"]),
                "recmeta_version": doc["recmeta_version"],
                "written": doc["written"],
                "path": str(path),
            }
        )
    cols = [
        "chapter",
        "dataset",
        "dataset_key",
        "profile",
        "claims",
        "recmeta_version",
        "written",
        "path",
    ]
    return pd.DataFrame(rows, columns=cols)
