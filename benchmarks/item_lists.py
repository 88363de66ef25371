"""Benchmark: tidy list frames to LensKit's ``ItemListCollection`` and back to the engine's runs.

    .venv/bin/python benchmarks/item_lists.py

``recmeta.compare.item_lists`` (one stable sort, then a slice per user) against LensKit's own
``ItemListCollection.from_df`` (a pandas group per user), on one system's top-100 lists for the
users of ML-100K, ML-1M and a 20,000-user table (synthetic: each user's items distinct, ranks,
scores). Each is timed best of three in this process; the two collections are checked equal
list by list (keys, items, scores, ranks, order) before any time is printed. The other way, the
same collection read into the metric engine's runs: ``Runs.from_lenskit`` as a whole (it reads
each list's arrays) beside LensKit's ``to_df`` alone (through which it read them before).
"""

from __future__ import annotations

import time
import warnings
from functools import partial

import numpy as np
import pandas as pd
from lenskit.data import ItemListCollection

from recmeta.compare.inputs import item_lists
from recmeta.metrics import Judgments, Runs


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def _same(a: ItemListCollection, b: ItemListCollection) -> None:
    assert list(a.keys()) == list(b.keys())
    for (_, x), (_, y) in zip(a.items(), b.items(), strict=True):
        assert x.ordered == y.ordered and np.array_equal(x.ids(), y.ids())
        assert np.array_equal(x.scores(), y.scores()) and np.array_equal(x.ranks(), y.ranks())


def main() -> None:
    rng = np.random.default_rng(0)
    print(
        "| users × depth | rows | LensKit `from_df` | `item_lists` | ratio | LensKit `to_df` "
        "| `Runs.from_lenskit` | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for users, depth in ((943, 100), (6_040, 100), (20_000, 100)):
        n = users * depth
        frame = pd.DataFrame(
            {
                "user": np.repeat(np.arange(1, users + 1), depth),
                # a user's 100 items are distinct, as in a real run
                "item": (
                    np.repeat(rng.integers(0, 3_706, users), depth)
                    + 37 * np.tile(np.arange(depth), users)
                )
                % 3_706
                + 1,
                "rank": np.tile(np.arange(1, depth + 1), users),
                "score": rng.random(n),
            }
        )
        renamed = frame.rename(columns={"user": "user_id", "item": "item_id"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_lk, lk = _best(partial(ItemListCollection.from_df, renamed, "user_id"))
            t_ours, ours = _best(partial(item_lists, frame))
        _same(lk, ours)  # type: ignore[arg-type]
        judged = frame.drop_duplicates(["user", "item"]).assign(rating=5.0)
        judgments = Judgments.from_frame(judged[["user", "item", "rating"]], 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_df, _ = _best(lk.to_df)  # type: ignore[attr-defined]
        t_runs, _ = _best(partial(Runs.from_lenskit, {"system": ours}, judgments))
        print(
            f"| {users:,} × {depth} | {n:,} | {t_lk:.3f} s | {t_ours:.3f} s | {t_lk / t_ours:.0f} "
            f"| {t_df:.3f} s | {t_runs:.3f} s | {t_df / t_runs:.1f} |"
        )


if __name__ == "__main__":
    main()
