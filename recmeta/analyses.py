"""On-disk cache of a chapter's analyses, keyed by everything that determines them.

An analysis is a call of a deterministic function of the package (a study's experiment, a
ledger evaluation). Decorated with :func:`analysis` (functions) or :func:`analysis_method`
(methods of a study), its result is stored at ``<root>/<function>/<digest>.pkl``, where the
digest (SHA-256) hashes

- the function's qualified name;
- its arguments, and for a method the object's :meth:`analysis_key`, through :func:`token`:
  frames and arrays by content, dataclasses by their fields; a value :func:`token` does not know
  is refused with a :class:`TypeError` naming its type, never keyed by its identity;
- the package's code: every ``.py`` file of ``recmeta`` (so any change of the code is a new key);
- the versions of the libraries a result depends on (:data:`LIBRARIES`).

A re-executed chapter whose inputs did not change reads its analyses instead of recomputing
them; :data:`ANALYSIS_COUNTS` counts both, for the page's provenance line.

The root is ``$RECMETA_ANALYSES``, else ``_cache/analyses`` in the project folder; the value
``off`` turns the cache off (every call computes). Writes are atomic
(:func:`recmeta.files.write_atomic`); an entry that cannot be read is computed again, with a
warning, and replaced.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import hashlib
import importlib.metadata as md
import math
import os
import pickle
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .files import write_atomic

__all__ = [
    "ENV_VAR",
    "LIBRARIES",
    "ANALYSIS_COUNTS",
    "COMPUTED_AHEAD",
    "CLAIMED",
    "cache_dir",
    "method_entry",
    "token",
    "digest",
    "code_version",
    "cached_call",
    "analysis",
    "analysis_method",
]

ENV_VAR = "RECMETA_ANALYSES"
#: the libraries whose version is part of every key
LIBRARIES = ("numpy", "pandas", "scipy", "numba", "lenskit", "torch", "statsmodels", "pyarrow")
ANALYSIS_COUNTS: dict[str, int] = {"cached": 0, "computed": 0}
#: entries a worker computed for this process (:mod:`recmeta.book.background`), which counted
#: them: the first read of one here counts neither as cached nor as computed
COMPUTED_AHEAD: set[str] = set()
#: entries handed to a worker: the first call of one here first calls its function, which
#: returns once the worker has written the entry (and counted it), or at once when the work is
#: handed back to this process
CLAIMED: dict[str, Callable[[], None]] = {}


def cache_dir() -> Path | None:
    """The cache root (``$RECMETA_ANALYSES``, else ``_cache/analyses``), or None when off."""
    env = os.environ.get(ENV_VAR)
    if env is not None and env.strip().lower() in {"off", "0", "no", "false"}:
        return None
    if env:
        return Path(env)
    from .data import project_root

    return project_root() / "_cache" / "analyses"


@functools.cache
def code_version() -> str:
    """SHA-256 of the package's source (every ``.py`` file, by relative path) and of the
    versions of :data:`LIBRARIES` (a library that is not installed counts as ``absent``)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    for lib in LIBRARIES:
        try:
            v = md.version(lib)
        except md.PackageNotFoundError:
            v = "absent"
        h.update(f"{lib}={v};".encode())
    return h.hexdigest()


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj``'s content into the hash ``h``, tagged by kind so that different kinds with
    the same bytes differ."""
    tag = lambda s: h.update(f"<{s}>".encode())  # noqa: E731
    if obj is None or isinstance(obj, (bool, int, str, bytes)):
        tag(type(obj).__name__)
        h.update(repr(obj).encode())
    elif isinstance(obj, float):
        tag("float")
        h.update((repr(obj) if math.isnan(obj) else obj.hex()).encode())
    elif isinstance(obj, np.generic):
        tag(f"np.{obj.dtype.str}")
        h.update(np.asarray(obj).tobytes())
    elif isinstance(obj, np.ndarray):
        tag(f"array{obj.shape}{obj.dtype.str}")
        if obj.dtype.hasobject:
            for x in obj.ravel():
                _feed(h, x)
        else:
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, pd.DataFrame):
        tag(f"frame{obj.shape}")
        _feed(h, [(str(c), str(t)) for c, t in obj.dtypes.items()])
        _feed(h, obj.index)
        h.update(_hash_pandas(obj, index=False))
    elif isinstance(obj, pd.Series):
        tag("series")
        _feed(h, (str(obj.name), str(obj.dtype)))
        h.update(_hash_pandas(obj, index=True))
    elif isinstance(obj, pd.Index):
        tag(f"index{len(obj)}")
        _feed(h, (list(map(str, obj.names)), str(obj.dtype)))
        h.update(_hash_pandas(obj, index=False))
    elif isinstance(obj, enum.Enum):
        tag(f"enum {type(obj).__qualname__}")
        h.update(obj.name.encode())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        tag(f"dataclass {type(obj).__module__}.{type(obj).__qualname__}")
        for f in dataclasses.fields(obj):
            _feed(h, f.name)
            _feed(h, getattr(obj, f.name))
    elif hasattr(obj, "analysis_key") and not isinstance(obj, type):
        tag(f"object {type(obj).__module__}.{type(obj).__qualname__}")
        _feed(h, obj.analysis_key())
    elif isinstance(obj, (list, tuple)):
        tag(f"{type(obj).__name__}{len(obj)}")
        for x in obj:
            _feed(h, x)
    elif isinstance(obj, Mapping):
        tag(f"mapping{len(obj)}")
        for k, v in sorted(((token(k), v) for k, v in obj.items()), key=lambda kv: kv[0]):
            h.update(k)
            _feed(h, v)
    elif isinstance(obj, (set, frozenset)):
        tag(f"set{len(obj)}")
        for t in sorted(token(x) for x in obj):
            h.update(t)
    elif isinstance(obj, (Path, datetime.date, datetime.timedelta, range, slice)):
        tag(type(obj).__name__)
        h.update(str(obj).encode())
    elif callable(obj) and hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        # a function or class: its code is covered by code_version (the package) or by the
        # library versions; closures and lambdas are refused (their state is not in the name)
        if "<lambda>" in obj.__qualname__ or "<locals>" in obj.__qualname__:
            raise TypeError(
                f"cannot key an analysis on the local function {obj.__qualname__!r}: pass a "
                "module-level function"
            )
        tag("callable")
        h.update(f"{obj.__module__}.{obj.__qualname__}".encode())
    else:
        raise TypeError(
            f"cannot key an analysis on a {type(obj).__module__}.{type(obj).__qualname__}: "
            "give the class an analysis_key() method returning the values that determine it, "
            "or pass those values instead"
        )


def _hash_pandas(obj: pd.DataFrame | pd.Series | pd.Index, *, index: bool) -> bytes:
    from .arrays import frame_hashes  # numba, loaded when a frame is first keyed

    try:
        if isinstance(obj, pd.DataFrame) and not index:
            return frame_hashes(obj).tobytes()
        return pd.util.hash_pandas_object(obj, index=index).to_numpy().tobytes()
    except TypeError as err:  # unhashable cells (lists, dicts): hash them one by one
        values = obj.to_numpy()
        h = hashlib.sha256()
        for x in np.asarray(values, dtype=object).ravel():
            try:
                _feed(h, x)
            except TypeError:
                raise TypeError(f"cannot key an analysis on a frame cell {x!r}: {err}") from err
        if index and not isinstance(obj, pd.Index):
            _feed(h, obj.index)
        return h.digest()


def token(obj: Any) -> bytes:
    """The SHA-256 digest of ``obj``'s content (see the module's docstring for what counts)."""
    h = hashlib.sha256()
    _feed(h, obj)
    return h.digest()


def digest(name: str, *parts: Any) -> str:
    """The key of an analysis: SHA-256 of its name, ``parts`` and :func:`code_version`."""
    h = hashlib.sha256()
    h.update(code_version().encode())
    h.update(name.encode())
    _feed(h, parts)
    return h.hexdigest()[:32]


def _name(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _entry(root: Path, name: str, key: tuple[Any, ...]) -> Path:
    return root / name / f"{digest(name, *key)}.pkl"


def _method_key(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The key of ``obj.<method>(*args, **kwargs)``: its ``analysis_key()``, else the object."""
    return (obj.analysis_key() if hasattr(obj, "analysis_key") else obj, args, kwargs)


def method_entry(obj: Any, method: str) -> Path | None:
    """Where the cache keeps ``obj.<method>()`` (an :func:`analysis_method` called without
    arguments); None when the cache is off."""
    root = cache_dir()
    if root is None:
        return None
    fn = getattr(type(obj), method, None)
    inner = getattr(fn, "__wrapped__", None)
    if inner is None:
        raise ValueError(f"{type(obj).__name__}.{method} is not an analysis method")
    return _entry(root, _name(inner), _method_key(obj, (), {}))


def cached_call(
    name: str, key: tuple[Any, ...], compute: Callable[[], Any], *, unkeyable: str = "raise"
) -> Any:
    """``compute()``, read from the cache when an entry for ``(name, key)`` exists.

    A key :func:`token` cannot read raises its :class:`TypeError`; with
    ``unkeyable="compute"`` the call is computed instead, uncached, with a warning naming the
    value (for generic callers that accept inputs from outside the package)."""
    root = cache_dir()
    if root is None:
        ANALYSIS_COUNTS["computed"] += 1
        return compute()
    try:
        path = _entry(root, name, key)
    except TypeError as err:
        if unkeyable != "compute":
            raise
        warnings.warn(f"{name} is computed without the analysis cache: {err}", stacklevel=3)
        ANALYSIS_COUNTS["computed"] += 1
        return compute()
    if (wait := CLAIMED.pop(str(path), None)) is not None:  # written by a worker, or to be
        wait()
    if path.exists():
        try:
            with open(path, "rb") as fh:
                value = pickle.load(fh)
        except Exception as err:  # a damaged or foreign entry: compute it again
            warnings.warn(
                f"analysis cache entry {path} could not be read ({err}); computing it again",
                stacklevel=3,
            )
        else:
            if str(path) in COMPUTED_AHEAD:
                COMPUTED_AHEAD.discard(str(path))
            else:
                ANALYSIS_COUNTS["cached"] += 1
            return value
    value = compute()
    ANALYSIS_COUNTS["computed"] += 1
    write_atomic(path, lambda tmp: tmp.write_bytes(pickle.dumps(value, protocol=5)))
    return value


def analysis[F: Callable[..., Any]](fn: F) -> F:
    """Decorate a deterministic function: its result is cached under its arguments' content."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return cached_call(_name(fn), (args, kwargs), lambda: fn(*args, **kwargs))

    return wrapper  # type: ignore[return-value]


def analysis_method[F: Callable[..., Any]](fn: F) -> F:
    """Decorate a method of a study: the key adds ``self.analysis_key()`` (the values that
    determine the study: its data and settings), or ``self`` itself when it is a dataclass.
    Entries the call writes into the study's ``results`` mapping (if it has one) are stored
    with the value and written back on a hit."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        results = getattr(self, "results", None)

        def compute() -> tuple[Any, dict[str, Any]]:
            before = dict(results) if results is not None else {}
            value = fn(self, *args, **kwargs)
            written = {
                k: v for k, v in (results or {}).items() if k not in before or before[k] is not v
            }
            return value, written

        value, written = cached_call(_name(fn), _method_key(self, args, kwargs), compute)
        if results is not None:
            results.update(written)
        return value

    return wrapper  # type: ignore[return-value]
