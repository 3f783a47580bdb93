"""Start-up: `foldscope --help` and `foldscope count -` of one word against a bare `python -c pass` (issue 48's target:
each within 3x), run in turn RUNS times so a busy spell on a shared machine hits all three alike.

For each it prints the median wall time and the median CPU time (user + system of the child, from wait4) with their
ratios to the bare interpreter's, and the load average. The children run with their bytecode written, as an installed
package has it (PYTHONDONTWRITEBYTECODE is unset for them; a first unmeasured round writes it). `python -X importtime .venv/bin/foldscope --help`
says where a run's imports go.

    .venv/bin/python bench/bench_startup.py [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "foldscope"
COMMANDS = {
    "bare `python -c pass`": ([sys.executable, "-c", "pass"], b""),
    "`foldscope --help`": ([str(SCRIPT), "--help"], b""),
    "`foldscope count -` (one word)": ([str(SCRIPT), "count", "-"], b"hello\n"),
}


def run(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    assert child.stdin is not None
    child.stdin.write(stdin)
    child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{argv} exited {child.returncode}")
    return took, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for argv, stdin in COMMANDS.values():
        run(argv, stdin, env)  # the bytecode written
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    load = os.getloadavg()
    for _ in range(args.runs):
        for name, (argv, stdin) in COMMANDS.items():
            results[name].append(run(argv, stdin, env))
    print(
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus; "
        f"median of {args.runs}; bytecode written"
    )
    bare = results["bare `python -c pass`"]
    bare_wall, bare_cpu = statistics.median(w for w, _ in bare), statistics.median(c for _, c in bare)
    for name, runs in results.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        met = "" if runs is bare else f" (target 3x: {'met' if max(wall / bare_wall, cpu / bare_cpu) <= 3 else 'NOT met'})"
        print(f"{name:34} wall {wall * 1000:5.0f} ms = {wall / bare_wall:4.1f}x   CPU {cpu * 1000:4.0f} ms = {cpu / bare_cpu:4.1f}x{met}")


if __name__ == "__main__":
    main()
