"""Training a system on one training frame, and the vectorised scorers of the fast path.

A :class:`Model` is a LensKit pipeline trained on a frame; :func:`fast_scorer` gives, where the
scorer allows, one function scoring a block of users at once (a matrix product or one compiled
pass), which :mod:`recmeta.recommenders.lists` ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..data import to_lenskit
from .components.knn import knn_scorer
from .components.random import pair_uniform
from .roster import TRAINING_ENVIRONMENT, System

__all__ = ["Model", "train", "check_frame", "fast_scorer", "Candidates", "Engine", "RUN_COLUMNS"]


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
    def scorer(self) -> Any:
        """The pipeline's trained scoring component (of the class the system names)."""
        return self.pipeline.component("scorer")


def check_frame(df: pd.DataFrame, what: str, cols: Iterable[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; it has {list(df.columns)}")


def train(system: System | Any, train_df: pd.DataFrame, *, seed: int = 0, n: int = 100) -> Model:
    """Train ``system`` (a roster :class:`System` or a LensKit pipeline) on ``train_df``."""
    from lenskit.training import TrainingOptions

    check_frame(train_df, "the training frame", ["user", "item"])
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
    with _global_rng(seed):
        pipe.train(data, TrainingOptions(rng=seed, environment=dict(TRAINING_ENVIRONMENT)))
    return Model(name, pipe, data, train_df)


@contextmanager
def _global_rng(seed: int) -> Iterator[None]:
    """numpy's legacy global generator seeded with ``seed`` while a model trains, then restored.

    A component that draws from it (LensKit's BiasedSVD leaves scikit-learn's TruncatedSVD
    without a ``random_state``) would otherwise train differently with whatever ran before it
    in the process, so that two builds of the book disagree; seeded, a run depends on its seed
    alone, and the caller's generator is left as it was."""
    state = np.random.get_state()
    np.random.seed(int(seed) % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


# ----------------------------------------------------------------------------- fast scoring
def _float(a: Any) -> np.ndarray:
    import torch

    if isinstance(a, torch.Tensor):
        a = a.detach().cpu().numpy()
    return np.asarray(a, dtype=np.float64)


def _bias_terms(bias: Any, users: np.ndarray) -> np.ndarray:
    """global + item bias + user bias of LensKit's ``BiasModel`` (users × items)."""
    n_items = len(bias.items) if bias.items is not None else 0
    item = _float(bias.item_biases) if bias.item_biases is not None else np.zeros(n_items)
    user = _float(bias.user_biases)[users] if bias.user_biases is not None else np.zeros(len(users))
    return bias.global_bias + item[None, :] + user[:, None]


def fast_scorer(model: Model) -> Callable[[np.ndarray], np.ndarray] | None:
    """``f(user_numbers) -> scores (users × items)`` equal to the scorer's own, or ``None``.

    Covered: recmeta's components, popularity, bias, ImplicitMF/BiasedMF with trained user
    embeddings, FunkSVD, BiasedSVD, EASE, FlexMF with trained user embeddings, and LensKit's
    item and user k-NN (:mod:`recmeta.recommenders.components.knn`; item k-NN only while its dense
    matrices fit :func:`recmeta.recommenders.components.knn.dense_cap`).
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
        return knn_scorer(s, model.data)
    return None


def _rand(seed: int, users: np.ndarray, items: np.ndarray) -> np.ndarray:

    return pair_uniform(seed, users[:, None], items[None, :])


def _dense(a: Any) -> np.ndarray:
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def _flexmf(s: Any) -> Callable[[np.ndarray], np.ndarray]:
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
