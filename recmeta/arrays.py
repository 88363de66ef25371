"""Sort-based set operations on id arrays, and order-keeping codes of (user, item) pairs.

numpy's ``np.unique`` without ``return_index``/``return_inverse``/``return_counts`` goes through
a hash table; on integer keys with many distinct values (user × item pair codes, as the target
sets and the runs build) it is an order of magnitude slower than sorting, so the hot paths use
these instead. Each returns what the numpy function of its name returns for arrays without NaN.
"""

from __future__ import annotations

import ctypes
import inspect
import os
import platform
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain, islice
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd
from numba import njit, prange
from numpy.typing import ArrayLike

__all__ = [
    "compile_once",
    "frame_hashes",
    "first_rows",
    "has_duplicate_pairs",
    "has_duplicates",
    "keep_freed_memory",
    "lexsort",
    "pair_codes",
    "pairs_strictly_increasing",
    "positions",
    "row_hashes",
    "sorted_unique",
    "threaded_map",
    "threaded_rows",
    "threads_share_numba",
]


#: per kernel, the kinds of arguments :func:`compile_once` has seen compiled in this process
_COMPILED: dict[Any, set[tuple]] = {}


def _kinds(args: Sequence[Any]) -> tuple:
    """What decides the numba types of ``args``, cheaply: dtype, dimensions, layout and
    writability of an array, the class of anything else."""
    return tuple(
        (a.dtype.str, a.ndim, a.flags.c_contiguous, a.flags.f_contiguous, a.flags.writeable)
        if isinstance(a, np.ndarray)
        else type(a)
        for a in args
    )


def compile_once(kernel: Any, args: Sequence[Any]) -> None:
    """Compile ``kernel`` (a numba dispatcher with ``cache=True``) for the types of ``args``,
    or load it from numba's cache, before it is called with them.

    numba compiles on a process's first call and writes its cache after; processes starting
    together (the tests' workers, a book's chapters) would each compile a large kernel. Here
    the compilation holds a file lock (:func:`recmeta.files.lock`), so the first process
    compiles and the others wait and load what it wrote. The call itself takes no lock, and
    arguments of kinds already seen cost no type inference (a tenth of a millisecond for the
    metric engine's 23 arguments, on calls of a few milliseconds).
    """
    seen = _COMPILED.setdefault(kernel, set())
    kinds = _kinds(args)
    if kinds in seen:
        return
    types = tuple(numba.typeof(a) for a in args)
    if types not in kernel.overloads:
        from contextlib import ExitStack, suppress

        from .files import lock

        root = os.environ.get("NUMBA_CACHE_DIR")
        here = Path(inspect.getfile(kernel.py_func)).parent
        folder = Path(root) if root else here / "__pycache__"
        name = f"{kernel.py_func.__module__}.{kernel.__name__}.compile"
        with ExitStack() as held:
            with suppress(OSError):  # a folder this process cannot write: no lock
                held.enter_context(lock(folder / name))
            kernel.compile(types)
    seen.add(kinds)


def keep_freed_memory() -> bool:
    """Let the C allocator keep the memory of freed large arrays for the next ones.

    glibc serves every allocation above a threshold (32 MB at most, by default) with a fresh
    mapping of the system's memory and unmaps it when freed, so each array of millions of rows
    pays its page faults again; the chapters build and drop such arrays by the thousand (about
    a sixth of the statistical-biases chapter's time went there). ``mallopt`` raises the
    mapping and the trimming thresholds to 2 GiB for this process: freed blocks stay in its
    heap and serve the next arrays, for a peak memory about a tenth higher. Returns whether it
    applied: with another C library nothing changes."""
    if platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)  # the C library the interpreter is linked with
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    limit = 2**31 - 1
    return bool(libc.mallopt(m_mmap_threshold, limit)) and bool(
        libc.mallopt(m_trim_threshold, limit)
    )


@njit(cache=True, parallel=True)
def _start_numba_threads(x):  # pragma: no cover - compiled
    for i in prange(x.size):
        x[i] = i


def threads_share_numba() -> bool:
    """Whether two threads of this process may run numba's parallel kernels at once: numba's
    threading layer is ``tbb`` or ``omp``, not ``workqueue``, which aborts the process on such
    a call (numba's documentation, "The Threading Layers"). A call of :func:`threaded_map` may
    reach a parallel kernel while the calling thread runs another one."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run in this process yet: the layer is chosen then
        _start_numba_threads(np.zeros(2))
        layer = numba.threading_layer()
    return layer in ("tbb", "omp")


def threaded_map[T, R](
    fn: Callable[[T], R], items: Iterable[T], *, parallel_kernels: bool = True
) -> Iterator[R]:
    """``map(fn, items)``, with up to ``numba.get_num_threads()`` calls computing at once.

    For work that releases the GIL (numpy's matrix products and ufuncs, ``scipy.special``,
    numba's ``nogil`` kernels): a matrix product on one BLAS thread (what the chapters use, see
    :func:`recmeta.book.execution.start`) then runs beside the next one, instead of after it,
    and each call computes exactly what it computes alone, so every bit of the results is the
    serial map's. The results come in the order of ``items``. ``items`` is read in the calling
    thread, lazily: a result is handed back once one more item than there are threads has been
    read, so a generator of large arrays holds only that many at once. Where ``fn`` may run
    numba's parallel kernels (``parallel_kernels``) and numba's threading layer is
    ``workqueue`` (:func:`threads_share_numba`), the calls run one after the other, in the
    calling thread."""
    width = numba.get_num_threads()
    if width < 2 or (parallel_kernels and not threads_share_numba()):
        yield from map(fn, items)
        return
    rest = iter(items)
    head = list(islice(rest, 2))
    if len(head) < 2:  # nothing to compute beside: no threads started
        yield from map(fn, head)
        return
    with ThreadPoolExecutor(width) as pool:
        running: deque[Future[R]] = deque()
        for item in chain(head, rest):
            running.append(pool.submit(fn, item))
            if len(running) > width:
                yield running.popleft().result()
        while running:
            yield running.popleft().result()


def threaded_rows(fn: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``fn(*arrays)`` for an element-wise ``fn`` (a ufunc, or a composition of them), computed
    by blocks of rows in :func:`threaded_map`'s threads: the same values, element by element.

    The arrays broadcast together along their first axis (length 1 or the rows'); a block of
    fewer than 65,536 elements per thread is not worth a thread and is computed at once."""
    rows = max(a.shape[0] if a.ndim else 1 for a in arrays)
    size = max(a.size for a in arrays)
    parts = min(numba.get_num_threads(), rows, size // 65_536)
    if parts < 2:
        return fn(*arrays)
    bounds = np.linspace(0, rows, parts + 1).astype(np.int64)

    def block(k: int) -> np.ndarray:
        s = slice(bounds[k], bounds[k + 1])
        return fn(*(a[s] if a.ndim and a.shape[0] == rows else a for a in arrays))

    return np.concatenate(list(threaded_map(block, range(parts))))


def _short(lo: int, hi: int, n: int) -> bool:
    """Whether a table of the range ``lo..hi`` is cheap next to ``n`` values: a few times their
    number, or small outright."""
    return hi - lo <= 4 * n + 65536


def _span(v: np.ndarray) -> tuple[int, int] | None:
    """(lowest, highest) of integers spanning a :func:`_short` range, else None."""
    if len(v) < 1024 or v.dtype.kind not in "iu" or v.dtype.itemsize > 8:
        return None
    if v.dtype.kind == "u" and v.dtype.itemsize == 8 and int(v.max()) >= 2**63:
        return None
    lo, hi = int(v.min()), int(v.max())
    return (lo, hi) if _short(lo, hi, len(v)) else None


def _marks(v: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """A table of the range ``lo..hi`` with True where a value of ``v`` falls."""
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[v.astype(np.int64) - lo] = True
    return seen


def sorted_unique(values: ArrayLike) -> np.ndarray:
    """The sorted distinct values of ``values`` (``np.unique(values)``), by one sort; integers
    spanning a short range by marking a table of the range instead."""
    v = np.asarray(values).ravel()
    span = _span(v)
    if span is not None:
        return (np.flatnonzero(_marks(v, *span)) + span[0]).astype(v.dtype)
    s = np.sort(v)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def has_duplicates(values: ArrayLike) -> bool:
    """Whether a value occurs twice in ``values`` (``np.unique(values).size < values.size``),
    by one sort; integers spanning a short range by counting the marks of a table instead."""
    v = np.asarray(values).ravel()
    span = _span(v)
    if span is not None:
        return int(np.count_nonzero(_marks(v, *span))) < len(v)
    s = np.sort(v)
    return bool(len(s) > 1 and np.any(s[1:] == s[:-1]))


def pair_codes(
    users: Sequence[np.ndarray], items: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], int] | None:
    """Order-keeping int64 codes u·m + i of (user, item) id pairs, comparable across the arrays
    given, with m = 1 + the largest item id: one code per pair, ordered as the pairs are
    (users first). For non-negative integer ids whose codes fit in int64; ``None`` otherwise
    (then code the ids first, e.g. with ``np.unique(..., return_inverse=True)``). Returns the
    codes of each (users[k], items[k]) and m."""
    arrays = [*users, *items]
    if not arrays or any(a.dtype.kind not in "iu" for a in arrays):
        return None
    nonempty = [a for a in arrays if len(a)]
    if any(int(a.min()) < 0 for a in nonempty):
        return None
    top_u = max((int(a.max()) for a in users if len(a)), default=0)
    m = 1 + max((int(a.max()) for a in items if len(a)), default=0)
    if (top_u + 1) * m >= 2**63:
        return None
    return [
        u.astype(np.int64) * m + i.astype(np.int64) for u, i in zip(users, items, strict=True)
    ], m


def has_duplicate_pairs(users: ArrayLike, items: ArrayLike) -> bool:
    """Whether a (user, item) pair occurs twice (``DataFrame.duplicated([user, item]).any()``):
    none when the pairs are strictly increasing (:func:`pairs_strictly_increasing`, one pass
    that stops at the first pair out of order), else :func:`has_duplicates` of the
    :func:`pair_codes` for non-negative integer ids, pandas' row hashes otherwise (strings,
    floats, negative ids; NaN equals NaN there)."""
    u, i = np.asarray(users).ravel(), np.asarray(items).ravel()
    if len(u) != len(i):
        raise ValueError(f"{len(u)} users and {len(i)} items: give one of each per pair")
    if u.dtype.kind in "iuf" and i.dtype.kind in "iuf" and pairs_strictly_increasing(u, i):
        return False
    coded = pair_codes([u], [i])
    if coded is not None:
        return has_duplicates(coded[0][0])
    return bool(pd.DataFrame({"user": u, "item": i}).duplicated().any())


def pairs_strictly_increasing(users: ArrayLike, items: ArrayLike) -> bool:
    """Whether the (user, item) pairs are in strictly increasing lexicographic order, users
    first (so all distinct): (u_k, i_k) < (u_{k+1}, i_{k+1}) for every k. A NaN fails the
    order. Numeric ids take one compiled pass that stops at the first pair out of order;
    others numpy's comparisons, and ids that do not compare are not in order."""
    u, i = np.asarray(users).ravel(), np.asarray(items).ravel()
    if len(u) != len(i):
        raise ValueError(f"{len(u)} users and {len(i)} items: give one of each per pair")
    if len(u) < 2:
        return True
    if u.dtype.kind in "iuf" and i.dtype.kind in "iuf":
        return bool(_pairs_increasing(u, i))
    try:
        return bool(np.all((u[1:] > u[:-1]) | ((u[1:] == u[:-1]) & (i[1:] > i[:-1]))))
    except TypeError:  # ids that do not compare
        return False


@njit(cache=True, nogil=True)
def _pairs_increasing(u, i):  # pragma: no cover - compiled
    for k in range(1, len(u)):  # noqa: SIM110 - a loop numba compiles, stopping early
        if not (u[k] > u[k - 1] or (u[k] == u[k - 1] and i[k] > i[k - 1])):
            return False
    return True


def positions(ids: np.ndarray, values: ArrayLike) -> np.ndarray:
    """Position of each of ``values`` in the sorted distinct ``ids``, −1 where absent.

    The binary search ``k = searchsorted(ids, v)``, kept where ``ids[k] == v``. For integer ids
    spanning a short range (at most a few times the number of ids and values) it reads a table
    indexed by id instead: one compiled pass, no search. Numbers that rise (a frame's sorted
    keys) take one compiled pass too, each search starting where the last one ended.
    """
    ids = np.asarray(ids)
    values = np.asarray(values)
    if not len(ids):
        return np.full(len(values), -1, dtype=np.int64)
    numbers = _compiled_numbers(ids) and _compiled_numbers(values)
    small = numbers and ids.dtype.kind != "f" and values.dtype.kind != "f"
    lo, hi = (int(ids[0]), int(ids[-1])) if small else (0, -1)
    if small and _short(lo, hi, len(values) + len(ids)):
        return _table_positions(ids, values, lo, hi)
    if numbers and _rising(values):
        return _rising_positions(ids, values)
    at = np.searchsorted(ids, values).clip(0, len(ids) - 1)
    return np.where(ids[at] == values, at, -1)


def _compiled_numbers(a: np.ndarray) -> bool:
    """Whether the compiled passes compare ``a`` as numpy does: integers other than uint64
    (which numba would compare with signed ones as floats), float32 and float64."""
    kind, size = a.dtype.kind, a.dtype.itemsize
    return kind == "i" or (kind == "u" and size < 8) or (kind == "f" and size in (4, 8))


@njit(cache=True, nogil=True)
def _table_positions(ids, values, lo, hi):  # pragma: no cover - compiled
    """:func:`positions` by a table of the ids' range ``lo..hi``."""
    table = np.full(hi - lo + 1, -1, dtype=np.int64)
    for k in range(len(ids)):
        table[np.int64(ids[k]) - lo] = k
    out = np.empty(len(values), dtype=np.int64)
    for k in range(len(values)):
        v = np.int64(values[k])
        out[k] = table[v - lo] if lo <= v <= hi else -1
    return out


@njit(cache=True, nogil=True)
def _rising(v):  # pragma: no cover - compiled
    """Whether ``v`` never falls (stops at the first fall; a NaN counts as a fall)."""
    for k in range(1, len(v)):  # noqa: SIM110 - a loop numba compiles, stopping early
        if not v[k] >= v[k - 1]:
            return False
    return True


@njit(cache=True, nogil=True)
def _rising_positions(ids, values):  # pragma: no cover - compiled
    """:func:`positions` of rising ``values``: each search gallops from the last position (steps
    1, 2, 4, … until an id is not below the value), then bisects that span."""
    n = len(ids)
    out = np.empty(len(values), dtype=np.int64)
    lo = 0
    for k in range(len(values)):
        v = values[k]
        step = 1
        hi = lo
        while hi < n and ids[hi] < v:
            lo = hi + 1
            hi = lo + step
            step *= 2
        hi = min(hi, n)
        while lo < hi:
            mid = (lo + hi) >> 1
            if ids[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        out[k] = lo if lo < n and ids[lo] == v else -1
    return out


def first_rows(codes: ArrayLike) -> np.ndarray:
    """For every row, the index of the first row holding the same code (an integer or any
    sortable value): ``first[r] = min{q : codes[q] == codes[r]}``.

    Integers spanning a short range take one compiled pass over a table of the range; others a
    stable sort, each row then pointing at the head of its run of equal codes.
    """
    v = np.asarray(codes).ravel()
    span = _span(v)
    if span is not None:
        lo, hi = span
        return _first_in_table(v.astype(np.int64) - lo, hi - lo + 1)
    order = np.argsort(v, kind="stable")
    k = v[order]
    start = np.r_[True, k[1:] != k[:-1]] if len(k) else np.zeros(0, bool)
    first = np.empty(len(v), dtype=np.int64)
    first[order] = order[np.maximum.accumulate(np.where(start, np.arange(len(k)), 0))]
    return first


@njit(cache=True, nogil=True)
def _first_in_table(code, size):  # pragma: no cover - compiled
    head = np.full(size, -1, dtype=np.int64)
    first = np.empty(len(code), dtype=np.int64)
    for r in range(len(code)):
        c = code[r]
        if head[c] < 0:
            head[c] = r
        first[r] = head[c]
    return first


def group_sums(values: ArrayLike, codes: ArrayLike, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``values`` (rows × columns), the sum of its finite values in each group of
    columns (column ``j`` in group ``codes[j]``) and how many there are: two (rows × groups)
    arrays.

    One compiled pass, rows shared among numba's threads. Each group's values are added in
    column order, as ``np.bincount(codes, weights=row)`` adds them, so the sums are a
    bincount's to the last digit.
    """
    x = np.ascontiguousarray(values, dtype=np.float64)
    c = np.ascontiguousarray(codes, dtype=np.int64)
    if x.ndim != 2 or c.ndim != 1 or c.size != x.shape[1]:
        raise ValueError(
            f"need values (rows × columns) and one code per column, got {x.shape} and {c.shape}"
        )
    if c.size and (c.min() < 0 or c.max() >= n_groups):
        raise ValueError(f"codes must lie in [0, {n_groups}), got {c.min()} to {c.max()}")
    sums = np.zeros((x.shape[0], int(n_groups)))
    nums = np.zeros_like(sums)
    _group_sums(x, c, sums, nums)
    return sums, nums


@njit(cache=True, nogil=True, parallel=True)
def _group_sums(x, codes, sums, nums):  # pragma: no cover - compiled
    for r in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[r, j]
            if np.isfinite(v):
                sums[r, codes[j]] += v
                nums[r, codes[j]] += 1.0


def lexsort(keys: Sequence[np.ndarray]) -> np.ndarray:
    """``np.lexsort(keys)`` (the last key primary, ties kept in input order); when every key
    holds whole numbers whose ranges multiply to less than 2**62, by one stable argsort of their
    mixed-radix code instead of one pass per key."""
    arrays = [np.asarray(k) for k in keys]
    if not arrays or not len(arrays[0]):
        return np.lexsort(arrays) if arrays else np.zeros(0, dtype=np.int64)
    lows, sizes = [], []
    for a in arrays:
        if a.dtype.kind == "f":
            if not (np.isfinite(a).all() and (a == np.floor(a)).all()):
                return np.lexsort(arrays)
        elif a.dtype.kind not in "iu" or (a.dtype.kind == "u" and a.itemsize == 8):
            return np.lexsort(arrays)
        lo, hi = a.min(), a.max()
        if abs(float(lo)) >= 2**62 or abs(float(hi)) >= 2**62:
            return np.lexsort(arrays)
        lows.append(int(lo))
        sizes.append(int(hi) - int(lo) + 1)
    if float(np.prod(np.array(sizes, dtype=float))) >= 2**62:
        return np.lexsort(arrays)
    code = np.zeros(len(arrays[0]), dtype=np.int64)
    for a, lo, size in zip(arrays[::-1], lows[::-1], sizes[::-1], strict=True):
        code = code * size + (a.astype(np.int64) - lo)
    return np.argsort(code, kind="stable")


def frame_hashes(frame: pd.DataFrame) -> np.ndarray:
    """``pd.util.hash_pandas_object(frame, index=False)`` as an array: by :func:`row_hashes`
    when every column holds numpy integers or booleans, else by pandas."""
    if all(isinstance(t, np.dtype) for t in frame.dtypes):
        fast = row_hashes([frame.iloc[:, k].to_numpy() for k in range(frame.shape[1])])
        if fast is not None:
            return fast
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def row_hashes(columns: Sequence[np.ndarray]) -> np.ndarray | None:
    """pandas' row hashes of a frame of these columns (``hash_pandas_object(frame,
    index=False)``), in one compiled pass; None when a column is not of integers or booleans
    (pandas then hashes it).

    Each value is widened to 64 bits and mixed as pandas mixes it (``_hash_ndarray``), and the
    columns are combined as pandas combines them (``combine_hash_arrays``, after CPython's tuple
    hash): a cache key built on these hashes is the one pandas gives.
    """
    if not columns or any(c.ndim != 1 or c.dtype.kind not in "iub" for c in columns):
        return None
    n = len(columns[0])
    wide = np.empty((len(columns), n), dtype=np.uint64)
    for k, c in enumerate(columns):
        if len(c) != n:
            raise ValueError(f"columns of {n} and {len(c)} values")
        wide[k] = c.astype(np.uint64) if c.dtype.kind == "b" else c.view(f"u{c.itemsize}")
    return _combined_hashes(wide)


@njit(cache=True, nogil=True)
def _combined_hashes(wide):  # pragma: no cover - compiled
    k, n = wide.shape
    out = np.empty(n, dtype=np.uint64)
    for r in range(n):
        acc = np.uint64(0x345678)
        mult = np.uint64(1000003)
        for i in range(k):
            v = wide[i, r]
            v ^= v >> np.uint64(30)
            v *= np.uint64(0xBF58476D1CE4E5B9)
            v ^= v >> np.uint64(27)
            v *= np.uint64(0x94D049BB133111EB)
            v ^= v >> np.uint64(31)
            acc ^= v
            acc *= mult
            mult += np.uint64(82520 + 2 * (k - i))
        out[r] = acc + np.uint64(97531)
    return out
