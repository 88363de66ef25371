"""Executions of the two profiles never share a Jupyter cache entry, and pages say how they ran.

A one-page book with the project's own configuration (its local extensions included) is built
in the quick profile, then in the full profile into the same output folder: the second build must
execute the page again and show the full profile's value.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

#: a MyST notebook's front matter
HEADER = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
'''

PAGE = HEADER + '''
# A page

```{glue:md} execution
:format: myst
```

```{code-cell} ipython3
from recmeta.book import chapters

execution = chapters.start("page", profile=chapters.profile(), dataset="ml-100k", seed=7)
print("value-of-this-profile:", {"quick": 11, "full": 22}[chapters.profile()])
import uuid
print("this-execution:", uuid.uuid4().hex)
```

```{code-cell} ipython3
:tags: [remove-cell]

execution.finish()
```
'''


def _extension():
    """The book's ``execution_cache`` extension, imported as Sphinx imports it."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import execution_cache
    finally:
        sys.path.pop(0)
    return execution_cache


def _one_cell_notebook(source: str):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def _mini_book(folder: Path) -> None:
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    cfg["bibtex_bibfiles"] = [str(ROOT / "book" / "references.bib")]
    local = cfg["sphinx"]["local_extensions"]
    cfg["sphinx"]["local_extensions"] = {k: str(ROOT / v) for k, v in local.items()}
    (folder / "_config.yml").write_text(yaml.safe_dump(cfg))
    (folder / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (folder / "page.md").write_text(PAGE)


def _build(src: Path, out: Path, profile: str) -> str:
    env = {**os.environ, "RECMETA_PROFILE": profile, "TQDM_DISABLE": "1"}
    jb = Path(sys.executable).parent / "jupyter-book"
    r = subprocess.run([str(jb), "build", str(src), "--path-output", str(out)],
                       capture_output=True, text=True, env=env, cwd=src)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    return (out / "_build" / "html" / "page.html").read_text()


def test_quick_then_full_build_executes_the_full_profile(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _mini_book(src)
    quick = _build(src, out, "quick")
    assert "value-of-this-profile: 11" in quick
    assert "profile: <strong>quick</strong>" in quick
    full = _build(src, out, "full")
    assert "value-of-this-profile: 22" in full and "value-of-this-profile: 11" not in full
    assert "profile: <strong>full</strong>" in full
    # the page states its dataset, seed, versions and run-cache use
    text = re.sub(r"<[^>]+>", "", full)
    for fact in ("dataset: ml-100k", "seed: 7", "recmeta ", "LensKit ", "no recommender runs"):
        assert fact in text, fact
    # the same profile again is served from its cache: the page is not executed a second time
    token = re.search(r"this-execution: (\w+)", text).group(1)
    assert f"this-execution: {token}" in _build(src, out, "full")
    caches = sorted(p.name.split("-")[0] for p in (out / "_build" / ".jupyter_cache").iterdir())
    assert caches == ["full", "quick"]


def test_cache_key_follows_the_package_sources(tmp_path):
    cache_key = _extension().cache_key
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    first = cache_key(pkg)
    assert cache_key(pkg) == first
    (pkg / "a.py").write_text("x = 2\n")
    assert cache_key(pkg) != first


#: a page that marks its start in the folder RENDEZVOUS names, then waits up to RENDEZVOUS_WAIT
#: seconds for the other page's mark: it meets the other page only if both run at once
TIMED = HEADER + '''
# Page {name}

```{{code-cell}} ipython3
import os
import time
from pathlib import Path

start = time.time()
marks = Path(os.environ["RENDEZVOUS"])
(marks / "{name}").touch()
wait = float(os.environ["RENDEZVOUS_WAIT"])
while not (marks / "{other}").exists() and time.time() < start + wait:
    time.sleep(0.05)
met = (marks / "{other}").exists()
{fail}print("ran-from-to:", start, time.time(), "met:", met, "on page {name}")
```
'''


def _two_pages(folder: Path, fail: bool = False) -> None:
    _mini_book(folder)
    (folder / "page.md").unlink()
    (folder / "_toc.yml").write_text(
        "format: jb-book\nroot: a\nchapters:\n- file: b\n"
    )
    (folder / "a.md").write_text(TIMED.format(name="a", other="b", fail=""))
    (folder / "b.md").write_text(
        TIMED.format(name="b", other="a", fail="1 / 0\n" if fail else "")
    )


def _spans(out: Path) -> list[tuple[float, float, bool]]:
    spans = []
    for page in ("a", "b"):
        text = (out / "_build" / "html" / f"{page}.html").read_text()
        found = re.search(r"ran-from-to: ([\d.]+) ([\d.]+) met: (\w+)", text)
        assert found, f"page {page} shows no span"
        start, end, met = found.groups()
        spans.append((float(start), float(end), met == "True"))
    return spans


def _marks(tmp_path: Path, name: str, wait: float) -> dict[str, str]:
    folder = tmp_path / f"marks-{name}"
    folder.mkdir()
    return {"RENDEZVOUS": str(folder), "RENDEZVOUS_WAIT": str(wait)}


def test_chapters_execute_side_by_side_and_a_failure_is_reported_as_when_serial(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _two_pages(src)
    env = {**os.environ, "RECMETA_PROFILE": "quick", "RECMETA_BOOK_JOBS": "2"}
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb), "build", str(src), "--path-output", str(out)]
    # side by side, each page finds the other's mark however slowly the kernels start
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env={**env, **_marks(tmp_path, "side", 120)}, cwd=src)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "executing 2 chapters, 2 at a time" in r.stdout
    assert "a: executed" in r.stdout and "b: executed" in r.stdout, r.stdout[-4000:]
    (a0, a1, a_met), (b0, b1, b_met) = _spans(out)
    assert a_met and b_met  # the two pages' kernels ran at the same time
    # and Sphinx read both from the cache: the spans shown are those of the runs side by side
    assert a0 < b1 and b0 < a1, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Executing notebook" not in r.stdout, r.stdout[-4000:]
    # one at a time: the first page waits alone, and the pages run one after the other
    serial = tmp_path / "serial"
    r = subprocess.run(cmd[:-1] + [str(serial)], capture_output=True, text=True,
                       env={**env, "RECMETA_BOOK_JOBS": "1", **_marks(tmp_path, "one", 2)},
                       cwd=src)
    assert r.returncode == 0 and "at a time" not in r.stdout
    (a0, a1, a_met), (b0, b1, b_met) = _spans(serial)
    assert a1 <= b0 or b1 <= a0
    assert a_met != b_met  # only the page that ran second found the other's mark
    # a page that fails ahead is executed again when read, and the build fails with its error
    bad_src, bad_out = tmp_path / "bad", tmp_path / "bad-out"
    bad_src.mkdir()
    _two_pages(bad_src, fail=True)
    r = subprocess.run([str(jb), "build", str(bad_src), "--path-output", str(bad_out)],
                       capture_output=True, text=True,
                       env={**env, **_marks(tmp_path, "bad", 120)}, cwd=bad_src)
    assert r.returncode != 0
    assert "ZeroDivisionError" in r.stdout + r.stderr


def test_how_many_chapters_run_at_once(monkeypatch):
    jobs = _extension().jobs
    monkeypatch.setenv("RECMETA_BOOK_JOBS", "3")
    assert jobs() == 3
    monkeypatch.delenv("RECMETA_BOOK_JOBS")
    assert jobs() == max(1, os.cpu_count() or 1)
    for bad in ("two", "0", "-1", "1.5"):
        monkeypatch.setenv("RECMETA_BOOK_JOBS", bad)
        with pytest.raises(ValueError, match="RECMETA_BOOK_JOBS"):
            jobs()


def test_the_longest_chapters_run_first_by_the_recorded_times(tmp_path):
    _recorded_seconds = _extension()._recorded_seconds
    assert _recorded_seconds(tmp_path, "full") == {}
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    lines = [
        {"chapter": "a", "profile": "quick", "status": "ok", "wall": 50.0},
        {"chapter": "a", "profile": "quick", "status": "ok", "wall": 60.0},
        {"chapter": "b", "profile": "quick", "status": "ok", "wall": 20.0},
        {"chapter": "b", "profile": "quick", "status": "error", "wall": 99.0},
    ]
    path = tmp_path / "benchmarks" / "results" / "chapter-costs.jsonl"
    path.write_text("\n".join(map(json.dumps, lines)) + "\n")
    # no record of the full profile: the quick profile's order serves
    assert _recorded_seconds(tmp_path, "full") == {"a": 60.0, "b": 20.0}
    lines.append({"chapter": "b", "profile": "full", "status": "ok", "wall": 300.0})
    path.write_text("\n".join(map(json.dumps, lines)) + "\n  \n")  # a blank line is skipped
    assert _recorded_seconds(tmp_path, "full") == {"b": 300.0}
    assert _recorded_seconds(ROOT, "full")["statistical-biases"] == max(
        _recorded_seconds(ROOT, "full").values()
    )


def test_a_kernel_that_dies_before_its_first_cell_is_started_again(monkeypatch, tmp_path):
    from jupyter_cache.executors import utils

    _execute_one = _extension()._execute_one
    nb = _one_cell_notebook("print(6 * 7)")
    uri = str(tmp_path / "page.md")
    real = utils.single_nb_execution
    calls: list[str] = []

    def flaky(fails: int, after_a_cell: bool = False):
        def run(run_nb, **kwargs):
            calls.append("run")
            if len(calls) <= fails:
                if after_a_cell:  # the kernel ran the first cell, then died
                    run_nb.cells[0]["execution_count"] = 1
                raise RuntimeError("Kernel died before replying to kernel_info")
            return real(run_nb, **kwargs)
        return run

    # two deaths at start (a port taken by another process's kernel), then a run
    monkeypatch.setattr(utils, "single_nb_execution", flaky(2))
    got, done, took, failure, restarts = _execute_one((uri, nb, 60, False))
    assert (got, failure, len(calls), restarts) == (uri, "", 3, 2) and took > 0
    assert done.cells[0].outputs[0]["text"] == "42\n"
    assert "outputs" not in nb.cells[0] or not nb.cells[0].outputs  # the job's copy untouched
    # three deaths at start: the chapter is left to Sphinx, with the reason
    calls.clear()
    monkeypatch.setattr(utils, "single_nb_execution", flaky(3))
    _, done, _, failure, _ = _execute_one((uri, nb, 60, False))
    assert done is None and len(calls) == 3 and "Kernel died" in failure
    # a kernel that dies after running a cell is not started again: a chapter runs once
    calls.clear()
    monkeypatch.setattr(utils, "single_nb_execution", flaky(1, after_a_cell=True))
    _, done, _, failure, restarts = _execute_one((uri, nb, 60, False))
    assert done is None and len(calls) == 1 and restarts == 0 and "Kernel died" in failure
    # a cell's error is the chapter's failure, reported once
    calls.clear()
    monkeypatch.setattr(utils, "single_nb_execution", real)
    bad = _one_cell_notebook("1 / 0")
    _, done, _, failure, _ = _execute_one((uri, bad, 60, False))
    assert done is None and "ZeroDivisionError" in failure


def test_an_executed_chapter_the_cache_refuses_is_left_to_sphinx(tmp_path):
    import nbformat
    from jupyter_cache import get_cache

    _store = _extension()._store
    page = tmp_path / "page.ipynb"
    nb = _one_cell_notebook("print(6 * 7)")
    nbformat.write(nb, page)
    cache = get_cache(tmp_path / "cache")
    cache.add_nb_to_project(str(page))
    assert [r.uri for r in cache.list_unexecuted()] == [str(page)]
    done = nbformat.from_dict(nb)
    done.cells[0].execution_count = 1
    done.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    assert _store(cache, str(page), done, 1.5) == ""  # stored: nothing left to execute
    assert cache.list_unexecuted() == []

    class Refusing:  # a cache whose write fails (a full disk, a locked database)
        def cache_notebook_bundle(self, *args, **kwargs):
            raise OSError("no space left on device")

    assert _store(Refusing(), str(page), done, 1.5) == "OSError: no space left on device"
