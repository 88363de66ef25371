r"""Recommendation lists for a split: top-N lists and candidate scores, from trained LensKit
pipelines.

Three protocols (Bellogín et al. 2017, §3):

* ``candidates="all"`` (AllItems): every training item the user has not rated in training;
* ``candidates="test"`` (TestItems): the items with at least one test rating,
  :math:`\mathcal C = \bigcup_u R_{test}(u)`, minus the user's training items;
* :func:`score_candidates`: scores for exactly the (user, item) pairs given (1R, sampled
  negatives, any target-set protocol of :mod:`recmeta.protocols`).

Models see the training part only. A top-N frame has the columns ``user``, ``item``, ``rank``
(1-based) and ``score``, depth 100 by default. **Tie rule**: score descending, then item id *as
text* descending — trec_eval's order and :mod:`recmeta.metrics`' — applied to the scores as
LensKit's item lists hold them (float32). Items a model cannot score (NaN, e.g. kNN without
neighbours) are not ranked; in :func:`score_candidates` they keep NaN.

Two engines give the same lists:

* ``"fast"``: for scorers whose scores for many users at once are one matrix product (MF
  embeddings, EASE, biases, popularity, recmeta's components) or one compiled pass (LensKit's
  item and user k-NN, :mod:`recmeta.recommenders.components.knn`), score a block of users at
  once, mask the excluded items and select the top N with the tie rule, all vectorised;
* ``"lenskit"``: LensKit's per-user pipeline via ``lenskit.batch``; its lists are re-ordered by
  the tie rule, but where a tie straddles the cut-off the items kept are LensKit's choice.

``engine="auto"`` takes the fast path when the scorer has one. The k-NN fast path adds one
rule of its own: where a user's ``max_nbrs``-th neighbour ties with others, it keeps the
neighbour with the smaller item (or user) number, where LensKit keeps whichever it met first;
this can change an explicit-feedback k-NN score, never an implicit one (see
:mod:`recmeta.recommenders.components.knn`). "Equal up to ties" covers both rules.

Scaling out with Ray. ``use_ray=True`` sends the blocks of users to a Ray cluster as tasks
(one CPU each, at most ``n_jobs`` in flight, default the cluster's CPU count): the trained
model goes to Ray's object store once, each worker fetches it once and runs the same block code
(fast path or LensKit's pipeline, as ``engine`` says), and the blocks come back in order to
this process, which caches them as usual (an interrupted run resumes). On one machine it only
adds overhead (``benchmarks/knn.py --ray`` measures it); it pays when the cluster has more
cores than this machine. How to run on several machines:

1. ``pip install "recmeta[ray]"`` on every machine, in the same Python version, with recmeta
   and its dependencies installed the same way (workers import ``recmeta.recommenders``);
2. token authentication (recent Ray releases turn it on by default): on the head machine
   ``ray get-auth-token --generate`` writes ``~/.ray/auth_token``; copy that file to the same
   place on every other machine (or set ``RAY_AUTH_TOKEN`` there), and ``export
   RAY_AUTH_MODE=token`` in every shell below, the driver's included;
3. on the head ``ray start --head --port=6379``; on each other machine
   ``ray start --address=HEAD_IP:6379``;
4. on the head (or any machine that can reach it), ``export RAY_ADDRESS=HEAD_IP:6379`` (or call
   ``ray.init(address=...)`` yourself), then ``runs.make(..., use_ray=True)`` or
   ``recmeta runs make ... --use-ray``; ``ray stop`` on each machine when done. Without a
   cluster, ``use_ray=True`` starts a local one for this process.

Candidate scoring (:func:`score_candidates`) sends its fast-path blocks the same way; with
``engine="lenskit"`` it uses LensKit's own Ray support (``lenskit.batch.score``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..arrays import has_duplicate_pairs
from ..metrics import text_order
from .components.random import RandomScorer, pair_uniform
from .training import RUN_COLUMNS, Candidates, Engine, Model, check_frame, fast_scorer

__all__ = ["top_n", "score_candidates", "rank_frame"]


# ----------------------------------------------------------------------------- ranking
def _text_key(ids: np.ndarray) -> np.ndarray:

    return text_order(ids)


def rank_frame(df: pd.DataFrame, depth: int | None = 100) -> pd.DataFrame:
    """Rank (user, item, score) rows within each user by the tie rule; keep ``depth`` per user.

    Rows with NaN score are dropped (not ranked). Returns user, item, rank, score.
    """
    check_frame(df, "the scored frame", ["user", "item", "score"])
    score = df["score"].to_numpy(dtype=np.float32)
    keep = ~np.isnan(score)
    df, score = df.loc[keep], score[keep]
    tkey = _text_key(pd.Index(df["item"].to_numpy()))  # ids need not be sorted
    users = df["user"].to_numpy()
    order = np.lexsort((-tkey, -score.astype(np.float64), users))
    u = users[order]
    start = np.r_[True, u[1:] != u[:-1]] if len(u) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(start, np.arange(len(u)), 0))
    rank = np.arange(len(u)) - first + 1
    out = pd.DataFrame(
        {
            "user": u,
            "item": df["item"].to_numpy()[order],
            "rank": rank.astype(np.int64),
            "score": score[order].astype(np.float64),
        }
    )
    return out if depth is None else out.loc[out["rank"] <= depth].reset_index(drop=True)


def _select(scores: np.ndarray, perm: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``depth`` columns per row by (score desc, text id desc); -inf = excluded.

    ``perm`` lists item columns by text id descending, so a stable sort keeps ties in that order.
    """
    s = scores[:, perm]
    n = s.shape[1]
    d = min(depth, n)
    if d < n:  # narrow to the columns that can be in the top d, ties at the cut included
        kth = -np.partition(-s, d - 1, axis=1)[:, d - 1 : d]
        cand = s >= kth
        width = int(cand.sum(axis=1).max())
        cols = np.argsort(~cand, axis=1, kind="stable")[:, :width]  # candidates, perm order
        sub = np.take_along_axis(s, cols, axis=1)
        sub[~np.take_along_axis(cand, cols, axis=1)] = -np.inf
        o = np.argsort(-sub, axis=1, kind="stable")[:, :d]
        pos = np.take_along_axis(cols, o, axis=1)
    else:
        pos = np.argsort(-s, axis=1, kind="stable")
    top = np.take_along_axis(s, pos, axis=1)
    return perm[pos], top


def _blocks(n: int, size: int) -> list[slice]:
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]


def _user_numbers(model: Model, users: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    vocab = model.data.users
    ids = np.asarray(vocab.ids() if users is None else pd.unique(pd.Series(users)))
    nums = np.asarray(vocab.numbers(ids, missing="negative"))
    if np.any(nums < 0):
        bad = ids[nums < 0][:3].tolist()
        raise ValueError(
            f"{int((nums < 0).sum())} users have no training data (e.g. {bad}); models see the "
            "training part only, so drop them or use a split that keeps every user in train"
        )
    return ids, nums


def _check_ray(use_ray: bool) -> None:
    if use_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise RuntimeError(
                "use_ray=True needs Ray: pip install 'recmeta[ray]' (or 'ray[default]'); for a "
                "cluster, see recmeta.recommenders; or leave use_ray off to run on this machine"
            ) from None


def _allowed_items(model: Model, candidates: Candidates, test: pd.DataFrame | None) -> np.ndarray:
    n_items = model.data.item_count
    if candidates == "all":
        return np.ones(n_items, dtype=bool)
    if candidates == "test":
        if test is None:
            raise ValueError("candidates='test' needs the test frame: top_n(..., test=split.test)")
        check_frame(test, "the test frame", ["user", "item"])
        nums = np.asarray(model.data.items.numbers(pd.unique(test["item"]), missing="negative"))
        ok = np.zeros(n_items, dtype=bool)
        ok[nums[nums >= 0]] = True
        return ok
    raise ValueError(f"candidates must be 'all' or 'test', got {candidates!r}")


def top_n(
    model: Model,
    users: ArrayLike | None = None,
    *,
    depth: int = 100,
    candidates: Candidates = "all",
    test: pd.DataFrame | None = None,
    engine: Engine = "auto",
    use_ray: bool = False,
    n_jobs: int | None = None,
    block: int = 256,
    on_block: Callable[[pd.DataFrame], None] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Top-``depth`` lists (user, item, rank, score) for ``users`` (default: all training users).

    ``candidates`` is ``"all"`` (AllItems) or ``"test"`` (TestItems, needs ``test``); the user's
    training items are never candidates. Users are processed in blocks of ``block``;
    ``on_block`` receives each block's frame as soon as it is done (the cache uses it to resume
    an interrupted run). ``use_ray`` runs the blocks as Ray tasks (see the module docstring);
    ``n_jobs`` is then the number of tasks in flight, otherwise LensKit's batch threads.
    """
    from tqdm import tqdm

    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    _check_ray(use_ray)
    ids, nums = _user_numbers(model, users)
    allowed = _allowed_items(model, candidates, test)
    f = None if engine == "lenskit" else fast_scorer(model)
    if engine == "fast" and f is None:
        raise ValueError(
            f"{model.name}: no fast path for {type(model.scorer).__name__}; "
            "use engine='auto' or 'lenskit'"
        )
    slices = _blocks(len(ids), block)
    if use_ray:
        fast = f is not None
        done = _on_ray(
            model, [("top", fast, ids[sl], nums[sl], allowed, depth) for sl in slices], n_jobs
        )
    else:
        done = (
            _fast_block(model, f, ids[sl], nums[sl], allowed, depth)
            if f is not None
            else _lenskit_block(model, ids[sl], allowed, depth, n_jobs)
            for sl in slices
        )
    parts = []
    bar = tqdm(total=len(ids), desc=model.name, unit="user", disable=progress is False or None)
    for sl, part in zip(slices, done, strict=True):
        if on_block is not None:
            on_block(part)
        parts.append(part)
        bar.update(sl.stop - sl.start)
    bar.close()
    return _concat(parts)


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        dtypes = ["int64"] * 3 + ["float64"]
        return pd.DataFrame(
            {c: pd.Series(dtype=t) for c, t in zip(RUN_COLUMNS, dtypes, strict=True)}
        )
    return pd.concat(parts, ignore_index=True)


def _fast_block(
    model: Model,
    f: Callable[[np.ndarray], np.ndarray],
    ids: np.ndarray,
    nums: np.ndarray,
    allowed: np.ndarray,
    depth: int,
) -> pd.DataFrame:
    scores = np.array(f(nums), dtype=np.float32)  # LensKit's precision
    scores[np.isnan(scores)] = -np.inf
    scores[:, ~allowed] = -np.inf
    ui = model.data.interactions().matrix().scipy(layout="csr")[nums]
    rows = np.repeat(np.arange(len(nums)), np.diff(ui.indptr))
    scores[rows, ui.indices] = -np.inf  # training items are never candidates
    item_ids = np.asarray(model.data.items.ids())
    perm = _perm(model, item_ids)
    cols, top = _select(scores, perm, depth)
    ok = np.isfinite(top)
    n = ok.sum(axis=1)
    return pd.DataFrame(
        {
            "user": np.repeat(ids, n),
            "item": item_ids[cols[ok]],
            "rank": (np.cumsum(ok, axis=1)[ok]).astype(np.int64),
            "score": top[ok].astype(np.float64),
        }
    )


def _perm(model: Model, item_ids: np.ndarray) -> np.ndarray:
    cache = model.__dict__.setdefault("_perm", None)
    if cache is None:
        cache = np.argsort(-_text_key(pd.Index(item_ids)), kind="stable")
        model.__dict__["_perm"] = cache
    return cache


def _lenskit_block(
    model: Model, ids: np.ndarray, allowed: np.ndarray, depth: int, n_jobs: int | None
) -> pd.DataFrame:
    import warnings

    from lenskit.batch import BatchPipelineRunner, InvocationSpec
    from lenskit.data import ItemList
    from lenskit.diagnostics import DataWarning

    if allowed.all():
        queries = list(ids)
    else:
        cand = np.asarray(model.data.items.ids())[allowed]
        queries = []
        for u in ids:  # this path is per user anyway: allowed items minus the user's history
            own = model.data.user_row(u).ids()
            queries.append(
                {"user_id": u, "candidates": ItemList(item_ids=cand[~np.isin(cand, own)])}
            )
    runner = BatchPipelineRunner(n_jobs=n_jobs, use_ray=False)
    runner.add_invocation(  # feed each request's candidates to the pipeline's ``items`` input
        InvocationSpec("recommend", {"recommender": "recommendations"}, "candidates", {"n": depth})
    )
    out = runner.run(model.pipeline, queries).output("recommendations")
    with warnings.catch_warnings():  # users the model cannot score get no list, as documented
        warnings.filterwarnings("ignore", "item list collection has empty lists", DataWarning)
        df = out.to_df()
    if len(df) == 0:
        return _concat([])
    df = df[["user_id", "item_id", "score"]].rename(columns={"user_id": "user", "item_id": "item"})
    return rank_frame(df, depth)


def score_candidates(
    model: Model,
    pairs: pd.DataFrame,
    *,
    engine: Engine = "auto",
    use_ray: bool = False,
    n_jobs: int | None = None,
    block: int = 256,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Scores (user, item, score) for exactly the given (user, item) pairs, in their order.

    Pairs the model cannot score (unknown item, no neighbours) get NaN; a user without training
    data raises. Scores are float32-rounded, as in the top-N lists.
    """
    from tqdm import tqdm

    check_frame(pairs, "the candidate pairs", ["user", "item"])
    if has_duplicate_pairs(pairs["user"], pairs["item"]):
        raise ValueError("candidate pairs repeat a (user, item); deduplicate them first")
    _check_ray(use_ray)
    ids, nums = _user_numbers(model, pairs["user"])
    f = None if engine == "lenskit" else fast_scorer(model)
    if engine == "fast" and f is None:
        raise ValueError(f"{model.name}: no fast path for {type(model.scorer).__name__}")
    out = np.full(len(pairs), np.nan, dtype=np.float32)

    if f is not None and isinstance(model.scorer, RandomScorer):  # scores any pair, even unseen
        out[:] = pair_uniform(
            model.scorer.config.seed, pairs["user"].to_numpy(), pairs["item"].to_numpy()
        )
    elif f is not None:
        row_of = pd.Series(np.arange(len(ids)), index=ids)
        prow = row_of.reindex(pairs["user"].to_numpy()).to_numpy()
        icol = np.asarray(model.data.items.numbers(pairs["item"].to_numpy(), missing="negative"))
        order = np.argsort(prow, kind="stable")
        bounds = np.searchsorted(prow[order], np.arange(0, len(ids) + block, block))
        slices = _blocks(len(ids), block)
        work = []
        for b, sl in enumerate(slices):
            sel = order[bounds[b] : bounds[b + 1]]
            sel = sel[icol[sel] >= 0]
            work.append((sel, nums[sl], prow[sel] - sl.start, icol[sel]))
        if use_ray:
            done = _on_ray(model, [("pairs", *w[1:]) for w in work], n_jobs)
        else:
            done = (_pair_scores(f, *w[1:]) for w in work)
        bar = tqdm(total=len(ids), desc=model.name, disable=progress is False or None)
        for (sel, *_), sl, got in zip(work, slices, done, strict=True):
            out[sel] = got
            bar.update(sl.stop - sl.start)
        bar.close()
    else:
        from lenskit.batch import score
        from lenskit.data import ItemListCollection

        ids_df = pairs[["user", "item"]].rename(columns={"user": "user_id", "item": "item_id"})
        ilc = ItemListCollection.from_df(ids_df, "user_id")
        got = score(model.pipeline, ilc, n_jobs=n_jobs, use_ray=use_ray).to_df()  # LensKit's Ray
        got = got.rename(columns={"user_id": "user", "item_id": "item"})
        merged = pairs[["user", "item"]].merge(
            got[["user", "item", "score"]], on=["user", "item"], how="left"
        )
        out = merged["score"].to_numpy(dtype=np.float32)
    return pd.DataFrame(
        {
            "user": pairs["user"].to_numpy(),
            "item": pairs["item"].to_numpy(),
            "score": out.astype(np.float64),
        }
    )


def _pair_scores(
    f: Callable[[np.ndarray], np.ndarray], nums: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Scores of the (row, column) cells of ``f(nums)``: one block of candidate pairs."""
    return np.asarray(f(nums), dtype=np.float32)[rows, cols]


# ----------------------------------------------------------------------------- Ray
_WORKER_MODELS: dict[str, tuple[Model, Any]] = {}


def _worker_model(refs: list) -> tuple[Model, Any]:
    """The model of ``refs[0]`` and its fast scorer, fetched once per Ray worker process."""
    import ray

    key = refs[0].hex()
    if key not in _WORKER_MODELS:
        _WORKER_MODELS.clear()  # one model at a time: a worker serves one run, then the next
        model = ray.get(refs[0])
        _WORKER_MODELS[key] = (model, fast_scorer(model))
    return _WORKER_MODELS[key]


def _ray_task(refs: list, task: tuple) -> Any:
    """One block of users, in a Ray worker: lists (``"top"``) or candidate scores (``"pairs"``)."""
    import numba
    import ray

    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
    # numba.config sets its options as module attributes at import: the stubs cannot see them
    n_threads = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(int(cpus), n_threads)))
    model, f = _worker_model(refs)
    if task[0] == "pairs":
        return _pair_scores(f, *task[1:])
    _, fast, ids, nums, allowed, depth = task
    if fast:
        return _fast_block(model, f, ids, nums, allowed, depth)
    return _lenskit_block(model, ids, allowed, depth, 1)


def _on_ray(model: Model, tasks: list[tuple], n_jobs: int | None) -> Iterator[Any]:
    """Results of ``tasks`` run as Ray tasks, yielded in order, at most ``n_jobs`` in flight.

    Connects to the cluster of ``RAY_ADDRESS`` or starts a local one if Ray is not initialised
    yet. The trained model goes to the object store once; each worker fetches it once.
    """
    from collections import deque

    import ray

    if not ray.is_initialized():
        ray.init()
    limit = n_jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1)(_ray_task)
    refs = [ray.put(model)]  # wrapped in a list: the task receives the reference, not a copy
    pending: deque = deque()
    for task in tasks:
        pending.append(remote.remote(refs, task))
        if len(pending) >= limit:
            yield ray.get(pending.popleft())
    while pending:
        yield ray.get(pending.popleft())
