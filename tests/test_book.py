"""The book builds, executing every chapter (quick profile), and `recmeta run` re-runs one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recmeta import chapters
from recmeta.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


def test_book_builds_every_page(built_book):
    assert (built_book / "index.html").exists()
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]
    for f in files:
        assert (built_book / f"{f}.html").exists(), f"{f} was not built"


def test_every_chapter_page_says_how_it_ran(built_book):
    for c in chapters.discover(ROOT):
        page = built_book / "notebooks" / f"{c.name}.html"
        if not page.exists():
            continue
        text = re.sub(r"<[^>]+>", "", page.read_text())
        assert "How this page was run." in text, c.name
        assert "profile: quick" in text, c.name  # the tests build the quick profile
        assert re.search(r"LensKit \d{4}\.\d+", text), c.name


def test_ledger_page_covers_the_paper_chapters_only(built_book):
    html = (built_book / "replication" / "ledger.html").read_text()
    article = html[html.index('<article class="bd-article"'):html.index("</article>")]
    text = re.sub(r"<[^>]+>", "", article)  # the page's own text, not the navigation
    for title in ("Statistical biases", "Sampled metrics", "Robustness", "Multi-graded"):
        assert title in text, title
    assert "Your own experiment" not in text  # no paper behind it, so no ledger to miss
    assert "not yet in the ledger" not in text  # every paper chapter has its ledger now


def test_graded_chapters_refuse_implicit_feedback_before_executing(tmp_path, ml_latest_small, capsys):
    clicks = tmp_path / "clicks.csv"
    ml_latest_small.drop(columns="rating").to_csv(clicks, index=False)
    for name in chapters.GRADED_ONLY:
        assert cli_main(["run", name, "--dataset", str(clicks), "--root", str(ROOT),
                         "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert "no rating column" in err and "sampled-metrics" in err and "robustness" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("*.ipynb"))


def test_graded_only_names_real_chapters():
    names = {c.name for c in chapters.discover(ROOT)}
    assert set(chapters.GRADED_ONLY) <= names
    for name in chapters.GRADED_ONLY:  # each refuses implicit data in its set-up cell too
        assert 'needs="graded"' in (ROOT / "notebooks" / f"{name}.md").read_text(), name


def test_datasets_chapter_has_table_and_figures(built_book):
    html = (built_book / "notebooks" / "datasets.html").read_text()
    assert "943" in html and "1,682" in html and "9,724" in html
    assert len(re.findall(r'<img[^>]+src="[^"]+\.png"', html)) >= 2
    assert "Traceback" not in html and 'class="output stderr"' not in html


def test_every_chapter_has_a_parameters_cell():
    for c in chapters.discover(ROOT):
        assert c.parameters, f"{c.name} has no cell tagged 'parameters'"


def test_run_one_chapter_with_overrides(tmp_path, ml100k):
    path = chapters.run(
        "datasets", overrides={"datasets": ["ml-100k"]}, quick=True, out=tmp_path, root=ROOT
    )
    nb = json.loads(path.read_text())
    text = json.dumps(nb)
    assert "ml-latest-small" not in "".join(
        "".join(o.get("data", {}).get("text/plain", "")) for c in nb["cells"] for o in c.get("outputs", [])
    )
    assert "injected-parameters" in text
    assert path.with_suffix(".html").exists()


def test_run_reports_the_failing_cell(tmp_path, ml100k):
    with pytest.raises(chapters.ChapterError, match="failed in cell"):
        chapters.run("datasets", overrides={"datasets": ["no-such-release"]}, quick=True,
                     out=tmp_path, root=ROOT, html=False)


def test_run_cli_list_and_bad_parameter(capsys):
    assert cli_main(["run", "--list", "--root", str(ROOT)]) == 0
    assert "datasets" in capsys.readouterr().out
    assert cli_main(["run", "datasets", "--set", "nope=1", "--root", str(ROOT)]) == 2
    assert "no parameter 'nope'" in capsys.readouterr().err


def test_each_chapter_offers_its_notebook(built_book):
    for c in chapters.discover(ROOT):
        page = built_book / "notebooks" / f"{c.name}.html"
        if not page.exists():
            continue  # not in the table of contents (yet); test_book_builds_every_page covers the toc
        assert f'href="{c.name}.ipynb"' in page.read_text()
        nb = json.loads((built_book / "notebooks" / f"{c.name}.ipynb").read_text())
        assert any("parameters" in cell.get("metadata", {}).get("tags", []) for cell in nb["cells"])


@pytest.mark.slow
def test_sampled_metrics_runs_on_implicit_feedback(tmp_path, ml_latest_small):
    clicks = tmp_path / "clicks.csv"
    ml_latest_small.drop(columns="rating").to_csv(clicks, index=False)
    small = {"toy_repetitions": 20, "check_draws": 200, "real_repetitions": 3,
             "fig6_ms": [10, 100], "second_dataset": None, "multi_held_out": None}
    path = chapters.run("sampled-metrics", dataset=str(clicks), overrides=small, quick=True,
                        out=tmp_path / "out", root=ROOT, html=False)
    text = json.dumps(json.loads(path.read_text())["cells"])
    assert "dataset: clicks.csv" in text and "profile: **quick**" in text
