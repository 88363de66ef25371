"""The ledger's acceptance checker (recmeta.ledger.audit) on hand-made frames: a clean frame
passes, each breach is found and named."""

from __future__ import annotations

import pandas as pd
import pytest

from recmeta.ledger import COLUMNS, Estimate, Ledger, Margin, value_rule
from recmeta.ledger.audit import problems


def _row(claim="c", **kw):
    r = dict.fromkeys(COLUMNS)
    r.update(chapter="robustness", claim=claim, statement="s", source="Fig. 1",
             paper_value=0.5, paper_dataset="ML-1M", kind="replication", rule="value",
             margin=0.1, data_free=False, ours=0.5, low=0.45, high=0.55, verdict="agrees",
             reason="why", dataset="ml-1m", profile="full")
    r.update(kw)
    return r


def _clean():
    return [
        _row("value-agrees"),
        _row("value-edge", low=0.4, high=0.6),  # the band's edges count as inside
        _row("value-differs", low=0.7, high=0.8, verdict="differs"),
        _row("open-differs", low=0.7, high=0.8, verdict="differs", unresolved="high"),
        _row("transfer-shown", kind="transfer", dataset="ml-100k", verdict="shown, not graded"),
        _row("transfer-free", kind="transfer", dataset="ml-100k", data_free=True),
        _row("sign", rule="sign", paper_value="positive", margin=None, verdict="agrees"),
        _row("derivation", kind="derivation", rule="identity", paper_value="eq. 3", margin=None,
             verdict="holds"),
        _row("not-here", rule="none", paper_value="0.3", margin=None, low=None, high=None,
             verdict="not reproduced here"),
    ]


def test_a_frame_that_keeps_every_rule_has_no_problem():
    assert problems(pd.DataFrame(_clean())) == []


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"kind": None}, "no kind"),
        ({"kind": "replicated"}, "is not one of"),
        ({"rule": None}, "no rule"),
        ({"rule": ""}, "no rule"),
        ({"rule": "custom", "paper_value": "eq. 3", "margin": None}, "rule 'custom' names no rule"),
        ({"margin": None}, "without a positive margin"),
        ({"margin": 0.0}, "without a positive margin"),
        ({"paper_value": "0.5"}, "is not a number"),
        ({"paper_value": None}, "is not a number"),
        ({"kind": "transfer", "dataset": "ml-100k"}, "a transfer's value graded 'agrees'"),
        ({"kind": "transfer", "dataset": "ml-100k", "verdict": "differs", "low": 0.7,
          "high": 0.8}, "a transfer's value graded 'differs'"),
        ({"low": 0.35}, "is not inside 0.5 ± 0.1"),
        ({"high": 0.61}, "is not inside 0.5 ± 0.1"),
        ({"low": None, "high": None}, "without an interval"),
        ({"unresolved": "high"}, "whose high end lies beyond every bootstrap replicate"),
    ],
)
def test_each_breach_is_found(change, words):
    rows = _clean()
    rows.append(_row("bad", **change))
    found = problems(pd.DataFrame(rows))
    assert len(found) == 1, found
    assert found[0].startswith("robustness bad (") and words in found[0], found


def test_a_transfer_graded_inconclusive_is_not_a_breach_but_agrees_is():
    rows = [_row("t", kind="transfer", dataset="ml-100k", verdict="inconclusive", low=0.35)]
    assert problems(pd.DataFrame(rows)) == []
    rows = [_row("t", kind="transfer", dataset="ml-100k", data_free=False)]
    assert len(problems(pd.DataFrame(rows))) == 1


def test_a_frame_without_the_ledgers_columns_is_an_error():
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['margin'\]"):
        problems(pd.DataFrame([_row()]).drop(columns="margin"))


def test_an_evaluated_ledger_passes_and_its_stored_copy_too(tmp_path):
    """The ledger's own rules give rows the checker accepts, before and after the store."""
    from recmeta.ledger import store

    ledger = Ledger("robustness")
    margin = Margin.printed(0.5, 0.05, "a hand case")
    for name, est in {"in": Estimate(0.5, 0.48, 0.52), "out": Estimate(0.9, 0.8, 1.0),
                      "across": Estimate(0.55, 0.5, 0.7)}.items():
        ledger.claim(name, statement=name, source="Fig. 1", rule="value", paper_value=0.5,
                     paper_dataset="ML-1M")(lambda res, est=est: value_rule(0.5, est, margin))
    for ds in ("ml-1m", "ml-100k"):
        frame = ledger.evaluate({}, dataset=ds, profile="quick")
        assert problems(frame) == []
        store.save(frame, chapter="robustness", dataset=ds, profile="quick", root=tmp_path)
    stored = store.load(root=tmp_path)
    assert len(stored) == 6 and problems(stored) == []
    assert set(stored["verdict"]) == {"agrees", "differs", "inconclusive", "shown, not graded"}
