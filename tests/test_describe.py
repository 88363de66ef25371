"""Sentences computed from data (the datasets chapter's prose)."""

from __future__ import annotations

import pandas as pd

from recmeta.data import sentences as describe


def test_dataset_comparison_follows_the_numbers():
    table = pd.DataFrame({"items": [1000, 6000], "ratings": [100_000, 101_000],
                          "density": [0.06, 0.01], "item_gini": [0.64, 0.70]},
                         index=["a", "b"])
    text = describe.dataset_comparison(table)
    assert "4.468%" in text and "0.634" in text  # the paper's ML-1M row
    assert "a is denser (6.000%) and about as concentrated" in text
    assert "b is sparser (1.000%) and more concentrated" in text
    assert "b has 6.0 times as many items and about as many ratings" in text
    flipped = describe.dataset_comparison(table.iloc[::-1])
    assert "a has 6.0 times fewer items" in flipped


def test_rating_scales_and_head_share():
    frames = {"x": pd.DataFrame({"item": [1, 1, 1, 2], "rating": [1.0, 2.0, 5.0, 3.0]}),
              "y": pd.DataFrame({"item": [1, 2, 3, 4], "rating": [0.5, 1.0, 4.5, 5.0]}),
              "z": pd.DataFrame({"item": [1, 2]})}
    assert describe.rating_scales(frames) == (
        "x uses whole stars from 1 to 5; y uses half stars from 0.5 to 5; "
        "z has no ratings (implicit feedback).")
    # x: the top item (one of two: round(0.5 * 2) = 1) holds 3 of 4 ratings
    assert describe.head_share({"x": frames["x"]}, head=0.5) == (
        "The most rated 50% of the items hold 75% of all ratings in x.")
    two = describe.head_share({"x": frames["x"], "y": frames["y"]}, head=0.5)
    assert two == "The most rated 50% of the items hold 75% of all ratings in x and 50% in y."
