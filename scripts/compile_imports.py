"""Write the bytecode of the modules the book and the tests import, and of no others.

    python scripts/compile_imports.py EXTRAS      e.g. book,test,bench,ray

Installing with every module compiled (``uv pip install --compile-bytecode``, ``pip``'s
default) compiles all of PyTorch, Ray and the rest: about a minute of a fresh clone's set-up on
two cores. Importing what the project uses, with ``PYTHONDONTWRITEBYTECODE`` unset, compiles only
those modules, and every later process loads them, whether or not it may write bytecode itself.
The extras asked for choose the groups, imported in parallel, one process each; a listed package
that is not installed is passed over (nothing to compile).
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The imports of a chapter's kernel, of Jupyter Book's process, of the tests, by extra; a group
# is one process. The package's own modules are compiled as files (half a second).
GROUPS: dict[str, tuple[str, ...]] = {
    "": (
        "lenskit.als lenskit.basic lenskit.knn lenskit.flexmf lenskit.sklearn.svd "
        "lenskit.funksvd lenskit.logging lenskit.batch lenskit.pipeline lenskit.splitting",
        "pandas numpy scipy.stats scipy.sparse scipy.optimize numba pyarrow.parquet "
        "seaborn matplotlib.pyplot tqdm statsmodels.stats.multitest pooch recmeta.papers "
        "recmeta.book.execution",
    ),
    "book": (
        "jupyter_book.cli.main sphinx.cmd.build myst_nb.sphinx_ext sphinxcontrib.bibtex "
        "jupytext ipykernel.kernelapp nbclient papermill nbconvert jupyter_cache",
    ),
    "test": ("pytest xdist hypothesis pytrec_eval ir_measures selenium.webdriver threadpoolctl",),
    "bench": ("ranx",),
    "ray": ("ray",),
}

_IMPORT = """
import importlib, importlib.util, sys
for name in sys.argv[1:]:
    top = name.split(".")[0]
    if importlib.util.find_spec(top) is not None:
        importlib.import_module(name)
"""


def main(extras: str) -> None:
    wanted = {""} | {e for e in extras.split(",") if e}
    unknown = wanted - set(GROUPS)
    if unknown:  # a new extra in pyproject.toml: its modules compile as they are first imported
        print(f"compile_imports: no modules listed for {sorted(unknown)}", file=sys.stderr)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    groups = [g.split() for e in sorted(wanted & set(GROUPS)) for g in GROUPS[e]]

    def run(names: list[str]) -> int:
        return subprocess.run([sys.executable, "-c", _IMPORT, *names], env=env).returncode

    with ThreadPoolExecutor(max(1, min(len(groups), os.cpu_count() or 1))) as pool:
        codes = list(pool.map(run, groups))
    compileall.compile_dir(Path(__file__).parents[1] / "recmeta", quiet=1)
    if any(codes):
        sys.exit(f"compile_imports: importing a group failed (exit codes {codes})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
