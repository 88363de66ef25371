"""Sphinx extension: the "Replication ledger" page, generated from the ledgers the build stored.

While the book executes its chapters, each stores its evaluated ledger; this extension points the
store at the build folder (``<build>/results``, so a book build and a reader's own ``recmeta
run`` never mix), re-reads the ledger page on every build, and replaces the marker
``<!-- ledger -->`` in it with the figures and tables of :func:`recmeta.ledger.page.ledger_page`.

The figures (:func:`recmeta.ledger.figures.write_figures`) are drawn anew on every build into the
build folder (``<build>/ledger-figures``), never into the sources; the page names them by a path
relative to the source folder (``/../_build/ledger-figures/ledger-verdicts.png``), as MyST-NB
names the outputs of executed notebooks, so Sphinx's image collector finds them and the HTML
builder copies them into ``_images/`` beside the page.

Sphinx reads documents in sorted order and MyST-NB executes a chapter when it reads it, so the
page lives in a folder that sorts after ``notebooks/`` (``replication/``).
"""

from __future__ import annotations

import os
from pathlib import Path

PAGE = "replication/ledger"
MARKER = "<!-- ledger -->"


def _results_root(app) -> Path:
    return Path(app.outdir).parent / "results"


def _figures_dir(app) -> Path:
    return Path(app.outdir).parent / "ledger-figures"


def _config(app, config) -> None:
    os.environ["RECMETA_RESULTS"] = str(_results_root(app))  # inherited by the chapters' kernels


def _always_outdated(app, env, added, changed, removed):
    return [PAGE] if PAGE in env.found_docs else []


def _source(app, docname, source) -> None:
    if docname != PAGE or MARKER not in source[0]:
        return
    import yaml

    from recmeta import papers
    from recmeta.book import chapters
    from recmeta.ledger import figures, page as book, store

    toc = yaml.safe_load((Path(app.srcdir) / "_toc.yml").read_text())
    # the chapters of the table of contents' "papers" part: the others re-run no paper
    files = [c["file"] for part in toc.get("parts", [])
             if "paper" in str(part.get("caption", "")).lower()
             for c in part.get("chapters", [])]
    titles = {c.name: c.title for c in chapters.discover(app.srcdir)}
    paper_chapters = {f.split("/", 1)[1]: titles[f.split("/", 1)[1]] for f in files
                      if f.startswith("notebooks/") and f.split("/", 1)[1] in titles}
    frame = store.load(root=_results_root(app))
    profile = chapters.profile()
    rows = book.book_rows(frame, profile)
    drawn = {}
    if len(rows):
        written = figures.write_figures(rows, _figures_dir(app), paper_chapters, prefix="ledger-")
        drawn = {name: "/" + os.path.relpath(path, app.srcdir) for name, path in written.items()}
    text = book.ledger_page(frame, profile=profile, chapters=paper_chapters,
                            with_ledger=list(papers.ledgers()), figures=drawn)
    source[0] = source[0].replace(MARKER, text)


def setup(app):
    app.connect("config-inited", _config)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("source-read", _source)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
