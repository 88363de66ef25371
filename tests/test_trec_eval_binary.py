"""``recmeta evaluate`` against the real trec_eval 10.0, built from ``../shared/peers``.

The session fixture copies trec_eval's source (beside the project, as the data seed is) into a
temporary folder and builds it with ``make``. Each case writes a random qrels and run (ties,
grades -1..3, one-item lists, topics missing from either side, docnos and qids with odd
characters), runs the binary and ``recmeta evaluate`` (in-process) with the same flags, and
asks for byte-equal output. Without ``-c``, a qrels topic missing from the run stops trec_eval
10.0 (exit 4); recmeta must then refuse too.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

from recmeta.cli import main

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "peers" / "trec_eval-10.0"
TOPICS_PER_CASE = 1100
DOCS = np.array(["d1", "d10", "d2", "D2", "d20", "a.b", "x-y", "z_1", "é9", "9", "10", "ABC",
                 "d#3", "q", "doc/7", "dd", "d3", "d30", "é", "e", "a,b", "\"q\"", "ü\x27"])
FLAGS = [[], ["-c"], ["-J"], ["-M", "4"], ["-l", "2"], ["-c", "-J", "-l", "2"],
         ["-c", "-M", "3", "-N", "500"], ["-J", "-M", "6", "-l", "3"], ["-n"], ["-c", "-l", "0"]]
SINGLE = ["rbp.p=0.8", "relative_P.5,10", "ndcg.1=0.5,2=2", "G", "utility.2,-1,0.5,0.1",
          "Rprec_mult.0.5,1.5", "11pt_avg.0.2,0.5,0.8", "relstring.5", "set_F.0.5", "unj.3,7",
          "success.2", "iprec_at_recall.0.33,0.66,0.25", "Rndcg.3=1",
          "ndcg_rel", "rbp_resid.p=0.5", "binG", "set_map", "map_cut.1,3", "ndcg_cut.2,4",
          "G.2=0", "ndcg_rel.3=-1"]
# ndcg, dcg and ideal_dcg share one parameter record in trec_eval, freed once per measure:
# asked together, the binary crashes (SIGSEGV) after printing; so these go one at a time
ALONE = ["dcg", "ideal_dcg", "dcg.1=2", "ndcg", "utility", "set_F", "relstring", "rbp",
         "ndcg.1=0.5,2=3,-1=0.2", "rbp.-1=2"]


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> Path:
    """trec_eval 10.0, built once per session into a temporary folder."""
    if shutil.which("make") is None or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler (cc/gcc) and make to build trec_eval 10.0 for the reference")
    assert SOURCE.is_dir(), f"trec_eval 10.0's source is missing: {SOURCE}"
    build = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(SOURCE, build, copy_function=shutil.copyfile)
    for path in [build, *build.rglob("*")]:  # the source may be read-only: the copy is not
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    done = subprocess.run(["make", "-C", str(build)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return build / "trec_eval"


def _write_case(folder: Path, seed: int, n_topics: int, missing: bool) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(n_topics):
        qid = f"q{t}" if t % 7 else f"Q_é{t}"
        judged = rng.choice(len(DOCS), size=rng.integers(1, 12), replace=False)
        grades = rng.integers(-1, 4, size=len(judged))
        if grades.max() < 0:  # trec_eval reads a stale level count on such a topic
            grades[0] = 0
        qrels += [f"{qid} 0 {DOCS[d]} {g}\n" for d, g in zip(judged, grades)]
        if missing and rng.random() < 0.08:
            continue  # a qrels topic without results
        size = 1 if rng.random() < 0.1 else int(rng.integers(1, len(DOCS)))
        ranked = rng.choice(len(DOCS), size=size, replace=False)
        scores = rng.integers(0, 6, size=size) / 4  # many ties
        run += [f"{qid} Q0 {DOCS[d]} {r} {s} tag{seed}\n"
                for r, (d, s) in enumerate(zip(ranked, scores))]
    run += [f"stranger{seed} Q0 d1 1 1.0 tag{seed}\n"]  # a run topic without qrels
    order = rng.permutation(len(run))  # trec_eval sorts: the file order must not matter
    qp, rp = folder / f"{seed}.qrels", folder / f"{seed}.run"
    # a comment line sends the file to the line-by-line reader: both readers meet the binary
    comment = "# a comment line, skipped\n" if seed % 2 else ""
    qp.write_text(comment + "".join(qrels), encoding="utf-8")
    rp.write_text("".join(run[i] for i in order), encoding="utf-8")
    return qp, rp


def _recmeta(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", *args])
    return code, out.getvalue(), err.getvalue()


def _binary(exe: Path, args: list[str]) -> tuple[int, str]:
    done = subprocess.run([str(exe), *args], capture_output=True, check=False)
    return done.returncode, done.stdout.decode("utf-8")


@pytest.mark.parametrize("case", range(len(FLAGS)))
def test_all_trec_equals_trec_eval_10(trec_eval_binary, tmp_path, case):
    flags = FLAGS[case]
    complete = "-c" in flags
    qrels, run = _write_case(tmp_path, 100 + case, TOPICS_PER_CASE, missing=complete)
    args = ["-q", *flags, "-m", "all_trec", str(qrels), str(run)]
    code, theirs = _binary(trec_eval_binary, args)
    assert code == 0
    mine_code, mine, err = _recmeta(args)
    assert mine_code == 0, err
    assert mine == theirs
    assert len(theirs.splitlines()) > TOPICS_PER_CASE * 90  # every topic printed its lines


@pytest.mark.parametrize("case", range(len(FLAGS)))
def test_measures_with_parameters_equal_trec_eval_10(trec_eval_binary, tmp_path, case):
    flags = FLAGS[case]
    qrels, run = _write_case(tmp_path, 200 + case, 150, missing="-c" in flags)
    measures = [x for m in SINGLE for x in ("-m", m)]
    args = ["-q", *flags, *measures, str(qrels), str(run)]
    code, theirs = _binary(trec_eval_binary, args)
    assert code == 0
    mine_code, mine, err = _recmeta(args)
    assert mine_code == 0, err
    assert mine == theirs
    for m in SINGLE + ALONE:  # one measure at a time too: the order and names of its lines
        args = ["-q", *flags, "-m", m, str(qrels), str(run)]
        code, theirs = _binary(trec_eval_binary, args)
        assert code == 0, m
        assert _recmeta(args)[1] == theirs, m


def test_missing_topic_stops_both_without_c(trec_eval_binary, tmp_path):
    qrels, run = _write_case(tmp_path, 7, 60, missing=True)
    code, _ = _binary(trec_eval_binary, ["-m", "map", str(qrels), str(run)])
    assert code == 4
    mine_code, _, err = _recmeta(["-m", "map", str(qrels), str(run)])
    assert mine_code == 2 and "has no results in the run" in err and "-c" in err
    # 9.0.8's rule skips the topic instead
    assert _recmeta(["--trec-eval", "9.0.8", "-m", "map", str(qrels), str(run)])[0] == 0
