"""Following a live session: what one new round costs against opening the file whole, across sizes.

Builds Claude Code files of N rounds (the shape of tests.core.live_sessions), opens each whole (read and
build the document, no library), then follows it: appends one round (two lines) at a time and times the
poll (reading the new lines) and the document's growth (counting the new messages, measuring the trace
again from the counter's memo). Prints the lines parsed per poll, the times and their ratio to the open.

    .venv/bin/python bench/bench_follow.py [ROUNDS ...]   (default 250 500 1000)
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.core.live_sessions (foldscope itself is installed)

from foldscope.core.formats import load_session  # noqa: E402
from foldscope.core.formats.follow import Follower  # noqa: E402
from foldscope.core.readout.live import grow_document  # noqa: E402
from foldscope.core.readout.opening import build_document  # noqa: E402
from tests.core.live_sessions import append, rounds  # noqa: E402

STEPS = 5


def one_size(n: int, folder: Path) -> tuple[float, float, float, int]:
    path = folder / f"live-{n}.jsonl"
    append(path, rounds(0, n))
    start = time.perf_counter()
    document = build_document(load_session(path), str(path))
    opened = time.perf_counter() - start
    follower = Follower(path)
    follower.poll()
    grow_document(document, follower.session())  # the follower's messages replace the opened ones once
    polls, grows, lines = [], [], 0
    for k in range(STEPS):
        append(path, rounds(n + k, 1))
        t0 = time.perf_counter()
        growth = follower.poll()
        t1 = time.perf_counter()
        grow_document(document, follower.session())
        t2 = time.perf_counter()
        polls.append(t1 - t0)
        grows.append(t2 - t1)
        lines += growth.lines
    return opened, sorted(polls)[STEPS // 2], sorted(grows)[STEPS // 2], lines // STEPS


def main(sizes: list[int]) -> None:
    print(f"{'rounds':>7} {'open s':>8} {'poll ms':>8} {'grow ms':>8} {'lines/poll':>10} {'grow/open':>9}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            opened, poll, grow, lines = one_size(n, Path(tmp))
            rows.append((n, poll, grow))
            print(f"{n:>7} {opened:>8.3f} {poll * 1000:>8.2f} {grow * 1000:>8.1f} {lines:>10} {grow / opened:>9.3f}")
    if len(rows) > 1:
        (n0, p0, g0), (n1, p1, g1) = rows[0], rows[-1]
        print(
            f"growth exponent over sizes: poll {math.log(p1 / p0) / math.log(n1 / n0):.2f}, "
            f"grow {math.log(g1 / g0) / math.log(n1 / n0):.2f}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [250, 500, 1000])
