"""The replay's critical path on two cores (issue 48): what an idle machine's wall time would be, from CPU times.

Run: .venv/bin/python bench/bench_replay_path.py FILE [FILE ...] [--strategies adr,band,compaction] [--repeat 1]

`foldscope replay FILE --strategy S` runs in a fresh interpreter as the CLI runs it (the strategies forked after the
calibrated count, core.replay.parallel), with each phase's CPU time (user and system) read where it runs: the parent's
until the fork (imports, the read, the encoder, the calibrated count: `serial`), and each strategy's own run, in the
parent or in the child that ran it. On a machine shared with other work the wall clock says little (the same replay
took 11 and 40 s an hour apart), so the wall an idle two-core machine would take is worked out from those CPU times:
`serial`, then the strategies, the parent's group one after another on one core and the children's on the other,
each taking a core once the parent is done (core.replay.lab.CHILD_NICE), which comes to the larger of the parent's
group and half of all the strategies' CPU. Without a spare core the tokenizer's helper does not start
(core.request.counting.ahead), so `serial` holds the tokenising the helper would take on an idle machine: the
estimate is an upper bound there. The wall measured and the load average are printed beside it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs in the fresh interpreter: the CLI's replay, each phase's CPU appended to a file as a JSON line by the process
# that ran it (a forked child's own times, read before it exits).
CHILD = r"""
import json, os, sys, time
out, path, strategies = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()


def note(**fields):
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields) + "\n")


def cpu():
    t = os.times()
    return t.user + t.system


from foldscope.core.replay import lab, parallel

run_strategy, run_forked = lab.run_strategy, parallel.run_forked


def timed_strategy(session, name, *args, **kwargs):
    before = cpu()
    run = run_strategy(session, name, *args, **kwargs)
    note(strategy=name, cpu=cpu() - before, parent=os.getpid() == parent)
    return run


def timed_fork(*args, **kwargs):
    note(fork=cpu(), wall=time.perf_counter() - start)
    return run_forked(*args, **kwargs)


parent = os.getpid()
lab.run_strategy, parallel.run_forked = timed_strategy, timed_fork
from foldscope.core.cli.main import main

with open(os.devnull, "w", encoding="utf-8") as sink:
    stdout, sys.stdout = sys.stdout, sink
    try:
        main(["replay", path, "--strategy", strategies])
    except SystemExit:
        pass
    sys.stdout = stdout
t = os.times()
note(end=t.user + t.system + t.children_user + t.children_system, wall=time.perf_counter() - start)
"""


def run(path: str, strategies: str) -> dict:
    """One replay's phases: `serial` (the parent's CPU to the fork), each strategy's CPU and where it ran, the whole
    command's CPU (its children's included) and wall."""
    with tempfile.TemporaryDirectory(prefix="foldscope-path-") as tmp:
        notes = Path(tmp) / "notes.jsonl"
        subprocess.run([sys.executable, "-c", CHILD, str(notes), path, strategies], cwd=ROOT, check=True)
        lines = [json.loads(line) for line in notes.read_text(encoding="utf-8").splitlines()]
    fork = next((n for n in lines if "fork" in n), None)
    end = next(n for n in lines if "end" in n)
    runs = [n for n in lines if "strategy" in n]
    return {"serial": fork["fork"] if fork else None, "runs": runs, "cpu": end["end"], "wall": end["wall"]}


def idle_wall(serial: float, runs: list[dict]) -> float:
    """The wall an idle two-core machine would take: the serial part, then the larger of the parent's strategies
    one after another and half of all the strategies' CPU (the children share the other core, then both)."""
    own = sum(r["cpu"] for r in runs if r["parent"])
    return serial + max(own, sum(r["cpu"] for r in runs) / 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--strategies", default="adr,band,compaction")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    print("| file | serial CPU | strategies' CPU (where) | command CPU | idle 2-core wall (estimate) | wall here | load |")
    print("|---|---:|---|---:|---:|---:|---|")
    for path in args.files:
        for _ in range(args.repeat):
            got = run(path, args.strategies)
            load = " ".join(open("/proc/loadavg", encoding="ascii").read().split()[:3])
            runs = ", ".join(f"{r['strategy']} {r['cpu']:.2f} s ({'parent' if r['parent'] else 'child'})" for r in got["runs"])
            if got["serial"] is None:  # one process: no fork (a single strategy, or no fork allowed)
                estimate = got["cpu"]
                serial = "-"
            else:
                estimate = idle_wall(got["serial"], got["runs"])
                serial = f"{got['serial']:.2f} s"
            name = Path(path).name
            print(f"| {name} | {serial} | {runs} | {got['cpu']:.2f} s | {estimate:.2f} s | {got['wall']:.2f} s | {load} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
