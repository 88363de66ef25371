"""`recmeta run` executes one chapter with its parameters overridden, and refuses what it cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recmeta.book import chapters
from recmeta.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.mark.slow
def test_sampled_metrics_runs_on_implicit_feedback(tmp_path, ml_latest_small):
    # the first 200 of the 610 users: what is checked is that every cell runs without ratings
    clicks = tmp_path / "clicks.csv"
    first = ml_latest_small["user"] <= 200
    ml_latest_small.loc[first].drop(columns="rating").to_csv(clicks, index=False)
    small = {"toy_repetitions": 20, "check_draws": 200, "real_repetitions": 3,
             "fig6_ms": [10, 100], "second_dataset": None, "multi_held_out": None}
    path = chapters.run("sampled-metrics", dataset=str(clicks), overrides=small, quick=True,
                        out=tmp_path / "out", root=ROOT, html=False)
    text = json.dumps(json.loads(path.read_text())["cells"])
    assert "dataset: clicks.csv" in text and "profile: **quick**" in text
