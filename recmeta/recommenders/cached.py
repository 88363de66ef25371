"""Cached runs: a system's lists for a split, trained once and read from the run cache after.

:func:`make` trains a system on a split's training frame and makes its top-N lists (or candidate
scores), or reads them from :mod:`recmeta.recommenders.cache` when the same key was made before;
an interrupted run resumes from the blocks already written. :func:`make_runs` gives the metric
engine's :class:`~recmeta.metrics.Runs` of several systems.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..metrics import Runs
from . import cache
from .cache import Parts, RunKey
from .lists import score_candidates, top_n
from .roster import System
from .training import RUN_COLUMNS, Candidates, Engine, Model, check_frame, train

if TYPE_CHECKING:
    from ..metrics import Judgments, Runs

__all__ = ["make", "make_runs", "run_keys", "RUN_COUNTS", "MADE_AHEAD"]

#: how many runs :func:`make` read from the cache and how many it made, in this process
RUN_COUNTS: dict[str, int] = {"cached": 0, "made": 0}
#: the cache paths of runs made for this process but not by a call that returned them (by worker
#: processes, :mod:`.ahead`, or beside another run, ``make(also_pairs=...)``) that :func:`make`
#: has not read yet: reading one counts it as made, not as cached
MADE_AHEAD: set[str] = set()


# ----------------------------------------------------------------------------- cached runs
def make(
    systems: Iterable[System],
    train_df: pd.DataFrame,
    *,
    dataset: str,
    split: str,
    seed: int = 0,
    depth: int = 100,
    candidates: Candidates = "all",
    test: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    engine: Engine = "auto",
    use_ray: bool = False,
    n_jobs: int | None = None,
    block: int = 256,
    root: str | os.PathLike | None = None,
    progress: bool | None = None,
    also_pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Runs of several systems on one split, from the cache where present, else made and cached.

    ``dataset``, ``split`` and ``seed`` name the split in the cache key (with a fingerprint of
    the frames, so two different frames never share an entry). Without ``pairs``: top-``depth``
    lists over ``candidates`` (``"test"`` needs ``test``); with ``pairs`` (user, item): candidate
    scores. Returns one frame with a ``system`` column first. A run interrupted part-way resumes
    at its first unfinished block of users (the model is trained again with the same seed).

    ``also_pairs`` (top-N lists only): candidate pairs that a later ``make(..., pairs=...)`` on
    the same split will ask for. Each model this call trains scores them too, under that call's
    key, so the model is trained once for both; the later call reads them and counts them as
    made. The scores are those of a model trained for them alone: training is seeded, and the
    tests check that the two ways give equal frames.
    """

    systems = list(systems)
    if also_pairs is not None and pairs is not None:
        raise ValueError("also_pairs goes with top-N lists; this call already scores pairs=")
    also: list[tuple[pd.DataFrame, RunKey, Path] | None] = [None] * len(systems)
    if also_pairs is not None:
        also_keys = run_keys(
            systems, train_df, dataset=dataset, split=split, seed=seed, pairs=also_pairs
        )
        also = [(also_pairs, k, k.path(root)) for k in also_keys]
    keys = run_keys(
        systems,
        train_df,
        dataset=dataset,
        split=split,
        seed=seed,
        depth=depth,
        candidates=candidates,
        test=test,
        pairs=pairs,
    )
    out = []
    for system, key, extra in zip(systems, keys, also, strict=True):
        path = key.path(root)
        if path.exists():
            df = cache.read_frame(path)
            # a run a worker of make_ahead made for this process counts as made here
            made = str(path) in MADE_AHEAD
            MADE_AHEAD.discard(str(path))
            RUN_COUNTS["made" if made else "cached"] += 1
        else:
            with cache.lock(path):  # another process may be making the same run
                if path.exists():
                    df = cache.read_frame(path)
                    RUN_COUNTS["cached"] += 1
                else:
                    df = _make_one(
                        system,
                        train_df,
                        key,
                        path,
                        seed=seed,
                        depth=depth,
                        candidates=candidates,
                        test=test,
                        pairs=pairs,
                        engine=engine,
                        use_ray=use_ray,
                        n_jobs=n_jobs,
                        block=block,
                        progress=progress,
                        also=extra,
                    )
                    RUN_COUNTS["made"] += 1
        out.append(df.assign(system=system.name))
    if not out:
        return pd.DataFrame(columns=["system", *RUN_COLUMNS])
    res = pd.concat(out, ignore_index=True)
    return res[["system", *[c for c in res.columns if c != "system"]]]


def run_keys(
    systems: Iterable[System],
    train_df: pd.DataFrame,
    *,
    dataset: str,
    split: str,
    seed: int = 0,
    depth: int = 100,
    candidates: Candidates = "all",
    test: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
) -> list[RunKey]:
    """The cache keys :func:`make` gives these systems' runs on one split (same keywords)."""
    if pairs is not None:
        check_frame(pairs, "the candidate pairs", ["user", "item"])
        kind, frames = "candidates", (train_df, pairs)
    else:
        kind = f"top-{candidates}-{depth}"
        frames = (train_df, test if candidates == "test" else None)
    fp = cache.fingerprint(*frames)
    return [
        cache.RunKey(dataset, split, seed, system.name, system.config_key(), kind, fp)
        for system in systems
    ]


def make_runs(
    systems: Iterable[System],
    train_df: pd.DataFrame,
    judgments: Judgments,
    *,
    ties: str = "trec_eval",
    **make_options: Any,
) -> Runs:
    """The top-N runs of :func:`make`, as the metric engine's ``Runs`` for ``judgments``.

    Each system's frame is read (or made), turned into arrays and dropped before the next one
    (:meth:`recmeta.metrics.Runs.concat`): memory holds one system's frame at a time, where one
    frame of every system, as :func:`make` returns it, takes about 290 bytes per ranked position
    with the conversion's work arrays (``benchmarks/scale.md``). The result equals
    ``Runs.from_frame(make(systems, train_df, **make_options), judgments, ties=ties)``;
    ``make_options`` are :func:`make`'s keywords (``dataset`` and ``split`` are required;
    candidate scores, ``pairs=``, are not lists and are refused).
    """

    if make_options.get("pairs") is not None:
        raise ValueError("make_runs builds ranked lists; for candidate scores (pairs=) use make")
    parts = []
    for system in systems:
        frame = make([system], train_df, **make_options)
        parts.append(Runs.from_frame(frame, judgments, ties=ties))
        del frame
    return Runs.concat(parts)


def _make_one(
    system: System,
    train_df: pd.DataFrame,
    key: RunKey,
    path: Path,
    *,
    seed: int,
    depth: int,
    candidates: Candidates,
    test: pd.DataFrame | None,
    pairs: pd.DataFrame | None,
    engine: Engine,
    use_ray: bool,
    n_jobs: int | None,
    block: int,
    progress: bool | None,
    also: tuple[pd.DataFrame, RunKey, Path] | None = None,
) -> pd.DataFrame:

    model = train(system, train_df, seed=seed, n=depth)
    scoring: dict[str, Any] = {
        "engine": engine,
        "use_ray": use_ray,
        "n_jobs": n_jobs,
        "block": block,
    }
    if pairs is not None:
        df = score_candidates(model, pairs, progress=progress, **scoring)
        cache.write_frame(df, path, key)
        return df
    if also is not None:
        also_pairs, also_key, also_path = also
        with cache.lock(also_path):  # another process may be making the same run
            if not also_path.exists():
                scores = score_candidates(model, also_pairs, progress=progress, **scoring)
                cache.write_frame(scores, also_path, also_key)
                MADE_AHEAD.add(str(also_path))
    return _resumable_top_n(
        model,
        key,
        path,
        depth=depth,
        candidates=candidates,
        test=test,
        engine=engine,
        use_ray=use_ray,
        n_jobs=n_jobs,
        block=block,
        progress=progress,
    )


def _resumable_top_n(model: Model, key: RunKey, path: Path, **kw: Any) -> pd.DataFrame:

    parts = Parts(path, key)
    done = parts.users_done()
    users = np.asarray(model.data.users.ids())
    todo = users[~np.isin(users, done)]
    state = {"start": 0}
    block = kw["block"]

    def save(frame: pd.DataFrame) -> None:
        s = state["start"]
        n = min(block, len(todo) - s)
        parts.add(frame, todo[s : s + n])
        state["start"] = s + n

    if len(todo):
        top_n(model, todo, on_block=save, **kw)
    return parts.finish(["user", "rank"])
