"""Dataset registry, loaders, validation and statistics."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from recmeta import data
from recmeta.cli import main as cli_main


def test_ml100k_loads_with_documented_size(ml100k):
    assert len(ml100k) == 100_000
    assert ml100k["user"].nunique() == 943
    assert ml100k["item"].nunique() == 1_682
    assert list(ml100k.columns) == ["user", "item", "rating", "timestamp"]
    assert ml100k["rating"].value_counts().to_dict() == {
        4.0: 34_174, 3.0: 27_145, 5.0: 21_201, 2.0: 11_370, 1.0: 6_110
    }


def test_ml_latest_small_loads_with_documented_size(ml_latest_small):
    df = ml_latest_small
    assert (len(df), df["user"].nunique(), df["item"].nunique()) == (100_836, 610, 9_724)
    assert sorted(df["rating"].unique()) == [x / 2 for x in range(1, 11)]


def test_registry_lists_the_grouplens_releases():
    assert set(data.REGISTRY) == {
        "ml-100k", "ml-1m", "ml-10m", "ml-20m", "ml-25m", "ml-32m", "ml-latest-small"
    }
    for d in data.REGISTRY.values():
        assert d.url.startswith("https://files.grouplens.org/datasets/movielens/")
        assert d.url.endswith(d.name + ".zip")
    assert data.info("ml-1m").file_format == "dat"


def test_unknown_dataset_lists_known_ones():
    with pytest.raises(KeyError, match="ml-100k.*ml-latest-small"):
        data.info("ml-2k")


def _fake_release(tmp_path, monkeypatch, name, text: bytes):
    """Put a small file in the cache where release ``name`` keeps its ratings."""
    d = data.info(name)
    digest = "sha256:" + hashlib.sha256(text).hexdigest()
    fake = d.__class__(**{**d.__dict__, "file_digest": digest, "n_ratings": 3, "n_users": 2, "n_items": 2})
    monkeypatch.setitem(data.REGISTRY, name, fake)
    monkeypatch.setenv("RECMETA_DATA", str(tmp_path))
    (tmp_path / d.folder).mkdir()
    (tmp_path / d.ratings_path).write_bytes(text)


@pytest.mark.parametrize(
    "name, text",
    [
        ("ml-100k", b"1\t10\t4\t881250949\n1\t20\t3\t881250950\n2\t10\t5\t881250951\n"),
        ("ml-1m", b"1::10::4::978300760\n1::20::3::978300761\n2::10::5::978300762\n"),
        ("ml-latest-small", b"userId,movieId,rating,timestamp\n1,10,4.5,964982703\n1,20,3.0,964982704\n2,10,0.5,964982705\n"),
    ],
)
def test_each_format_parses(tmp_path, monkeypatch, name, text):
    _fake_release(tmp_path, monkeypatch, name, text)
    df = data.load(name, download=False)
    assert df[["user", "item"]].values.tolist() == [[1, 10], [1, 20], [2, 10]]
    assert df["rating"].dtype == np.float64 and df["timestamp"].dtype == np.int64
    expected = [float(line.replace(b"::", b",").replace(b"\t", b",").split(b",")[2])
                for line in text.splitlines() if not line.startswith(b"user")]
    assert df["rating"].tolist() == expected


def test_corrupt_cached_file_is_rejected(tmp_path, monkeypatch):
    _fake_release(tmp_path, monkeypatch, "ml-100k", b"1\t10\t4\t1\n1\t20\t3\t2\n2\t10\t5\t3\n")
    (tmp_path / "ml-100k" / "u.data").write_bytes(b"1\t10\t4\t1\n")
    with pytest.raises(data.DataError, match="does not match the official ml-100k"):
        data.load("ml-100k", download=False)


def test_incomplete_release_is_rejected(tmp_path, monkeypatch):
    # the real digest check is off (file_digest None); the size check still catches it
    d = data.info("ml-10m")
    monkeypatch.setenv("RECMETA_DATA", str(tmp_path))
    (tmp_path / d.folder).mkdir()
    (tmp_path / d.ratings_path).write_bytes(b"1::10::4::1\n")
    with pytest.raises(data.DataError, match="10000054"):
        data.load("ml-10m", download=False)


def test_offline_and_not_cached_says_what_to_put_where(tmp_path, monkeypatch):
    monkeypatch.setenv("RECMETA_DATA", str(tmp_path))
    with pytest.raises(data.DatasetNotAvailable) as err:
        data.fetch("ml-1m", download=False)
    msg = str(err.value)
    assert "https://files.grouplens.org/datasets/movielens/ml-1m.zip" in msg
    assert "ml-1m/ratings.dat" in msg and "RECMETA_DATA" in msg


def test_seed_folder_fills_cache_atomically(tmp_path, monkeypatch):
    from .conftest import SEED

    if not (SEED / "ml-100k" / "u.data").exists():
        pytest.fail(f"the seed folder {SEED} lacks ml-100k; set RECMETA_SEED")
    monkeypatch.setenv("RECMETA_DATA", str(tmp_path / "cache"))
    path = data.fetch("ml-100k", seed=SEED, download=False)
    assert path == tmp_path / "cache" / "ml-100k" / "u.data"
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")]
    assert len(data.load("ml-100k", download=False)) == 100_000


def test_download_is_verified_with_pooch(tmp_path, monkeypatch):
    """A downloaded archive goes through pooch with the registry's checksum, then extracts."""
    import io
    import zipfile

    import pooch

    payload = b"1\t10\t4\t1\n1\t20\t3\t2\n2\t10\t5\t3\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ml-100k/u.data", payload)
    archive = tmp_path / "ml-100k.zip"
    archive.write_bytes(buf.getvalue())
    d = data.info("ml-100k")
    fake = d.__class__(**{**d.__dict__, "file_digest": None, "n_ratings": 3, "n_users": 2, "n_items": 2})
    monkeypatch.setitem(data.REGISTRY, "ml-100k", fake)
    monkeypatch.setenv("RECMETA_DATA", str(tmp_path / "cache"))
    calls = []

    def fake_retrieve(url, known_hash, path, progressbar):
        calls.append((url, known_hash))
        return str(archive)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    assert len(data.load("ml-100k")) == 3
    assert calls == [(d.url, d.archive_hash)]


# ---------------------------------------------------------------- bring your own data
GOOD = pd.DataFrame({"u": [1, 1, 2], "i": ["a", "b", "a"], "r": [4.0, 3.0, 5.0]})


def test_from_frame_maps_columns():
    df = data.from_frame(GOOD, user="u", item="i", rating="r")
    assert list(df.columns) == ["user", "item", "rating"]
    assert df["item"].tolist() == ["a", "b", "a"]  # ids are kept as they are


@pytest.mark.parametrize(
    "frame, match",
    [
        (GOOD.iloc[:0], "empty"),
        (GOOD.drop(columns="r"), r"missing column\(s\) \['r'\]"),
        (GOOD.assign(r=[4.0, np.nan, 5.0]), r"row 1: column 'r' \(the rating\) is empty"),
        (GOOD.assign(u=[1, None, 2]), r"row 1: column 'u' \(the user\) is empty"),
        (GOOD.assign(r=["4", "3", "5"]), "numbers written as text .*pd.to_numeric"),
        (GOOD.assign(r=["4", "good", "5"]), r"row 1: column 'r' \(the rating\) holds 'good'"),
        (GOOD.assign(r=[True, False, True]), "True/False values, not numbers"),
        (GOOD.assign(i=["a", "a", "a"]), r"share a \(user, item\) pair, e.g. \(1, 'a'\) at rows 0, 1"),
    ],
)
def test_bad_input_is_rejected_with_a_reason(frame, match):
    with pytest.raises(data.DataError, match=match):
        data.from_frame(frame, user="u", item="i", rating="r")


def test_from_csv(tmp_path):
    p = tmp_path / "mine.csv"
    p.write_text("who,what,stars,when\n1,7,4,100\n2,7,2.5,101\n")
    df = data.from_csv(p, user="who", item="what", rating="stars", timestamp="when")
    assert df.to_dict("list") == {"user": [1, 2], "item": [7, 7], "rating": [4.0, 2.5], "timestamp": [100, 101]}
    p.write_text("who,what,stars\n1,7,\n")
    with pytest.raises(data.DataError, match=f"{p}, line 2: column 'stars' \\(the rating\\) is empty"):
        data.from_csv(p, user="who", item="what", rating="stars")
    with pytest.raises(FileNotFoundError):
        data.from_csv(tmp_path / "nope.csv")


# ---------------------------------------------------------------- statistics
def _gini_reference(x):
    """Mean absolute difference over all pairs divided by twice the mean (textbook definition)."""
    x = np.asarray(x, dtype=float)
    return np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean())


def test_gini_against_pairwise_definition():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(1, 500, size=rng.integers(2, 60))
        assert data.gini(x) == pytest.approx(_gini_reference(x), rel=1e-12)
    assert data.gini([5, 5, 5]) == 0.0
    assert data.gini([0, 0, 0, 9]) == pytest.approx(3 / 4)


def test_stats_of_ml100k(ml100k):
    s = data.stats(ml100k, "ml-100k")
    assert s["density"] == pytest.approx(100_000 / (943 * 1_682))
    counts = ml100k.groupby("item").size().to_numpy()
    assert s["item_gini"] == pytest.approx(_gini_reference(counts), rel=1e-10)
    assert sum(s["rating_distribution"].values()) == 100_000


def test_to_lenskit(ml100k):
    ds = data.to_lenskit(ml100k)
    assert (ds.user_count, ds.item_count, ds.interaction_count) == (943, 1_682, 100_000)


def test_cli_stats_json(ml100k, capsys):
    assert cli_main(["data", "stats", "ml-100k", "--json", "--offline"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["users"], out["items"], out["ratings"]) == (943, 1_682, 100_000)
    assert {"density", "item_gini"} <= set(out)


def test_cli_unknown_dataset_fails_cleanly(capsys):
    assert cli_main(["data", "stats", "ml-7k", "--offline"]) == 2
    assert "known datasets" in capsys.readouterr().err


def test_console_script_installed():
    r = subprocess.run([sys.executable, "-m", "recmeta.cli", "data", "list"], capture_output=True, text=True)
    assert r.returncode == 0 and "ml-32m" in r.stdout


def test_default_cache_is_in_the_project_folder(tmp_path, monkeypatch):
    (tmp_path / "recmeta").mkdir()
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.delenv("RECMETA_DATA", raising=False)
    monkeypatch.chdir(tmp_path / "notebooks")
    assert data.cache_dir() == tmp_path.resolve() / "data"
    monkeypatch.chdir(tmp_path.parent)
    assert data.cache_dir() == tmp_path.parent.resolve() / "data"


# ---------------------------------------------------------------- one loader; implicit feedback
def test_from_csv_keeps_a_timestamp_column_unless_told(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("user,item,rating,timestamp\n1,7,4,100\n2,7,2.5,101\n")
    assert list(data.from_csv(p).columns) == ["user", "item", "rating", "timestamp"]
    assert list(data.from_csv(p, timestamp=None).columns) == ["user", "item", "rating"]
    with pytest.raises(data.DataError, match=r"missing column\(s\) \['when'\]"):
        data.from_csv(p, timestamp="when")


def test_load_takes_a_release_name_or_a_file(tmp_path, ml_latest_small):
    p = tmp_path / "mine.tsv"
    ml_latest_small.head(50).to_csv(p, sep="\t", index=False)
    mine = data.load(p)
    pd.testing.assert_frame_equal(mine, ml_latest_small.head(50))
    assert data.load(str(p)).equals(mine)
    with pytest.raises(KeyError, match="known datasets"):
        data.load("ml-7k")
    with pytest.raises(FileNotFoundError):
        data.load(tmp_path / "absent.csv")


def test_implicit_feedback_loads_without_ratings(tmp_path, ml_latest_small):
    p = tmp_path / "clicks.csv"
    ml_latest_small.drop(columns="rating").to_csv(p, index=False)
    clicks = data.load(p)
    assert list(clicks.columns) == ["user", "item", "timestamp"]
    assert data.is_implicit(clicks) and not data.is_implicit(ml_latest_small)
    s = data.stats(clicks, "clicks")
    assert s["implicit"] and s["rating_distribution"] == {} and s["ratings"] == len(ml_latest_small)
    # duplicates are refused for interactions too, with the word that fits
    twice = pd.concat([clicks.head(2), clicks.head(1)])
    with pytest.raises(data.DataError, match="keep one interaction per pair"):
        data.from_frame(twice)
    # a rating column named but absent stays an error; rating=None asks for implicit data
    with pytest.raises(data.DataError, match="rating=None"):
        data.from_frame(clicks, rating="stars")
    assert data.is_implicit(data.from_frame(ml_latest_small, rating=None))


def test_implicit_judgments_make_every_pair_relevant():
    from recmeta.metrics import Judgments, JudgmentsError

    j = Judgments.from_frame(pd.DataFrame({"user": [1, 1, 2], "item": [5, 6, 5]}), threshold=None)
    assert j.relevant_counts().tolist() == [2, 1]
    with pytest.raises(JudgmentsError, match="threshold=None"):
        Judgments.from_frame(pd.DataFrame({"user": [1], "item": [5]}), threshold=4)
    with pytest.raises(JudgmentsError, match="implicit feedback"):
        Judgments.from_frame(pd.DataFrame({"user": [1], "item": [5], "rating": [4.0]}), threshold=None)


def test_cli_data_stats_and_fetch_take_a_csv_path(tmp_path, ml_latest_small, capsys):
    p = tmp_path / "ratings.csv"
    ml_latest_small.to_csv(p, index=False)
    assert cli_main(["data", "stats", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["dataset"], out["users"], out["items"], out["ratings"]) == ("ratings.csv", 610, 9_724, 100_836)
    assert cli_main(["data", "fetch", str(p)]) == 0
    assert "local file" in capsys.readouterr().out
    ml_latest_small.drop(columns="rating").to_csv(p, index=False)
    assert cli_main(["data", "stats", str(p)]) == 0
    assert "none (implicit feedback)" in capsys.readouterr().out
