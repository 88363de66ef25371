"""The compiled trec_eval pass (:mod:`._te_kernel`) and TREC reader as a plain extension module.

Importing numba and loading its on-disk cache costs about half a CPU second and 90 MB at every
start, which is more than trec_eval spends on a 600,000-line run. So :func:`kernel` compiles
the pass's two entry points (:func:`._te_kernel.res_rels`, :func:`._te_kernel.topic_values`)
and the reader of TREC files (:func:`._te_parse.parse_trec`) ahead of time with
``numba.pycc`` into an extension module, once per version of the kernel's source (a hash of
the source files and numpy's version names the module), and every later process imports that
module with numpy alone. The functions compiled are the JIT's own,
with the argument types written below (:data:`SIGNATURES`), so there is one implementation.

Processes that need the module at once build it once: the others wait on a lock
(:func:`recmeta.files.lock`) and load it. The module lives in ``$NUMBA_CACHE_DIR/recmeta`` when
that is set, else in the package's ``__pycache__`` (else ``~/.cache/recmeta``). Without a C
compiler, or if the build fails (with a warning naming the cause), the JIT functions are used:
same values, slower start-up.
``numba.pycc`` has been "pending deprecation" since numba 0.57 (a replacement is announced, not
released); if a release drops it, the import fails and the JIT is used, with the warning. What
it costs to keep: :data:`SIGNATURES` must follow the three functions' arguments (a change of type
or order fails the build, or the call, loudly; ``tests/test_trec_eval_compiled.py`` compares
the two paths' output).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import warnings
import zlib
from functools import cache
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
#: the files whose content the compiled module depends on
SOURCES = ("_te_kernel.py", "_te_parts.py", "_te_codes.py", "_te_parse.py", "_te_compiled.py")

_I64 = "int64[::1]"
_I32 = "int32[::1]"
#: numba signature of each exported function (the argument order of ._te_kernel's functions)
SIGNATURES = {
    "res_rels": (
        f"Tuple(({_I64}, {_I64}, int64[:, ::1], {_I64}, {_I64}, {_I64}, int64))"
        f"({_I32}, {_I32}, {_I64}, {_I32}, {_I32}, float64[::1], int64, int64, int64, boolean)"
    ),
    "topic_values": (
        f"float64[:, ::1]({_I64}, {_I64}, int64[:, ::1], {_I64}, {_I64}, {_I64}, int64, "
        f"{_I64}, {_I64}, {_I64}, int64, {_I64}, float64[::1], {_I64}, {_I64}, float64[::1], "
        "boolean, int64)"
    ),
    "parse_trec": (
        f"Tuple(({_I64}, int32[:, ::1], float64[:, ::1], {_I64}, {_I64}, {_I64}, int64[:, ::1], "
        f"int64[:, ::1]))(uint8[::1], {_I64}, boolean)"
    ),
}


def cache_folder() -> Path:
    """Where the compiled module is kept (see the module docstring)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / "recmeta"
    local = HERE / "__pycache__"
    if os.access(local if local.exists() else HERE, os.W_OK):
        return local
    return Path.home() / ".cache" / "recmeta"


def module_name() -> str:
    """``_te_pass_<hash>``: CRC-32 and Adler-32 of :data:`SOURCES` and numpy's version (the
    module uses numpy's C interface and nothing of numba's; the file name carries Python's
    ABI). zlib's checksums, not hashlib's: importing hashlib costs more than the rest of this
    module."""
    import numpy as np

    blob = np.__version__.encode() + b"".join((HERE / name).read_bytes() for name in SOURCES)
    return f"_te_pass_{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}"


def _build(name: str, folder: Path) -> Path:
    """Compile the three entry points into ``folder/name<suffix>`` (written atomically)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation notice
        from numba.pycc import CC

    import tempfile

    from . import _te_kernel

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        cc = CC(name)
        cc.output_dir = tmp
        cc.verbose = False
        for function, signature in SIGNATURES.items():
            cc.export(function, signature)(getattr(_te_kernel, function).py_func)
        cc.compile()
        (built,) = Path(tmp).glob(f"{name}.*")
        target = folder / built.name
        os.replace(built, target)
    for stale in folder.glob(f"_te_pass_*{importlib.machinery.EXTENSION_SUFFIXES[0]}"):
        if stale != target:  # earlier versions of the kernel
            stale.unlink(missing_ok=True)
    return target


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def kernel() -> ModuleType:
    """A module with ``res_rels``, ``topic_values`` and ``parse_trec``: the compiled extension
    (built on first use), else :mod:`._te_kernel` itself (numba's JIT)."""
    name = module_name()
    folder = cache_folder()
    path = folder / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    if path.exists():
        return _load(name, path)
    if not (shutil.which((os.environ.get("CC") or "cc").split()[0]) or shutil.which("gcc")):
        from . import _te_kernel  # no C compiler: numba's JIT, cached by numba

        return _te_kernel
    try:
        from ..files import lock

        with lock(path):  # another process may be building it: wait, then load its module
            built = path if path.exists() else _build(name, folder)
        return _load(name, built)
    except Exception as exc:  # noqa: BLE001 - any failure of the build leaves the JIT
        warnings.warn(
            f"could not compile the trec_eval pass ahead of time ({type(exc).__name__}: "
            f"{exc}); using numba's JIT (same values, slower start-up)",
            RuntimeWarning,
            stacklevel=2,
        )
        from . import _te_kernel

        return _te_kernel
