"""What :func:`recmeta.metrics.trec_eval` returns, and its output: trec_eval's lines
(``%-22s\\t%s\\t%6.4f``, as C prints them), records, and JSON, each made as it is read."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from ._trec_names import TREC_EVAL_VERSION, Row

#: topics whose lines :meth:`TrecEvaluation.chunks` formats at a time (about 1 MB of text under
#: ``all_trec``)
TOPICS_PER_CHUNK = 128
#: records :meth:`TrecEvaluation.json_chunks` formats at a time
JSON_RECORDS_PER_CHUNK = 4096


@dataclass
class TrecEvaluation:
    """Per-topic values and summary of one run, as trec_eval computes and prints them."""

    rows: list[Row]
    queries: list[str]  # evaluated topics, in trec_eval's order
    values: dict[str, np.ndarray | list[str]]  # row name -> value per evaluated topic
    summary: dict[str, float | str]  # row name -> summary value (relstring has none)
    run_id: str
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    version: str = TREC_EVAL_VERSION

    def _per_topic(self) -> list[Row]:
        return [row for row in self.rows if row.kind not in ("runid", "num_q", "gm")]

    def chunks(self, query: bool = False, summary: bool = True) -> Iterator[str]:
        """trec_eval's output, made as it is read: the per-topic lines (if ``query``) of
        :data:`TOPICS_PER_CHUNK` topics at a time, then the summary (if ``summary``)."""
        if query:
            rows = self._per_topic()
            heads = [f"{row.name:<22}\t" for row in rows]
            for a in range(0, len(self.queries), TOPICS_PER_CHUNK):
                b = a + TOPICS_PER_CHUNK
                cells = [_cells(row, self.values[row.name][a:b]) for row in rows]
                yield "".join(
                    f"{head}{qid}\t{col[q]}\n"
                    for q, qid in enumerate(self.queries[a:b])
                    for head, col in zip(heads, cells, strict=True)
                )
        if summary:
            yield "".join(
                _line(row, "all", self.summary[row.name]) + "\n"
                for row in self.rows
                if row.kind != "relstring"
            )

    def write(self, out: TextIO, query: bool = False, summary: bool = True) -> None:
        """Write the output to ``out`` chunk by chunk (:meth:`chunks`): the whole text is never
        held in memory."""
        for chunk in self.chunks(query, summary):
            out.write(chunk)

    def lines(self, query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output lines (without newlines): per topic if ``query``, then summary."""
        return [line for chunk in self.chunks(query, summary) for line in chunk.splitlines()]

    def text(self, query: bool = False, summary: bool = True) -> str:
        """The output of trec_eval: :meth:`lines`, each ended by a newline."""
        return "".join(self.chunks(query, summary))

    def records(self, query: bool = False, summary: bool = True) -> list[dict]:
        """The same values as :meth:`lines`, as records (measure, query, value)."""
        return [
            {"measure": name, "query": qid, "value": value}
            for name, qid, value in self._triples(query, summary)
        ]

    def _triples(self, query: bool, summary: bool) -> Iterator[tuple[str, str, object]]:
        if query:
            rows = self._per_topic()
            for q, qid in enumerate(self.queries):
                for row in rows:
                    yield row.name, qid, _plain(row, self.values[row.name][q])
        if summary:
            for row in self.rows:
                if row.kind != "relstring":
                    yield row.name, "all", _plain(row, self.summary[row.name])

    def json_chunks(self, query: bool = False, summary: bool = True) -> Iterator[str]:
        """:meth:`records` as ``json.dump(records, out, indent=1)`` writes them, made as they
        are read (:data:`JSON_RECORDS_PER_CHUNK` records at a time): the whole text, or the
        list of records, is never held in memory."""
        import json

        texts: dict[str, str] = {}  # a measure's or a topic's JSON string, made once

        def text(name: str) -> str:
            if name not in texts:
                texts[name] = json.dumps(name)
            return texts[name]

        opening, batch = "[\n", []
        for name, qid, value in self._triples(query, summary):
            if value is None:
                shown = "null"
            elif isinstance(value, float) and math.isfinite(value):
                shown = repr(value)
            else:
                shown = json.dumps(value)
            batch.append(
                f' {{\n  "measure": {text(name)},\n  "query": {text(qid)},\n  "value": {shown}\n }}'
            )
            if len(batch) == JSON_RECORDS_PER_CHUNK:
                yield opening + ",\n".join(batch)
                opening, batch = ",\n", []
        if batch:
            yield opening + ",\n".join(batch)
            opening = ",\n"
        yield "[]" if opening == "[\n" else "\n]"


def _plain(row: Row, value: float | str) -> float | int | str | None:
    if row.kind in ("runid", "relstring"):
        return value
    if row.kind in ("count", "num_q"):
        return int(value)
    x = float(value)
    return None if math.isnan(x) else x


def _float(value: float) -> str:
    """C's ``%6.4f``; a NaN from 0.0/0.0 carries the sign bit on x86-64, so glibc prints -nan."""
    if math.isnan(value):
        return f"{'-nan':>6}"
    return f"{value:6.4f}"


def _cells(row: Row, values: np.ndarray | list[str]) -> list[str]:
    """The printed values of one row for every topic (as :func:`_line` prints them)."""
    if row.kind == "relstring":
        return [f"'{v}'" for v in values]
    if row.kind in ("count", "num_q"):
        return [str(int(v)) for v in np.asarray(values).tolist()]
    return ["  -nan" if math.isnan(v) else f"{v:6.4f}" for v in np.asarray(values).tolist()]


def _line(row: Row, qid: str, value: float | str) -> str:
    if row.kind == "runid":
        return f"{'runid':<22}\t{qid}\t{value}"
    if row.kind == "relstring":
        return f"{row.name:<22}\t{qid}\t'{value}'"
    if row.kind in ("count", "num_q"):
        return f"{row.name:<22}\t{qid}\t{int(value)}"
    return f"{row.name:<22}\t{qid}\t{_float(float(value))}"
