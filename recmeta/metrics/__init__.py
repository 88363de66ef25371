"""The metric engine: judgments, runs, and every ranking metric of the book.

>>> from recmeta.metrics import Judgments, Runs, evaluate
>>> j = Judgments.from_frame(test, threshold=4)                       # doctest: +SKIP
>>> runs = Runs.from_frame(recs, j)                                   # doctest: +SKIP
>>> evaluate(j, runs, ["P@10", "nDCG@100", "RR"])                     # doctest: +SKIP

Metric names follow ir_measures (``P@10``, ``R@10``, ``F1@10``, ``AP@100``, ``nDCG@100``,
``RR``, ``ERR@20``, ``bpref@100``, ``infAP@100``, ``AUC``, ``muAP@k``, ``NDCNG@k``,
``SRecall(gamma=1)@10``, ``Rprec``, ``Success@k``, ``IPrec(recall=0.1)``, ``IPrec11``, the counts
``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``, and ``gm_`` for a geometric mean); see
:func:`known_metrics`. trec_eval's names are read too (``P_10``, ``ndcg_cut_10``,
``recip_rank``, ...; :func:`expand_trec_names` for ``P.5,10`` or ``official``), and so are
ir_measures' (``P(rel=2)@5``, ``RBP(p=0.8)``, ``Judged@10``): one registry
(:mod:`recmeta.metrics._registry`) holds every name. Where trec_eval has a metric, values equal
trec_eval's (tested against pytrec_eval), and :func:`trec_eval` evaluates a run as trec_eval
10.0 does — every measure of its ``all_trec``, its options and output layout, tested byte for
byte against the binary — or, with ``version="9.0.8"``, as 9.0.8 does. TREC files are read and
written here too (:func:`read_qrels`, :func:`read_run`, :func:`read_runs`, :func:`write_qrels`,
:func:`write_run`). Every metric at every cut-off comes from one compiled pass over the lists
(numba, cached on disk after the first compile).

Where papers and libraries read a metric differently the engine takes a named option —
``infap=`` (infAP's pool), ``gain=`` (nDCG's gain) and ``ties=`` (the order of tied items) — of
:func:`evaluate`, :func:`score_matrices` and :func:`score_matrix`; the definitions are in
:mod:`recmeta.metrics._options`, the defaults are trec_eval's readings. :class:`Subsets` scores
the same runs on many subsets of the judgments (incomplete test sets), one pass per subset.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._evaluate import GMEAN_FLOOR, aggregate, evaluate, pivot, score_matrices, score_matrix
    from ._judgments import Judgments, JudgmentsError
    from ._names import MetricNameError, MetricSpec, known_metrics, parse_metric
    from ._options import GAINS, INFAP, TIES, OptionError
    from ._registry import REGISTRY as MEASURES, Measure
    from ._runs import Runs, RunsError, text_order
    from ._single import score_rankings
    from ._subsets import Subsets
    from ._trec_eval import (
        TREC_EVAL_VERSION,
        TREC_EVAL_VERSIONS,
        TrecEvalError,
        TrecEvaluation,
        expand_trec_names,
        is_trec_name,
        trec_eval,
    )
    from ._trec_files import (
        TrecColumns,
        TrecFormatError,
        qrels_columns,
        qrels_frame,
        read_qrels,
        read_run,
        read_runs,
        run_columns,
        run_frame,
        write_qrels,
        write_run,
    )

#: public name -> the submodule that defines it, imported on first use (PEP 562): ``recmeta
#: evaluate`` reaches trec_eval's pass without loading pandas or numba (see ``_te_compiled``)
_HOME = {
    "GMEAN_FLOOR": "_evaluate",
    "aggregate": "_evaluate",
    "evaluate": "_evaluate",
    "pivot": "_evaluate",
    "score_matrices": "_evaluate",
    "score_matrix": "_evaluate",
    "Judgments": "_judgments",
    "JudgmentsError": "_judgments",
    "MetricNameError": "_names",
    "MetricSpec": "_names",
    "known_metrics": "_names",
    "parse_metric": "_names",
    "GAINS": "_options",
    "INFAP": "_options",
    "TIES": "_options",
    "OptionError": "_options",
    "Runs": "_runs",
    "RunsError": "_runs",
    "text_order": "_runs",
    "score_rankings": "_single",
    "Subsets": "_subsets",
    "TREC_EVAL_VERSION": "_trec_eval",
    "TREC_EVAL_VERSIONS": "_trec_eval",
    "TrecEvalError": "_trec_eval",
    "TrecEvaluation": "_trec_eval",
    "expand_trec_names": "_trec_eval",
    "is_trec_name": "_trec_eval",
    "trec_eval": "_trec_eval",
    "TrecColumns": "_trec_files",
    "TrecFormatError": "_trec_files",
    "qrels_columns": "_trec_files",
    "qrels_frame": "_trec_files",
    "read_qrels": "_trec_files",
    "read_run": "_trec_files",
    "read_runs": "_trec_files",
    "run_columns": "_trec_files",
    "run_frame": "_trec_files",
    "write_qrels": "_trec_files",
    "write_run": "_trec_files",
    "MEASURES": "_registry",
    "Measure": "_registry",
}


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{_HOME[name]}")
    value = getattr(module, "REGISTRY" if name == "MEASURES" else name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "read_qrels",
    "read_run",
    "read_runs",
    "qrels_frame",
    "qrels_columns",
    "run_columns",
    "TrecColumns",
    "run_frame",
    "MEASURES",
    "Measure",
    "text_order",
    "is_trec_name",
    "write_qrels",
    "write_run",
    "TrecFormatError",
    "Judgments",
    "JudgmentsError",
    "Runs",
    "RunsError",
    "MetricSpec",
    "MetricNameError",
    "OptionError",
    "INFAP",
    "GAINS",
    "TIES",
    "parse_metric",
    "known_metrics",
    "evaluate",
    "score_matrix",
    "score_matrices",
    "aggregate",
    "pivot",
    "score_rankings",
    "Subsets",
    "GMEAN_FLOOR",
    "trec_eval",
    "TrecEvaluation",
    "TrecEvalError",
    "expand_trec_names",
    "TREC_EVAL_VERSION",
    "TREC_EVAL_VERSIONS",
]
