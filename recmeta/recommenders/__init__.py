r"""Recommenders: the roster of systems, training, their recommendation lists and the list cache.

- :mod:`~recmeta.recommenders.roster`: the named systems the chapters run (LensKit pipelines);
- :mod:`~recmeta.recommenders.training`: :func:`train` a system on a training frame, and the
  vectorised scorers of the fast path;
- :mod:`~recmeta.recommenders.lists`: top-N lists (:func:`top_n`) and candidate scores
  (:func:`score_candidates`) under the protocols of Bellogín et al. (2017), with one tie rule, on
  this process or a Ray cluster;
- :mod:`~recmeta.recommenders.cached`: :func:`make`, a system's lists for a split read from or
  written to the list cache (:mod:`~recmeta.recommenders.cache`), and :func:`make_runs`, the
  metric engine's arrays of several systems;
- :mod:`~recmeta.recommenders.ahead`: :func:`make_ahead`, the runs a chapter is about to read,
  made several at a time in worker processes;
- :mod:`~recmeta.recommenders.components`: recmeta's own LensKit components (k-NN block path,
  pLSA, item CF, random).

A *run* in trec_eval's sense is one system's ranked lists over all users; here the frame of
those lists is a *list frame* (columns ``user, item, rank, score``), and the metric engine's
array form is :class:`recmeta.metrics.Runs`.
"""

from __future__ import annotations

from . import cache, roster
from .ahead import Task, make_ahead, train_jobs
from .cached import RUN_COUNTS, make, make_runs
from .lists import rank_frame, score_candidates, top_n
from .training import RUN_COLUMNS, Candidates, Engine, Model, fast_scorer, train

__all__ = [
    "cache",
    "roster",
    "make",
    "make_runs",
    "make_ahead",
    "Task",
    "train_jobs",
    "RUN_COUNTS",
    "train",
    "Model",
    "fast_scorer",
    "top_n",
    "score_candidates",
    "rank_frame",
    "RUN_COLUMNS",
    "Candidates",
    "Engine",
]
