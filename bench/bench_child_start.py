"""A counting child's start: from spawning it (core.request.counting.child.spawn, a fresh interpreter running the
module) to its first answer, which waits for its imports and its encoding's build, in wall time and in the child's
own CPU time (user + system, from the children's rusage once it is reaped). That start is what counting ahead must
repay, and what a hint moves into the read (core.request.counting.backend.hint).

    .venv/bin/python bench/bench_child_start.py [--starts 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

from foldscope.core.request.counting import child


def one_start() -> tuple[float, float]:
    """Wall and CPU seconds of one child, from its spawn to its answer to one short text."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    started = child.spawn()
    if started is None:
        raise SystemExit("bench_child_start: no counting child could be started here")
    with open(started.down, "wb", closefd=False) as down, open(started.up, "rb", closefd=False) as up:
        child.send(down, ("counts", ["hello world"]))
        if child.receive(up) != [2]:
            raise SystemExit("bench_child_start: the child's count of 'hello world' is not 2")
    wall = time.perf_counter() - began
    child.stop(started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=8, help="children started a round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for k in range(args.rounds):
        runs = [one_start() for _ in range(args.starts)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"round {k + 1}: first answer {statistics.median(walls):.3f} s wall (min {min(walls):.3f}), "
            f"child CPU {statistics.median(cpus):.3f} s (min {min(cpus):.3f}), load average {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
