"""Sphinx extension: one Jupyter execution cache per profile and per version of the package, and
the chapters executed side by side before Sphinx reads them.

MyST-NB re-uses a chapter's stored execution when the notebook's code is unchanged. The code is
the same in both profiles (the profile comes from ``$RECMETA_PROFILE``), and the results also
depend on the ``recmeta`` package and on LensKit, which the notebook's hash does not see. So the
cache folder is ``<build>/.jupyter_cache/<profile>-<key>``, where the key hashes the package's
sources and LensKit's version: a quick build never serves a full one, and a change of the
package re-executes the chapters. Older folders of the same profile are removed.

MyST-NB executes a chapter when Sphinx reads it, one at a time, and a chapter spends most of its
time in one Python thread. Before reading, :func:`_execute_ahead` therefore executes the chapters
the cache lacks in ``$RECMETA_BOOK_JOBS`` processes (default: one per core), with
jupyter-cache's execution function, the longest first (by the times recorded in
``benchmarks/results/chapter-costs.jsonl``); Sphinx then reads each from the cache, in its usual
order, so the ledger page still sees every chapter's ledger. A chapter that fails here is
executed again when Sphinx reads it, which reports its error as a serial build does.

The worker processes only execute; this process alone writes the cache, one chapter as each
finishes. jupyter-cache prunes its oldest records after each write by two queries that are not
one transaction, so two processes writing at once can each take the other's new record for an
old one and delete it (the chapter is then executed a second time when read). A worker starts
a kernel again when it died before running a cell (:func:`_execute_one`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path


def cache_key(package: Path) -> str:
    """SHA-256 (12 hex digits) of the package's Python sources and the installed LensKit version."""
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(path.read_bytes())
    try:
        h.update(version("lenskit").encode())
    except PackageNotFoundError:
        h.update(b"no-lenskit")
    return h.hexdigest()[:12]


def _set_cache_path(app, config) -> None:
    from recmeta.book import chapters

    profile = chapters.profile()
    base = Path(app.outdir).parent / ".jupyter_cache"
    folder = base / f"{profile}-{cache_key(Path(chapters.__file__).parent)}"
    if base.is_dir():
        for old in base.glob(f"{profile}-*"):
            if old != folder and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    config.nb_execution_cache_path = str(folder)


def jobs() -> int:
    """How many chapters execute at once: ``$RECMETA_BOOK_JOBS``, else one per core."""
    raw = os.environ.get("RECMETA_BOOK_JOBS", "").strip()
    if not raw:
        return max(1, os.cpu_count() or 1)
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"RECMETA_BOOK_JOBS must be a whole number >= 1, got {raw!r}")
    return int(raw)


def _recorded_seconds(root: Path, profile: str) -> dict[str, float]:
    """Each chapter's longest recorded execution in ``profile``, or in any profile when none of
    ``profile`` is recorded (the chapters' order by cost is much the same in both); empty when
    nothing is recorded."""
    path = root / "benchmarks" / "results" / "chapter-costs.jsonl"
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    ok = [r for r in records if r.get("status") == "ok" and r.get("wall")]
    mine = [r for r in ok if r.get("profile") == profile] or ok
    seconds: dict[str, float] = {}
    for r in mine:
        seconds[r["chapter"]] = max(seconds.get(r["chapter"], 0.0), float(r["wall"]))
    return seconds


def _execute_one(
    job: tuple[str, dict, int, bool],
) -> tuple[str, dict | None, float, str, int]:
    """Execute one notebook in the folder of its source, in a worker process: ``(uri, executed
    notebook or None when it failed, seconds, the failure's traceback or "", kernel restarts)``.

    A kernel that fails to start before it runs a cell is started again, up to three times:
    kernels started at once by separate processes can pick the same free port (jupyter_client
    reserves ports within one process only), and the loser dies with "Address already in use".
    """
    import copy
    import traceback

    from jupyter_cache.executors.utils import single_nb_execution

    uri, nb, timeout, allow_errors = job
    for attempt in range(3):
        run = copy.deepcopy(nb)
        try:
            result = single_nb_execution(
                run, cwd=str(Path(uri).parent), timeout=timeout, allow_errors=allow_errors
            )
        except Exception:  # a kernel that dies: Sphinx executes the chapter again when read
            started = any(c.get("execution_count") or c.get("outputs") for c in run.cells)
            if started or attempt == 2:
                return uri, None, 0.0, traceback.format_exc(), attempt
            continue
        if result.err is not None:
            return uri, None, result.time, result.exc_string or repr(result.err), attempt
        return uri, result.nb, result.time, "", attempt
    raise AssertionError("unreachable")


def _store(cache, uri: str, nb: dict, seconds: float) -> str:
    """Write an executed notebook into the cache, in the build's own process (the only writer);
    "" when stored, else the reason, and Sphinx executes the chapter again when it reads it."""
    from jupyter_cache.base import CacheBundleIn

    bundle = CacheBundleIn(nb, uri, data={"execution_seconds": seconds})
    try:
        cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
    except Exception as err:  # as a failed execution: the read executes it and reports
        return f"{type(err).__name__}: {err}"
    return ""


def _execute_ahead(app, env, docnames) -> None:
    """Execute the notebooks among ``docnames`` that the execution cache lacks, ``jobs()`` at a
    time, and store each in the cache MyST-NB reads as it finishes."""
    n = jobs()
    if n < 2 or app.config.nb_execution_mode != "cache":
        return
    from jupyter_cache import get_cache
    from myst_nb.core.read import is_myst_markdown_notebook
    from sphinx.util import logging

    from recmeta.book import chapters

    paths = [Path(env.doc2path(d)) for d in sorted(docnames)]
    paths = [p for p in paths if p.suffix == ".md" and is_myst_markdown_notebook(p.read_text())]
    if not paths:
        return
    cache = get_cache(app.config.nb_execution_cache_path)
    for p in paths:  # read as MyST-NB reads a text notebook, so the hashes match
        cache.add_nb_to_project(str(p), read_data={"name": "myst_nb_md", "type": "plugin"})
    todo = cache.list_unexecuted(filter_uris=[str(p) for p in paths])
    if len(todo) < 2:
        return  # nothing to overlap: Sphinx executes it as it reads
    seconds = _recorded_seconds(Path(app.srcdir), chapters.profile())
    todo.sort(key=lambda r: -seconds.get(Path(r.uri).stem, 0.0))
    log = logging.getLogger(__name__)
    log.info(
        f"executing {len(todo)} chapters, {n} at a time: "
        + ", ".join(Path(r.uri).stem for r in todo)
    )
    import multiprocessing

    # the chapters share the cores, so each makes its recommender runs on its share of them
    # (recmeta.recommenders.ahead); the kernels inherit this process's environment
    os.environ.setdefault("RECMETA_TRAIN_JOBS", str(max(1, (os.cpu_count() or 1) // n)))
    timeout, errors = app.config.nb_execution_timeout, app.config.nb_execution_allow_errors
    work = [(r.uri, cache.get_project_notebook(r.pk).nb, timeout, errors) for r in todo]
    with multiprocessing.get_context("spawn").Pool(min(n, len(todo))) as pool:
        for uri, nb, took, failure, restarts in pool.imap_unordered(_execute_one, work):
            name = Path(uri).stem
            if restarts:
                log.info(f"{name}: its kernel died before its first cell, started again")
            if nb is None:
                last = failure.strip().splitlines()[-1] if failure.strip() else "no message"
                log.info(f"{name}: failed (executed again when read): {last}")
                continue
            unstored = _store(cache, uri, nb, took)
            if unstored:
                log.info(f"{name}: executed, not stored (executed again when read): {unstored}")
                continue
            log.info(f"{name}: executed")


def setup(app):
    app.connect("config-inited", _set_cache_path)
    app.connect("env-before-read-docs", _execute_ahead)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
