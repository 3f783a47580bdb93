"""Benchmark of `foldscope tune`: a generated fleet swept under 8 policies on each engine, and what sharing a parse saves.

Prints, per engine, the wall time per session-policy, and the ratio against replaying the same sessions one
policy at a time (each policy its own sweep: every session read and counted again); the driver's peak memory.
Usage: python bench/bench_fleet.py [--sessions 500] [--skip-dask]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from foldscope.core.formats.demo import write_demo
from foldscope.core.replay.fleet import run_dask, run_local
from foldscope.core.replay.tune import grid, summarise


def make_fleet(folder: Path, count: int) -> list[str]:
    """`count` demo sessions of varied sizes (4 to 16 rounds), seeded, so every run sweeps the same fleet."""
    paths = []
    for n in range(count):
        path = folder / f"session-{n:04d}.json"
        write_demo(path, seed=n + 1, rounds=4 + n % 13)
        paths.append(str(path))
    return paths


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--skip-dask", action="store_true")
    args = parser.parse_args(argv)
    points = grid(ceilings=["9000", "20000"], result_maxes=[None, 4000], cachings=[True, False], strategies=["adr"])
    assert len(points) == 8
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_fleet(Path(tmp), args.sessions)
        tasks = len(paths) * len(points)
        rows: list[tuple[str, float]] = []
        outs = {}

        def sweep(name: str, engine, **kw) -> None:
            results: list = []
            seconds = timed(lambda: results.extend(engine(paths, points, **kw)))
            outs[name] = summarise(results, points)
            rows.append((name, seconds))

        list(run_local(paths[:1], points, workers=1))  # warm: the tokenizer and imports, paid once per process
        sweep("local, 1 worker", run_local, workers=1)
        sweep("local, 2 workers", run_local, workers=2)
        if not args.skip_dask:
            sweep("dask LocalCluster, 2 workers", run_dask, workers=2)
        one_at_a_time = timed(lambda: [list(run_local(paths, [p], workers=1)) for p in points])
        rows.append(("local, 1 worker, one policy at a time", one_at_a_time))
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    base = rows[0][1]
    print(f"fleet: {len(paths)} generated sessions x {len(points)} policies = {tasks} session-policies")
    print(f"{'engine':<40} {'seconds':>9} {'ms per session-policy':>22} {'vs local 1 worker':>18}")
    for name, seconds in rows:
        print(f"{name:<40} {seconds:>9.1f} {1000 * seconds / tasks:>22.1f} {seconds / base:>17.2f}x")
    print(f"sharing one parse and count across the 8 policies: {one_at_a_time / base:.2f}x faster than one at a time")
    print(f"driver peak memory: {peak_mb:,.0f} MB (rows only: sessions stay in the workers)")
    same = len({repr(out) for out in outs.values()}) == 1
    print(f"every engine's results identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
