"""The sort-based set operations of recmeta.arrays against numpy's own."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta.arrays import (
    first_rows,
    frame_hashes,
    group_sums,
    has_duplicate_pairs,
    has_duplicates,
    lexsort,
    pair_codes,
    pairs_strictly_increasing,
    positions,
    row_hashes,
    sorted_unique,
    threaded_map,
    threaded_rows,
    threads_share_numba,
)
from recmeta.protocols.smallest import row_smallest


@pytest.mark.parametrize("high", [3, 1_000, 10**12])
@pytest.mark.parametrize("size", [0, 1, 2, 50, 5_000])
def test_sorted_unique_is_numpy_unique_on_integers(size: int, high: int) -> None:
    rng = np.random.default_rng(size * 7 + high % 97)
    x = rng.integers(-high, high, size=size)
    got = sorted_unique(x)
    want = np.unique(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert has_duplicates(x) == (want.size < x.size)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16])
def test_has_duplicates_over_a_table_of_the_range(dtype: type) -> None:
    """Distinct integers in a short range (the table is used) and the same with one repeat,
    anywhere in the array, against np.unique."""
    rng = np.random.default_rng(3)
    x = (rng.permutation(6_000) + 17).astype(dtype)
    assert not has_duplicates(x) and np.unique(x).size == x.size
    for at in (0, 2_999, 5_999):
        y = x.copy()
        y[at] = x[(at + 1) % x.size]
        assert has_duplicates(y) and np.unique(y).size < y.size


def test_sorted_unique_on_strings_and_objects() -> None:
    words = np.array(["b", "a", "c", "a", "b"])
    np.testing.assert_array_equal(sorted_unique(words), ["a", "b", "c"])
    objects = np.array(["u", "w", "u"], dtype=object)
    np.testing.assert_array_equal(sorted_unique(objects), np.array(["u", "w"], dtype=object))
    assert has_duplicates(objects)
    assert not has_duplicates(np.array(["u", "w"], dtype=object))


def test_sorted_unique_takes_lists_and_2d_input() -> None:
    np.testing.assert_array_equal(sorted_unique([3, 1, 3, 2]), [1, 2, 3])
    np.testing.assert_array_equal(sorted_unique(np.array([[2, 1], [1, 5]])), [1, 2, 5])
    assert not has_duplicates([])
    assert not has_duplicates([7])
    assert has_duplicates([[1, 2], [3, 1]])


def test_pair_codes_keep_the_order_of_the_pairs_across_arrays() -> None:
    rng = np.random.default_rng(5)
    u1, i1 = rng.integers(0, 50, 300), rng.integers(0, 900, 300)
    u2, i2 = rng.integers(0, 70, 200).astype(np.int32), rng.integers(0, 40, 200).astype(np.int32)
    coded = pair_codes([u1, u2], [i1, i2])
    assert coded is not None
    (c1, c2), m = coded
    assert m == 1 + max(i1.max(), i2.max())
    u, i, c = np.r_[u1, u2], np.r_[i1, i2], np.r_[c1, c2]
    # equal codes for equal pairs, and the codes sort as the pairs do
    order = np.lexsort((i, u))
    assert np.all(np.diff(c[order]) >= 0)
    same = (u[order][1:] == u[order][:-1]) & (i[order][1:] == i[order][:-1])
    np.testing.assert_array_equal(np.diff(c[order]) == 0, same)
    np.testing.assert_array_equal(c // m, u)
    np.testing.assert_array_equal(c % m, i)


def test_pair_codes_decline_ids_they_cannot_code() -> None:
    ok = np.array([1, 2])
    assert pair_codes([ok], [np.array([-1, 3])]) is None
    assert pair_codes([np.array(["a", "b"])], [ok]) is None
    assert pair_codes([ok.astype(float)], [ok]) is None
    assert pair_codes([np.array([2**40])], [np.array([2**40])]) is None


@pytest.mark.parametrize("kind", ["int", "uint", "negative", "huge", "float", "nan", "str"])
@pytest.mark.parametrize("size", [0, 1, 2, 40, 3_000])
def test_has_duplicate_pairs_is_pandas_duplicated(kind: str, size: int) -> None:
    # the pairs' codes for integer ids, pandas for the rest: both must say what pandas says
    rng = np.random.default_rng(size)
    for trial in range(6):
        high = 1 + (trial + 1) * max(size, 1) // 4  # from crowded to mostly distinct pairs
        u, i = rng.integers(0, high, size), rng.integers(0, high, size)
        if trial % 2:  # distinct pairs made certain half of the time
            u, i = np.divmod(rng.permutation(size * size + 1)[:size], size + 1)
        users, items = {
            "int": (u, i),
            "uint": (u.astype(np.uint32), i.astype(np.uint64)),
            "negative": (u - high // 2, i),
            "huge": (u + 2**40, i + 2**40),
            "float": (u.astype(float), i + 0.5),
            "nan": (np.where(u % 3 == 0, np.nan, u), i.astype(float)),
            "str": (u.astype(str), i.astype(str).astype(object)),
        }[kind]
        expected = bool(pd.DataFrame({"u": users, "i": items}).duplicated().any())
        assert has_duplicate_pairs(users, items) is expected
        assert has_duplicate_pairs(pd.Series(users), pd.Series(items)) is expected
        # sorted, users first: strictly increasing pairs end the check early, equal
        # neighbours (or a NaN) must not
        order = np.lexsort((items, users))
        assert has_duplicate_pairs(users[order], items[order]) is expected
    with pytest.raises(ValueError, match="one of each per pair"):
        has_duplicate_pairs(np.arange(3), np.arange(2))


def _increasing_by_definition(users: np.ndarray, items: np.ndarray) -> bool:
    """(u_k, i_k) < (u_{k+1}, i_{k+1}) for every k, pair by pair in Python."""
    u, i = users.tolist(), items.tolist()
    return all(
        u[k] > u[k - 1] or (u[k] == u[k - 1] and i[k] > i[k - 1]) for k in range(1, len(u))
    )


@pytest.mark.parametrize("kind", ["int", "uint", "negative", "huge", "float", "nan", "str"])
@pytest.mark.parametrize("size", [0, 1, 2, 40, 3_000])
def test_pairs_strictly_increasing_is_the_definition(kind: str, size: int) -> None:
    # sorted distinct pairs, then the same with one pair repeated, two swapped, one lowered
    rng = np.random.default_rng(size)
    code = np.unique(rng.integers(0, 50 * max(size, 1), size + size // 2))[:size]
    u0, i0 = np.divmod(code, 50)
    cases = [(u0, i0)]
    if size >= 2:
        k = int(rng.integers(1, size))
        cases.append((np.r_[u0[:k], u0[k - 1 :]], np.r_[i0[:k], i0[k - 1 :]]))
        swap = np.arange(size)
        swap[[k - 1, k]] = swap[[k, k - 1]]
        cases.append((u0[swap], i0[swap]))
        back_u, back_i = u0.copy(), i0.copy()
        back_u[k], back_i[k] = u0[k - 1], i0[k - 1] - 1  # the user before, a lower item
        cases.append((back_u, back_i))
    for u, i in cases:
        users, items = {
            "int": (u, i),
            "uint": (u.astype(np.uint32), i.astype(np.uint64)),
            "negative": (u - 7, i - 25),
            "huge": (u + 2**40, i + 2**40),
            "float": (u.astype(float), i + 0.5),
            "nan": (np.where(u % 3 == 0, np.nan, u), i.astype(float)),
            "str": (
                np.array([f"{x:06d}" for x in u], dtype=str),  # padded: ordered as numbers
                np.array([f"{x:03d}" for x in i], dtype=object),
            ),
        }[kind]
        expected = _increasing_by_definition(users, items)
        assert pairs_strictly_increasing(users, items) is expected
        assert pairs_strictly_increasing(pd.Series(users), pd.Series(items)) is expected
    if size >= 2:  # the cases hold both answers
        assert _increasing_by_definition(*cases[0])
        assert not any(_increasing_by_definition(u, i) for u, i in cases[1:])
    with pytest.raises(ValueError, match="one of each per pair"):
        pairs_strictly_increasing(np.arange(3), np.arange(2))


def _positions_by_search(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The binary-search reading: searchsorted, kept where the id found is the value."""
    if not len(ids):
        return np.full(len(values), -1)
    at = np.searchsorted(ids, values).clip(0, len(ids) - 1)
    return np.where(ids[at] == values, at, -1)


@pytest.mark.parametrize("high", [5, 2_000, 10**12])
@pytest.mark.parametrize("size", [0, 1, 300])
def test_positions_are_the_binary_search_with_absent_values_at_minus_one(
    size: int, high: int
) -> None:
    rng = np.random.default_rng(size + high % 101)
    ids = np.unique(rng.integers(0, high, size=size))
    values = rng.integers(-3, high + 3, size=4 * size + 7)  # below, inside and above the ids
    got = positions(ids, values)
    want = _positions_by_search(ids, values)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    hit = got >= 0
    np.testing.assert_array_equal(ids[got[hit]], values[hit])
    # strings and floats take the search
    np.testing.assert_array_equal(positions(np.array(["a", "c"]), np.array(["c", "b"])), [1, -1])
    np.testing.assert_array_equal(positions(ids.astype(float), values.astype(float)), want)


def _row_smallest_by_sort(keys: np.ndarray, blocked: np.ndarray, n: int) -> set:
    """The sorting reading: each row's open columns by (key, column), the first n."""
    out = set()
    for r in range(keys.shape[0]):
        open_cols = np.flatnonzero(~blocked[r])
        by_key = open_cols[np.lexsort((open_cols, keys[r, open_cols]))]
        out |= {(r, int(c)) for c in by_key[:n]}
    return out


@pytest.mark.parametrize("n", [0, 1, 3, 8, 20])
@pytest.mark.parametrize("ties", [False, True])
def test_row_smallest_keeps_the_n_smallest_open_keys_of_every_row(n: int, ties: bool) -> None:
    rng = np.random.default_rng(n + 10 * ties)
    keys = rng.random((40, 12))
    if ties:  # few distinct keys: the lower columns win among equal keys
        keys = np.round(keys * 3) / 3
    blocked = rng.random((40, 12)) < 0.4
    blocked[0] = True  # an empty pool
    blocked[1, 2:] = True  # a short one
    r, c = row_smallest(keys, blocked, n)
    assert r.dtype == c.dtype == np.int64
    pairs = list(zip(r.tolist(), c.tolist(), strict=True))
    assert pairs == sorted(pairs)  # rows, then columns, ascending
    assert set(pairs) == _row_smallest_by_sort(keys, blocked, n)
    counts = np.bincount(r, minlength=40)
    np.testing.assert_array_equal(counts, np.minimum((~blocked).sum(axis=1), n))


@pytest.mark.parametrize("keys_of", ["uniform", "few values", "descending", "low every 9th"])
def test_row_smallest_on_wide_rows_as_the_chapters_draw_them(keys_of: str) -> None:
    """Rows thousands wide and n = 99, as an NN sample of 99 non-relevant items draws them: a
    key enters the bounded heap in many orders (uniform), ties cross the n-th key at many
    columns (few values), every key displaces the largest (descending), and the row's sample
    (every 9th of 2,500 columns) holds the lowest keys, so fewer than n lie under the bound
    taken from it and the row is read again without it (low every 9th)."""
    rng = np.random.default_rng(len(keys_of))
    keys = rng.random((30, 2_500))
    if keys_of == "few values":
        keys = np.round(keys * 40) / 40
    elif keys_of == "descending":
        keys = np.sort(keys, axis=1)[:, ::-1].copy()
    elif keys_of == "low every 9th":
        keys[:, ::9] -= 1.0
    blocked = rng.random((30, 2_500)) < 0.3
    blocked[3, 60:] = True  # a pool shorter than n
    r, c = row_smallest(keys, blocked, 99)
    pairs = list(zip(r.tolist(), c.tolist(), strict=True))
    assert pairs == sorted(pairs)
    assert set(pairs) == _row_smallest_by_sort(keys, blocked, 99)


def test_the_bounds_selection_is_numpys_partition() -> None:
    from recmeta.protocols.smallest import _select

    rng = np.random.default_rng(5)
    for size in (1, 2, 3, 7, 64, 257):
        for values in (rng.random(size), rng.integers(0, 4, size).astype(float),
                       np.full(size, 0.5), np.arange(size, 0, -1.0)):
            for j in {0, size // 2, size - 1}:
                a = values.copy()
                assert _select(a, j) == np.partition(values, j)[j], (size, j, values)
                assert sorted(a) == sorted(values)  # reordered, nothing lost


def test_row_smallest_takes_empty_matrices_and_rejects_bad_input() -> None:
    r, c = row_smallest(np.zeros((0, 5)), np.zeros((0, 5), bool), 3)
    assert len(r) == len(c) == 0
    r, c = row_smallest(np.zeros((3, 0)), np.zeros((3, 0), bool), 3)
    assert len(r) == len(c) == 0
    with pytest.raises(ValueError, match="one shape"):
        row_smallest(np.zeros((2, 3)), np.zeros((3, 2), bool), 1)
    with pytest.raises(ValueError, match="NaN"):
        row_smallest(np.full((1, 2), np.nan), np.zeros((1, 2), bool), 1)
    with pytest.raises(ValueError, match="NaN"):  # an open NaN past a wide row's bound
        keys = np.random.default_rng(0).random((2, 900))
        keys[1, 700] = np.nan
        row_smallest(keys, np.zeros((2, 900), bool), 5)
    # a blocked entry is never read as a key
    r, c = row_smallest(np.array([[np.nan, 0.5, 0.2]]), np.array([[True, False, False]]), 1)
    assert r.tolist() == [0] and c.tolist() == [2]
    with pytest.raises(ValueError, match="n must be"):
        row_smallest(np.zeros((1, 2)), np.zeros((1, 2), bool), -1)


@pytest.mark.parametrize(
    ("dtype", "low"),
    [(np.int64, 0), (np.int64, -50_000), (np.int32, -50_000), (np.uint16, 0), (np.uint64, 0)],
)
def test_sorted_unique_of_a_short_integer_range_is_numpy_unique(dtype, low: int) -> None:
    """Integers spanning few values take the table of the range: same values, same dtype."""
    rng = np.random.default_rng(abs(low) + np.dtype(dtype).itemsize)
    for size in (1023, 1024, 5_000):
        x = (rng.integers(0, 3_000, size=size) + low).astype(dtype)
        got = sorted_unique(x)
        want = np.unique(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    wide = np.array([0, 10**15] * 600, dtype=np.int64)  # a long range: the sort
    np.testing.assert_array_equal(sorted_unique(wide), [0, 10**15])


@pytest.mark.parametrize("high", [50, 10**12])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint32", "float64", "float32"])
def test_positions_of_rising_values_equal_the_binary_search(high: int, dtype: str) -> None:
    """Rising values take the compiled gallop; the search is the reference, on every dtype the
    pass accepts, repeated values, values below and above every id, and a NaN among them."""
    rng = np.random.default_rng(high % 97)
    top = min(high, np.iinfo(np.int32).max - 10) if dtype in ("int32", "uint32") else high
    low = 0 if dtype == "uint32" else -3
    ids = np.unique(rng.integers(0, top, size=3_000)).astype(dtype)
    values = np.sort(rng.integers(low, top + 3, size=9_000)).astype(dtype)
    values = np.sort(np.concatenate([values, ids[::7]]))  # hits, and repeats of them
    for v in (values, values[::-1], values.astype(np.int64) if dtype == "uint32" else values):
        got = positions(ids, v)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, _positions_by_search(ids, v))
    if dtype.startswith("float"):
        with_nan = np.concatenate([values, [np.nan, values[-1]]]).astype(dtype)
        np.testing.assert_array_equal(
            positions(ids, with_nan), _positions_by_search(ids, with_nan)
        )
        assert positions(ids, with_nan)[-2] == -1
    # ints among floats and floats among ints compare as numbers
    np.testing.assert_array_equal(
        positions(ids.astype(float), np.sort(values).astype(np.int64)),
        _positions_by_search(ids.astype(float), np.sort(values).astype(np.int64)),
    )
    halves = np.sort(values.astype(float) + 0.5)
    np.testing.assert_array_equal(
        positions(ids.astype(np.int64), halves), np.full(len(halves), -1)
    )


def test_positions_of_negative_and_unsigned_ids() -> None:
    ids = np.array([-7, -3, 0, 4])
    values = np.array([-8, -7, -3, 5, 4, 2**40, -(2**40)])
    np.testing.assert_array_equal(positions(ids, values), [-1, 0, 1, -1, 3, -1, -1])
    np.testing.assert_array_equal(positions(ids, values), _positions_by_search(ids, values))
    big = np.array([1, 2**63 + 5], dtype=np.uint64)  # beyond int64: the search
    np.testing.assert_array_equal(positions(big, big[::-1]), [1, 0])


@pytest.mark.parametrize("high", [4, 3_000, 10**15])
@pytest.mark.parametrize("size", [0, 1, 2_000])
def test_first_rows_point_at_the_first_row_of_each_code(size: int, high: int) -> None:
    rng = np.random.default_rng(size + high % 89)
    codes = rng.integers(-high, high, size=size)
    got = first_rows(codes)
    # the pandas reading: the index of each code's first row, by groupby
    want = pd.Series(np.arange(size)).groupby(codes).transform("min").to_numpy()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    words = np.array(["b", "a", "b", "c", "a"])
    np.testing.assert_array_equal(first_rows(words), [0, 1, 0, 3, 1])


@pytest.mark.parametrize("size", [0, 1, 3_000])
def test_lexsort_is_numpy_lexsort(size: int) -> None:
    """The mixed-radix code against numpy's lexsort, ties kept in input order: small integers,
    negative ones, whole floats (-0.0 and 0.0 equal), and the keys it leaves to numpy."""
    rng = np.random.default_rng(size)
    small = rng.integers(-3, 4, size=size)
    ids = rng.integers(0, 50, size=size).astype(np.int32)
    whole = rng.integers(-5, 5, size=size).astype(float)
    whole[whole == 0] = -0.0
    cases = [
        (small, ids),
        (whole, small, ids.astype(np.uint16)),
        (rng.random(size), small),  # fractions: numpy's
        (rng.integers(0, 2**40, size=size), rng.integers(0, 2**40, size=size)),  # too wide
        (np.where(rng.random(size) < 0.1, np.nan, whole), small),  # NaN: numpy's
    ]
    for keys in cases:
        got = lexsort(keys)
        np.testing.assert_array_equal(got, np.lexsort(keys))
    assert lexsort([]).size == 0


def test_frame_hashes_are_pandas_row_hashes():
    rng = np.random.default_rng(5)
    n = 500
    frame = pd.DataFrame(
        {
            "user": rng.integers(-(10**12), 10**12, n),
            "item": rng.integers(0, 9_000, n).astype("int32"),
            "small": rng.integers(-5, 5, n).astype("int8"),
            "wide": rng.integers(0, 2**63, n, dtype=np.uint64),
            "flag": rng.random(n) > 0.5,
            "rating": rng.random(n),  # floats: pandas hashes them
            "cat": pd.Categorical(rng.integers(0, 3, n)),
            "nullable": pd.array(rng.integers(0, 3, n), dtype="Int64"),
        }
    )
    for columns in (
        ["user", "item"],
        ["item"],
        ["small", "wide", "flag"],
        ["user", "rating"],
        ["cat"],
        ["nullable", "user"],
    ):
        sub = frame[columns]
        expected = pd.util.hash_pandas_object(sub, index=False).to_numpy()
        assert np.array_equal(frame_hashes(sub), expected), columns
    empty = frame.iloc[:0][["user", "item"]]
    assert np.array_equal(
        frame_hashes(empty), pd.util.hash_pandas_object(empty, index=False).to_numpy()
    )
    assert row_hashes([]) is None


_RSS_AFTER_FREE = """
import sys
import numpy as np
from recmeta.arrays import keep_freed_memory

if sys.argv[1] == "keep":
    assert keep_freed_memory()
a = np.ones(2**27 // 8)  # 128 MiB, every page touched
del a
with open("/proc/self/statm") as fh:
    print(int(fh.read().split()[1]))  # resident pages
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt thresholds")
def test_freed_large_arrays_stay_in_the_heap_for_the_next(tmp_path):
    # by default a freed 128 MiB array goes back to the system at once; with the thresholds
    # raised the process keeps it, resident, for the next allocation
    def resident(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _RSS_AFTER_FREE, mode],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        return int(done.stdout)

    kept = (resident("keep") - resident("default")) * os.sysconf("SC_PAGE_SIZE")
    assert 0.9 * 2**27 < kept < 1.2 * 2**27


def test_group_sums_are_a_bincount_per_row_to_the_last_digit() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(7, 300)) * 1e3
    x[rng.random(x.shape) < 0.1] = np.nan
    x[0, 3] = np.inf  # not finite: left out like NaN
    codes = rng.integers(0, 11, size=300)
    sums, nums = group_sums(x, codes, 11)
    for r in range(7):
        seen = np.isfinite(x[r])
        np.testing.assert_array_equal(
            sums[r], np.bincount(codes[seen], weights=x[r][seen], minlength=11)
        )
        np.testing.assert_array_equal(nums[r], np.bincount(codes[seen], minlength=11))
    with pytest.raises(ValueError, match="one code per column"):
        group_sums(x, codes[:-1], 11)
    with pytest.raises(ValueError, match=r"codes must lie in \[0, 11\)"):
        group_sums(x, np.r_[codes[:-1], 11], 11)


def test_compile_once_compiles_for_the_call_types_under_a_lock(tmp_path, monkeypatch) -> None:
    """The signature compiled is the one the call dispatches to (no second compilation), the
    compilation holds the file lock, and a kernel compiled for those types takes no lock."""
    from contextlib import contextmanager

    from numba import njit

    from recmeta import files
    from recmeta.arrays import compile_once
    from recmeta.metrics import _kernel, _plan

    held = []

    @contextmanager
    def lock(path):
        held.append(path)
        yield

    monkeypatch.setattr(files, "lock", lock)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))

    @njit
    def add(a, b, flag):
        return a.sum() + b if flag else b

    args = (np.arange(5.0), 3, True)
    compile_once(add, args)
    assert len(add.overloads) == 1 and len(held) == 1
    assert held[0].parent == tmp_path and held[0].name.endswith("add.compile")
    assert add(*args) == 13.0
    assert len(add.overloads) == 1  # the call found the compiled signature
    compile_once(add, args)
    assert len(held) == 1  # compiled already: no lock taken
    compile_once(add, (np.arange(5, dtype=np.int32), 3, True))
    assert len(add.overloads) == 2 and len(held) == 2

    from recmeta.metrics import score_rankings

    calls = []
    monkeypatch.setattr(_plan, "compile_once", lambda k, a: calls.append(k) or compile_once(k, a))
    score_rankings(np.eye(4), ["AUC", "RR"])  # the engine goes through compile_once
    kernel = _kernel.evaluate_lists_serial
    assert calls == [kernel]
    before = len(kernel.overloads)
    score_rankings(np.eye(6), ["nDCG@3"])
    assert len(kernel.overloads) == before  # the same types: nothing compiled on the call


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threaded_map_is_map_in_order_and_reads_items_lazily(threads: int) -> None:
    import numba

    read = []

    def items():
        for k in range(12):
            read.append(k)
            yield k

    rng = np.random.default_rng(4)
    a, b = rng.random((300, 200)), rng.random((200, 150))
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        width = numba.get_num_threads()
        out = threaded_map(lambda k: (k, read[-1], (a * k) @ b), items())
        got = list(out)
    finally:
        numba.set_num_threads(before)
    assert [k for k, _, _ in got] == list(range(12))
    # one item more than the threads is read before a result is handed back
    ahead = 0 if width < 2 else width
    assert all(last <= k + ahead for k, last, _ in got)
    assert all(np.array_equal(m, (a * k) @ b) for k, _, m in got)  # every bit the serial map's
    # a single item is computed in the calling thread, with no thread started for it
    import threading

    assert list(threaded_map(lambda k: threading.get_ident(), [0])) == [threading.get_ident()]
    assert list(threaded_map(lambda k: k, [])) == []


def test_threaded_map_raises_what_a_call_raises() -> None:
    def fail(k):
        if k == 3:
            raise ValueError("three")
        return k

    with pytest.raises(ValueError, match="three"):
        list(threaded_map(fail, range(8)))


@pytest.mark.parametrize("rows", [1, 7, 1000])
def test_threaded_rows_is_the_whole_call_element_by_element(rows: int) -> None:
    from scipy import special

    rng = np.random.default_rng(5)
    t = rng.normal(size=(rows, 1800)) * 3
    df = rng.integers(1, 900, size=(rows, 1)).astype(float)
    got = threaded_rows(lambda d, x: 2.0 * special.stdtr(d - 1.0, -np.abs(x)), df, t)
    assert got.shape == t.shape
    assert np.array_equal(got, 2.0 * special.stdtr(df - 1.0, -np.abs(t)))
    # an argument with one row, or none, goes to every block whole
    scale = np.float64(0.5)
    assert np.array_equal(threaded_rows(np.multiply, t, scale), t * scale)
    assert np.array_equal(threaded_rows(np.add, t, t[:1]), t + t[:1])


def test_threaded_map_runs_in_the_calling_thread_where_numba_forbids_threads(monkeypatch) -> None:
    import threading

    import numba

    from recmeta import arrays

    assert threads_share_numba() == (numba.threading_layer() in ("tbb", "omp"))
    # a process on numba's workqueue layer (not safe across threads) is told so
    script = "from recmeta.arrays import threads_share_numba; print(threads_share_numba())"
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
    monkeypatch.setattr(arrays, "threads_share_numba", lambda: False)
    here = threading.get_ident()
    assert list(threaded_map(lambda k: (k, threading.get_ident()), range(5))) == [
        (k, here) for k in range(5)
    ]
    # serial kernels (parallel_kernels=False) are safe on any layer: they still get threads
    if numba.get_num_threads() > 1:
        seen = {t for _, t in threaded_map(lambda k: (k, threading.get_ident()), range(5),
                                            parallel_kernels=False)}
        assert here not in seen
