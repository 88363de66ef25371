"""A chapter's kernel draws each figure once fewer: the page shows only the PNG."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]

_FIGURE = """import matplotlib.pyplot as plt
fig, ax = plt.subplots(layout="constrained")
ax.bar_label(ax.bar([1, 2], [3, 4]))
draws = []
fig.canvas.mpl_connect("draw_event", lambda event: draws.append(1))"""
_COUNT = """import json
from IPython import get_ipython
hooks = [getattr(f, "__name__", "") for f in get_ipython().events.callbacks["post_execute"]]
print(json.dumps({"draws": len(draws), "hooks": hooks}))"""


def _run(first_cell: str) -> tuple[dict, int]:
    """Execute set-up, figure, count in one kernel: the count printed and the PNGs shown."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in (first_cell, _FIGURE, _COUNT)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute(env=env)  # the kernel's environment: the package on its path
    pngs = sum("image/png" in o.get("data", {}) for o in nb.cells[1].outputs)
    return json.loads(nb.cells[2].outputs[0]["text"]), pngs


def test_a_chapter_kernel_draws_each_figure_once_and_still_shows_it():
    plain, plain_pngs = _run("pass")
    # without recmeta: pyplot's hook draws the figure, then the inline backend draws it again for
    # the PNG (twice: once to find the tight bounding box, once to render)
    assert plain["draws"] == 3 and "_draw_all_if_interactive" in plain["hooks"]
    once, once_pngs = _run(
        "from recmeta.book.execution import _no_redraw_after_cells\n_no_redraw_after_cells()"
    )
    assert once["draws"] == 2 and "_draw_all_if_interactive" not in once["hooks"]
    assert "flush_figures" in once["hooks"] and once_pngs == plain_pngs == 1
