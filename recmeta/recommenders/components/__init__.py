"""LensKit components for models the papers use and LensKit lacks.

* :mod:`recmeta.recommenders.components.itemcf` — the item-based CF of Krichene & Rendle
  (2020, appendix, eqs. 27–30), their recommenders Y and Z.
* :mod:`recmeta.recommenders.components.plsa` — probabilistic latent semantic analysis
  (Hofmann 2004), the strongest system in Bellogín et al. (2017).
* :mod:`recmeta.recommenders.components.random` — a seeded random scorer whose score for a
  (user, item) pair does not depend on which other items are scored.
* :mod:`recmeta.recommenders.components.knn` — block scoring for LensKit's own item and user
  k-NN scorers (not a component: the fast path :mod:`recmeta.recommenders` takes for those two
  families).

The first three are LensKit components (``train(data, options)`` and ``__call__(query,
items)``), so each drops into ``lenskit.pipeline.topn_pipeline``; each also has
``score_matrix(users)``, the scores of every training item for many users at once, used by
:mod:`recmeta.recommenders`.
Import the submodules directly; this package imports nothing eagerly.
"""
