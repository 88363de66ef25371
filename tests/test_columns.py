"""Ratings files and frames of one's own: columns by name, by usual spelling or in order, and
the formats (CSV, TSV without a header, MovieLens .dat, Parquet), from Python and every command."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from recmeta import data
from recmeta.book import chapters
from recmeta.cli import build_parser, main as cli_main

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _counts(df: pd.DataFrame, user: str, item: str) -> tuple[int, int, int]:
    return len(df), df[user].nunique(), df[item].nunique()


def test_movielens_names_are_recognised_and_said(tmp_path, capsys):
    src = SHARED / "ml-latest-small" / "ratings.csv"
    raw = pd.read_csv(src)  # independent reading: pandas on the file as it is
    assert list(raw.columns) == ["userId", "movieId", "rating", "timestamp"]
    with pytest.warns(data.ColumnsRecognised, match="userId → user, movieId → item"):
        df = data.load(src)
    assert _counts(df, "user", "item") == _counts(raw, "userId", "movieId") == (100_836, 610, 9_724)
    assert df["rating"].sum() == pytest.approx(raw["rating"].sum())
    assert cli_main(["data", "stats", str(src), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["ratings"] == 100_836
    assert "recmeta: note:" in out.err and "userId → user, movieId → item" in out.err


@pytest.mark.parametrize("user, item, rating, ts", [
    ("user_id", "item_id", "rating", "timestamp"),
    ("UserID", "MovieID", "score", "time"),
    ("userId", "itemId", "Rating", "Timestamp"),
])
def test_usual_spellings(user, item, rating, ts):
    frame = pd.DataFrame({user: [1, 1, 2], item: [5, 6, 5], rating: [4.0, 2.0, 3.5],
                          ts: [10, 11, 12]})
    with pytest.warns(data.ColumnsRecognised):
        df = data.from_frame(frame)
    assert df.to_dict("list") == {"user": [1, 1, 2], "item": [5, 6, 5],
                                  "rating": [4.0, 2.0, 3.5], "timestamp": [10, 11, 12]}


def test_canonical_names_say_nothing():
    frame = pd.DataFrame({"user": [1], "item": [2], "rating": [3.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(data.from_frame(frame)) == 1


def test_two_candidates_for_one_column_are_refused():
    frame = pd.DataFrame({"user": [1], "userId": [1], "item": [2], "rating": [3.0]})
    with pytest.raises(data.DataError, match=r"\['user', 'userId'\] could each be the user"):
        data.from_frame(frame)
    assert len(data.from_frame(frame, columns="user=userId")) == 1


def test_columns_keyword_and_option(tmp_path, capsys):
    p = tmp_path / "listens.csv"
    p.write_text("listener,song,stars,at\n1,7,4,100\n2,7,2.5,101\n2,8,5,102\n")
    with pytest.raises(data.DataError, match=r"missing column\(s\) \['user'\].*--columns"):
        data.load(p)
    spec = "user=listener,item=song,rating=stars,timestamp=at"
    df = data.load(p, columns=spec)
    assert df.to_dict("list") == {"user": [1, 2, 2], "item": [7, 7, 8],
                                  "rating": [4.0, 2.5, 5.0], "timestamp": [100, 101, 102]}
    assert data.load(p, columns={"user": "listener", "item": "song", "rating": "stars",
                                 "timestamp": "at"}).equals(df)
    assert data.from_csv(p, columns=spec).equals(df)
    clicks = data.load(p, columns="user=listener,item=song,rating=none,timestamp=none")
    assert list(clicks.columns) == ["user", "item"] and data.is_implicit(clicks)
    assert cli_main(["data", "stats", str(p), "--columns", spec, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rating_distribution"] == {"2.5": 1, "4.0": 1, "5.0": 1}
    with pytest.raises(data.DataError, match="unknown role 'stars'"):
        data.load(p, columns="stars=rating")


def test_every_dataset_command_takes_columns():
    parser = build_parser()
    spec = "user=a,item=b"
    for argv in (["data", "stats", "x.csv"], ["data", "fetch", "x.csv"],
                 ["run", "sampled-metrics", "--dataset", "x.csv"],
                 ["runs", "make", "--dataset", "x.csv"],
                 ["compare", "a.run", "--qrels", "q", "--train", "x.csv"]):
        assert parser.parse_args([*argv, "--columns", spec]).columns == spec, argv


def test_headerless_tsv_needs_its_columns_in_order(tmp_path, ml100k, capsys):
    u = SHARED / "ml-100k" / "u.data"
    with pytest.raises(data.DataError, match=r"line 1 \('196\\t242\\t3\\t881250949'\) is data.*"
                       "--columns user,item,rating,timestamp"):
        data.load(u)
    df = data.load(u, columns="user,item,rating,timestamp")
    pd.testing.assert_frame_equal(df, ml100k)
    assert list(data.load(u, columns="user,item,rating,-").columns) == ["user", "item", "rating"]
    assert cli_main(["data", "stats", str(u), "--json"]) == 2
    assert "--columns user,item,rating,timestamp" in capsys.readouterr().err
    assert cli_main(["data", "stats", str(u), "--columns", "user,item,rating,timestamp",
                     "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ratings"] == 100_000
    with pytest.raises(data.DataError, match="4 fields, and columns names 3"):
        data.load(u, columns="user,item,rating")


def test_movielens_dat_file(tmp_path):
    src = SHARED / "ml-1m-partial" / "ratings-PARTIAL-users0001-2999.dat.gz"
    p = tmp_path / "ratings.dat"
    p.write_bytes(gzip.decompress(src.read_bytes()))
    lines = p.read_text().splitlines()
    fields = [line.split("::") for line in lines]
    with pytest.warns(data.ColumnsRecognised, match="MovieLens's order"):
        df = data.load(p)
    assert len(df) == len(lines)
    assert df["user"].nunique() == len({f[0] for f in fields}) == 2_999
    assert df["rating"].sum() == sum(int(f[2]) for f in fields)
    assert df["timestamp"].iloc[-1] == int(fields[-1][3])


def test_compressed_files_read_as_the_file_inside(tmp_path, capsys):
    import bz2
    import lzma

    src = SHARED / "ml-1m-partial" / "ratings-PARTIAL-users0001-2999.dat.gz"
    raw = gzip.decompress(src.read_bytes())
    lines = raw.decode().splitlines()
    assert data.is_path("ratings.dat.gz") and data.is_path("ratings.csv.bz2")
    with pytest.warns(data.ColumnsRecognised, match="MovieLens's order"):
        df = data.load(src)  # the shared file itself, `::` inside gzip
    assert len(df) == len(lines) and df["user"].nunique() == 2_999
    assert df["rating"].sum() == sum(int(line.split("::")[2]) for line in lines)
    # with its columns named, as `--columns` names them
    named = data.load(src, columns="user,item,rating,timestamp")
    pd.testing.assert_frame_equal(named, df)
    assert cli_main(["data", "stats", str(src), "--columns", "user,item,rating,-",
                     "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ratings"] == len(lines)
    # a CSV and a TSV with a header, compressed three ways, read as the plain files do
    head = df.head(500)
    for name, sep in (("r.csv", ","), ("r.tsv", "\t")):
        plain = tmp_path / name
        head.rename(columns={"user": "userId", "item": "movieId"}).to_csv(
            plain, sep=sep, index=False
        )
        with pytest.warns(data.ColumnsRecognised):
            want = data.load(plain)
        pd.testing.assert_frame_equal(want, head.reset_index(drop=True))
        for suffix, pack in ((".gz", gzip.compress), (".bz2", bz2.compress),
                             (".xz", lzma.compress)):
            packed = tmp_path / (name + suffix)
            packed.write_bytes(pack(plain.read_bytes()))
            with pytest.warns(data.ColumnsRecognised):
                pd.testing.assert_frame_equal(data.load(packed), want)
    # a file named .gz that is not gzip: the error names the file and the fix
    bad = tmp_path / "ratings.dat.gz"
    bad.write_bytes(raw[:200])
    with pytest.raises(data.DataError, match=r"ratings\.dat\.gz could not be decompressed"):
        data.load(bad)


def test_parquet(tmp_path, ml_latest_small):
    p = tmp_path / "r.parquet"
    ml_latest_small.head(200).rename(columns={"user": "userId", "item": "movieId"}).to_parquet(p)
    with pytest.warns(data.ColumnsRecognised):
        df = data.load(p)
    pd.testing.assert_frame_equal(df, ml_latest_small.head(200))


def test_chapter_run_passes_columns_to_the_notebook(tmp_path):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "notebooks" / "tiny.md").write_text(
        "---\njupyter:\n  jupytext:\n    text_representation:\n      extension: .md\n"
        "      format_name: myst\n  kernelspec:\n    display_name: Python 3\n    language: python\n"
        "    name: python3\n---\n\n# Tiny\n\n"
        "```{code-cell} ipython3\n:tags: [parameters]\n\ndataset = \"ml-100k\"\ncolumns = None\n```\n\n"
        "```{code-cell} ipython3\nfrom recmeta.book import chapters\n"
        "r = chapters.ratings(dataset, columns=columns)\n"
        "print('LOADED', len(r), r['user'].nunique(), list(r.columns))\n```\n"
    )
    p = tmp_path / "mine.tsv"
    p.write_text("1\t7\t4\n2\t7\t2.5\n2\t8\t5\n")
    out = chapters.run("tiny", dataset=str(p), columns="user,item,rating", root=root,
                       out=tmp_path / "out", html=False)
    nb = json.loads(out.read_text())
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "LOADED 3 2 ['user', 'item', 'rating']" in text
    injected = "".join("".join(c["source"]) for c in nb["cells"]
                       if "injected-parameters" in c["metadata"].get("tags", []))
    assert "columns = \"user,item,rating\"" in injected or "columns = 'user,item,rating'" in injected
    with pytest.raises(data.DataError, match="is data, not a header row"):
        chapters.run("tiny", dataset=str(p), root=root, out=tmp_path / "out", html=False)


def test_chapters_with_a_dataset_take_columns():
    for c in chapters.discover(ROOT):
        if "dataset" in c.parameters:
            assert c.parameters.get("columns", "absent") is None, c.name


def test_runs_make_and_compare_take_columns(tmp_path, monkeypatch, ml_latest_small, capsys):
    from recmeta import metrics

    monkeypatch.setenv("RECMETA_CACHE", str(tmp_path / "cache"))
    small = ml_latest_small[ml_latest_small["user"] <= 60]
    odd = small.rename(columns={"user": "uid", "item": "song", "rating": "stars",
                                "timestamp": "when"})
    p = tmp_path / "odd.csv"
    odd.to_csv(p, sep=";", index=False)
    spec = "user=uid,item=song,rating=stars,timestamp=when"
    assert cli_main(["runs", "make", "--dataset", str(p), "--columns", spec, "--systems", "pop",
                     "--depth", "10"]) == 0
    assert "1 systems, " in capsys.readouterr().out
    # compare --train: the odd file with --columns gives what the canonical file gives
    canonical = tmp_path / "train.csv"
    small.to_csv(canonical, index=False)
    test = small.groupby("user").tail(3)
    metrics.write_qrels(test.assign(rating=(2 * test["rating"]).astype(int)), tmp_path / "test.qrels")
    top = small.groupby("item").size().sort_values(ascending=False).index[:10]
    run = pd.DataFrame([(u, i, 10 - k) for u in test["user"].unique() for k, i in enumerate(top)],
                       columns=["user", "item", "score"])
    metrics.write_run(run, tmp_path / "pop.run", system="pop")
    base = ["compare", str(tmp_path / "pop.run"), "--qrels", str(tmp_path / "test.qrels"),
            "--threshold", "8", "--bootstrap", "99", "--format", "json"]
    assert cli_main([*base, "--train", str(canonical)]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert cli_main([*base, "--train", str(p), "--columns", spec]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["references"] == expected["references"] and len(got["references"]) == 2
    assert cli_main([*base, "--train", str(p)]) == 2
    assert "missing column(s) ['user']" in capsys.readouterr().err


def test_columns_with_a_release_are_refused_not_ignored():
    with pytest.raises(ValueError, match="column mappings apply to files"):
        chapters.ratings("ml-100k", columns="user=uid,item=song")
