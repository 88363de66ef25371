"""trec_eval's measures, options and output, computed by the metric engine.

This is what ``recmeta evaluate QRELS RUN`` runs. It follows trec_eval 9.0.8, the release
pytrec_eval (package pytrec-eval-terrier) is built on, in everything its output shows:

* **Names.** ``-m`` takes trec_eval's measure names (``P``, ``P.5,10``, ``ndcg_cut.10``,
  ``iprec_at_recall``, ``official``, ``all_trec`` ...), the names of single values (``P_10``,
  ``success_1``, ``iprec_at_recall_0.10``) and this engine's names (``nDCG(gain=exp)@10``,
  printed as given). As in trec_eval, a measure's cut-offs come from the first ``-m NAME.params``
  that names it (later ones are ignored, and reported), else from its defaults; ``P_10``-style
  names add cut-offs. A trec_eval measure this engine lacks is refused by name; a nickname
  (``all_trec``, ``set``) prints the measures it has and reports the others
  (:data:`NOT_IMPLEMENTED`).
* **Topics.** Topics are evaluated when they have both judgments and results, in the order of
  their ids as byte strings (trec_eval sorts both files by qid); a topic without a relevant
  document is evaluated too (most measures give 0). ``complete`` (``-c``) divides the averages by
  the number of topics in the judgments instead, a missing topic adding 0 (and log 1e-5 to the
  geometric means); ``num_q`` is then that number and ``num_rel`` the number of judgment lines
  with a grade > 0 over all topics — 9.0.8's ``m_num_rel.c`` ignores ``-l`` there.
* **Documents.** Results are ordered by score, ties by docno as text, descending
  (``form_res_rels.c``); ``max_ret`` (``-M``) keeps the first N; then ``judged_only`` (``-J``)
  drops the documents without a grade >= 0. Grades are read as trec_eval reads them: truncated
  to integers (``atol``), a negative grade being in the pool but not judged.
* **Layout.** ``%-22s\\t%s\\t%6.4f`` per line (``%ld`` for the counts, the run tag for
  ``runid``), per topic when asked (``-q``), then the summary with ``all`` as the topic; measures
  in trec_eval's own order (``measures.c``), whatever the order of ``-m``. A topic with no
  retrieved document left (``-J``) has interpolated precision 0/0 at recall levels that need no
  relevant document, printed ``-nan`` as C prints it.

Newer trec_eval (10.0 release candidates) differ: ``-c`` also prints the missing topics and
interpolated precision rounds the level with ``lround``. A topic whose grades are all negative
makes 9.0.8 read outside its arrays (``m_ndcg_cut.c`` starts at ``rel_levels[-1]``; pytrec_eval
can crash on it); here nothing in it is relevant and its measures are 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._evaluate import GMEAN_FLOOR, score_matrices
from ._judgments import Judgments
from ._names import SUMMED, MetricNameError, MetricSpec, parse_metric
from ._runs import Runs

__all__ = ["TREC_EVAL_VERSION", "TrecEvalError", "TrecEvaluation", "trec_eval", "trec_rows",
           "expand_trec_names", "NICKNAMES", "NOT_IMPLEMENTED", "is_trec_name"]

TREC_EVAL_VERSION = "9.0.8"
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class TrecEvalError(ValueError):
    """A request or input trec_eval would refuse, or a measure this engine lacks."""


@dataclass(frozen=True)
class _Measure:
    """One of trec_eval's measures: how it prints and which engine metric computes it."""

    name: str
    kind: str | None  # cutoffs | levels | avg | float | count | gm | num_q | runid; None: lacking
    engine: str | None = None
    defaults: tuple = ()


# te_trec_measures[] of trec_eval 9.0.8 (measures.c): the order of the output lines
_MEASURES = (
    _Measure("runid", "runid"),
    _Measure("num_q", "num_q", "NumQ"),
    _Measure("num_ret", "count", "NumRet"),
    _Measure("num_rel", "count", "NumRel"),
    _Measure("num_rel_ret", "count", "NumRelRet"),
    _Measure("map", "float", "AP"),
    _Measure("gm_map", "gm", "AP"),
    _Measure("Rprec", "float", "Rprec"),
    _Measure("bpref", "float", "bpref"),
    _Measure("recip_rank", "float", "RR"),
    _Measure("iprec_at_recall", "levels", "IPrec", _LEVELS),
    _Measure("P", "cutoffs", "P", _CUTS),
    _Measure("relstring", None),
    _Measure("recall", "cutoffs", "R", _CUTS),
    _Measure("infAP", "float", "infAP"),
    _Measure("gm_bpref", "gm", "bpref"),
    _Measure("Rprec_mult", None),
    _Measure("utility", None),
    _Measure("11pt_avg", "avg", "IPrec", _LEVELS),
    _Measure("binG", None),
    _Measure("G", None),
    _Measure("ndcg", "float", "nDCG"),
    _Measure("ndcg_rel", None),
    _Measure("Rndcg", None),
    _Measure("ndcg_cut", "cutoffs", "nDCG", _CUTS),
    _Measure("map_cut", "cutoffs", "AP", _CUTS),
    _Measure("relative_P", None),
    _Measure("success", "cutoffs", "Success", (1, 5, 10)),
    _Measure("set_P", None),
    _Measure("set_relative_P", None),
    _Measure("set_recall", None),
    _Measure("set_map", None),
    _Measure("set_F", None),
    _Measure("num_nonrel_judged_ret", None),
)
_BY_NAME = {m.name: m for m in _MEASURES}
_ORDER = {m.name: i for i, m in enumerate(_MEASURES)}

#: trec_eval 9.0.8's nicknames for sets of measures (measures.c)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
                 "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "ndcg", "relative_P",
                 "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P",
                 "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
}
#: trec_eval's measures of the qrels/results formats that this engine does not compute
NOT_IMPLEMENTED: tuple[str, ...] = tuple(m.name for m in _MEASURES if m.kind is None)
_OTHER_FORMATS = ("all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_simp",
                  "prefs_pair", "prefs_avgjg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg",
                  "yaap", "dcg", "ideal_dcg", "rbp", "rbp_resid", "unj", "ndcg_p")


@dataclass(frozen=True)
class Row:
    """One output name: ``kind`` says how it prints and averages, ``specs`` what computes it."""

    name: str
    kind: str  # float | count | gm | num_q | runid | avg
    specs: tuple[MetricSpec, ...] = ()


@dataclass
class _Request:
    marked: set[str] = field(default_factory=set)
    params: dict[str, tuple] = field(default_factory=dict)
    extra: dict[str, list] = field(default_factory=dict)
    own: list[tuple[str, MetricSpec]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def _refuse(name: str) -> TrecEvalError:
    have = ", ".join(m.name for m in _MEASURES if m.kind is not None)
    return TrecEvalError(
        f"trec_eval measure {name!r} is not implemented by recmeta (it computes: {have}; "
        f"nicknames: {', '.join(NICKNAMES)}; and its own names such as 'nDCG(gain=exp)@10')"
    )


def _cutoffs(measure: str, text: str) -> tuple[int, ...]:
    """trec_eval's ``get_long_cutoffs``: sorted, positive, no duplicates."""
    try:
        values = sorted(int(v) for v in text.split(","))
    except ValueError:
        raise TrecEvalError(f"cut-offs of {measure!r} must be integers, got {text!r}") from None
    if values[0] <= 0:
        raise TrecEvalError(f"trec_eval: Negative cutoff detected in {measure}.{text}")
    if len(set(values)) != len(values):
        raise TrecEvalError(f"trec_eval: duplicate cutoffs detected in {measure}.{text}")
    return tuple(values)


def _levels(measure: str, text: str, ordered: bool) -> tuple[float, ...]:
    """trec_eval's ``get_double_cutoffs`` (sorted) or ``get_double_params`` (as given)."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise TrecEvalError(f"levels of {measure!r} must be numbers, got {text!r}") from None
    if any(not 0 <= v <= 1 for v in values):
        raise TrecEvalError(f"recall levels of {measure!r} must lie in [0, 1], got {text!r}")
    if len(set(values)) != len(values):
        raise TrecEvalError(f"trec_eval: duplicate cutoffs detected in {measure}.{text}")
    if ordered:
        return tuple(sorted(values))
    if values != sorted(values):
        raise TrecEvalError(f"give the recall levels of {measure} in increasing order: {text!r}")
    return tuple(values)


def _split_value(name: str) -> tuple[str, str] | None:
    """``P_10`` -> ("P", "10"), ``iprec_at_recall_0.10`` -> ("iprec_at_recall", "0.10")."""
    for m in _MEASURES:
        if m.kind in ("cutoffs", "levels") and name.startswith(m.name + "_"):
            value = name[len(m.name) + 1:]
            if value and (value.replace(".", "", 1).isdigit()):
                return m.name, value
    return None


def is_trec_name(name: str) -> bool:
    """Whether ``name`` is trec_eval's (a measure, nickname, ``P.5,10`` or ``P_10`` form) and
    not only one of this engine's names."""
    base = name.split(".", 1)[0]
    ours_too = {"P", "recall", "map", "bpref", "infAP", "ndcg"}  # ours under the same name
    return (name not in ours_too and (base in _BY_NAME or base in NICKNAMES
                                      or base in _OTHER_FORMATS)) or _split_value(name) is not None


def _parse(names: Sequence[str]) -> _Request:
    """trec_eval's ``mark_measure``, plus value names and this engine's names."""
    req = _Request()
    for text in names:
        name = text.strip()
        base, dot, params = name.partition(".")
        if name in NICKNAMES:
            for member in NICKNAMES[name]:
                if _BY_NAME[member].kind is None:
                    if member not in req.skipped:
                        req.skipped.append(member)
                else:
                    req.marked.add(member)
            continue
        if name in _OTHER_FORMATS or base in _OTHER_FORMATS:
            raise TrecEvalError(f"trec_eval measure {name!r} needs another judgment format "
                                "(-R prefs or qrels_jg); recmeta reads qrels only")
        if dot and base in _BY_NAME and _split_value(name) is None:
            measure = _BY_NAME[base]
            if measure.kind is None:
                raise _refuse(base)
            if not params:
                raise TrecEvalError(f"trec_eval: improper measure in parameter {base!r}")
            if measure.kind not in ("cutoffs", "levels", "avg"):
                raise TrecEvalError(f"trec_eval measure {base!r} takes no parameters "
                                    f"(got {name!r})")
            req.marked.add(base)
            if base in req.params:  # trec_eval reads the first parameters given only
                req.ignored.append(name)
            elif measure.kind == "cutoffs":
                req.params[base] = _cutoffs(base, params)
            else:
                req.params[base] = _levels(base, params, ordered=measure.kind == "levels")
            continue
        split = _split_value(name)
        if split is not None:
            base, value = split
            if _BY_NAME[base].kind == "cutoffs":
                req.extra.setdefault(base, []).extend(_cutoffs(base, value))
            else:
                req.extra.setdefault(base, []).extend(_levels(base, value, ordered=True))
            continue
        if name in _BY_NAME:
            if _BY_NAME[name].kind is None:
                raise _refuse(name)
            req.marked.add(name)
            continue
        try:
            spec = parse_metric(name)
        except MetricNameError as err:
            raise MetricNameError(
                f"{err} trec_eval's measures: {', '.join(m.name for m in _MEASURES)}; "
                f"nicknames: {', '.join(NICKNAMES)}."
            ) from None
        if name not in [n for n, _ in req.own]:
            req.own.append((name, spec))
    return req


def _level_name(x: float) -> str:
    return f"{x:3.2f}"  # trec_eval's append_double: "%s_%3.2f"


def trec_rows(names: Sequence[str]) -> tuple[list[Row], list[str], list[str]]:
    """The output rows of ``-m`` arguments, in trec_eval's order, then this engine's names.

    Returns (rows, unimplemented measures a nickname named, ``-m`` arguments ignored because an
    earlier one gave the measure's parameters).
    """
    req = _parse(names)
    rows: list[Row] = []
    for name in sorted(set(req.marked) | set(req.extra), key=_ORDER.__getitem__):
        m = _BY_NAME[name]
        if m.kind == "runid":
            rows.append(Row("runid", "runid"))
        elif m.kind in ("num_q", "count", "float", "gm"):
            rows.append(Row(name, m.kind, (parse_metric(m.engine),)))
        elif m.kind == "cutoffs":
            given = req.params.get(name, m.defaults if name in req.marked else ())
            for k in sorted(set(given) | set(req.extra.get(name, []))):
                rows.append(Row(f"{name}_{k}", "float", (parse_metric(f"{m.engine}@{k}"),)))
        elif m.kind == "levels":
            given = req.params.get(name, m.defaults if name in req.marked else ())
            for x in sorted(set(given) | set(req.extra.get(name, []))):
                rows.append(Row(f"{name}_{_level_name(x)}", "float",
                                (MetricSpec("IPrec", None, (("recall", x),)),)))
        elif m.kind == "avg":
            levels = req.params.get(name, m.defaults)
            shown = name if name not in req.params else f"{name}_{_given_params(names, name)}"
            rows.append(Row(shown, "avg",
                            tuple(MetricSpec("IPrec", None, (("recall", x),)) for x in levels)))
    for text, spec in req.own:
        kind = "count" if spec.name in SUMMED else "gm" if spec.aggregate == "gmean" else "float"
        if spec.name == "NumQ":
            kind = "num_q"
        rows.append(Row(text, kind, (spec,)))
    return rows, req.skipped, req.ignored


def _given_params(names: Sequence[str], measure: str) -> str:
    """The parameter text of the first ``-m measure.params`` (trec_eval prints it as given)."""
    for text in names:
        base, dot, params = text.strip().partition(".")
        if dot and base == measure:
            return params
    return ""


def expand_trec_names(names: Sequence[str]) -> list[tuple[str, MetricSpec]]:
    """trec_eval's ``-m`` arguments as (output name, engine metric) pairs, in trec_eval's order.

    ``P.5,10`` gives ``[("P_5", P@5), ("P_10", P@10)]``; ``official`` its eleven measures
    without ``runid``; ``gm_map`` the spec ``gm_AP``; ``11pt_avg`` ``IPrec11`` (other recall
    levels than trec_eval's eleven are only available through :func:`trec_eval`).
    """
    rows, skipped, _ = trec_rows(names)
    out = []
    for row in rows:
        if row.kind == "runid":
            continue
        if row.kind == "avg":
            if tuple(s.param("recall") for s in row.specs) != _LEVELS:
                raise TrecEvalError(f"{row.name}: other recall levels than the eleven "
                                    "standard ones have no single engine metric")
            out.append((row.name, MetricSpec("IPrec11")))
            continue
        spec = row.specs[0]
        if row.kind == "gm":
            spec = MetricSpec(spec.name, spec.k, spec.params, "gmean")
        out.append((row.name, spec))
    if skipped:
        raise _refuse(skipped[0])
    return out


# ------------------------------------------------------------------------------- evaluation
@dataclass
class TrecEvaluation:
    """Per-topic values and summary of one run, as trec_eval computes and prints them."""

    rows: list[Row]
    queries: list[str]  # evaluated topics, in trec_eval's order
    values: dict[str, np.ndarray]  # row name -> value per evaluated topic
    summary: dict[str, float | str]  # row name -> summary value
    run_id: str
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def lines(self, query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output lines (without newlines): per topic if ``query``, then summary."""
        out = []
        if query:
            for q, qid in enumerate(self.queries):
                for row in self.rows:
                    if row.kind not in ("runid", "num_q", "gm"):
                        out.append(_line(row, qid, self.values[row.name][q]))
        if summary:
            for row in self.rows:
                out.append(_line(row, "all", self.summary[row.name]))
        return out

    def text(self, query: bool = False, summary: bool = True) -> str:
        return "".join(line + "\n" for line in self.lines(query, summary))

    def records(self, query: bool = False, summary: bool = True) -> list[dict]:
        """The same values as :meth:`lines`, as records (measure, query, value)."""
        out = []
        if query:
            for q, qid in enumerate(self.queries):
                for row in self.rows:
                    if row.kind not in ("runid", "num_q", "gm"):
                        out.append({"measure": row.name, "query": qid,
                                    "value": _plain(row, self.values[row.name][q])})
        if summary:
            for row in self.rows:
                out.append({"measure": row.name, "query": "all",
                            "value": _plain(row, self.summary[row.name])})
        return out


def _plain(row: Row, value):
    if row.kind == "runid":
        return value
    if row.kind in ("count", "num_q"):
        return int(value)
    return None if math.isnan(value) else float(value)


def _float(value: float) -> str:
    """C's ``%6.4f``; a NaN from 0.0/0.0 carries the sign bit on x86-64, so glibc prints -nan."""
    if math.isnan(value):
        return f"{'-nan':>6}"
    return f"{value:6.4f}"


def _line(row: Row, qid: str, value) -> str:
    if row.kind == "runid":
        return f"{'runid':<22}\t{qid}\t{value}"
    if row.kind in ("count", "num_q"):
        return f"{row.name:<22}\t{qid}\t{int(value)}"
    return f"{row.name:<22}\t{qid}\t{_float(value)}"


def _sequential_sum(values) -> float:
    """Left-to-right double sum, as trec_eval accumulates (Python's sum() compensates)."""
    total = 0.0
    for v in values:
        total += float(v)
    return total


def trec_eval(
    qrels: pd.DataFrame,
    run: pd.DataFrame,
    measures: Sequence[str] = ("official",),
    *,
    level: float = 1,
    complete: bool = False,
    max_ret: int | None = None,
    judged_only: bool = False,
    run_id: str | None = None,
) -> TrecEvaluation:
    """Evaluate one run as trec_eval 9.0.8 does (see the module docstring).

    ``qrels``: frame user, item, rating (a qrels file as :func:`recmeta.metrics.read_qrels` reads
    it); ``run``: frame user, item, score (and system: the tag of its last row is the run id,
    as trec_eval keeps the tag of the last line). Options: ``level`` (``-l``), ``complete``
    (``-c``), ``max_ret`` (``-M``), ``judged_only`` (``-J``).
    """
    rows, skipped, ignored = trec_rows(measures)
    if not rows:
        raise TrecEvalError("no measure to compute")
    if not level >= 0:
        raise TrecEvalError(f"the relevance level (-l) must be >= 0, got {level}")
    if max_ret is not None and max_ret < 1:
        raise TrecEvalError(f"-M must be >= 1, got {max_ret}")
    if run_id is None:
        run_id = str(run["system"].iloc[-1]) if "system" in run.columns and len(run) else "run"
    grades = np.trunc(pd.to_numeric(qrels["rating"]).to_numpy(dtype=np.float64))  # atol
    q = pd.DataFrame({"user": qrels["user"].astype(str).to_numpy(),
                      "item": qrels["item"].astype(str).to_numpy(), "rating": grades})
    judgments = Judgments.from_frame(q, threshold=level, negative="pooled")
    r = pd.DataFrame({"system": "run", "user": run["user"].astype(str).to_numpy(),
                      "item": run["item"].astype(str).to_numpy(),
                      "score": pd.to_numeric(run["score"]).to_numpy(dtype=np.float64)})
    known = r["user"].isin(judgments.users)
    if not known.any():
        raise TrecEvalError("trec_eval: No queries with both results and relevance info")
    runs = Runs.from_frame(r[known], judgments, depth=max_ret)
    retrieved = runs.ranks[0, :, 0] >= 0
    if judged_only:
        runs = runs.only_judged(judgments)
    specs = list(dict.fromkeys(s for row in rows for s in row.specs))
    if any(row.kind == "avg" or row.specs and row.specs[0].name == "IPrec" for row in rows):
        specs += [s for s in (MetricSpec("NumRet"), MetricSpec("NumRel")) if s not in specs]
    mats = score_matrices(judgments, runs, specs, users="all")
    by_spec = {s: mats[str(s)][0] for s in specs}
    users = sorted(np.flatnonzero(retrieved), key=lambda u: str(judgments.users[u]).encode())
    users = np.asarray(users, dtype=np.int64)
    queries = [str(judgments.users[u]) for u in users]
    n_topics = len(judgments.users) if complete else len(users)

    values: dict[str, np.ndarray] = {}
    summary: dict[str, float | str] = {}
    for row in rows:
        if row.kind == "runid":
            summary[row.name] = run_id
            continue
        if row.kind == "avg":
            parts = [_iprec(by_spec, s, users) for s in row.specs]
            total = np.zeros(len(users))
            for part in reversed(parts):  # m_11pt_avg.c adds from the highest level down
                total = total + part
            v = total / len(parts)
        elif row.specs[0].name == "IPrec":
            v = _iprec(by_spec, row.specs[0], users)
        else:
            v = by_spec[row.specs[0]][users]
        values[row.name] = v
        if row.kind == "num_q":
            summary[row.name] = float(n_topics)
        elif row.kind == "count":
            if complete and row.specs[0].name == "NumRel" and row.name == "num_rel":
                summary[row.name] = float((grades > 0).sum())  # 9.0.8 m_num_rel.c, -c
            else:
                summary[row.name] = _sequential_sum(v)
        elif row.kind == "gm":
            logs = _sequential_sum(math.log(max(x, GMEAN_FLOOR)) for x in v)
            logs += (n_topics - len(users)) * math.log(GMEAN_FLOOR)
            summary[row.name] = math.exp(logs / n_topics)
        else:
            summary[row.name] = _sequential_sum(v) / n_topics
    return TrecEvaluation(rows, queries, values, summary, run_id, skipped, ignored)


def _iprec(by_spec: dict, spec: MetricSpec, users: np.ndarray) -> np.ndarray:
    """Interpolated precision per topic, with trec_eval's 0/0 for an empty list at a level that
    needs no relevant document (``(long)(x * R + 0.9) == 0``)."""
    v = by_spec[spec][users].copy()
    num_ret = by_spec[MetricSpec("NumRet")][users]
    num_rel = by_spec[MetricSpec("NumRel")][users]
    x = spec.param("recall")
    need = np.trunc(x * num_rel + 0.9)
    v[(num_ret == 0) & (need == 0)] = np.nan
    return v
