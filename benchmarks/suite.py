"""Benchmark: where ``make test`` spends its CPU, by test file.

    PYTHONPATH=benchmarks/suite_cpu PYTEST_ADDOPTS="-p suite_cpu" SUITE_CPU=/tmp/suite.jsonl \\
        /usr/bin/time -f "%e s wall, %U s user, %S s sys" make test
    .venv/bin/python benchmarks/suite.py /tmp/suite.jsonl

The plugin (``suite_cpu/suite_cpu.py``) records each test's CPU seconds: its worker's own and
those of the processes the test started and waited for (the quick book's Sphinx and notebook
kernels, ruff, mypy). This script sums them by file, largest first, with each file's share of
the tests' CPU. The whole command's CPU (``time``) also holds the set-up and each worker's
start and collection, which no test records.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="the plugin's records (SUITE_CPU)")
    parser.add_argument("--top", type=int, default=15, help="files shown (default 15)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.path.read_text().splitlines() if line.strip()]
    by_file: dict[str, float] = defaultdict(float)
    by_worker: dict[str, float] = defaultdict(float)
    by_test: dict[str, float] = {}
    for r in rows:
        cpu = r["self"] + r["children"]
        by_file[r["test"].split("::")[0]] += cpu
        by_worker[r["worker"]] += cpu
        by_test[r["test"]] = cpu
    total = sum(by_file.values())
    wall = max(r["end"] for r in rows) - min(r["start"] for r in rows)
    workers = ", ".join(f"{w} {s:.0f} s" for w, s in sorted(by_worker.items()))
    print(f"{len(rows)} tests: {total:.0f} CPU-s in {wall:.0f} s of wall time ({workers})")
    print("| file | CPU-s | share |\n|---|---:|---:|")
    for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"| `{name}` | {cpu:.0f} | {100 * cpu / total:.0f} % |")
    rest = sorted(by_file.values(), reverse=True)[args.top :]
    if rest:
        print(f"| {len(rest)} other files | {sum(rest):.0f} | {100 * sum(rest) / total:.0f} % |")
    print("\nlongest tests:")
    for name, cpu in sorted(by_test.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {cpu:6.1f} CPU-s  {name}")


if __name__ == "__main__":
    main()
