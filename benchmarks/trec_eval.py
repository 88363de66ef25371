"""``recmeta evaluate`` vs the trec_eval 10.0 binary, end to end, on the same files.

Run by hand (not a test):

    .venv/bin/python benchmarks/trec_eval.py                  # 600k- and 6M-line runs
    .venv/bin/python benchmarks/trec_eval.py --sizes 100      # a quick look (600k lines only)

trec_eval is built from ``../shared/peers/trec_eval-10.0`` into a temporary folder. The inputs
are synthetic and the size of an ML-1M evaluation: 6,040 topics, 104 judgments each (grades
0–5 over 3,706 items: 628,160 qrels lines), and a run of depth 100 (604,000 lines) or 1,000
(6,040,000 lines) in trec_eval's order (score descending), a third of each list judged. Each
command runs in a fresh process — ``recmeta evaluate -m all_trec`` and ``-m ndcg_cut.10`` (and
``-q -m all_trec`` with ``--per-topic``), the same with the binary — interleaved, ``--repeats``
times; a row is the best wall time and the largest resident set (``ru_maxrss`` of the child,
from ``wait4``), with the best CPU time (user + system, all threads: the steadier figure on a
shared machine). A first, untimed call builds recmeta's compiled pass if need be. The outputs of
the two programs are compared byte for byte.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "peers" / "trec_eval-10.0"
N_TOPICS, N_ITEMS, JUDGED = 6040, 3706, 104


def build(folder: Path) -> Path:
    src = folder / "trec_eval"
    shutil.copytree(SOURCE, src, copy_function=shutil.copyfile)
    for path in [src, *src.rglob("*")]:  # the source may be read-only: the copy is not
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    subprocess.run(["make", "-C", str(src)], check=True, capture_output=True)
    return src / "trec_eval"


def write_inputs(folder: Path, depth: int, seed: int = 0) -> tuple[Path, Path]:
    """qrels (6,040 × 104 lines) and a run of ``depth`` documents per topic."""
    rng = np.random.default_rng(seed)
    qrels, run = folder / "bench.qrels", folder / f"bench-{depth}.run"
    with open(qrels, "w") as q, open(run, "w") as r:
        for t in range(1, N_TOPICS + 1):
            docs = rng.choice(N_ITEMS, size=JUDGED, replace=False)
            grades = rng.integers(0, 6, size=JUDGED)
            q.write("".join(f"{t} 0 {d} {g}\n" for d, g in zip(docs, grades)))
            pool = np.concatenate([docs[: depth // 3], rng.permutation(N_ITEMS)])
            ranked = list(dict.fromkeys(pool.tolist()))[:depth]
            scores = np.sort(rng.random(len(ranked)))[::-1].round(4)
            r.write("".join(f"{t} Q0 {d} {i + 1} {s} bench\n"
                            for i, (d, s) in enumerate(zip(ranked, scores))))
    return qrels, run


def timed(cmd: list[str], env: dict) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds (user + system, all threads), peak resident MB and standard
    output of one fresh process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} failed: {err.read().decode()[-2000:]}")
        out.seek(0)
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000],
                    help="run depths per topic (100: 604,000 lines; 1000: 6,040,000)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--per-topic", action="store_true",
                    help="also time -q -m all_trec (every topic's lines: the output's memory)")
    args = ap.parse_args()
    measures = [["-m", "all_trec"], ["-m", "ndcg_cut.10"]]
    measures += [["-q", "-m", "all_trec"]] if args.per_topic else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    recmeta = [sys.executable, "-m", "recmeta", "evaluate"]
    print(f"load average: {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        binary = build(folder)
        for depth in args.sizes:
            qrels, run = write_inputs(folder, depth)
            with open(run) as fh:
                lines = sum(1 for _ in fh)
            for flags in measures:
                tail = [*flags, str(qrels), str(run)]
                timed(recmeta + tail, env)  # builds the compiled pass if need be
                best = {}
                for _ in range(args.repeats):
                    for name, cmd in (("trec_eval 10.0", [str(binary)]), ("recmeta", recmeta)):
                        seconds, cpu, mb, out = timed(cmd + tail, env)
                        prev = best.get(name, (np.inf, np.inf, 0.0, out))
                        best[name] = (min(prev[0], seconds), min(prev[1], cpu),
                                      max(prev[2], mb), out)
                same = best["recmeta"][3] == best["trec_eval 10.0"][3]
                for name, (seconds, cpu, mb, _) in best.items():
                    rows.append((f"{lines:,}", " ".join(flags), name, seconds, cpu, mb, same))
                    print(rows[-1], flush=True)
    print(f"load average: {os.getloadavg()}\n")
    print("| run lines | flags | program | seconds (best) | CPU s (best) | peak MB | speed-up | "
          "speed-up, CPU | memory × | same output |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
    for i in range(0, len(rows), 2):
        te = rows[i]
        for r in rows[i:i + 2]:
            ours = r is not te
            ratio = f"{te[3] / r[3]:.2f}×" if ours else ""
            cpu = f"{te[4] / r[4]:.2f}×" if ours else ""
            mem = f"{r[5] / te[5]:.2f}" if ours else ""
            print(f"| {r[0]} | `{r[1]}` | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.0f} | "
                  f"{ratio} | {cpu} | {mem} | {'yes' if r[6] else 'NO'} |")


if __name__ == "__main__":
    main()
