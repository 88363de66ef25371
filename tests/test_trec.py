"""TREC file reading and writing, and the ``recmeta evaluate`` command against pytrec_eval."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from recmeta.metrics import (
    Judgments,
    Runs,
    TrecFormatError,
    read_qrels,
    read_run,
    score_matrix,
    write_qrels,
    write_run,
)

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
    with pytest.raises(TrecFormatError, match=r"bad.run:1: the score field .* must be a number, "
                       "got 'high'"):
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


# ------------------------------------------------------------------ recmeta evaluate as trec_eval
@pytest.fixture
def trec_files(tmp_path):
    (tmp_path / "t.qrels").write_text(
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d4 -1\nq10 0 d9 1\nq10 0 d5 2\nq2 0 d3 2\n")
    (tmp_path / "a.run").write_text(
        "q1 Q0 d1 1 0.9 first\nq1 Q0 d4 2 0.7 first\nq1 Q0 d2 3 0.5 first\n"
        "q10 Q0 d8 1 1.0 first\nq10 Q0 d9 2 1.0 last extra fields\nq99 Q0 d1 1 1 last\n")
    return tmp_path


def _cli(capsys, *args):
    from recmeta.cli import main

    code = main(["evaluate", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bad_input_through_the_command(tmp_path, capsys):
    """Malformed lines name file, line and layout; duplicates name topic and document; a
    headerless ratings table given as qrels says what it is (no pandas method in the text)."""
    (tmp_path / "r.run").write_text("1 Q0 10 1 2.0 t\n1 Q0 20 2 1.0 t\n")
    (tmp_path / "bad.qrels").write_text("# judged\n1 0 10 1\n1 0 20\n")
    code, _, err = _cli(capsys, tmp_path / "bad.qrels", tmp_path / "r.run")
    assert code == 2 and "bad.qrels:3: expected 4 whitespace-separated fields" in err
    assert "(qid iter docno rel), got 3" in err
    (tmp_path / "ratings.tsv").write_text("1\t10\t4\t881250949\n1\t20\t4\t881250950\n")
    code, _, err = _cli(capsys, "-c", tmp_path / "ratings.tsv", tmp_path / "r.run")
    assert code == 2 and "grade 881250950 for topic '1', docno '4'" in err
    assert "ratings table" in err and "bound method" not in err
    (tmp_path / "ratings3.tsv").write_text("1\t10\t4\t3\n1\t20\t4\t2\n")
    code, _, err = _cli(capsys, "-c", tmp_path / "ratings3.tsv", tmp_path / "r.run")
    assert code == 2 and "duplicate judgment for topic '1', docno '4'" in err
    assert "ratings table" in err
    with pytest.raises(TrecFormatError, match="qid '1', docno '4'.*ratings table"):
        read_qrels(tmp_path / "ratings.tsv")
    (tmp_path / "twice.run").write_text("1 Q0 10 1 2.0 t\n1 Q0 10 2 1.0 t\n")
    (tmp_path / "ok.qrels").write_text("1 0 10 1\n")
    code, _, err = _cli(capsys, tmp_path / "ok.qrels", tmp_path / "twice.run")
    assert code == 2 and "docno '10' appears twice for topic '1'" in err


def test_positional_files_print_trec_eval_layout(trec_files, capsys):
    """q1: d1 (relevant), d4 (pooled, not judged), d2: P_5 = 1/5, map 1. q10: d9 before d8
    (tie, docno descending): map 1/2. The run id is the tag of the last line."""
    code, out, err = _cli(capsys, "--trec-eval", "9.0.8", "-q", "-m", "P.5", "-m", "map",
                          trec_files / "t.qrels", trec_files / "a.run")
    assert code == 0 and err == ""
    assert out == (
        "map                   \tq1\t1.0000\n"
        "P_5                   \tq1\t0.2000\n"
        "map                   \tq10\t0.5000\n"
        "P_5                   \tq10\t0.2000\n"
        "map                   \tall\t0.7500\n"
        "P_5                   \tall\t0.2000\n"
    )
    code, out, err = _cli(capsys, trec_files / "t.qrels", trec_files / "a.run")
    # trec_eval 10.0 (the default) stops at q2, a qrels topic without results
    assert code == 2 and out == "" and "topic 'q2'" in err and "-c" in err
    code, out, _ = _cli(capsys, "--trec-eval", "9.0.8", trec_files / "t.qrels",
                        trec_files / "a.run")
    assert out.splitlines()[:2] == ["runid                 \tall\tlast",
                                    "num_q                 \tall\t2"]
    assert len(out.splitlines()) == 2 + 3 + 5 + 11 + 9  # 'official', trec_eval's default


def test_trec_flags_and_the_function_agree(trec_files, capsys):
    from recmeta.metrics import read_qrels, read_run, trec_eval

    code, out, err = _cli(capsys, "-qcJ", "-M2", "-l2", "-m", "all_trec", "-mP.1,2",
                          trec_files / "t.qrels", trec_files / "a.run")
    expected = trec_eval(read_qrels(trec_files / "t.qrels"), read_run(trec_files / "a.run"),
                         ["all_trec", "P.1,2"], level=2, complete=True, max_ret=2,
                         judged_only=True)
    assert code == 0 and out == expected.text(query=True) and err == ""
    assert "relstring             \tq2\t''" in out  # -c prints the missing topic
    assert "\nP_1                   \tall\t" in out and "\nP_5 " not in out
    code, out, _ = _cli(capsys, "-n", "-q", "-m", "num_ret", "--trec-eval", "9.0.8",
                        trec_files / "t.qrels", trec_files / "a.run")
    assert out == "num_ret               \tq1\t3\nnum_ret               \tq10\t2\n"


def test_trec_mode_refuses_missing_measures_by_name(trec_files, capsys):
    code, out, err = _cli(capsys, "--trec-eval", "9.0.8", "-m", "rbp", trec_files / "t.qrels",
                          trec_files / "a.run")
    assert code == 2 and out == "" and "trec_eval 9.0.8 has no measure 'rbp'" in err
    code, out, err = _cli(capsys, "-m", "prefs_simp", trec_files / "t.qrels",
                          trec_files / "a.run")
    assert code == 2 and out == "" and "'prefs_simp' needs another judgment" in err
    code, _, err = _cli(capsys, "-m", "P_x", trec_files / "t.qrels", trec_files / "a.run")
    assert code == 2 and "Known metrics" in err
    code, _, err = _cli(capsys, trec_files / "t.qrels")
    assert code == 2 and "two files" in err


def test_trec_mode_json_stdin_and_options(trec_files, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((trec_files / "a.run").read_text()))
    code, out, _ = _cli(capsys, "--format", "json", "-q", "-c", "-m", "num_rel", "-m", "gm_map",
                        trec_files / "t.qrels", "-")
    rows = json.loads(out)
    assert code == 0
    assert rows[0] == {"measure": "num_rel", "query": "q1", "value": 1}
    assert rows[-1]["measure"] == "gm_map" and rows[-1]["query"] == "all"
    # the recmeta options spell the same flags
    _, a, _ = _cli(capsys, "--qrels", trec_files / "t.qrels", "--run", trec_files / "a.run",
                   "-m", "P_5", "--threshold", "2", "--depth", "1", "--per-user", "-c")
    _, b, _ = _cli(capsys, "-l2", "-M1", "-q", "-c", "-m", "P.5", trec_files / "t.qrels",
                   trec_files / "a.run")
    assert a == b and "P_5                   \tq2\t0.0000" in a


def test_recmeta_names_keep_the_recmeta_table(trec_files, capsys):
    code, out, _ = _cli(capsys, "--qrels", trec_files / "t.qrels", "--run",
                        trec_files / "a.run", "-m", "P@5", "-m", "map")
    # one system per tag; users with a relevant item: q1, q10, q2 (no list: 0, the coverage
    # penalty). "first": q1 d1 d4 d2 (P@5 = 1/5), q10 d8 (0); "last": q10 d9 (1/5)
    assert code == 0
    assert out.splitlines()[:2] == [f"first\tP@5\tall\t{(1 / 5 + 0 + 0) / 3:.4f}",
                                    f"last\tP@5\tall\t{(0 + 1 / 5 + 0) / 3:.4f}"]


def test_ir_measures_names_on_the_command_line(trec_files, capsys):
    """Names only trec_eval's pass computes choose the trec_eval layout with --qrels/--run too.
    q1: d1 (grade 1), d4 (pooled, no grade), d2 (0): RBP(p=0.5, rel=1) = 0.5, Judged@2 = 1."""
    code, out, err = _cli(capsys, "--qrels", trec_files / "t.qrels", "--run",
                          trec_files / "a.run", "-c", "-q", "-m", "RBP(p=0.5,rel=1)", "-m",
                          "Judged@2", "-m", "P(rel=2)@5")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:3] == ["RBP(p=0.5,rel=1)      \tq1\t0.5000",
                         "Judged@2              \tq1\t1.0000",
                         "P(rel=2)@5            \tq1\t0.0000"]
    assert "Judged@2              \tq10\t0.5000" in lines  # d9 (tie, docno descending) judged
    assert "P(rel=2)@5            \tq2\t0.0000" in lines  # -c: q2 has no results
