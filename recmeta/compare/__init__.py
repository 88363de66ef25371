"""Compare your own recommenders: the five papers of the book as one workflow.

From LensKit's ``batch.recommend`` output to a report, in five lines::

    from lenskit import batch
    from recmeta.compare import compare

    recs = {name: batch.recommend(pipe, test_users, n=100) for name, pipe in pipelines.items()}
    report = compare(recs, test, ["nDCG@10", "RR"], threshold=4, train=train)
    report.plot(); print(report.to_markdown())

:func:`compare` scores every system with the metric engine (:mod:`recmeta.metrics`), sets the
expected value of a random ranking and the value of the popularity ranking beside them
(:mod:`.references`), tests every pair of systems (permutation, t, Wilcoxon, Holm and
Benjamini–Hochberg corrections, randomised Tukey HSD), gives effect sizes with t and bootstrap
intervals and the number of users needed to detect a difference (:mod:`.stats`), and corrects
sampled metrics (:mod:`.sampled`). :func:`compare_trec` does the same from TREC run and qrels
files; ``recmeta compare`` is its command line.

The modules: :mod:`.workflow` (:func:`compare`, :func:`compare_trec`), :mod:`.inputs` (LensKit
objects, frames and files read as the engine's judgments and runs), :mod:`.report` (the
:class:`Comparison` and its tables), :mod:`~recmeta.compare.figures` and
:mod:`~recmeta.compare.formatting` (its plots, Markdown and LaTeX), :mod:`.references`,
:mod:`.stats`, :mod:`.sampled`; and for the chapter "Your own experiment",
:mod:`.experiment` (its settings and steps) and :mod:`.text` (its sentences), imported by
name (they load LensKit's pipelines).
"""

from .inputs import item_lists
from .references import popularity_runs, random_runs, reference_values
from .report import Comparison
from .sampled import Sampling
from .stats import (
    ADJUSTMENTS,
    adjust,
    compact_letters,
    detectable_difference,
    difference_intervals,
    mean_intervals,
    pooled_difference_sd,
    smd_interval,
    tukey_hsd,
    users_needed,
)
from .workflow import P_VALUES, compare, compare_trec

__all__ = [
    "compare",
    "compare_trec",
    "Comparison",
    "Sampling",
    "item_lists",
    "P_VALUES",
    "ADJUSTMENTS",
    "adjust",
    "mean_intervals",
    "difference_intervals",
    "smd_interval",
    "tukey_hsd",
    "compact_letters",
    "pooled_difference_sd",
    "users_needed",
    "detectable_difference",
    "random_runs",
    "popularity_runs",
    "reference_values",
]
