r"""The named recommender systems of the book and their hyper-parameters, in one place.

Every chapter that needs "many real recommenders" takes its systems from :data:`ROSTER` by name.
A :class:`System` names a LensKit scoring component (by import path, so this module imports no
model code) and its configuration; :meth:`System.pipeline` wraps it in LensKit's
``topn_pipeline``. The configuration that keys the cache is the component's full configuration,
defaults included (:meth:`System.config_key`), so a change of any hyper-parameter makes new runs.

Choices worth knowing:

* ALS models and FlexMF use their trained user embeddings (``user_embeddings="prefer"``): in our
  runs a user's history is exactly their training data, so re-solving the embedding from it
  would only repeat training; it also makes the one-matrix-product path of
  :mod:`recmeta.recommenders` equal to LensKit's per-user path.
* FlexMF trains without ``torch.compile`` (:data:`TRAINING_ENVIRONMENT`): on ML-100K compiling
  costs far more than it saves. WARP gets 2 epochs only: its misranked-negative search makes an
  epoch cost about 50 s on ML-100K on two cores, more than the rest of the roster's training.
* Sizes are chosen so that the whole roster runs on ML-100K in a few minutes on two cores
  (``benchmarks/runs.py``); for larger data, raise them in a copy of the roster.
* ``kr-x`` is Krichene & Rendle's (2020, appendix) recommender X, iALS with d = 16, λ = 10,
  α = 0.2 in their loss :math:`\sum_{H} (\hat y - 1)^2 + \alpha \sum_{U \times I} \hat y^2 +
  \lambda \lVert V \rVert_F^2`. LensKit's ``ImplicitMFScorer`` minimises Hu et al.'s
  :math:`\sum_{U \times I} c_{ui} (p_{ui} - \hat y)^2 + r \lVert V \rVert_F^2` with
  :math:`c_{ui} = 1 + w` on observed pairs (1 elsewhere) and :math:`p_{ui} = 1` on them.
  Dividing their loss by α and completing the square on the observed pairs gives Hu's loss
  with :math:`w = 1/\alpha`, targets :math:`1/(1+\alpha)` and ridge λ/α; rescaling both factor
  matrices by :math:`\sqrt{1+\alpha}` turns the targets into 1 and the ridge into
  :math:`r = \lambda (1 + \alpha) / \alpha`. So X = ImplicitMF(d=16, w=5, r=60), whose scores
  are X's times 1 + α — the same rankings.
* ``kr-y`` and ``kr-z`` are their item-based CF Y (q = 3, no sparsification) and Z (q = 1,
  k' = 10), :mod:`recmeta.recommenders.components.itemcf`.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lenskit.pipeline import Pipeline

__all__ = ["System", "ROSTER", "TRAINING_ENVIRONMENT", "get", "names", "systems", "for_implicit"]

#: LensKit training environment used for every system (see the module docstring)
TRAINING_ENVIRONMENT: dict[str, str] = {"LK_TORCH_COMPILE": "0"}


@dataclass(frozen=True)
class System:
    """A named recommender: LensKit scoring component ``component`` ("module:Class") + config."""

    name: str
    component: str
    config: Mapping[str, Any] = field(default_factory=dict)
    family: str = ""
    description: str = ""
    needs_ratings: bool = False  # learns from rating values, so cannot train on implicit feedback

    def scorer(self) -> Any:
        """A fresh, untrained instance of the scoring component (its class is named at run
        time, so its type is not known statically)."""
        module, _, cls = self.component.partition(":")
        if not cls:
            raise ValueError(f"component {self.component!r} must read 'module:Class'")
        return getattr(importlib.import_module(module), cls)(**dict(self.config))

    def pipeline(self, n: int = 100) -> Pipeline:
        """LensKit top-N pipeline around a fresh scorer (candidates: training items not rated)."""
        from lenskit.pipeline import topn_pipeline

        return topn_pipeline(self.scorer(), n=n, name=self.name)

    def config_key(self) -> dict[str, Any]:
        """The full configuration (defaults included) that determines this system's output."""
        scorer = self.scorer()
        cfg = scorer.dump_config() if hasattr(scorer, "dump_config") else dict(self.config)
        return {"component": self.component, "config": json.loads(json.dumps(cfg, default=str))}


def _s(name: str, component: str, family: str, description: str, **config: Any) -> System:
    return System(name, component, config, family, description)


def _r(name: str, component: str, family: str, description: str, **config: Any) -> System:
    """A system that learns from rating values (explicit feedback)."""
    return System(name, component, config, family, description, needs_ratings=True)


_IKNN, _UKNN = "lenskit.knn:ItemKNNScorer", "lenskit.knn:UserKNNScorer"
_IMF, _FLEX = "lenskit.als:ImplicitMFScorer", "lenskit.flexmf:FlexMFImplicitScorer"
_PREFER = {"user_embeddings": "prefer"}

#: the roster, by name
ROSTER: dict[str, System] = {
    s.name: s
    for s in [
        _s(
            "random",
            "recmeta.recommenders.components.random:RandomScorer",
            "baseline",
            "random scores, a seeded hash of (user, item)",
            seed=0,
        ),
        _s(
            "pop",
            "lenskit.basic:PopScorer",
            "baseline",
            "most popular (training counts)",
            score="count",
        ),
        _r(
            "bias",
            "lenskit.basic:BiasScorer",
            "baseline",
            "global + item + user bias, damped",
            damping=5.0,
        ),
        _r(
            "iknn-20",
            _IKNN,
            "item-knn",
            "item kNN on mean-centred ratings, 20 neighbours",
            max_nbrs=20,
            feedback="explicit",
        ),
        _s(
            "iknn-imp-20",
            _IKNN,
            "item-knn",
            "item kNN on binary data, 20 neighbours",
            max_nbrs=20,
            feedback="implicit",
        ),
        _s(
            "iknn-imp-100",
            _IKNN,
            "item-knn",
            "item kNN on binary data, 100 neighbours",
            max_nbrs=100,
            feedback="implicit",
        ),
        _r(
            "uknn-30",
            _UKNN,
            "user-knn",
            "user kNN on mean-centred ratings, 30 neighbours",
            max_nbrs=30,
            feedback="explicit",
        ),
        _s(
            "uknn-imp-30",
            _UKNN,
            "user-knn",
            "user kNN on binary data, 30 neighbours",
            max_nbrs=30,
            feedback="implicit",
        ),
        _s(
            "uknn-imp-100",
            _UKNN,
            "user-knn",
            "user kNN on binary data, 100 neighbours",
            max_nbrs=100,
            feedback="implicit",
        ),
        _s(
            "kr-x",
            _IMF,
            "mf",
            "Krichene & Rendle's X: iALS d=16 (w=1/alpha, r=lambda(1+alpha)/alpha)",
            embedding_size=16,
            weight=5.0,
            regularization=60.0,
            epochs=10,
            **_PREFER,
        ),
        _s(
            "wrmf-50",
            _IMF,
            "mf",
            "implicit ALS (WRMF), 50 factors",
            embedding_size=50,
            weight=40.0,
            regularization=0.1,
            epochs=10,
            **_PREFER,
        ),
        _s(
            "wrmf-100",
            _IMF,
            "mf",
            "implicit ALS (WRMF), 100 factors",
            embedding_size=100,
            weight=40.0,
            regularization=0.1,
            epochs=10,
            **_PREFER,
        ),
        _r(
            "biasedmf-50",
            "lenskit.als:BiasedMFScorer",
            "mf",
            "biased MF by explicit ALS, 50 factors",
            embedding_size=50,
            regularization=0.1,
            damping=5.0,
            epochs=10,
            **_PREFER,
        ),
        _r(
            "funksvd-50",
            "lenskit.funksvd:FunkSVDScorer",
            "mf",
            "FunkSVD (SGD), 50 factors",
            embedding_size=50,
            epochs=100,
        ),
        _r(
            "biasedsvd-50",
            "lenskit.sklearn.svd:BiasedSVDScorer",
            "mf",
            "truncated SVD of bias-removed ratings (PureSVD-like), 50 factors",
            embedding_size=50,
            damping=5.0,
            # LensKit's defaults, named so that the run key changed when training began to
            # seed the randomized SVD (training._global_rng): runs cached before are not reused
            algorithm="randomized",
            n_iter=5,
        ),
        _s("ease-250", "lenskit.knn:EASEScorer", "linear", "EASE, L2 = 250", regularization=250.0),
        _s(
            "flexmf-bpr",
            _FLEX,
            "mf",
            "FlexMF, BPR pairwise loss, 50 factors",
            preset="bpr",
            embedding_size=50,
            epochs=10,
            batch_size=8192,
        ),
        _s(
            "flexmf-warp",
            _FLEX,
            "mf",
            "FlexMF, WARP loss, 50 factors, 2 epochs",
            preset="warp",
            embedding_size=50,
            epochs=2,
            batch_size=8192,
        ),
        _s(
            "flexmf-logistic",
            _FLEX,
            "mf",
            "FlexMF, logistic loss, 50 factors",
            loss="logistic",
            embedding_size=50,
            epochs=10,
            batch_size=8192,
            **_PREFER,
        ),
        _s(
            "plsa-50",
            "recmeta.recommenders.components.plsa:PLSAScorer",
            "latent",
            "pLSA (Hofmann 2004), 50 topics, 50 EM iterations",
            topics=50,
            iterations=50,
        ),
        _s(
            "kr-y",
            "recmeta.recommenders.components.itemcf:ItemCFScorer",
            "item-cf",
            "Krichene & Rendle's Y: cosine^3 item CF, no sparsification",
            q=3.0,
        ),
        _s(
            "kr-z",
            "recmeta.recommenders.components.itemcf:ItemCFScorer",
            "item-cf",
            "Krichene & Rendle's Z: cosine item CF, 10 neighbours per item",
            q=1.0,
            k_prime=10,
        ),
    ]
}


def names() -> list[str]:
    """Names of the roster's systems, in roster order."""
    return list(ROSTER)


def get(name: str) -> System:
    """The system called ``name``; unknown names raise, listing the known ones."""
    try:
        return ROSTER[name]
    except KeyError:
        raise KeyError(f"unknown system {name!r}; the roster has: {', '.join(ROSTER)}") from None


def systems(spec: str | Sequence[str] | None = None) -> list[System]:
    """Systems from a comma-separated string or list of names (all of them for ``None``/"all")."""
    if spec is None or spec == "all":
        return list(ROSTER.values())
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    out = [get(p.strip()) for p in parts if p.strip()]
    if not out:
        raise ValueError("no system named; give names from recmeta.recommenders.roster.names()")
    return out


def for_implicit(spec: str | Sequence[str] | None, implicit: bool) -> tuple[list[str], list[str]]:
    """Names of ``spec`` that can train on the data, and those left out because they need ratings.

    With explicit ratings every system is kept; with implicit feedback the systems that learn
    from rating values (:attr:`System.needs_ratings`) are left out.
    """
    chosen = [s.name for s in systems(spec)]
    if not implicit:
        return chosen, []
    return (
        [n for n in chosen if not ROSTER[n].needs_ratings],
        [n for n in chosen if ROSTER[n].needs_ratings],
    )
