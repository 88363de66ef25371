"""``recmeta claims`` on hand-made stored ledgers: kinds, margins, the legend from MEANING, the
JSON fields of issue 25, and ``--check`` (the acceptance rules)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from recmeta import cli
from recmeta.cli.claims import JSON_KEYS
from recmeta.ledger import COLUMNS, MEANING, Verdict, store


def _row(claim, **kw):
    r = dict.fromkeys(COLUMNS)
    r.update(chapter="robustness", claim=claim, statement=f"statement {claim}", source="Tab. 3",
             paper_value=0.5, paper_dataset="ML-1M", kind="transfer", rule="value",
             rule_text="equivalence within the margin", margin=0.06, data_free=False,
             tie_sensitive=None, ours=0.45, low=0.4, high=0.5, ours_text="",
             method="bootstrap", verdict="shown, not graded", reason="why", dataset="ml-100k",
             profile="quick")
    r.update(kw)
    return r


@pytest.fixture
def stored(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    rows = [
        _row("v.shown"),
        _row("v.free", data_free=True, verdict="agrees", low=0.45, high=0.55,
             tie_sensitive=True),
        _row("d.eq", kind="derivation", rule="identity", rule_text="identity", paper_value="eq. 1",
             paper_dataset="derivation", margin=None, verdict="holds", tie_sensitive=False),
        _row("s.sign", rule="sign", rule_text="sign of the difference", paper_value="positive",
             margin=None, verdict="differs"),
    ]
    store.save(pd.DataFrame(rows), chapter="robustness", dataset="ml-100k", profile="quick")
    return tmp_path


def test_json_records_carry_the_fields_of_the_issue(stored, capsys):
    assert {"kind", "rule", "rule_text", "margin", "data_free", "tie_sensitive"} <= set(JSON_KEYS)
    assert cli.main(["claims", "--json", "--quick"]) == 0
    records = {r["claim"]: r for r in json.loads(capsys.readouterr().out)}
    assert all(list(r) == list(JSON_KEYS) for r in records.values())
    free = records["v.free"]
    assert (free["kind"], free["rule"], free["rule_text"]) == (
        "transfer", "value", "equivalence within the margin")
    assert free["margin"] == 0.06 and free["data_free"] is True and free["tie_sensitive"] is True
    assert free["paper_value"] == 0.5
    derivation = records["d.eq"]
    assert derivation["kind"] == "derivation" and derivation["margin"] is None
    assert derivation["data_free"] is False and derivation["tie_sensitive"] is False
    assert records["v.shown"]["tie_sensitive"] is None  # not assessed


def test_table_shows_kinds_margins_tallies_and_a_legend_line_per_verdict(stored, capsys):
    assert cli.main(["claims", "robustness", "--quick"]) == 0
    out = capsys.readouterr().out
    shown = next(line for line in out.splitlines() if line.startswith("v.shown"))
    assert "transfer" in shown and "0.5 ± 0.060 (ML-1M)" in shown
    assert "shown, not graded" in shown
    assert "derivation: 1 holds" in out
    assert "transfer: 1 agrees; 1 differs; 1 shown, not graded" in out
    legend = out[out.index("Verdicts:"):].splitlines()
    for verdict in Verdict:
        assert f"  {verdict.value}: {MEANING[verdict]}" in legend
    assert any(line.startswith("  replication: ") for line in legend)
    assert any(line.startswith("Intervals: ") and "(BC, Efron" in line for line in legend)


def test_check_passes_a_ledger_that_keeps_the_rules(stored, capsys):
    assert cli.main(["claims", "--check", "--quick"]) == 0
    assert "no problem in 4 record(s) of 1 stored ledger(s)" in capsys.readouterr().out


def test_check_names_each_breach_and_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    rows = [_row("graded", verdict="agrees", low=0.45, high=0.55),  # a magnitude on other data
            _row("nomargin", kind="replication", margin=None,
                 verdict="inconclusive")]
    store.save(pd.DataFrame(rows), chapter="robustness", dataset="ml-100k", profile="full")
    assert cli.main(["claims", "--check"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 2
    assert "robustness graded (ml-100k): a transfer's value graded 'agrees'" in lines[0]
    assert "robustness nomargin (ml-100k): a value rule without a positive margin" in lines[1]
    assert "2 problem(s) in 2 record(s)" in captured.err
