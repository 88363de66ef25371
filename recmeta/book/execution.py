"""The record of how a chapter page was executed: profile, dataset, seed, versions, wall time,
recommender runs and analyses from their caches and made, and the cost estimated before the
expensive cells.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

import pandas as pd

from .. import analyses, arrays, data
from . import costs
from .costs import clock, duration

__all__ = ["PROFILE_TEXT", "RECORD_VAR", "Execution", "Facts", "start"]

#: a file to which :meth:`Execution.finish` appends the record as one JSON line, if set
#: (``benchmarks/chapter_costs.py`` reads it)
RECORD_VAR = "RECMETA_EXECUTION_RECORD"

#: what each profile is, as ``recmeta run --list`` and the pages say it
PROFILE_TEXT = {
    "full": "the book's sizes, close to the papers'",
    "quick": "smaller sizes, for a first look",
}


class Facts(TypedDict):
    """The record of :class:`Execution` as a plain mapping (:meth:`Execution.facts`)."""

    chapter: str
    profile: str
    dataset: str | None
    seed: object
    recmeta: str
    lenskit: str
    executed: str
    seconds: float
    runs_cached: int
    runs_made: int
    analyses_cached: int
    analyses_computed: int
    estimated: float | None
    estimated_runs: float
    basis: dict[str, float]


@dataclass
class Execution:
    """How a chapter page was executed; :meth:`finish` shows it (and glues it for the page top).

    Built by :func:`start` in a chapter's set-up cell. It records the profile, dataset and seed,
    the versions of recmeta and LensKit, the wall time from :func:`start` to :meth:`finish`, and
    how many recommender runs came from the run cache and how many were made during the chapter,
    and likewise the analyses (:mod:`recmeta.analyses`).
    """

    chapter: str
    profile: str
    dataset: str | None
    seed: object
    started: float
    started_at: str
    runs_before: dict[str, int]
    analyses_before: dict[str, int] = field(default_factory=lambda: dict(analyses.ANALYSIS_COUNTS))
    estimated: float | None = None
    estimated_runs: float = 0.0
    basis: dict[str, float] = field(default_factory=dict)

    def estimate(
        self,
        plan: Callable[[costs.Size], costs.Plan],
        ratings: pd.DataFrame,
        *,
        second: tuple[str, pd.DataFrame, Callable[[costs.Size], costs.Plan]] | None = None,
        settings: object = None,
        second_settings: object = None,
        beside: bool = False,
    ) -> costs.Estimate:
        """Show what the chapter's expensive steps will cost (:func:`recmeta.costs.show`) on
        ``ratings`` and on the reference sizes, before they run; :meth:`finish` sets the
        estimate beside the measured time. ``plan`` builds a :class:`recmeta.costs.Plan` for a
        :class:`recmeta.costs.Size`. ``second``, if given, is ``(name, ratings, plan)`` of the
        chapter's second dataset: its steps are added at its own size in every column.
        ``settings`` (and ``second_settings``, of the second dataset's part; the same if not
        given) add the chapter's own measured steps (:meth:`recmeta.costs.Plan.measured`).
        ``beside``: the second dataset's part runs in a worker process beside the chapter's
        (:mod:`recmeta.book.background`), and the page's time is
        :func:`recmeta.costs.side_by_side` of the two parts."""

        def main(size: costs.Size) -> costs.Plan:
            p = plan(size)
            return p if settings is None else p.measured(self.chapter, settings)

        build = main
        group = ""
        if second:
            name, other, other_plan = second
            group = f"second dataset ({name})"
            part = other_plan(costs.Size.of(other))
            if settings is not None:
                other_settings = settings if second_settings is None else second_settings
                part.measured(self.chapter, other_settings, second=True)

            def build(size: costs.Size) -> costs.Plan:
                return main(size).include(part, group)

        est = costs.show(build, costs.Size.of(ratings), label=str(self.dataset or "this dataset"))
        here = est.plans[est.here].frame()
        self.estimated = float(here["seconds"].sum())
        # every dataset's runs, whatever their group: the part the run cache may serve
        self.estimated_runs = float(here.loc[here["kind"].str.startswith("run:"), "seconds"].sum())
        if beside and group:
            part, runs = here["group"] == group, here["kind"].str.startswith("run:")
            sec = here["seconds"]
            main_s, part_s = float(sec[~part].sum()), float(sec[part].sum())
            # analyses side by side go as fast as alone; runs trained side by side do not
            rest = costs.side_by_side(
                float(sec[~part & ~runs].sum()), float(sec[part & ~runs].sum()), 0.5
            )
            trained = costs.side_by_side(
                float(sec[~part & runs].sum()), float(sec[part & runs].sum())
            )
            self.estimated = rest + trained
            self.estimated_runs = trained
            from IPython.display import Markdown, display

            display(
                Markdown(
                    f"The second dataset's part runs in a worker process beside this "
                    f"dataset's, one core each: about {duration(self.estimated)} for the page, "
                    f"against {duration(main_s + part_s)} one after the other."
                )
            )
        self.basis = est.plans[est.here].basis()
        return est

    def facts(self) -> Facts:
        """The record as a plain mapping (also what :meth:`finish` renders)."""
        import importlib.metadata as md
        import time

        counts = run_counts()
        cached = counts["cached"] - self.runs_before["cached"]
        made = counts["made"] - self.runs_before["made"]
        return {
            "chapter": self.chapter,
            "profile": self.profile,
            "dataset": self.dataset,
            "seed": self.seed,
            "recmeta": md.version("recmeta"),
            "lenskit": md.version("lenskit"),
            "executed": self.started_at,
            "seconds": time.perf_counter() - self.started,
            "runs_cached": cached,
            "runs_made": made,
            "analyses_cached": analyses.ANALYSIS_COUNTS["cached"] - self.analyses_before["cached"],
            "analyses_computed": (
                analyses.ANALYSIS_COUNTS["computed"] - self.analyses_before["computed"]
            ),
            "estimated": self.estimated,
            "estimated_runs": self.estimated_runs,
            "basis": dict(self.basis),
        }

    def markdown(self) -> str:
        f = self.facts()
        secs = float(f["seconds"])
        wall = clock(secs)
        total = int(f["runs_cached"]) + int(f["runs_made"])
        if total == 0:
            runs_text = "no recommender runs"
        else:
            runs_text = (
                f"{total} recommender runs, {f['runs_cached']} read from the run cache "
                f"and {f['runs_made']} made during this execution"
            )
        what = PROFILE_TEXT.get(str(f["profile"]))
        parts = [f"profile: **{f['profile']}**" + (f" ({what})" if what else "")]
        if f["dataset"] is not None:
            parts.append(f"dataset: {f['dataset']}")
        if f["seed"] is not None:
            parts.append(f"seed: {f['seed']}")
        parts += [
            f"recmeta {f['recmeta']}",
            f"LensKit {f['lenskit']}",
            f"executed {f['executed']} in {wall}",
            runs_text,
        ]
        n_cached, n_computed = int(f["analyses_cached"]), int(f["analyses_computed"])
        if n_cached:  # only a re-run reads analyses; say so, as it explains a short time
            parts.append(
                f"{n_cached} of {n_cached + n_computed} analyses read from the analysis cache"
            )
        if self.estimated is not None:
            if self.basis:  # the chapter's own steps measured: the estimate is the whole page
                est = f"estimated beforehand: {duration(self.estimated)} for the whole page"
                if self.estimated_runs:
                    est += (
                        f" ({duration(self.estimated - self.estimated_runs)} with every "
                        "recommender run from the run cache)"
                    )
            else:
                est = (
                    f"estimated beforehand: {duration(self.estimated)} of CPU for the steps it "
                    "models"
                )
                if self.estimated_runs and int(f["runs_cached"]) > 0:
                    est += (
                        f" ({duration(self.estimated - self.estimated_runs)} without the "
                        "recommender runs, which the cache may have served)"
                    )
            parts.append(est)
        return "**How this page was run.** " + " · ".join(parts) + "."

    def finish(self) -> None:
        """Display the record and glue it as ``execution`` (shown under the chapter's title)."""
        from IPython.display import Markdown, display

        md = Markdown(self.markdown())
        try:
            from myst_nb import glue

            glue("execution", md, display=False)
        except ImportError:  # outside a book build the glue is not needed
            pass
        display(md)
        ahead = sys.modules.get("recmeta.recommenders.ahead")
        if ahead is not None:  # the workers kept for a chapter's next runs are done
            ahead.close_workers()
        record = os.environ.get(RECORD_VAR)
        if record:  # the chapter benchmark collects every execution's record
            import json

            with open(record, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(self.facts(), default=str) + "\n")
        return None


def run_counts() -> dict[str, int]:
    """The runs :func:`recmeta.recommenders.make` read from the run cache and made so far in
    this process; none before the recommenders are imported (the book's own process, which
    reads this module for the profile, then skips LensKit and PyTorch)."""
    cached_module = sys.modules.get("recmeta.recommenders.cached")
    if cached_module is None:
        return {"cached": 0, "made": 0}
    return dict(cached_module.RUN_COUNTS)


def _no_redraw_after_cells() -> None:
    """In a Jupyter kernel, stop pyplot redrawing every changed figure after each cell.

    That hook (``_draw_all_if_interactive``) serves windows that show figures as they change. A
    page shows only the PNG that the inline backend renders after the cell, with draws of its
    own, so the hook's draw is wasted work: it is removed (``pyplot.uninstall_repl_displayhook``,
    once the backend is loaded, since loading it installs the hook). Outside a kernel nothing
    changes."""
    if "ipykernel" not in sys.modules:
        return
    import matplotlib.pyplot as plt

    plt.switch_backend(plt.get_backend())
    plt.uninstall_repl_displayhook()


def start(
    chapter: str,
    *,
    profile: str,
    dataset: str | os.PathLike | None = None,
    seed: object = None,
) -> Execution:
    """Begin the record of a chapter's execution (call it in the set-up cell).

    It also sets LensKit's thread limits (``lenskit.parallel.ensure_parallel_init``: one BLAS
    thread by default) at once. LensKit sets them when it first trains a model, for the rest of
    the process; set only then, the chapter's analyses would run with one BLAS thread count when
    its runs are trained and another when they come from the run cache, and matrix products
    summed in another order differ in their last bits."""
    import datetime
    import time

    from lenskit.parallel import ensure_parallel_init

    ensure_parallel_init()
    arrays.keep_freed_memory()
    _no_redraw_after_cells()

    name = data.describe_source(dataset) if isinstance(dataset, (str, os.PathLike)) else dataset
    os.environ["RECMETA_CHAPTER"] = chapter
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Execution(chapter, profile, name, seed, time.perf_counter(), now, run_counts())
