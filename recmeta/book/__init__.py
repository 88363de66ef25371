"""The book as re-runnable experiments: chapter execution and profiles, and cost plans.

- :mod:`~recmeta.book.chapters`: a chapter's parameters, its profile (``full``, the book's
  default, or ``quick``), its execution with papermill and its rendered page;
- :mod:`~recmeta.book.costs`: what a chapter's expensive steps will cost on a dataset of a given
  size, from the growth fits of the scale benchmark (:mod:`~recmeta.book.cost_fits`, made by
  :mod:`~recmeta.book.fitting`).
"""

from __future__ import annotations

from . import chapters as chapters, costs as costs

__all__ = ["chapters", "costs"]
