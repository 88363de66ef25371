"""Sphinx extension: look up the bibliography's pybtex plugins once per build, not per citation.

sphinxcontrib-bibtex asks pybtex for a plugin at every citation it resolves (the plain-text
backend, some ninety times a build of this book), and pybtex looks each up in the entry points
of every installed distribution: about 0.04 s a call with this project's environment. pybtex
consults the plugins registered at run time first (``pybtex.plugin.register_plugin``), so each
plugin this book uses is looked up once here and registered under its own name: the same class,
without the scan.
"""

from __future__ import annotations

from typing import Any

# (group, name) of the plugins a build of this book asks for (its bibtex styles, author-year
# and plain); a group's default plugin is asked for by its name ("plain", "number")
PLUGINS = (
    ("pybtex.backends", "plaintext"),
    ("pybtex.backends", "docutils"),
    ("pybtex.style.formatting", "plain"),
    ("pybtex.style.labels", "number"),
    ("pybtex.style.names", "last"),
    ("pybtex.style.names", "plain"),
    ("pybtex.style.sorting", "author_year_title"),
)


def _register(app: object) -> None:
    from pybtex import plugin

    for group, name in PLUGINS:
        plugin.register_plugin(group, name, plugin.find_plugin(group, name), force=True)


def setup(app: Any) -> dict[str, bool]:
    app.connect("builder-inited", _register)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
