r"""Recommender runs for a split: top-N lists and candidate scores, from trained LensKit pipelines.

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
  item and user k-NN, :mod:`recmeta.components.knn`), score a block of users at once, mask the
  excluded items and select the top N with the tie rule, all vectorised;
* ``"lenskit"``: LensKit's per-user pipeline via ``lenskit.batch``; its lists are re-ordered by
  the tie rule, but where a tie straddles the cut-off the items kept are LensKit's choice.

``engine="auto"`` takes the fast path when the scorer has one. The k-NN fast path adds one
rule of its own: where a user's ``max_nbrs``-th neighbour ties with others, it keeps the
neighbour with the smaller item (or user) number, where LensKit keeps whichever it met first;
this can change an explicit-feedback k-NN score, never an implicit one (see
:mod:`recmeta.components.knn`). "Equal up to ties" covers both rules.

Scaling out with Ray. ``use_ray=True`` sends the blocks of users to a Ray cluster as tasks
(one CPU each, at most ``n_jobs`` in flight, default the cluster's CPU count): the trained
model goes to Ray's object store once, each worker fetches it once and runs the same block code
(fast path or LensKit's pipeline, as ``engine`` says), and the blocks come back in order to
this process, which caches them as usual (an interrupted run resumes). On one machine it only
adds overhead (``benchmarks/knn.py --ray`` measures it); it pays when the cluster has more
cores than this machine. How to run on several machines:

1. ``pip install "recmeta[ray]"`` on every machine, in the same Python version, with recmeta
   and its dependencies installed the same way (workers import ``recmeta.runs``);
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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .roster import TRAINING_ENVIRONMENT, System

__all__ = [
    "make",
    "make_runs",
    "Model",
    "train",
    "fast_scorer",
    "top_n",
    "score_candidates",
    "rank_frame",
    "Candidates",
    "Engine",
]

#: how many runs :func:`make` read from the cache and how many it made, in this process
RUN_COUNTS: dict[str, int] = {"cached": 0, "made": 0}

Candidates = Literal["all", "test"]
Engine = Literal["auto", "fast", "lenskit"]
RUN_COLUMNS = ["user", "item", "rank", "score"]


@dataclass
class Model:
    """A system trained on one training frame."""

    name: str
    pipeline: Any  # lenskit.pipeline.Pipeline
    data: Any  # lenskit.data.Dataset of the training frame
    train: pd.DataFrame

    @property
    def scorer(self):
        return self.pipeline.component("scorer")


def _check_frame(df: pd.DataFrame, what: str, cols: Iterable[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; it has {list(df.columns)}")


def train(system: System | Any, train_df: pd.DataFrame, *, seed: int = 0, n: int = 100) -> Model:
    """Train ``system`` (a roster :class:`System` or a LensKit pipeline) on ``train_df``."""
    from lenskit.training import TrainingOptions

    from .data import to_lenskit

    _check_frame(train_df, "the training frame", ["user", "item"])
    if len(train_df) == 0:
        raise ValueError("the training frame is empty")
    if isinstance(system, System) and system.needs_ratings and "rating" not in train_df.columns:
        raise ValueError(
            f"system {system.name!r} learns from rating values and the training frame has none "
            "(implicit feedback); choose systems with roster.for_implicit(names, True)."
        )
    data = to_lenskit(train_df)
    if isinstance(system, System):
        pipe, name = system.pipeline(n=n), system.name
    else:
        pipe, name = system, getattr(system, "name", None) or "pipeline"
    pipe.train(data, TrainingOptions(rng=seed, environment=dict(TRAINING_ENVIRONMENT)))
    return Model(name, pipe, data, train_df)


# ----------------------------------------------------------------------------- fast scoring
def _float(a) -> np.ndarray:
    import torch

    if isinstance(a, torch.Tensor):
        a = a.detach().cpu().numpy()
    return np.asarray(a, dtype=np.float64)


def _bias_terms(bias, users: np.ndarray) -> np.ndarray:
    """global + item bias + user bias of LensKit's ``BiasModel`` (users × items)."""
    n_items = len(bias.items) if bias.items is not None else 0
    item = _float(bias.item_biases) if bias.item_biases is not None else np.zeros(n_items)
    user = _float(bias.user_biases)[users] if bias.user_biases is not None else np.zeros(len(users))
    return bias.global_bias + item[None, :] + user[:, None]


def fast_scorer(model: Model) -> Callable[[np.ndarray], np.ndarray] | None:
    """``f(user_numbers) -> scores (users × items)`` equal to the scorer's own, or ``None``.

    Covered: recmeta's components, popularity, bias, ImplicitMF/BiasedMF with trained user
    embeddings, FunkSVD, BiasedSVD, EASE, FlexMF with trained user embeddings, and LensKit's
    item and user k-NN (:mod:`recmeta.components.knn`; item k-NN only while its dense
    matrices fit :func:`recmeta.components.knn.dense_cap`).
    """
    s = model.scorer
    if s is None:
        return None
    # dispatch on class names along the MRO: no need to import every LensKit model family
    is_a = {c.__name__ for c in type(s).__mro__ if c.__module__.startswith(("lenskit", "recmeta"))}
    if "RandomScorer" in is_a:
        u_ids, i_ids = model.data.users.ids(), model.data.items.ids()
        return lambda u: _rand(s.config.seed, u_ids[u], i_ids)
    if hasattr(s, "score_matrix"):
        return s.score_matrix
    if "PopScorer" in is_a:
        row = _float(s.item_scores)
        return lambda u: np.broadcast_to(row, (len(u), len(row))).copy()
    if "BiasScorer" in is_a:
        return lambda u: _bias_terms(s.model, u)
    if is_a & {"ImplicitMFScorer", "BiasedMFScorer"}:
        if s.config.user_embeddings != "prefer" or s.user_embeddings is None:
            return None
        U, V = s.user_embeddings, s.item_embeddings
        if "BiasedMFScorer" in is_a:
            return lambda u: (U[u] @ V.T).astype(np.float64) + _bias_terms(s.bias, u)
        return lambda u: U[u] @ V.T
    if "FunkSVDScorer" in is_a:
        U, V = s.user_embeddings, s.item_embeddings
        return lambda u: U[u] @ V.T + _bias_terms(s.bias, u)
    if "BiasedSVDScorer" in is_a:
        return lambda u: (
            s.factorization.inverse_transform(s.user_components[u]) + _bias_terms(s.bias, u)
        )
    if "EASEScorer" in is_a:
        ui = model.data.interactions().matrix().scipy(layout="csr")
        W = s.weights
        return lambda u: _dense(sp.csr_array(ui[u], dtype=np.float32) @ W)
    if is_a & {"FlexMFImplicitScorer", "FlexMFExplicitScorer"}:
        if "FlexMFImplicitScorer" in is_a and s.config.user_embeddings != "prefer":
            return None
        return _flexmf(s)
    if is_a & {"ItemKNNScorer", "UserKNNScorer"}:
        from .components.knn import knn_scorer

        return knn_scorer(s, model.data)
    return None


def _rand(seed: int, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    from .components.random import pair_uniform

    return pair_uniform(seed, users[:, None], items[None, :])


def _dense(a) -> np.ndarray:
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def _flexmf(s) -> Callable[[np.ndarray], np.ndarray]:
    """FlexMF's forward pass (bias + inner product, convolution layers pooled) as one product."""
    import torch

    mdl = s.model
    with torch.inference_mode():
        if mdl.u_layers is not None:
            U = mdl.u_layers.sum(0) * mdl._layer_scale
            V = mdl.i_layers.sum(0) * mdl._layer_scale
        else:
            U, V = mdl.u_embed.weight, mdl.i_embed.weight
        U, V = U.detach().cpu().numpy(), V.detach().cpu().numpy()
        ub = mdl.u_bias.weight.detach().cpu().numpy().ravel() if mdl.u_bias is not None else None
        ib = mdl.i_bias.weight.detach().cpu().numpy().ravel() if mdl.i_bias is not None else None
    shift = float(getattr(s, "global_bias", 0.0) or 0.0)

    def score(u: np.ndarray) -> np.ndarray:
        out = (U[u] @ V.T).astype(np.float64) + shift
        if ub is not None:
            out += ub[u][:, None]
        if ib is not None:
            out += ib[None, :]
        return out

    return score


# ----------------------------------------------------------------------------- ranking
def _text_key(ids: np.ndarray) -> np.ndarray:
    from .metrics._runs import text_order

    return text_order(ids)


def rank_frame(df: pd.DataFrame, depth: int | None = 100) -> pd.DataFrame:
    """Rank (user, item, score) rows within each user by the tie rule; keep ``depth`` per user.

    Rows with NaN score are dropped (not ranked). Returns user, item, rank, score.
    """
    _check_frame(df, "the scored frame", ["user", "item", "score"])
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


def _user_numbers(model: Model, users) -> tuple[np.ndarray, np.ndarray]:
    vocab = model.data.users
    if users is None:
        ids = np.asarray(vocab.ids())
    else:
        ids = np.asarray(pd.unique(pd.Series(users)))
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
                "cluster, see recmeta.runs; or leave use_ray off to run on this machine"
            ) from None


def _allowed_items(model: Model, candidates: Candidates, test: pd.DataFrame | None) -> np.ndarray:
    n_items = model.data.item_count
    if candidates == "all":
        return np.ones(n_items, dtype=bool)
    if candidates == "test":
        if test is None:
            raise ValueError("candidates='test' needs the test frame: top_n(..., test=split.test)")
        _check_frame(test, "the test frame", ["user", "item"])
        nums = np.asarray(model.data.items.numbers(pd.unique(test["item"]), missing="negative"))
        ok = np.zeros(n_items, dtype=bool)
        ok[nums[nums >= 0]] = True
        return ok
    raise ValueError(f"candidates must be 'all' or 'test', got {candidates!r}")


def top_n(
    model: Model,
    users=None,
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
        done = _on_ray(model, [("top", fast, ids[sl], nums[sl], allowed, depth) for sl in slices],
                       n_jobs)
    else:
        done = (
            _fast_block(model, f, ids[sl], nums[sl], allowed, depth) if f is not None
            else _lenskit_block(model, ids[sl], allowed, depth, n_jobs)
            for sl in slices
        )
    parts = []
    bar = tqdm(total=len(ids), desc=model.name, unit="user", disable=progress is False or None)
    for sl, part in zip(slices, done):
        if on_block is not None:
            on_block(part)
        parts.append(part)
        bar.update(sl.stop - sl.start)
    bar.close()
    return _concat(parts)


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(RUN_COLUMNS, ["int64"] * 3 + ["float64"])})
    return pd.concat(parts, ignore_index=True)


def _fast_block(model, f, ids, nums, allowed, depth) -> pd.DataFrame:
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


def _lenskit_block(model, ids, allowed, depth, n_jobs) -> pd.DataFrame:
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
            queries.append({"user_id": u, "candidates": ItemList(item_ids=cand[~np.isin(cand, own)])})
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

    _check_frame(pairs, "the candidate pairs", ["user", "item"])
    if pairs.duplicated(["user", "item"]).any():
        raise ValueError("candidate pairs repeat a (user, item); deduplicate them first")
    _check_ray(use_ray)
    ids, nums = _user_numbers(model, pairs["user"])
    f = None if engine == "lenskit" else fast_scorer(model)
    if engine == "fast" and f is None:
        raise ValueError(f"{model.name}: no fast path for {type(model.scorer).__name__}")
    out = np.full(len(pairs), np.nan, dtype=np.float32)
    from .components.random import RandomScorer, pair_uniform

    if f is not None and isinstance(model.scorer, RandomScorer):  # scores any pair, even unseen
        out[:] = pair_uniform(model.scorer.config.seed, pairs["user"].to_numpy(), pairs["item"].to_numpy())
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
        for (sel, *_), sl, got in zip(work, slices, done):
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
        {"user": pairs["user"].to_numpy(), "item": pairs["item"].to_numpy(),
         "score": out.astype(np.float64)}
    )


def _pair_scores(f, nums, rows, cols) -> np.ndarray:
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
    numba.set_num_threads(max(1, min(int(cpus), numba.config.NUMBA_NUM_THREADS)))
    model, f = _worker_model(refs)
    if task[0] == "pairs":
        return _pair_scores(f, *task[1:])
    _, fast, ids, nums, allowed, depth = task
    if fast:
        return _fast_block(model, f, ids, nums, allowed, depth)
    return _lenskit_block(model, ids, allowed, depth, 1)


def _on_ray(model: Model, tasks: list[tuple], n_jobs: int | None):
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
    root=None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Runs of several systems on one split, from the cache where present, else made and cached.

    ``dataset``, ``split`` and ``seed`` name the split in the cache key (with a fingerprint of
    the frames, so two different frames never share an entry). Without ``pairs``: top-``depth``
    lists over ``candidates`` (``"test"`` needs ``test``); with ``pairs`` (user, item): candidate
    scores. Returns one frame with a ``system`` column first. A run interrupted part-way resumes
    at its first unfinished block of users (the model is trained again with the same seed).
    """
    from . import cache

    if pairs is not None:
        _check_frame(pairs, "the candidate pairs", ["user", "item"])
        kind, frames = "candidates", (train_df, pairs)
    else:
        kind = f"top-{candidates}-{depth}"
        frames = (train_df, test if candidates == "test" else None)
    fp = cache.fingerprint(*frames)
    out = []
    for system in systems:
        key = cache.RunKey(dataset, split, seed, system.name, system.config_key(), kind, fp)
        path = key.path(root)
        if path.exists():
            df = cache.read_frame(path)
            RUN_COUNTS["cached"] += 1
        else:
            with cache.lock(path):  # another process may be making the same run
                if path.exists():
                    df = cache.read_frame(path)
                    RUN_COUNTS["cached"] += 1
                else:
                    df = _make_one(system, train_df, key, path, seed=seed, depth=depth,
                                   candidates=candidates, test=test, pairs=pairs, engine=engine,
                                   use_ray=use_ray, n_jobs=n_jobs, block=block, progress=progress)
                    RUN_COUNTS["made"] += 1
        out.append(df.assign(system=system.name))
    if not out:
        return pd.DataFrame(columns=["system", *RUN_COLUMNS])
    res = pd.concat(out, ignore_index=True)
    return res[["system", *[c for c in res.columns if c != "system"]]]


def make_runs(systems: Iterable[System], train_df: pd.DataFrame, judgments, *, ties: str = "trec_eval",
              **make_options):
    """The top-N runs of :func:`make`, as the metric engine's ``Runs`` for ``judgments``.

    Each system's frame is read (or made), turned into arrays and dropped before the next one
    (:meth:`recmeta.metrics.Runs.concat`): memory holds one system's frame at a time, where one
    frame of every system, as :func:`make` returns it, takes about 290 bytes per ranked position
    with the conversion's work arrays (``benchmarks/scale.md``). The result equals
    ``Runs.from_frame(make(systems, train_df, **make_options), judgments, ties=ties)``;
    ``make_options`` are :func:`make`'s keywords (``dataset`` and ``split`` are required;
    candidate scores, ``pairs=``, are not lists and are refused).
    """
    from .metrics import Runs

    if make_options.get("pairs") is not None:
        raise ValueError("make_runs builds ranked lists; for candidate scores (pairs=) use make")
    parts = []
    for system in systems:
        frame = make([system], train_df, **make_options)
        parts.append(Runs.from_frame(frame, judgments, ties=ties))
        del frame
    return Runs.concat(parts)


def _make_one(system, train_df, key, path, *, seed, depth, candidates, test, pairs, engine,
              use_ray, n_jobs, block, progress) -> pd.DataFrame:
    from . import cache

    model = train(system, train_df, seed=seed, n=depth)
    if pairs is not None:
        df = score_candidates(model, pairs, engine=engine, use_ray=use_ray, n_jobs=n_jobs,
                              block=block, progress=progress)
        cache.write_frame(df, path, key)
        return df
    return _resumable_top_n(model, key, path, depth=depth, candidates=candidates, test=test,
                            engine=engine, use_ray=use_ray, n_jobs=n_jobs, block=block,
                            progress=progress)


def _resumable_top_n(model: Model, key, path, **kw) -> pd.DataFrame:
    from .cache import Parts

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
