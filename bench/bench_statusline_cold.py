"""The status line with no warm reader: one run's reading after one new line, the engine loaded from its pickle, with the
tokenizer built on another thread beside the imports and the unpickling (as it is) and in line (as it was), alternating.

Builds a Claude Code file of REQUESTS requests (tests.core.live_sessions) and, for each of RUNS pairs, keeps its state in
a fresh cache folder, appends a line, and runs core.cli.statusline_reader.update in a fresh process: prints the medians
of its wall time, its CPU (user + system, every thread) and its reading thread's own CPU, which is what a second core
takes off the wall on an idle machine (on a loaded one the wall shows little of it), and the load average.

    .venv/bin/python bench/bench_statusline_cold.py [REQUESTS] [RUNS]   (default 1000 5)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.core.live_sessions (foldscope itself is installed)

from tests.core.live_sessions import append, rounds, user  # noqa: E402

RUN = """
import json, sys, time
wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
from pathlib import Path
from foldscope.core.cli import statusline_reader as reader
if sys.argv[3] == "in line":
    reader._tokenizer_meanwhile = lambda: None
how = reader.update(sys.argv[1], None, Path(sys.argv[2]))["_run"]["how"]
print(json.dumps([how, time.perf_counter() - wall, time.process_time() - cpu, time.thread_time() - main]))
"""


def main(requests: int, runs: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode kept, as installed
    found: dict[str, list[list[float]]] = {"beside": [], "in line": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.jsonl"
        append(path, rounds(0, requests))
        size = path.stat().st_size
        for k in range(2 * runs):
            way = "beside" if k % 2 == 0 else "in line"
            with open(path, "r+b") as handle:  # back to the session as first kept, then one new line
                handle.truncate(size)
            folder = Path(tmp) / f"cache{k}"
            subprocess.run([sys.executable, "-c", RUN, str(path), str(folder), "in line"], env=env, check=True, capture_output=True)
            append(path, [user(requests, f"question {requests}: " + "word " * 40)])
            done = subprocess.run([sys.executable, "-c", RUN, str(path), str(folder), way], env=env, check=True, capture_output=True)
            how, *figures = json.loads(done.stdout)
            if how != "grown":
                raise SystemExit(f"the run read the file afresh ({how}), not from the kept engine")
            found[way].append(figures)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cpus")
    for way, rows in found.items():
        wall, cpu, main_cpu = (statistics.median(column) * 1000 for column in zip(*rows))
        print(f"{requests:,} requests, one new line, no warm reader, tokenizer built {way}: wall {wall:.0f} ms, CPU {cpu:.0f} ms, ")
        print(f"  the reading thread's CPU {main_cpu:.0f} ms (medians of {len(rows)})")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*(args + [1000, 5][len(args) :]))
