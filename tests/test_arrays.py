"""The sort-based set operations of recmeta.arrays against numpy's own."""

from __future__ import annotations

import numpy as np
import pytest

from recmeta.arrays import has_duplicates, sorted_unique


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
