"""On-disk cache of recommender runs (parquet), keyed by everything that determines them.

A run is stored at ``<root>/<dataset>/<split>-seed<seed>/<system>-<digest>.parquet``; the digest
hashes the :class:`RunKey` — dataset, split, seed, the system's full configuration, what was
produced (top-N over AllItems/TestItems and the depth, or candidate scores), a fingerprint of the
training/test/candidate frames, and the LensKit version. The key itself is stored in the parquet
file's metadata, so :func:`entries` can list the cache without a separate index.

Writes are atomic: a temporary file in the same folder, then ``os.replace``; a reader never sees
half a file, and a killed writer leaves only a ``.tmp`` file, which :func:`entries` ignores and
:func:`clear` removes. A long run is written in parts (:class:`Parts`, one parquet file per block
of users, each atomic) beside its final path; a re-run skips the users already done and, once all
are done, merges the parts into the final file.

The root is ``$RECMETA_CACHE``, else ``_cache/runs`` in the project folder (see
:func:`recmeta.data.project_root`; git ignores ``_cache/``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..arrays import frame_hashes
from ..data import project_root
from ..files import lock, write_atomic

__all__ = [
    "ENV_VAR",
    "lock",
    "RunKey",
    "Parts",
    "cache_dir",
    "fingerprint",
    "write_frame",
    "parquet_options",
    "read_frame",
    "read_key",
    "entries",
    "clear",
]

ENV_VAR = "RECMETA_CACHE"
_META = b"recmeta.run_key"
_USERS = b"recmeta.block_users"
_SAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def cache_dir() -> Path:
    """The cache root: ``$RECMETA_CACHE`` if set, else ``_cache/runs`` in the project folder."""

    env = os.environ.get(ENV_VAR)
    return Path(env) if env else project_root() / "_cache" / "runs"


def _safe(s: object) -> str:
    return _SAFE.sub("_", str(s)) or "_"


def fingerprint(*frames: pd.DataFrame | None) -> str:
    """SHA-256 (16 hex digits) of the frames' contents (column names, dtypes and values)."""
    h = hashlib.sha256()
    for df in frames:
        if df is None:
            h.update(b"<none>")
            continue
        h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
        h.update(frame_hashes(df).tobytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class RunKey:
    """Everything that determines one system's run."""

    dataset: str
    split: str
    seed: int
    system: str
    config: Mapping[str, Any]
    kind: str
    "``top-all-100``, ``top-test-100`` or ``candidates``."
    data: str
    "Fingerprint of the frames the run was made from (:func:`fingerprint`)."
    lenskit: str = field(default_factory=lambda: _lenskit_version())

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, default=str)

    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def path(self, root: str | os.PathLike | None = None) -> Path:
        root = Path(root) if root is not None else cache_dir()
        folder = root / _safe(self.dataset) / f"{_safe(self.split)}-seed{int(self.seed)}"
        return folder / f"{_safe(self.system)}-{self.kind}-{self.digest()}.parquet"


def _lenskit_version() -> str:
    from importlib.metadata import version

    return version("lenskit")


def write_frame(
    df: pd.DataFrame,
    path: str | os.PathLike,
    key: RunKey | None = None,
    *,
    extra: dict[bytes, bytes] | None = None,
) -> Path:
    """Write ``df`` to ``path`` atomically (temp file in the same folder, then ``os.replace``),
    encoded as :func:`parquet_options` says."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = {**(table.schema.metadata or {}), **(extra or {})}
    if key is not None:
        meta[_META] = key.to_json().encode()
    table = table.replace_schema_metadata(meta)
    options = parquet_options(table.schema)
    write_atomic(path, lambda tmp: pq.write_table(table, tmp, **options))
    return path


def parquet_options(schema: Any) -> dict[str, Any]:
    """How a run is encoded (keywords of ``pyarrow.parquet.write_table``): the columns other
    than floats dictionary-coded (ids, ranks, text: few distinct values, long runs; flags are
    bit-packed anyway), floats not (scores, nearly all distinct: parquet's dictionary attempt
    would be wasted work), LZ4 compression.
    On the 286 runs of a full-profile book, 1.4 times as fast to write as pyarrow's defaults,
    1.4 to 1.5 times to read, and 12 % smaller (``benchmarks/run_cache.py``)."""
    import pyarrow as pa

    coded = [f.name for f in schema if not pa.types.is_floating(f.type)]
    return {"use_dictionary": coded, "compression": "lz4"}


def read_frame(path: str | os.PathLike) -> pd.DataFrame:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()


def read_key(path: str | os.PathLike) -> dict[str, Any] | None:
    """The run key stored in a cached file (``None`` if it has none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(_META)
    return json.loads(raw) if raw else None


class Parts:
    """The finished blocks of a run in progress, kept beside its final path.

    Each block is one parquet file written atomically, holding the block's rows and, in its
    metadata, the block's users (a user whose list came out empty is still done).
    """

    def __init__(self, final: Path, key: RunKey) -> None:
        self.final, self.key = Path(final), key
        self.dir = self.final.with_name(self.final.name + ".parts")

    def _files(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.parquet")) if self.dir.exists() else []

    def users_done(self) -> np.ndarray:
        """Users of every finished block."""
        import pyarrow.parquet as pq

        done = [json.loads(pq.read_schema(p).metadata[_USERS]) for p in self._files()]
        return np.unique(np.concatenate(done)) if done else np.zeros(0, dtype=np.int64)

    def add(self, df: pd.DataFrame, users: np.ndarray) -> None:
        """Store one finished block of ``users`` (atomic)."""
        if not self.dir.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / "key.json").write_text(self.key.to_json())
        n = len(self._files())
        extra = {_USERS: json.dumps(np.asarray(users).tolist()).encode()}
        write_frame(df, self.dir / f"part-{n:05d}.parquet", extra=extra)

    def finish(self, sort: list[str]) -> pd.DataFrame:
        """Merge the parts into the final file (atomically) and remove them."""
        fs = [read_frame(p) for p in self._files()]
        df = pd.concat(fs, ignore_index=True) if fs else pd.DataFrame()
        if len(df):
            df = df.sort_values(sort, kind="stable").reset_index(drop=True)
        write_frame(df, self.final, self.key)
        shutil.rmtree(self.dir, ignore_errors=True)
        return df


def entries(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per cached run (complete files) and per interrupted run (``parts`` folders)."""
    root = Path(root) if root is not None else cache_dir()
    rows = []
    if root.exists():
        for p in sorted(root.rglob("*.parquet")):
            if p.name.startswith(".") or p.parent.name.endswith(".parts"):
                continue
            key = read_key(p) or {}
            rows.append(
                {
                    "dataset": key.get("dataset"),
                    "split": key.get("split"),
                    "seed": key.get("seed"),
                    "system": key.get("system"),
                    "kind": key.get("kind"),
                    "lenskit": key.get("lenskit"),
                    "status": "complete",
                    "bytes": p.stat().st_size,
                    "path": str(p),
                }
            )
        for d in sorted(root.rglob("*.parquet.parts")):
            kf = d / "key.json"
            key = json.loads(kf.read_text()) if kf.exists() else {}
            rows.append(
                {
                    "dataset": key.get("dataset"),
                    "split": key.get("split"),
                    "seed": key.get("seed"),
                    "system": key.get("system"),
                    "kind": key.get("kind"),
                    "lenskit": key.get("lenskit"),
                    "status": f"interrupted ({len(list(d.glob('part-*.parquet')))} blocks)",
                    "bytes": sum(f.stat().st_size for f in d.iterdir()),
                    "path": str(d),
                }
            )
    cols = ["dataset", "split", "seed", "system", "kind", "lenskit", "status", "bytes", "path"]
    return pd.DataFrame(rows, columns=cols)


def clear(
    root: str | os.PathLike | None = None, *, dataset: str | None = None, system: str | None = None
) -> int:
    """Delete cached runs (all, or of one dataset and/or system) and stale temp files.

    Returns the number of runs (files or interrupted-run folders) removed.
    """
    root = Path(root) if root is not None else cache_dir()
    if not root.exists():
        return 0
    n = 0
    for e in entries(root).itertuples():
        if dataset is not None and e.dataset != dataset:
            continue
        if system is not None and e.system != system:
            continue
        p = Path(e.path)
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        Path(str(p).removesuffix(".parts") + ".lock").unlink(missing_ok=True)
        n += 1
    for t in root.rglob(".*.tmp"):  # left by a killed writer
        t.unlink(missing_ok=True)
    return n
