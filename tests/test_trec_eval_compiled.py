"""``recmeta evaluate``'s lean path: the pass compiled ahead of time gives the JIT's values, the
command loads neither pandas nor numba, and both TREC readers give the same columns."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recmeta.metrics import TrecFormatError, qrels_columns, run_columns, trec_eval
from recmeta.metrics import _te_compiled, _te_kernel, _trec_eval
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
            run += [f"{t} Q0 d{d} {i} {s} tag{t}\n" for i, (d, s) in enumerate(zip(ranked, scores))]
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


def test_evaluate_loads_neither_pandas_nor_numba(tmp_path):
    jit = kernel() is _te_kernel  # built here first if need be: a build imports numba
    q, r = _write(tmp_path, 0)
    code = (
        "import sys; from recmeta.cli import main; "
        f"main(['evaluate', '-c', '-q', '-m', 'all_trec', {str(q)!r}, {str(r)!r}]); "
        "print(sorted(m for m in ('pandas', 'numba', 'lenskit', 'scipy') if m in sys.modules), "
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


def test_line_reader_gives_the_fast_readers_columns(tmp_path):
    q, r = _write(tmp_path, 1)
    slow_q, slow_r = tmp_path / "q2", tmp_path / "r2"  # comments and runs of blanks: read slowly
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
