"""The book's replication-ledger page, generated from stored ledgers."""

from __future__ import annotations

import pandas as pd
import pytest

from recmeta.ledger import COLUMNS, MEANING, Verdict, page as book


def _row(chapter, claim, dataset, verdict, ours, profile="full", *, kind="transfer", rule="sign",
         margin=None, tie_sensitive=None):
    r = dict.fromkeys(COLUMNS)
    r.update(chapter=chapter, claim=claim, statement=f"statement {claim}", source="Fig. 1",
             paper_value=0.5, paper_dataset="ML-1M", kind=kind, rule=rule, margin=margin,
             data_free=False, tie_sensitive=tie_sensitive, ours=ours, low=ours - 0.1,
             high=ours + 0.1, verdict=verdict, reason="why", dataset=dataset, profile=profile)
    return r


def _page(frame, **kw):
    kw.setdefault("with_ledger", ["robustness"])
    return book.ledger_page(frame, profile="full",
                            chapters={"robustness": "Robustness", "sampled-metrics": "Sampled"},
                            **kw)


def test_ledger_page_tallies_per_chapter_kind_and_dataset():
    frame = pd.DataFrame([
        _row("robustness", "a", "ml-100k", "agrees", 0.45),
        _row("robustness", "a", "ml-latest-small", "differs", 0.9),
        _row("robustness", "b", "ml-100k", "inconclusive", 0.3),
        _row("robustness", "b", "ml-latest-small", "agrees", 0.55),
        _row("robustness", "d", "ml-100k", "holds", 0.0, kind="derivation"),
        _row("robustness", "d", "ml-latest-small", "fails", 0.0, kind="derivation"),
        _row("robustness", "a", "ml-100k", "differs", 0.1, profile="quick"),   # other profile
        _row("robustness", "a", "mine.csv", "differs", 0.1),                   # a reader's own run
    ])
    text = _page(frame)
    lines = text.splitlines()
    assert "each cell counts them on ml-100k / ml-latest-small." in text
    # one table per kind, derivations first; the verdicts present for that kind, in Verdict order
    derivations = lines[lines.index("**Derivations**") + 2:lines.index("**Transfers**")]
    assert derivations[:4] == [
        "| Chapter | Claims | holds | fails |",
        "|---|---|---|---|",
        "| robustness | 1 / 1 | 1 / 0 | 0 / 1 |",
        "| **all** | 1 / 1 | 1 / 0 | 0 / 1 |",
    ]
    transfers = lines[lines.index("**Transfers**") + 2:]
    assert transfers[:4] == [
        "| Chapter | Claims | agrees | differs | inconclusive |",
        "|---|---|---|---|---|",
        "| robustness | 2 / 2 | 1 / 1 | 0 / 1 | 1 / 0 |",
        "| **all** | 2 / 2 | 1 / 1 | 0 / 1 | 1 / 0 |",
    ]
    assert "**Replications**" not in lines  # no replication in this frame
    assert "Sampled <../notebooks/sampled-metrics>" in text  # not yet in the ledger, said so
    row_a = next(line for line in text.splitlines() if line.startswith("| statement a |"))
    assert "**agrees**" in row_a and "**differs**" in row_a and "0.45" in row_a and "0.9" in row_a
    assert "mine.csv" not in text


def test_derivations_have_their_own_table_apart_from_replications_and_transfers():
    frame = pd.DataFrame([
        _row("robustness", "a", "ml-100k", "agrees", 0.45),
        _row("robustness", "d", "ml-100k", "holds", 0.0, kind="derivation"),
        _row("robustness", "r", "ml-100k", "differs", 0.2, kind="replication"),
    ])
    text = _page(frame)
    derivations = text.index("### Derivations")
    others = text.index("### Replications and transfers")
    assert derivations < text.index("| statement d |") < others
    assert others < text.index("| statement a |") and others < text.index("| statement r |")
    row_d = text[text.index("| statement d |"):].splitlines()[0]
    assert row_d == "| statement d | Fig. 1 | 0.5 | 0.00 [-0.10, 0.10]: **holds** |"
    row_r = text[text.index("| statement r |"):].splitlines()[0]
    assert "| replication |" in row_r and "| transfer |" not in row_r


def test_a_chapter_missing_on_one_dataset_shows_a_dash():
    frame = pd.DataFrame([
        _row("robustness", "a", "ml-100k", "agrees", 0.45),
        _row("sampled-metrics", "s", "ml-100k", "differs", 0.2),
        _row("sampled-metrics", "s", "ml-latest-small", "agrees", 0.5),
    ])
    lines = _page(frame, with_ledger=["robustness", "sampled-metrics"]).splitlines()
    assert "| robustness | 1 / — | 1 / — | 0 / — |" in lines
    assert "| sampled-metrics | 1 / 1 | 0 / 1 | 1 / 0 |" in lines
    assert "| **all** | 2 / 1 | 1 / 1 | 1 / 0 |" in lines


def test_the_paper_column_shows_each_value_claims_margin():
    frame = pd.DataFrame([
        _row("robustness", "v", "ml-100k", "agrees", 0.45, rule="value", margin=0.06),
        _row("robustness", "v", "ml-latest-small", "not reproduced here", 0.45, rule="none"),
    ])
    row = next(line for line in _page(frame).splitlines() if line.startswith("| statement v |"))
    assert "| 0.5 ± 0.060 (ML-1M) |" in row


def test_tie_sensitive_verdicts_are_marked():
    frame = pd.DataFrame([_row("robustness", "t", "ml-100k", "agrees", 0.45, tie_sensitive=True),
                          _row("robustness", "u", "ml-100k", "agrees", 0.45, tie_sensitive=False)])
    text = _page(frame)
    assert text.count("changes with the tie rule") == 1
    assert "changes with the tie rule" in text[text.index("| statement t |"):].splitlines()[0]


def test_the_legend_says_what_every_verdict_means_in_meanings_words():
    text = _page(pd.DataFrame([_row("robustness", "a", "ml-100k", "agrees", 0.45)]))
    for verdict in Verdict:
        assert f"- **{verdict.value}**: {MEANING[verdict]}." in text
    for kind in ("derivation", "replication", "transfer"):
        assert f"- **{kind}**: " in text
    # the former legend's false reading of "inconclusive" for values is gone
    assert "the difference lies inside our uncertainty" not in text
    # and it says how an interval is read off bootstrap replicates: bias-corrected
    assert "Intervals: 95 % intervals" in text and "bias-corrected percentile intervals (BC" in text


def test_the_page_opens_with_its_figures():
    frame = pd.DataFrame([_row("robustness", "a", "ml-100k", "agrees", 0.45)])
    text = _page(frame, figures={"verdicts": "/../_build/v.png", "values": "/../_build/w.png"})
    assert text.startswith(":::{figure} /../_build/v.png\n:name: ledger-verdicts\n")
    assert text.index(":::{figure} /../_build/w.png") < text.index("A verdict says")
    assert "(ours − paper) / margin" in text  # the forest plot's caption names its scale
    with pytest.raises(ValueError, match="unknown figure"):
        _page(frame, figures={"other": "x.png"})


def test_a_ledger_stored_before_kinds_existed_shows_as_unknown():
    old = pd.DataFrame([_row("robustness", "a", "ml-100k", "agrees", 0.45)]).drop(
        columns=["kind", "margin", "data_free", "tie_sensitive", "rule_text"])
    lines = _page(old).splitlines()
    assert "**Claims of kind unknown**" in lines and "| robustness | 1 | 1 |" in lines


def test_ledger_page_without_stored_ledgers_says_so():
    empty = pd.DataFrame(columns=list(COLUMNS))
    text = book.ledger_page(empty, profile="quick", chapters={"robustness": "Robustness"},
                            with_ledger=["robustness"])
    assert "No chapter stored its ledger" in text
    assert "stored nothing in this build: robustness" in text


def test_claims_read_the_newest_of_the_project_and_book_stores(tmp_path, monkeypatch):
    import time

    from recmeta.ledger import store

    a, b = tmp_path / "a", tmp_path / "b"
    old = pd.DataFrame([_row("robustness", "x", "ml-100k", "differs", 0.1)])
    new = pd.DataFrame([_row("robustness", "x", "ml-100k", "agrees", 0.5)])
    other = pd.DataFrame([_row("robustness", "x", "ml-latest-small", "agrees", 0.7)])
    store.save(old, chapter="robustness", dataset="ml-100k", profile="full", root=a)
    store.save(other, chapter="robustness", dataset="ml-latest-small", profile="full", root=a)
    time.sleep(1.1)  # 'written' has a resolution of seconds
    store.save(new, chapter="robustness", dataset="ml-100k", profile="full", root=b)
    got = store.load_newest([a, b], profile="full").set_index("dataset")
    assert got.loc["ml-100k", "verdict"] == "agrees"
    assert got.loc["ml-latest-small", "verdict"] == "agrees"
    assert len(got) == 2
