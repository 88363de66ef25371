"""Each message a new user meets names the file, the line, the column, the bad value and the fix;
``recmeta claims`` points to the other profile; ``recmeta run --list`` explains the chapters."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from recmeta.book import chapters
from recmeta.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]

HEADER = "userId,movieId,rating,timestamp\n"


def _stats_error(tmp_path, capsys, text: str, name: str = "ratings.csv", *extra: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    assert cli_main(["data", "stats", str(p), *extra]) == 2
    return capsys.readouterr().err


def test_non_numeric_rating_quotes_the_bad_value(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, HEADER + "1,10,2.5,964982703\n1,11,good,964982704\n"
                       "2,10,4,964982705\n")
    assert f"{tmp_path / 'ratings.csv'}, line 3: column 'rating' holds 'good'" in err
    assert "'2.5'" not in err and "fix or remove those lines" in err


def test_non_numeric_value_in_a_renamed_column(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, "uid,song,stars\n1,10,4\n1,11,4\n1,12,five\n",
                       "mine.csv", "--columns", "user=uid,item=song,rating=stars")
    assert "mine.csv, line 4: column 'stars' (the rating) holds 'five'" in err


def test_duplicate_pair_prints_plain_values_and_lines(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, HEADER + "1,1129,4,1\n1,10,3,2\n1,1129,5,3\n")
    assert "(1, 1129) at lines 2, 4" in err and "np.int64" not in err
    assert "keep one rating per pair" in err


def test_empty_file_and_header_only_file_are_named(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, "", "empty.csv")
    assert f"{tmp_path / 'empty.csv'} is empty (0 bytes)" in err and "header row" in err
    err = _stats_error(tmp_path, capsys, HEADER, "header.csv")
    assert "header.csv: no ratings in it" in err


def test_missing_value_names_line_and_column(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, HEADER + "1,10,4,1\n2,,3,2\n")
    assert "ratings.csv, line 3: column 'movieId' (the item) is empty" in err


def test_fractional_timestamp_and_ragged_line(tmp_path, capsys):
    err = _stats_error(tmp_path, capsys, HEADER + "1,10,4,1.5\n")
    assert "line 2: column 'timestamp' holds 1.5" in err and "whole numbers of seconds" in err
    err = _stats_error(tmp_path, capsys, HEADER + "1,10,4,1\n1,11,4,2,9\n")
    assert "ratings.csv" in err and "line 3" in err and "as many fields as line 1 (4" in err


def test_frame_rows_are_named_by_their_label():
    from recmeta import data

    frame = pd.DataFrame({"user": [1, 2], "item": [5, 5], "rating": [4.0, "bad"]},
                         index=["a", "b"])
    with pytest.raises(data.DataError, match=r"row 'b': column 'rating' holds 'bad'"):
        data.from_frame(frame)


def test_claims_suggests_the_other_profile(tmp_path, monkeypatch, capsys):
    from recmeta.cli.claims import JSON_KEYS
    from recmeta.ledger import store

    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    row = {k: None for k in JSON_KEYS} | {
        "chapter": "robustness", "claim": "demo.claim", "statement": "s", "source": "§1",
        "verdict": "agrees", "reason": "r", "dataset": "mine.csv", "profile": "quick",
        "method": "transfer"}
    store.save(pd.DataFrame([row]), chapter="robustness", dataset="mine.csv", profile="quick")
    assert cli_main(["claims", "--dataset", "mine.csv"]) == 2
    err = capsys.readouterr().err
    assert "recmeta claims --dataset mine.csv --quick" in err and "robustness" in err
    assert cli_main(["claims", "--dataset", "mine.csv", "--quick"]) == 0
    capsys.readouterr()
    assert cli_main(["claims", "robustness", "--dataset", "other.csv"]) == 2
    assert "--quick" not in capsys.readouterr().err.split("make book")[-1]


def test_run_list_explains_parameters_profiles_and_data(capsys):
    assert cli_main(["run", "--list", "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "quick (--quick): smaller sizes, for a first look" in out
    blocks = {b.split(":", 1)[0]: b for b in out.split("\n\n")[1:]}
    found = {c.name: c for c in chapters.discover(ROOT)}
    assert set(blocks) == set(found)
    for name in ("sampled-metrics", "robustness"):
        assert "data: ratings, or implicit feedback" in blocks[name]
    for name in chapters.GRADED_ONLY:
        assert "data: ratings only (not implicit feedback" in blocks[name]
    sm = blocks["sampled-metrics"]
    # the comments of the parameters cell, read independently from the chapter's text
    text = chapters.find("sampled-metrics", ROOT).path.read_text()
    line = next(x for x in text.splitlines() if x.startswith("real_m = "))
    assert f"real_m = 100  # {line.split('#', 1)[1].strip()}" in sm
    assert "real_repetitions = None" in sm and "[if None: quick 20, full" in sm


def test_run_list_refuses_stray_arguments(capsys):
    assert cli_main(["run", "--list", "nosuch", "--root", str(ROOT)]) == 2
    assert "no chapter 'nosuch'" in capsys.readouterr().err
    assert cli_main(["run", "--list", "--dataset", "ml-100k"]) == 2
    assert "--list takes no --dataset" in capsys.readouterr().err
    assert cli_main(["run", "--list", "robustness", "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "robustness:" in out and "sampled-metrics:" not in out
