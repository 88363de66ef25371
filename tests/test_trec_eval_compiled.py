"""``recmeta evaluate``'s lean path: the pass compiled ahead of time gives the JIT's values, the
command loads neither pandas, numba nor pyarrow, and the compiled reader of TREC files reads
what trec_eval reads (fields, numbers, ids) and names the line of what it cannot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recmeta.metrics import (
    TrecFormatError,
    _te_compiled,
    _te_kernel,
    _trec_eval,
    _trec_output,
    qrels_columns,
    run_columns,
    trec_eval,
)
from recmeta.metrics._te_compiled import kernel

ROOT = Path(__file__).resolve().parents[1]


def _write(folder: Path, seed: int) -> tuple[Path, Path]:
    """A qrels and a run with ties, grades -1..3, unjudged and missing topics."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, 60):
        docs = rng.choice(40, size=rng.integers(1, 25), replace=False)
        qrels += [f"{t} 0 d{d} {rng.integers(-1, 4)}\n" for d in docs]
        if t % 7:
            ranked = rng.choice(40, size=rng.integers(1, 30), replace=False)
            scores = rng.integers(0, 5, size=len(ranked))  # many ties
            run += [
                f"{t} Q0 d{d} {i} {s} tag{t}\n"
                for i, (d, s) in enumerate(zip(ranked, scores, strict=True))
            ]
    (folder / "q").write_text("".join(qrels))
    (folder / "r").write_text("".join(run))
    return folder / "q", folder / "r"


@pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler: the JIT is used"
)
def test_compiled_pass_equals_the_jit(tmp_path, monkeypatch):
    compiled = kernel()
    assert compiled is not _te_kernel, "the ahead-of-time build fell back to the JIT"
    for seed in range(4):
        q, r = _write(tmp_path, seed)
        qrels, run = qrels_columns(q), run_columns(r)
        options = {"complete": True, "level": 1 + seed % 2, "max_ret": [None, 5][seed % 2]}
        out = {}
        for name, module in (("aot", compiled), ("jit", _te_kernel)):
            monkeypatch.setattr(_trec_eval, "kernel", lambda m=module: m)
            result = trec_eval(qrels, run, ["all_trec"], **options)
            out[name] = result.text(query=True)
        assert out["aot"] == out["jit"]
        assert "\nndcg_cut_10           \tall\t" in out["aot"]


def test_evaluate_loads_neither_pandas_numba_nor_pyarrow(tmp_path):
    jit = kernel() is _te_kernel  # built here first if need be: a build imports numba
    q, r = _write(tmp_path, 0)
    code = (
        "import sys; from recmeta.cli import main; "
        f"main(['evaluate', '-c', '-q', '-m', 'all_trec', {str(q)!r}, {str(r)!r}]); "
        "print(sorted(m for m in ('pandas', 'numba', 'lenskit', 'scipy', 'pyarrow') "
        "if m in sys.modules), "
        "file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stderr.strip().splitlines()[-1] == ("['numba']" if jit else "[]")
    assert "\nrunid                 \tall\ttag59\n" in done.stdout  # the last line's tag


def test_comments_and_runs_of_blanks_give_the_same_columns(tmp_path):
    q, r = _write(tmp_path, 1)
    slow_q, slow_r = tmp_path / "q2", tmp_path / "r2"  # comments, runs of blanks, tabs
    slow_q.write_text("# judged\n" + q.read_text().replace(" 0 ", "  0\t"))
    slow_r.write_text("# run\n" + r.read_text())
    pairs = ((qrels_columns(q), qrels_columns(slow_q)), (run_columns(r), run_columns(slow_r)))
    for fast, slow in pairs:
        for a, b in ((fast.topics, slow.topics), (fast.docs, slow.docs)):
            assert list(a.names.astype(str)[a.codes]) == list(b.names.astype(str)[b.codes])
        assert np.array_equal(fast.values, slow.values)
    assert run_columns(r).tag == run_columns(slow_r).tag == "tag59"


@pytest.mark.parametrize("field", ["nan", "1_0", "\uff11", "0x10"])
def test_numbers_as_trec_eval_reads_them(tmp_path, field):
    path = tmp_path / "bad.run"
    path.write_text(f"1 Q0 d1 1 0.5 t\n1 Q0 d2 2 {field} t\n")
    with pytest.raises(TrecFormatError, match=rf"bad.run:2: the score field .* got '{field}'"):
        run_columns(path)


@pytest.fixture
def empty_cache(monkeypatch, tmp_path):
    """An empty folder for the compiled module, and :func:`kernel` forgetting what it loaded."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    kernel.cache_clear()
    yield tmp_path
    kernel.cache_clear()


def test_without_a_c_compiler_the_jit_is_used(empty_cache, monkeypatch):
    monkeypatch.setattr(_te_compiled.shutil, "which", lambda name: None)
    assert kernel() is _te_kernel
    assert not any(empty_cache.iterdir())


def test_a_failed_build_warns_and_uses_the_jit(empty_cache, monkeypatch):
    def fail(name: str, folder: Path) -> Path:
        raise RuntimeError("linker not found")

    monkeypatch.setattr(_te_compiled, "_build", fail)
    with pytest.warns(RuntimeWarning, match="linker not found.*numba's JIT"):
        assert kernel() is _te_kernel


# ------------------------------------------------------------------ the compiled reader
def _number_texts(rng: np.random.Generator, n: int) -> list[str]:
    """Numbers as runs write them, and the rarer forms Python's float reads."""
    out = []
    for _ in range(n):
        form = rng.integers(7)
        if form == 0:
            out.append(str(int(rng.integers(-(10**6), 10**6))))
        elif form == 1:
            out.append(f"{rng.random():.{rng.integers(1, 9)}f}")
        elif form == 2:
            out.append(repr(float(rng.normal() * 10.0 ** rng.integers(-30, 30))))
        elif form == 3:  # 16 to 22 significant digits: beyond one exact rounding
            digits = "".join(map(str, rng.integers(0, 10, size=rng.integers(16, 23))))
            out.append(f"{rng.choice(['', '-', '+'])}{digits[:3]}.{digits[3:]}")
        elif form == 4:
            mantissa = rng.choice(["1", "12.5", ".5", "7.", "0", "00012", "9007199254740993"])
            out.append(
                f"{mantissa}{rng.choice(['e', 'E'])}{rng.choice(['', '+', '-'])}"
                f"{rng.integers(0, 400)}"
            )
        elif form == 5:
            out.append(str(rng.choice(["inf", "-Infinity", "+INF", "-0", "0.0", "-0e5"])))
        else:
            out.append(f"{rng.integers(0, 10**9)}.{rng.integers(0, 10**9):09d}")
    return out


def test_reader_numbers_equal_python_floats(tmp_path):
    """Every score is Python's float of its text, to the bit (the sign of zero too), whether
    the compiled reader converts it or hands it to Python."""
    texts = _number_texts(np.random.default_rng(3), 5000)
    path = tmp_path / "numbers.run"
    path.write_text("".join(f"q{i % 7} Q0 d{i} {i} {t} tag\n" for i, t in enumerate(texts)))
    got = run_columns(path).values
    want = np.array([float(t) for t in texts])
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def test_reader_ids_and_separators_as_trec_eval_splits(tmp_path):
    """Fields split at C's isspace (not at Unicode spaces), ids of any UTF-8 bytes and length
    (enough of them to grow every buffer of the reader), read back as the lines' own text."""
    rng = np.random.default_rng(5)
    alphabet = list("abcXYZ019-_.:/é€\u00a0\u2003漢") + ["\U0001f600", "#"]
    seps = [" ", "\t", "  ", " \t ", "\x0b", "\x0c", " \r"]

    def ident() -> str:
        return "".join(rng.choice(alphabet, size=rng.integers(1, 30)))

    docs = [ident() for _ in range(3000)]
    lines, want = [], []
    for _ in range(20000):
        topic, doc = f"t{rng.integers(0, 1500)}", docs[rng.integers(0, len(docs))]
        if doc.startswith("#"):
            continue  # a comment line
        fields = [topic, "0", doc, str(int(rng.integers(-1, 4)))]
        line = str(rng.choice(seps[:2])) * int(rng.integers(0, 2))
        line += "".join(f + str(rng.choice(seps)) for f in fields[:-1]) + fields[-1]
        lines.append(line + str(rng.choice(["\n", "\r\n", " \n"])))
        want.append(fields)
        if rng.random() < 0.01:
            lines.append(str(rng.choice(["\n", "   \n", "# a comment\n", "  #x 1 2\n"])))
    path = tmp_path / "odd.qrels"
    path.write_bytes("".join(lines).encode("utf-8"))
    got = qrels_columns(path)
    for ids, col in ((got.topics, 0), (got.docs, 2)):
        assert list(ids.names[ids.codes]) == [w[col] for w in want]
        assert len(set(ids.names)) == len(ids.names)
    assert got.values.tolist() == [float(w[3]) for w in want]


def test_reader_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_bytes(b"1 0 d1 1\n1 0 d\xff 1\n")
    with pytest.raises(TrecFormatError, match=r"bad.qrels:2: the field b'd\\xff' is not UTF-8"):
        qrels_columns(bad)
    for text in ("", "\n  \n", "# only a comment\n"):
        bad.write_text(text)
        with pytest.raises(TrecFormatError, match=r"bad.qrels: empty qrels file"):
            qrels_columns(bad)
    bad.write_text("1 0 d1 1\n1 0 d2 x\n1 0 d3\n")  # a field count goes before a number
    with pytest.raises(TrecFormatError, match=r"bad.qrels:3: expected 4 .* got 3: '1 0 d3'"):
        qrels_columns(bad)
    bad.write_text("1 0 d1 1\n1 0 d2 x\n1 0 d3 y\n")
    with pytest.raises(TrecFormatError, match=r"bad.qrels:2: the rel field .* got 'x'"):
        qrels_columns(bad)


def test_json_is_streamed_as_json_dump_writes_it(tmp_path, monkeypatch):
    """``--format json`` writes chunk by chunk the text ``json.dump(records, indent=1)`` writes
    (NaN as null, counts as integers, strings escaped), whatever the chunk size."""
    import json

    q, r = _write(tmp_path, 2)
    q.write_text(q.read_text() + "tópico\u2603 0 d1 1\n")
    r.write_text(r.read_text() + "tópico\u2603 Q0 d1 1 1.5 tag59\n")
    result = trec_eval(qrels_columns(q), run_columns(r), ["all_trec"], complete=True)
    result.values["map"][0] = np.nan  # a 0/0, printed -nan by trec_eval
    for size in (1, 7, 4096):
        monkeypatch.setattr(_trec_output, "JSON_RECORDS_PER_CHUNK", size)
        for query, summary in ((True, True), (False, True), (True, False), (False, False)):
            chunks = list(result.json_chunks(query, summary))
            want = json.dumps(result.records(query, summary), indent=1)
            assert "".join(chunks) == want
            assert len(chunks) >= len(result.records(query, summary)) // size
    text = "".join(result.json_chunks(True))
    assert '"value": null' in text and '"query": "t\\u00f3pico\\u2603"' in text


def test_processes_needing_the_module_at_once_build_it_once(tmp_path, monkeypatch):
    """The build holds a lock (``recmeta.files.lock``, an ``flock``, which two threads' own
    opens of the lock file contend for as two processes would): the second caller waits and
    loads the module the first built."""
    import threading
    import time

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_te_compiled.shutil, "which", lambda name: "/usr/bin/cc")
    builds, loads = [], []

    def build(name, folder):
        builds.append(name)
        time.sleep(0.5)  # long enough for the other caller to arrive meanwhile
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (name + _te_compiled.importlib.machinery.EXTENSION_SUFFIXES[0])
        target.write_bytes(b"built")
        return target

    monkeypatch.setattr(_te_compiled, "_build", build)
    monkeypatch.setattr(_te_compiled, "_load", lambda name, path: loads.append(path) or path)
    callers = [threading.Thread(target=kernel.__wrapped__) for _ in range(2)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    assert len(builds) == 1
    assert len(loads) == 2 and loads[0] == loads[1] and loads[0].read_bytes() == b"built"
