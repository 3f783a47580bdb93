"""The replay's critical path on two cores (issue 48): what an idle machine's wall time would be, from CPU times.

Run: .venv/bin/python bench/bench_replay_path.py FILE [FILE ...] [--strategies adr,band,compaction] [--repeat 1]
     [--before DIR] [--free-core]

`foldscope replay FILE --strategy S` runs in a fresh interpreter as the CLI runs it (the strategies forked after the
calibrated count, core.replay.parallel), with each phase's CPU time (user and system) read where it runs: the parent's
until the fork (imports, the read, the encoder, the calibrated count: `serial`), and each strategy's own run, in the
parent or in the child that ran it. On a machine shared with other work the wall clock says little (the same replay
took 11 and 40 s an hour apart), so the wall an idle two-core machine would take is worked out from those CPU times:
`serial`, then the strategies, the parent's group one after another on one core and the children's on the other,
each taking a core once the parent is done (core.replay.lab.CHILD_NICE), which comes to the larger of the parent's
group and half of all the strategies' CPU. Without a spare core the tokenizer's helper does not start
(core.request.counting.ahead), so `serial` holds the tokenising the helper would take on an idle machine: the
estimate is an upper bound there. The wall measured and the load average are printed beside it, and the command's
own process's CPU (the parent's: imports, read, measure, its share of the strategies, the results read back).

The serial part is split where it goes: `read` (the parent's CPU when the file is read, imports included), the
calibrating measure's CPU in the parent, the part of it spent counting batches the counting child had not taken
(stolen: CountsAhead._count_here), and the counting child's CPU (its start during the read included). On a loaded
machine the child gets less of its core and the parent counts more, which `serial` counts as serial; `the same,
measure shared` counts the measure as the larger of the parent's own work in it and half of both processes' work,
as the two cores share it on an idle machine, so it moves less with the load. Where a child forked during the read
counts the record's start (core.request.counting.during_read), the measure's cell says how many counts it gave and how
long the parent took to take them (wall, its wait included, which no estimate holds; and its CPU, which `serial` holds).

`--before DIR` runs each replay twice a round, alternated, once with DIR on PYTHONPATH (a `git archive` of another
commit unpacked as DIR/foldscope) and once as this tree, and ends with the median of each figure both ways and their
ratio. `--free-core` starts the counting child whatever the machine's load (core.request.counting.backend.free_core
read as true), as an idle two-core machine would: on a shared machine the load decides it, run by run. With it,
`--ahead-only` has the measure wait for the counting child rather than count a body itself while the child starts or
lags (core.request.counting.ahead's WAIT_FOR_START and COUNT_WHILE_WAITING, as its tests set them): the parent then
tokenises nothing and builds no encoder before its strategies, as where the child keeps ahead from the first request.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


if os.environ.get("BENCH_FREE_CORE"):  # as an idle machine: the counting child starts whatever the load
    from foldscope.core.request.counting import backend

    backend.free_core = lambda: True
if os.environ.get("BENCH_AHEAD_ONLY"):  # the measure waits for the counting child, never counting a body itself
    from foldscope.core.request.counting import ahead

    ahead.WAIT_FOR_START, ahead.COUNT_WHILE_WAITING = True, False
from foldscope.core.replay import lab, layouts, parallel

run_strategy, run_forked = lab.run_strategy, parallel.run_forked
stolen = [0.0]  # the parent's CPU counting batches the counting child had not taken (CountsAhead._count_here)


def children_cpu():
    t = os.times()
    return t.children_user + t.children_system


try:  # a tree without these names is timed without the measure's split
    from foldscope.core.cli import replay as cli_replay
    from foldscope.core.request.counting import ahead as counting_ahead

    read_session, count_here, make_layouts = cli_replay.read_session, counting_ahead.CountsAhead._count_here, layouts.Layouts.__init__

    def timed_read(*args, **kwargs):
        session = read_session(*args, **kwargs)
        note(read=cpu(), read_wall=time.perf_counter() - start)
        return session

    def timed_count_here(self, batch):
        before = cpu()
        count_here(self, batch)
        stolen[0] += cpu() - before

    def timed_layouts(self, *args, **kwargs):
        before, kids = cpu(), children_cpu()
        make_layouts(self, *args, **kwargs)
        # the counting child is stopped and reaped when the measure ends: its CPU is the children's by then
        note(measure=cpu() - before, counting_child=children_cpu() - kids, stolen=stolen[0])

    cli_replay.read_session, counting_ahead.CountsAhead._count_here = timed_read, timed_count_here
    layouts.Layouts.__init__ = timed_layouts
except (ImportError, AttributeError):
    pass
try:  # the record's start counted by a child forked during the read, where the tree has it
    from foldscope.core.request.counting import during_read

    seed = during_read.DuringRead.seed

    def timed_seed(self, counter, record):
        before, spent = time.perf_counter(), cpu()
        n = seed(self, counter, record)
        note(seeded=n, seed_wall=time.perf_counter() - before, seed_cpu=cpu() - spent)
        return n

    during_read.DuringRead.seed = timed_seed
    split, answer = during_read.DuringRead._fork, during_read.answer

    def timed_split(self, builder):
        at = cpu()
        in_child = split(self, builder)
        if not in_child:  # the parent's CPU when it forked: its read from there on is what the child has beside it
            note(split=at)
        return in_child

    def timed_answer(session, policy, *where):
        # in each child: its own CPU since the fork at each chunk, then whole (`where`: where it counts from, if a
        # later child: a tree with one child has none)
        for counts in answer(session, policy, *where):
            note(early_cpu=cpu(), early_done=time.perf_counter() - start, early_whole=False, early_pid=os.getpid())
            yield counts
        note(early_cpu=cpu(), early_done=time.perf_counter() - start, early_whole=True, early_pid=os.getpid())

    during_read.DuringRead._fork, during_read.answer = timed_split, timed_answer
except ImportError:
    pass


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
note(end=t.user + t.system + t.children_user + t.children_system, own=t.user + t.system, wall=time.perf_counter() - start)
"""


def run(path: str, strategies: str, tree: str | None = None, free_core: bool = False, ahead_only: bool = False) -> dict:
    """One replay's phases: `serial` (the parent's CPU to the fork), each strategy's CPU and where it ran, the whole
    command's CPU (its children's included), its own process's and its wall. `tree`: a folder holding another
    foldscope (DIR/foldscope) to run instead of this one."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(tree).resolve()), env.get("PYTHONPATH")]))
    if free_core:
        env["BENCH_FREE_CORE"] = "1"
    if ahead_only:
        env["BENCH_AHEAD_ONLY"] = "1"
    with tempfile.TemporaryDirectory(prefix="foldscope-path-") as tmp:
        notes = Path(tmp) / "notes.jsonl"
        # Another tree's package is found from a folder that holds none (this one's root is the package itself).
        subprocess.run([sys.executable, "-c", CHILD, str(notes), path, strategies], cwd=tmp if tree else ROOT, env=env, check=True)
        lines = [json.loads(line) for line in notes.read_text(encoding="utf-8").splitlines()]
    fork = next((n for n in lines if "fork" in n), None)
    end = next(n for n in lines if "end" in n)
    runs = [n for n in lines if "strategy" in n]
    read = next((n["read"] for n in lines if "read" in n), None)
    measure = next((n for n in lines if "measure" in n), None)
    got = {"serial": fork["fork"] if fork else None, "runs": runs, "cpu": end["end"], "own": end["own"], "wall": end["wall"]}
    got["read"] = read
    got["measure"] = measure["measure"] if measure else None
    got["counting_child"] = measure["counting_child"] if measure else None
    got["stolen"] = measure["stolen"] if measure else None
    got["shared"] = shared_serial(got)
    seeded = next((n for n in lines if "seeded" in n), None)
    got["seeded"] = seeded["seeded"] if seeded else None
    got["seed_wall"] = seeded["seed_wall"] if seeded else None  # the parent's wait for the during-read child's answer
    got["seed_cpu"] = seeded["seed_cpu"] if seeded else None  # and its own work taking the counts
    split = next((n["split"] for n in lines if "split" in n), None)
    last = {n.get("early_pid"): n for n in lines if "early_cpu" in n}  # the last chunk each child reached
    early = (
        {
            "early_cpu": sum(n["early_cpu"] for n in last.values()),
            "early_done": max(n["early_done"] for n in last.values()),
            "early_whole": all(n["early_whole"] for n in last.values()),
        }
        if last
        else None
    )
    read_wall = next((n["read_wall"] for n in lines if "read_wall" in n), None)
    # The parent's read from the (first) fork on, the during-read children's CPU, and how long after the read's end the
    # last was done (negative: before it), and whether each answered whole.
    got["after_split"] = read - split if read is not None and split is not None else None
    got["early_cpu"] = early["early_cpu"] if early else None
    got["early_late"] = early["early_done"] - read_wall if early and read_wall is not None else None
    got["early_whole"] = bool(early and early["early_whole"])
    return got


def shared_serial(got: dict) -> float | None:
    """The serial part with the measure shared as the two cores share it: the parent's CPU to the fork, its measure
    counted as the larger of the parent's own work in it (its CPU less the batches it counted for the counting child,
    `stolen`) and half of the measure's work in both processes (the parent's and the counting child's, whose start
    during the read is counted in it: an upper bound). Where the parent counts more on a loaded machine the child
    counts less, so this moves less with the load than `serial`, which counts all the parent's counting as serial."""
    serial, measure, child, stolen = got["serial"], got["measure"], got["counting_child"], got["stolen"]
    if serial is None or measure is None or child is None or stolen is None:
        return None
    return serial - measure + max(measure - stolen, (measure + child) / 2)


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


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
    parser.add_argument("--before", metavar="DIR", help="alternate each run with the foldscope in DIR/foldscope")
    parser.add_argument("--free-core", action="store_true", help="start the counting child whatever the load")
    parser.add_argument("--ahead-only", action="store_true", help="the measure waits for the counting child, counting nothing itself")
    args = parser.parse_args(argv)
    trees: list[tuple[str, str | None]] = [("", None)] if not args.before else [(" (before)", args.before), (" (after)", None)]
    print(
        "| file | serial CPU | read | measure: parent (stolen), counting child | strategies' CPU (where) | command CPU "
        "| idle 2-core wall (estimate) | the same, measure shared | wall here | load | process CPU |"
    )
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---|---:|")
    seen: dict[tuple[str, str], list[dict]] = {}
    for path in args.files:
        for k in range(args.repeat):
            for label, tree in trees if k % 2 == 0 else trees[::-1]:  # alternated: neither always runs first
                got = run(path, args.strategies, tree, args.free_core, args.ahead_only)
                load = " ".join(open("/proc/loadavg", encoding="ascii").read().split()[:3])
                runs = ", ".join(f"{r['strategy']} {r['cpu']:.2f} s ({'parent' if r['parent'] else 'child'})" for r in got["runs"])
                if got["serial"] is None:  # one process: no fork (a single strategy, or no fork allowed)
                    got["estimate"] = got["cpu"]
                    got["estimate_shared"] = None
                    serial = "-"
                else:
                    got["estimate"] = idle_wall(got["serial"], got["runs"])
                    got["estimate_shared"] = idle_wall(got["shared"], got["runs"]) if got["shared"] is not None else None
                    serial = f"{got['serial']:.2f} s"
                got["children"] = sum(r["cpu"] for r in got["runs"] if not r["parent"])
                seen.setdefault((path, label), []).append(got)
                name = Path(path).name + label
                measured = (
                    f"{got['measure']:.2f} s ({got['stolen']:.2f}), {got['counting_child']:.2f} s" if got["measure"] is not None else "-"
                )
                if got["seeded"] is not None:  # what the child forked during the read counted, and the parent's wait for it
                    measured += (
                        f"; {got['seeded']:,} counted during the read, taken in {got['seed_wall']:.2f} s ({got['seed_cpu']:.2f} s CPU)"
                    )
                if got["after_split"] is not None and got["early_cpu"] is not None:  # the read's second core
                    measured += (
                        f"; the read after the fork {got['after_split']:.2f} s, its children {got['early_cpu']:.2f} s CPU,"
                        f" {'done' if got['early_whole'] else 'stopped'} {got['early_late']:+.2f} s after the read"
                    )
                print(
                    f"| {name} | {serial} | {seconds(got['read'])} | {measured} | {runs} | {got['cpu']:.2f} s | {got['estimate']:.2f} s "
                    f"| {seconds(got['estimate_shared'])} | {got['wall']:.2f} s | {load} | {got['own']:.2f} s |",
                    flush=True,
                )
    if args.before:
        figures = ("own", "serial", "read", "measure", "counting_child", "shared", "children", "cpu", "estimate", "estimate_shared", "wall")
        print("\nmedians, after / before:")
        print("| file | " + " | ".join(figures) + " |")
        print("|---|" + "---:|" * len(figures))
        for path in args.files:
            before, after = seen[(path, trees[0][0])], seen[(path, trees[1][0])]
            cells = []
            for f in figures:
                a = statistics.median(g[f] or 0.0 for g in after)
                b = statistics.median(g[f] or 0.0 for g in before)
                cells.append(f"{b:.2f} -> {a:.2f} s ({a / b:.2f}x)" if b else "-")
            print(f"| {Path(path).name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
