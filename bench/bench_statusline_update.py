"""The warm status line reader's update after one new request, CPU time, with what follows the counting pass carried
(the predictions, the cache causes' attribution and prices) and made afresh, alternating in the same process.

Builds a Claude Code file of REQUESTS requests (tests.core.live_sessions), keeps one StatusEngine on it (as the warm
reader does), and after each appended request times `update()`: every other run drops the carried predictions and
attribution first, so both ways measure the same growth on the same machine load (printed beside the medians).

    .venv/bin/python bench/bench_statusline_update.py [REQUESTS] [RUNS]   (default 1000 20)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.core.live_sessions (foldscope itself is installed)

from foldscope.core.readout.status import StatusEngine  # noqa: E402
from tests.core.live_sessions import append, assistant, rounds, user  # noqa: E402


def main(requests: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.jsonl"
        append(path, rounds(0, requests))
        engine = StatusEngine(str(path))
        engine.update()
        n = requests

        def grow() -> None:
            nonlocal n
            append(path, [user(n, f"question {n}: " + "word " * 40), assistant(n, f"answer {n}: " + "reply " * 60, 3_000 + 200 * n)])
            n += 1

        for _ in range(3):
            grow()
            engine.update()
        carried: list[float] = []
        afresh: list[float] = []
        for k in range(2 * runs):
            grow()
            if k % 2:  # made afresh: the predictions and the attribution from the first request, as before they were kept
                engine.resume.causes = None
                if engine.resume.kept is not None:
                    engine.resume.kept.predicted = None
            start = time.process_time()
            engine.update()
            (afresh if k % 2 else carried).append(time.process_time() - start)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cpus")
    a, b = statistics.median(carried), statistics.median(afresh)
    print(f"{requests:,} requests, warm update after one new request, CPU median of {runs}: carried {a * 1000:.1f} ms,")
    print(f"  made afresh {b * 1000:.1f} ms ({b / a:.2f}x)")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*(args + [1000, 20][len(args) :]))
