"""TREC file reading and writing, and the ``recmeta evaluate`` command against pytrec_eval."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from recmeta.metrics import Judgments, Runs, score_matrix
from recmeta.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    qrels = pd.DataFrame(
        [(f"q{u}", f"d{i}", int(rng.integers(0, 4))) for u in range(6) for i in range(15)
         if rng.random() < 0.5],
        columns=["user", "item", "rating"],
    )
    run = pd.DataFrame(
        [(f"q{u}", f"d{i}", float(rng.integers(0, 5))) for u in range(6)
         for i in rng.choice(20, 8, replace=False)],
        columns=["user", "item", "score"],
    )
    write_qrels(qrels, tmp_path / "t.qrels")
    write_run(run, tmp_path / "a.run", system="alpha")
    return tmp_path, qrels, run


def test_round_trip(files):
    path, qrels, run = files
    back = read_qrels(path / "t.qrels")
    assert list(back.columns) == ["user", "item", "rating"]
    pd.testing.assert_frame_equal(back, qrels.astype({"rating": float}))
    r = read_run(path / "a.run")
    assert set(r["system"]) == {"alpha"}
    np.testing.assert_array_equal(r["score"], run["score"])
    assert not any(p.name.endswith(".tmp") for p in path.iterdir())


def test_bad_files_name_the_line(tmp_path):
    (tmp_path / "bad.qrels").write_text("q1 0 d1 1\nq1 0 d2\n")
    with pytest.raises(TrecFormatError, match=r"bad.qrels:2"):
        read_qrels(tmp_path / "bad.qrels")
    (tmp_path / "dup.qrels").write_text("q1 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(TrecFormatError, match="duplicate"):
        read_qrels(tmp_path / "dup.qrels")
    (tmp_path / "bad.run").write_text("q1 Q0 d1 1 high run\n")
    with pytest.raises(TrecFormatError, match="numeric"):
        read_run(tmp_path / "bad.run")
    with pytest.raises(ValueError, match="integer"):
        write_qrels(pd.DataFrame({"user": [1], "item": [2], "rating": [3.5]}), tmp_path / "x")


def test_files_score_like_pytrec_eval(files):
    path, qrels, run = files
    j = Judgments.from_qrels(path / "t.qrels", threshold=2)
    runs = Runs.from_trec(path / "a.run", j)
    q = {u: dict(zip(g["item"], g["rating"].astype(int))) for u, g in qrels.groupby("user")}
    r = {u: dict(zip(g["item"], g["score"])) for u, g in run.groupby("user")}
    theirs = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.5", "map_cut.5"},
                                            relevance_level=2).evaluate(r)
    nd = score_matrix(j, runs, "nDCG@5")[0]
    ap = score_matrix(j, runs, "AP@5")[0]
    for n, u in enumerate(j.users):
        if np.isnan(nd[n]):
            continue
        assert nd[n] == pytest.approx(theirs[u]["ndcg_cut_5"], abs=1e-9)
        assert ap[n] == pytest.approx(theirs[u]["map_cut_5"], abs=1e-9)


def test_evaluate_command(files, capsys):
    from recmeta.cli import main

    path, qrels, run = files
    write_run(run.assign(score=-run["score"]), path / "b.run", system="beta")
    args = ["evaluate", "--qrels", str(path / "t.qrels"), "--run", str(path / "a.run"),
            "--run", str(path / "b.run"), "-m", "P@5", "-m", "nDCG@5", "--threshold", "2",
            "--json", "--per-user"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)
    means = {(r["system"], r["metric"]): r["value"] for r in rows if r["user"] == "all"}
    j = Judgments.from_qrels(path / "t.qrels", threshold=2)
    runs = Runs.from_trec([path / "a.run", path / "b.run"], j)
    expected = np.nanmean(score_matrix(j, runs, "P@5"), axis=1)
    assert means[("alpha", "P@5")] == pytest.approx(expected[0])
    assert means[("beta", "P@5")] == pytest.approx(expected[1])
    assert any(r["user"] != "all" for r in rows)
    assert main(["evaluate", "--qrels", str(path / "t.qrels"), "--run", str(path / "a.run"),
                 "-m", "Prec@5"]) == 2
    assert "Known metrics" in capsys.readouterr().err
