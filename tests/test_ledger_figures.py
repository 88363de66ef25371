"""The ledger page's figures: verdict bars and the value claims' forest plot, from hand-made
stored frames; and the page built by Sphinx with its figures, offline and free of warnings."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection

from recmeta.ledger import COLUMNS, figures, store

ROOT = Path(__file__).resolve().parents[1]


def _row(chapter, claim, dataset, kind, verdict, *, rule="sign", paper=None, margin=None,
         ours=0.0, low=None, high=None):
    r = dict.fromkeys(COLUMNS)
    r.update(chapter=chapter, claim=claim, statement=f"statement {claim}", source="Fig. 1",
             paper_value=paper, paper_dataset="ML-1M", kind=kind, rule=rule, margin=margin,
             data_free=False, ours=ours, low=low, high=high, verdict=verdict, reason="why",
             dataset=dataset, profile="full")
    return r


def _bars_frame():
    rows = [
        _row("a", "a.d1", "ml-100k", "derivation", "holds"),
        _row("a", "a.d2", "ml-100k", "derivation", "holds"),
        _row("a", "a.t1", "ml-100k", "transfer", "agrees"),
        _row("a", "a.t2", "ml-100k", "transfer", "differs"),
        _row("a", "a.d1", "ml-latest-small", "derivation", "holds"),
        _row("a", "a.d2", "ml-latest-small", "derivation", "fails"),
        _row("a", "a.t1", "ml-latest-small", "transfer", "agrees"),
        _row("a", "a.t2", "ml-latest-small", "transfer", "agrees"),
        _row("b", "b.r1", "ml-100k", "replication", "inconclusive"),
    ]
    return pd.DataFrame(rows)


def _segments(ax):
    return [(round(p.get_y() + p.get_height() / 2), p.get_x(), p.get_width())
            for p in ax.patches if p.get_width() > 0]


def test_verdict_bars_draw_one_segment_per_verdict_kind_chapter_and_dataset():
    fig = figures.verdict_bars(_bars_frame(), {"a": "Chapter A", "b": "Chapter B"})
    axes = [ax for sub in fig.subfigs for ax in sub.axes]
    assert len(axes) == 4  # two chapters × two datasets, ml-latest-small of b left empty
    assert [sub._suptitle.get_text() for sub in fig.subfigs] == ["Chapter A", "Chapter B"]
    # kinds (rows 0, 1, 2) are the same in every panel
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["derivation", "replication",
                                                                 "transfer"]
    assert all(ax.get_ylim() == (2.5, -0.5) for ax in axes)  # derivation on top, in every panel
    a100, a_ls, b100, b_ls = (sorted(_segments(ax)) for ax in axes)
    # a, ml-100k: derivation 2 holds; transfer 1 agrees then 1 differs stacked after it
    assert a100 == [(0, 0.0, 2.0), (2, 0.0, 1.0), (2, 1.0, 1.0)]
    assert a_ls == [(0, 0.0, 1.0), (0, 1.0, 1.0), (2, 0.0, 2.0)]
    assert b100 == [(1, 0.0, 1.0)] and b_ls == []
    colours = {p.get_facecolor()[:3] for p in axes[0].patches}
    assert len(colours) == 3  # holds, agrees, differs
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    # read row by row (four columns): the verdicts present, in Verdict order
    assert labels == ["agrees", "fails", "differs", "inconclusive", "holds"]


def _forest_frame():
    rows = [
        # paper 0.5 ± 0.1; ours 0.55 [0.52, 0.60] → z 0.5 [0.2, 1.0]
        _row("a", "p.v1", "ml-100k", "replication", "agrees", rule="value", paper=0.5,
             margin=0.1, ours=0.55, low=0.52, high=0.60),
        _row("a", "p.v1", "ml-latest-small", "replication", "differs", rule="value",
             paper=0.5, margin=0.1, ours=0.9, low=0.8, high=1.0),
        # no interval: a point only
        _row("a", "p.v2", "ml-100k", "transfer", "shown, not graded", rule="value", paper=10,
             margin=2.0, ours=4.0),
        _row("b", "q.v3", "ml-100k", "derivation", "holds", rule="value", paper=1.0,
             margin=0.01, ours=1.0, low=0.995, high=1.005),
        _row("b", "q.sign", "ml-100k", "transfer", "agrees", rule="sign", ours=0.2, low=0.1,
             high=0.3),  # not a value rule
        _row("b", "q.text", "ml-100k", "transfer", "agrees", rule="value", paper="P > R",
             margin=0.1, ours=0.2),  # a value rule without a number: cannot be drawn
    ]
    return pd.DataFrame(rows)


def test_value_rows_normalise_by_each_claims_margin():
    rows = figures.value_rows(_forest_frame())
    assert list(rows["claim"]) == ["p.v1", "p.v1", "p.v2", "q.v3"]
    np.testing.assert_allclose(rows["z"], [0.5, 4.0, -3.0, 0.0])
    np.testing.assert_allclose(rows["z_low"], [0.2, 3.0, np.nan, -0.5])
    np.testing.assert_allclose(rows["z_high"], [1.0, 5.0, np.nan, 0.5])


def test_forest_draws_one_row_per_value_claim_and_dataset():
    fig = figures.forest(_forest_frame(), {"a": "Chapter A", "b": "Chapter B"})
    a, b = fig.axes
    assert [t.get_text() for t in a.get_yticklabels()] == [
        "v1 (ml-100k)", "v1 (ml-latest-small)", "v2 (ml-100k)"]
    assert [t.get_text() for t in b.get_yticklabels()] == ["v3 (ml-100k)"]
    titles = [[t.get_text() for t in ax.texts] for ax in (a, b)]
    assert titles == [["Chapter A"], ["Chapter B"]]
    # interval lines: two in a (v2 has none), one in b; the band is [-1, 1] on a symlog axis
    lines = [c for c in a.collections if isinstance(c, LineCollection)]
    segs = np.concatenate([c.get_segments() for c in lines])
    np.testing.assert_allclose(sorted(s[:, 0].tolist() for s in segs), [[0.2, 1.0], [3.0, 5.0]])
    assert len([c for c in b.collections if isinstance(c, LineCollection)]) == 1
    assert a.get_xscale() == "symlog"
    # the farthest bound is 5 margins away: the axis reaches 7.5, labelled 0, ±1, ±3
    assert a.get_xlim() == (-7.5, 7.5)
    assert list(b.get_xticks()) == [-3, -1, 0, 1, 3]  # the bottom panel carries the labels
    assert [t.get_text() for t in b.get_xticklabels()] == ["-3", "-1", "0", "1", "3"]
    band = [p for p in a.patches if p.get_width() > 0]
    assert len(band) == 1
    x0, x1 = band[0].get_x(), band[0].get_x() + band[0].get_width()
    assert (x0, x1) == (-1, 1)
    assert "margin" in a.figure.axes[-1].get_xlabel()


def test_forest_is_none_without_a_drawable_value_claim():
    frame = _forest_frame()
    assert figures.forest(frame[frame["rule"] != "value"]) is None


def test_write_figures_writes_the_png_files(tmp_path):
    store.save(_forest_frame().assign(chapter="robustness"), chapter="robustness",
               dataset="ml-100k", profile="full", root=tmp_path / "store")
    stored = store.load(root=tmp_path / "store")
    assert len(figures.value_rows(stored)) == 4  # the same rows after the trip through JSON
    out = figures.write_figures(stored, tmp_path / "figs", prefix="ledger-")
    assert set(out) == {"verdicts", "values"}
    for name, path in out.items():
        assert path == tmp_path / "figs" / f"ledger-{name}.png"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "figs").glob(".*tmp"))
    only_signs = _bars_frame()
    assert set(figures.write_figures(only_signs, tmp_path / "signs")) == {"verdicts"}


def test_verdict_bars_refuse_an_empty_frame():
    with pytest.raises(ValueError, match="empty"):
        figures.verdict_bars(pd.DataFrame(columns=list(COLUMNS)))


_CONF = """
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser", "ledger_page"]
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build"]
"""

_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
---

# Robustness and discriminative power

A chapter.
"""


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_sphinx_build_shows_the_ledger_figures(tmp_path, monkeypatch, where):
    """The extension draws the figures into the build folder, never into the sources, and
    Sphinx copies them beside the page: the page shows both and the build has no warning, with
    the build folder inside the project (``make book``) or elsewhere (``--path-output``)."""
    src = tmp_path / "src"
    build = src / "_build" if where == "inside" else tmp_path / "out" / "_build"
    (src / "notebooks").mkdir(parents=True)
    (src / "replication").mkdir()
    (src / "conf.py").write_text(_CONF.format(ext=str(ROOT / "book" / "_ext")))
    (src / "index.md").write_text(
        "# Book\n\n```{toctree}\nnotebooks/robustness\nreplication/ledger\n```\n")
    (src / "notebooks" / "robustness.md").write_text(_NOTEBOOK)
    (src / "replication" / "ledger.md").write_text("# Replication ledger\n\n<!-- ledger -->\n")
    (src / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nparts:\n  - caption: The papers\n    chapters:\n"
        "      - file: notebooks/robustness\n")
    frame = _forest_frame().assign(chapter="robustness")
    store.save(frame, chapter="robustness", dataset="ml-100k", profile="full",
               root=build / "results")
    monkeypatch.setenv("RECMETA_RESULTS", str(build / "results"))  # the extension sets it too
    env = {**os.environ, "RECMETA_PROFILE": "full",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                        str(src), str(build / "html")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert sorted(p.name for p in (build / "ledger-figures").glob("*.png")) == [
        "ledger-values.png", "ledger-verdicts.png"]
    assert not [p for p in src.rglob("*.png") if "_build" not in p.parts]  # sources untouched
    html = (build / "html" / "replication" / "ledger.html").read_text()
    shown = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert shown == ["../_images/ledger-verdicts.png", "../_images/ledger-values.png"]
    for s in shown:
        assert (build / "html" / "replication" / s).resolve().is_file(), s
    text = re.sub(r"<[^>]+>", "", html)
    assert "whole interval lies inside the paper’s value ± the declared margin" in text \
        or "whole interval lies inside the paper's value ± the declared margin" in text
    assert "Derivations" in text and "Replications and transfers" in text
