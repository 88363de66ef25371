"""The book's replication-ledger page, generated from stored ledgers."""

from __future__ import annotations

import pandas as pd

from recmeta.ledger import COLUMNS, page as book


def _row(chapter, claim, dataset, verdict, ours, profile="full"):
    r = dict.fromkeys(COLUMNS)
    r.update(chapter=chapter, claim=claim, statement=f"statement {claim}", source="Fig. 1",
             paper_value=0.5, paper_dataset="ML-1M", ours=ours, low=ours - 0.1, high=ours + 0.1,
             verdict=verdict, reason="why", dataset=dataset, profile=profile)
    return r


def test_ledger_page_counts_and_sets_both_datasets_side_by_side():
    frame = pd.DataFrame([
        _row("robustness", "a", "ml-100k", "agrees", 0.45),
        _row("robustness", "a", "ml-latest-small", "differs", 0.9),
        _row("robustness", "b", "ml-100k", "inconclusive", 0.3),
        _row("robustness", "b", "ml-latest-small", "agrees", 0.55),
        _row("robustness", "a", "ml-100k", "differs", 0.1, profile="quick"),   # other profile
        _row("robustness", "a", "mine.csv", "differs", 0.1),                   # a reader's own run
    ])
    text = book.ledger_page(frame, profile="full",
                            chapters={"robustness": "Robustness", "sampled-metrics": "Sampled"},
                            with_ledger=["robustness"])
    counts = [line for line in text.splitlines() if line.startswith("| robustness |")]
    assert counts == ["| robustness | ml-100k | 2 | 1 | 0 | 1 | 0 | 0 | 0 | 0 |",
                      "| robustness | ml-latest-small | 2 | 1 | 1 | 0 | 0 | 0 | 0 | 0 |"]
    assert "Sampled <../notebooks/sampled-metrics>" in text  # not yet in the ledger, said so
    row_a = next(line for line in text.splitlines() if line.startswith("| statement a |"))
    assert "**agrees**" in row_a and "**differs**" in row_a and "0.45" in row_a and "0.9" in row_a
    assert "mine.csv" not in text


def test_ledger_page_without_stored_ledgers_says_so():
    empty = pd.DataFrame(columns=list(COLUMNS))
    text = book.ledger_page(empty, profile="quick", chapters={"robustness": "Robustness"},
                            with_ledger=["robustness"])
    assert "No chapter stored its ledger" in text and "stored nothing in this build: robustness" in text


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
    assert got.loc["ml-100k", "verdict"] == "agrees" and got.loc["ml-latest-small", "verdict"] == "agrees"
    assert len(got) == 2
