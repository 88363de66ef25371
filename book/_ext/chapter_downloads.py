"""Sphinx extension: offer every chapter as a Jupyter notebook.

After the build, each page built from ``notebooks/NAME.md`` gets ``NAME.ipynb`` beside its HTML:
the executed notebook (with the outputs the book shows) where MyST-NB kept one, else the source
converted by jupytext. A link to it is placed under the chapter's title.
"""

from __future__ import annotations

import shutil
from pathlib import Path

LINK = (
    '<p class="chapter-download"><a href="{name}.ipynb" download>Download this chapter as a '
    "Jupyter notebook</a> &middot; re-run it with <code>recmeta run {name}</code></p>"
)


def _is_chapter(pagename: str) -> bool:
    return pagename.startswith("notebooks/")


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if not _is_chapter(pagename) or "body" not in context:
        return
    body = context["body"]
    end = body.find("</h1>")
    if end != -1:
        link = LINK.format(name=pagename.split("/", 1)[1])
        context["body"] = body[: end + 5] + link + body[end + 5 :]


def _build_finished(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    import jupytext

    src = Path(app.srcdir)
    executed = Path(app.outdir).parent / "jupyter_execute"
    for docname in app.env.found_docs:
        if not _is_chapter(docname):
            continue
        target = Path(app.outdir) / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        ran = executed / f"{docname}.ipynb"
        if ran.exists():
            shutil.copyfile(ran, target)
        else:
            jupytext.write(jupytext.read(src / f"{docname}.md"), target)


def setup(app):
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
