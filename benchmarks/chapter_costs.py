"""Chapters' cost estimates against their measured time, and the measurements behind the step fits.

Each chapter is executed as ``recmeta run`` executes it (papermill, a fresh kernel; every
analysis computed, unless ``--analyses cache`` reads them from ``$RECMETA_ANALYSES``, which
measures a warm re-run), one at a time, with the run cache given by ``$RECMETA_CACHE`` (warm it
first: the estimate the book prints counts recommender runs, and the comparison here is against a
run whose recommenders come from the cache, as a re-run does). Per execution it records the
chapter's own record (``recmeta.book.execution``: the estimate printed before the expensive
cells, and the time the page reports, which the fits read: :func:`page_seconds`), the wall time
of the whole notebook (kernel start to last cell), the load average, and, with ``--steps``,
the time spent in each step of :data:`recmeta.book.step_costs.STEPS` (the
functions named there are wrapped in the kernel; a step's time excludes the steps it calls).
``--steps`` executes the chapter in one process (``RECMETA_TRAIN_JOBS=1``: no runs made ahead,
no second dataset beside the first), so that every step is timed, alone; a chapter's second
dataset then runs in the same process after the first, and its steps add to theirs (the fits'
units count both).

    # measure (appends to the records file), then refit and compare
    python benchmarks/chapter_costs.py measure --steps --datasets ml-100k ml-latest-small
    python benchmarks/chapter_costs.py fits      # writes recmeta/book/step_fits.py
    python benchmarks/chapter_costs.py table     # estimate vs measured, per chapter and dataset

``--cprofile DIR`` writes a cProfile of each execution instead (for finding the steps; its
overhead makes the times unfit for the fits).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "results" / "chapter-costs.jsonl"
CHAPTERS = [
    "statistical-biases",
    "sampled-metrics",
    "robustness",
    "assessing-ranking-metrics",
    "multigraded-relevance",
    "your-own-experiment",
]

#: run in the kernel before the chapter (an IPython start-up file): wraps the steps' functions
#: and, at exit, writes their times; or profiles the whole kernel
STARTUP = """
import atexit, json, os, time
_out = os.environ.get("CHAPTER_COSTS_STEPS")
_prof = os.environ.get("CHAPTER_COSTS_CPROFILE")
if _prof:
    import cProfile
    _p = cProfile.Profile()
    _p.enable()
    atexit.register(lambda: (_p.disable(), _p.dump_stats(_prof)))
if _out:
    from recmeta.book import step_costs
    _times = step_costs.install_timers()
    _t0 = time.perf_counter()
    def _dump():
        with open(_out, "w") as fh:
            json.dump({"steps": _times, "kernel_seconds": time.perf_counter() - _t0}, fh)
    atexit.register(_dump)
"""


def _load() -> str:
    return os.getloadavg().__repr__()


def measure(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    from recmeta import data
    from recmeta.book import chapters

    if not os.environ.get("RECMETA_CACHE"):
        raise SystemExit("set RECMETA_CACHE to a warm run cache (see the module docstring)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="chapter-costs-") as tmp:
        here = Path(tmp)
        startup = here / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        (startup / "00-chapter-costs.py").write_text(STARTUP)
        os.environ["IPYTHONDIR"] = str(here / "ipython")
        if args.analyses == "off":  # every analysis computed (the cold cost the fits model)
            os.environ["RECMETA_ANALYSES"] = "off"
        for dataset in args.datasets:
            for name in args.chapters:
                record = here / "record.jsonl"
                steps = here / "steps.json"
                record.unlink(missing_ok=True)
                steps.unlink(missing_ok=True)
                os.environ["RECMETA_EXECUTION_RECORD"] = str(record)
                os.environ.pop("CHAPTER_COSTS_STEPS", None)
                os.environ.pop("CHAPTER_COSTS_CPROFILE", None)
                if args.steps:
                    os.environ["CHAPTER_COSTS_STEPS"] = str(steps)
                    # the timers wrap the kernel's functions: a second dataset's part handed
                    # to a worker process (recmeta.book.background) would go unmeasured, and
                    # steps sharing the cores would be timed slower than alone
                    os.environ["RECMETA_TRAIN_JOBS"] = "1"
                if args.cprofile:
                    args.cprofile.mkdir(parents=True, exist_ok=True)
                    prof = args.cprofile / f"{name}.{dataset}.{args.profile}.prof"
                    os.environ["CHAPTER_COSTS_CPROFILE"] = str(prof)
                load_before = os.getloadavg()
                t0 = time.perf_counter()
                status = "ok"
                try:
                    chapters.run(
                        name,
                        dataset=dataset,
                        quick=args.profile == "quick",
                        out=here / "out",
                        root=ROOT,
                        html=False,
                    )
                except chapters.ChapterError as exc:
                    status = f"failed: {exc}"
                wall = time.perf_counter() - t0
                facts = (
                    [json.loads(line) for line in record.read_text().splitlines()]
                    if (record.exists())
                    else []
                )
                row = {
                    "chapter": name,
                    "dataset": dataset,
                    "profile": args.profile,
                    "status": status,
                    "analyses": args.analyses,
                    "wall": wall,
                    "load_before": load_before,
                    "load_after": os.getloadavg(),
                    "estimated": facts[-1]["estimated"] if facts else None,
                    "executed": facts[-1]["seconds"] if facts else None,
                    "runs_made": facts[-1]["runs_made"] if facts else None,
                    "runs_cached": facts[-1]["runs_cached"] if facts else None,
                    "estimated_runs": facts[-1]["estimated_runs"] if facts else None,
                    "basis": facts[-1].get("basis") if facts else None,
                    "ratings": int(data.load(dataset).shape[0]),
                    "cprofile": bool(args.cprofile),
                    "when": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
                }
                if steps.exists():
                    row.update(json.loads(steps.read_text()))
                with open(args.out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
                est = row["estimated"]
                print(
                    f"{name:28s} {dataset:16s} {args.profile:5s} wall {wall:7.1f} s  "
                    f"estimate {est if est is None else round(est, 1)} s  "
                    f"load {row['load_before'][0]:.2f}->{row['load_after'][0]:.2f}  {status[:80]}",
                    flush=True,
                )


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def step_seconds(row: dict) -> dict[str, float]:
    """Seconds of each measured step of one execution, by ``<chapter>/<name>``: the timed
    functions' exclusive times, and ``rest`` = the page's time − every timed function (the
    training of runs included, which the scale fits cost). The page's time is the one it
    reports and the estimate is compared with (:func:`page_seconds`)."""
    steps = dict(row.get("steps") or {})
    timed = sum(steps.values())
    steps.pop("train", None)
    out = {f"{row['chapter']}/{k}": v for k, v in steps.items()}
    out[f"{row['chapter']}/rest"] = page_seconds(row) - timed
    return out


def page_seconds(row: dict) -> float:
    """The time the page reports ("executed in"): from the chapter's first cell to its last, so
    without the kernel's start and the executor's own work (5 to 8 s more in ``wall``); the
    wall time for records that lack it."""
    return float(row.get("executed") or row["wall"])


def fitting_rows(records: list[dict]) -> list[dict]:
    """The executions the fits read: finished, step-timed, not under cProfile; the last one of
    each (chapter, dataset, profile)."""
    keep: dict[tuple, dict] = {}
    for r in records:
        if r["status"] == "ok" and r.get("steps") is not None and not r.get("cprofile"):
            keep[(r["chapter"], r["dataset"], r["profile"])] = r
    return list(keep.values())


def fit_steps(records: list[dict]) -> dict[str, dict]:
    """``log_c`` of every measured step: the mean over executions of ``log(seconds / basis)``;
    ``low``/``high`` the extreme residual factors, ``n`` the executions, ``largest`` the most
    ratings among their datasets (for the extrapolation mark)."""
    import math

    sys.path.insert(0, str(ROOT))
    from recmeta.book import costs

    logs: dict[str, list[float]] = {}
    largest: dict[str, int] = {}
    for row in fitting_rows(records):
        basis = row.get("basis") or {}
        for key, seconds in step_seconds(row).items():
            b = basis.get(key)
            if not b or seconds <= 0:
                continue
            logs.setdefault(key, []).append(math.log(seconds / b))
            largest[key] = max(largest.get(key, 0), int(row.get("ratings") or 0))
    out = {}
    for key, ls in sorted(logs.items()):
        g = costs.step_growth(f"step:{key}", fitted=False)
        mean = sum(ls) / len(ls)
        out[key] = {
            "log_c": mean,
            "a": g.a,
            "b": g.b,
            "g": g.g,
            "low": math.exp(min(ls) - mean),
            "high": math.exp(max(ls) - mean),
            "n": len(ls),
            "largest": largest[key],
            "via": g.via,
        }
    return out


def fits_module(path: Path) -> str:
    """The text of ``recmeta/book/step_fits.py`` from the records in ``path``."""
    fits = fit_steps(_records(path))
    lines = [
        '"""Fits of the chapters\' measured steps, read by :mod:`recmeta.book.costs`.',
        "",
        "Generated by ``benchmarks/chapter_costs.py fits`` from",
        f"benchmarks/results/{path.name}; do not edit.",
        '"""',
        "",
        "STEP_FITS: dict[str, dict] = {",
    ]
    for key, fit in fits.items():
        lines.append(f"    {json.dumps(key, ensure_ascii=False)}: {{")
        lines += [f"        {json.dumps(k)}: {json.dumps(v)}," for k, v in fit.items()]
        lines.append("    },")
    lines += [
        "}",
        "",
    ]
    return "\n".join(lines)


def predicted(row: dict, fits: dict[str, dict]) -> float:
    """The page's estimate from ``fits`` and the execution's recorded basis: the sum over its
    measured steps of ``exp(log_c) · basis``, plus the recommender runs if any was trained."""
    import math

    if any(k not in fits for k in row["basis"]):
        return float("nan")
    t = sum(math.exp(fits[k]["log_c"]) * b for k, b in row["basis"].items())
    return t + (row["estimated_runs"] if row["runs_made"] else 0.0)


def _ratio(measured: float, estimate: float) -> str:
    return f"{measured / estimate:.2f}" if estimate > 0 else "–"


def table(args: argparse.Namespace) -> None:
    """Estimate against measured time, per chapter and dataset (the last record of each): the
    estimate the page printed, and the one the fits give when refitted on the fits' records
    without that dataset's executions (out of sample)."""
    records = _records(args.records)
    fitting = _records(RECORDS)  # the fits' own records, for the refit without the dataset
    rows: dict[tuple, dict] = {}
    for r in records:
        if r["status"] == "ok" and not r.get("cprofile") and r["profile"] == args.profile:
            rows[(r["chapter"], r["dataset"])] = r
    print(
        "| chapter | dataset | printed estimate | measured (the page's time) | ratio "
        "| refit without the dataset "
        "| ratio | runs trained | load (1 min, before–after) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for (chapter, dataset), r in rows.items():
        est = r["estimated"]
        if est is None:
            continue
        if not r["runs_made"]:  # every run came from the cache: the estimate without training
            est -= r["estimated_runs"]
        others = [x for x in fitting if x["dataset"] != dataset]
        loo = predicted(r, fit_steps(others)) if r.get("basis") else float("nan")
        load = f"{r['load_before'][0]:.1f}–{r['load_after'][0]:.1f}"
        took = page_seconds(r)
        print(
            f"| {chapter} | {dataset} | {est:.0f} s | {took:.0f} s | "
            f"{_ratio(took, est)} | {loo:.0f} s | {_ratio(took, loo)} | "
            f"{r['runs_made']} | {load} |"
        )


def plan_of(chapter: str, profile: str, dataset: str, second: str = "ml-latest-small") -> Any:
    """The plan a chapter's estimate cell builds with its default parameters (the runs' part
    as its paper module states it, and the measured steps), on ``dataset`` and, unless it is
    the same, the chapter's second dataset. For estimates without executing the chapter."""
    sys.path.insert(0, str(ROOT))
    from recmeta import data
    from recmeta.book import chapters, costs
    from recmeta.compare import experiment
    from recmeta.papers import bellogin2017, krichene2020, scheel2011, valcarce2018, valcarce2020

    params = chapters.find(chapter, ROOT).parameters
    size = costs.Size.of(data.load(dataset))
    other = costs.Size.of(data.load(second)) if second and second != dataset else None
    if chapter == "statistical-biases":
        s1 = bellogin2017.Settings.resolve(profile, seed=params["seed"])
        s2 = bellogin2017.Settings.resolve(profile, secondary=True, seed=params["seed"])
        main = bellogin2017.cost_plan(size, s1)
        part = other and bellogin2017.cost_plan(other, s2)
    elif chapter == "sampled-metrics":
        s1 = s2 = krichene2020.Settings.resolve(profile, dataset=dataset, second_dataset=second)
        kw = {"systems": params["systems"], "repetitions": s1.real_repetitions, "m": 100}
        main = krichene2020.cost_plan(size, **kw)
        part = other and krichene2020.cost_plan(other, **kw)
    elif chapter == "robustness":
        s1 = valcarce2018.Settings.resolve(profile)
        s2 = s1.second(profile)
        main, part = s1.cost(size), other and s2.cost(other)
    elif chapter == "assessing-ranking-metrics":
        s1 = s2 = valcarce2020.Settings.resolve(profile)
        main, part = s1.cost_plan(size), other and s1.second_cost_plan(other)
    elif chapter == "multigraded-relevance":
        s1 = s2 = scheel2011.Settings.resolve(profile, dataset=dataset, second_dataset=second)
        main = scheel2011.cost_plan(size, s1.systems, repetitions=s1.repetitions)
        part = other and scheel2011.cost_plan(other, s1.systems, repetitions=s1.repetitions)
    else:
        st = experiment.Settings.resolve(profile)
        s1 = s2 = {
            "systems": params["systems"],
            "pipelines": params["pipelines"],
            "metrics": params["metrics"],
            "n_permutations": st.n_permutations,
            "n_bootstrap": st.n_bootstrap,
        }
        main, part = costs.Plan(size).runs(params["systems"]), None
    main.measured(chapter, s1)
    if part:
        part.measured(chapter, s2, second=True)
        main.include(part, f"second dataset ({second})")
    return main


def estimate(args: argparse.Namespace) -> None:
    """Each chapter's estimate with its default parameters, without executing it: every run
    trained, and every run from the cache."""
    print("| chapter | dataset | profile | estimate | with every run cached |")
    print("|---|---|---|---:|---:|")
    for dataset in args.datasets:
        for chapter in args.chapters:
            f = plan_of(chapter, args.profile, dataset).frame()
            runs = f.loc[f["kind"].str.startswith("run:"), "seconds"].sum()
            total = f["seconds"].sum()
            print(
                f"| {chapter} | {dataset} | {args.profile} | {total:.0f} s | {total - runs:.0f} s |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="execute chapters one at a time and record their times")
    m.add_argument("--datasets", nargs="+", default=["ml-100k", "ml-latest-small"])
    m.add_argument("--chapters", nargs="+", default=CHAPTERS)
    m.add_argument("--profile", choices=["quick", "full"], default="quick")
    m.add_argument("--steps", action="store_true", help="time the steps of the step fits")
    m.add_argument("--cprofile", type=Path, default=None)
    m.add_argument(
        "--analyses",
        choices=["off", "cache"],
        default="off",
        help="off: compute every analysis (default); cache: use $RECMETA_ANALYSES (warm re-runs)",
    )
    m.add_argument("--out", type=Path, default=RECORDS)
    f = sub.add_parser("fits", help="refit recmeta/book/step_fits.py from the records")
    f.add_argument("--records", type=Path, default=RECORDS)
    t = sub.add_parser("table", help="estimate against measured time, per chapter and dataset")
    t.add_argument("--records", type=Path, default=RECORDS)
    t.add_argument("--profile", choices=["quick", "full"], default="quick")
    e = sub.add_parser("estimate", help="the chapters' estimates, without executing them")
    e.add_argument("--datasets", nargs="+", default=["ml-100k", "ml-latest-small"])
    e.add_argument("--chapters", nargs="+", default=CHAPTERS)
    e.add_argument("--profile", choices=["quick", "full"], default="full")
    args = ap.parse_args()
    if args.cmd == "estimate":
        estimate(args)
    elif args.cmd == "measure":
        measure(args)
    elif args.cmd == "fits":
        text = fits_module(args.records)
        (ROOT / "recmeta" / "book" / "step_fits.py").write_text(text)
        print(text)
    else:
        table(args)


if __name__ == "__main__":
    main()
