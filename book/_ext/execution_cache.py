"""Sphinx extension: one Jupyter execution cache per profile and per version of the package.

MyST-NB re-uses a chapter's stored execution when the notebook's code is unchanged. The code is
the same in both profiles (the profile comes from ``$RECMETA_PROFILE``), and the results also
depend on the ``recmeta`` package and on LensKit, which the notebook's hash does not see. So the
cache folder is ``<build>/.jupyter_cache/<profile>-<key>``, where the key hashes the package's
sources and LensKit's version: a quick build never serves a full one, and a change of the
package re-executes the chapters. Older folders of the same profile are removed.
"""

from __future__ import annotations

import hashlib
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


def setup(app):
    app.connect("config-inited", _set_cache_path)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
