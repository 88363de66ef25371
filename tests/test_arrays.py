"""The sort-based set operations of recmeta.arrays against numpy's own."""

from __future__ import annotations

import numpy as np
import pytest

from recmeta.arrays import has_duplicates, pair_codes, sorted_unique


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
