"""The counter's per-request work in a replay, alone: every Counter.measure call a replay makes (the calibrating measure's
and each strategy's), captured once and made again on a counter seeded with the memo, so no body is tokenised and what
is timed is the extension, the plan, the parts and the layouts' bookkeeping (issue 48, docs/performance.md measure20).

    .venv/bin/python bench/bench_counter_calls.py FILE [--strategies adr,band,compaction] [--before DIR] [--rounds 3]

Each side runs in a fresh interpreter with its tree first on PYTHONPATH (`--before DIR`: a `git archive` unpacked as
DIR/foldscope, or that foldscope folder itself), reads FILE, calibrates its Measure and runs the strategies as `replay
--workers 1` does, with every Counter.measure call recorded (its view and options); then makes the same calls `--passes`
times on a new counter seeded with the first one's memo and prints the least thread CPU of those passes, the calls'
number and a digest of every measurement's count, kept parts and three largest. The sides alternate `--rounds` times;
the ratio is of the medians, and `same counts` says whether both sides' digests agree. `--instructions` counts one
pass's instructions on each side instead (valgrind's callgrind, collecting inside one functools.reduce, PYTHONHASHSEED=0),
which the machine's load does not move; under valgrind the capture takes minutes at 5,000 messages.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in each side's interpreter: argv[1] the file, argv[2] the strategies, argv[3] the passes.
WORK = """
import gc, hashlib, os, sys, time
os.environ["FOLDSCOPE_COUNTING"] = "local"  # every count in this process: the memo then holds them all
gc.disable()  # as the CLI's collector.spared() does while it measures
from foldscope.core.model.shared_start import Shared
from foldscope.core.request.count import Counter
calls = []
measure_of = Counter.measure
def recorded(self, messages, **options):
    calls.append((id(self), messages if isinstance(messages, Shared) else list(messages), options))
    return measure_of(self, messages, **options)
Counter.measure = recorded
from foldscope.core.cli import replay as cli_replay
from foldscope.core.cli.main import build_parser
from foldscope.core.replay import lab
from foldscope.core.replay.layouts import Layouts
path, names, passes = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
session = cli_replay.read_session(path)
measure = cli_replay.measure_from_args(build_parser().parse_args(["replay", path]), session)
layouts = Layouts(measure)
rules, _ = lab.cache_rules(measure)
prices = lab.lookup_prices(lab.model_name(measure))
layouts.arrivals(session)
for name in names:
    lab.run_strategy(session, name, layouts, prices, rules)
Counter.measure = measure_of
memo = measure.counter.memo()
def again(out=None):
    counters = {}
    for owner, messages, options in calls:
        counter = counters.get(owner)
        if counter is None:
            counter = counters[owner] = Counter()
            counter.seed(*memo)
        m = counter.measure(messages, **options)
        if out is not None:
            out.append((m.count, m.kept, len(m.parts), tuple(p.tokens for p in m.largest(3))))
seen = []
again(seen)
cpu = []
if os.environ.get("COUNTER_CALLS_TRACED"):  # under callgrind, which counts inside functools.reduce alone
    import functools
    functools.reduce(lambda acc, _: again() or acc, [0], 0)
    cpu.append(0.0)
for _ in range(passes):
    start = time.thread_time()
    again()
    cpu.append(time.thread_time() - start)
print(len(calls), min(cpu), hashlib.sha256(repr(seen).encode()).hexdigest()[:16])
"""


def run_side(tree: Path, file: Path, strategies: str, passes: int) -> tuple[int, float, str]:
    """(calls, least CPU seconds of the passes, digest) of one side, in a fresh interpreter with `tree` on PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", WORK, str(file), strategies, str(passes)], env=env, capture_output=True, text=True, check=True
    )
    calls, cpu, digest = out.stdout.split()
    return int(calls), float(cpu), digest


def instructions(tree: Path, file: Path, strategies: str) -> int:
    """The instructions one pass over the calls takes (valgrind's callgrind, collecting inside functools.reduce only)."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0", COUNTER_CALLS_TRACED="1")
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce"]
        argv += [f"--callgrind-out-file={tmp}/out", sys.executable, "-c", WORK, str(file), strategies, "0"]
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"callgrind said no count: {out.stderr[-400:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--strategies", default="adr,band,compaction")
    parser.add_argument("--before", type=Path, default=None, help="a tree holding foldscope/ to compare against")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds of each side")
    parser.add_argument("--passes", type=int, default=3, help="passes over the calls in each run (the least CPU is kept)")
    parser.add_argument("--instructions", action="store_true", help="count each side's instructions (valgrind) instead")
    args = parser.parse_args(argv)
    before = args.before
    if before is not None and not (before / "foldscope").is_dir() and before.name == "foldscope":
        before = before.parent  # the package's own folder given: its parent goes on PYTHONPATH
    sides = [("after", ROOT.parent)] + ([("before", before)] if before is not None else [])
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("bench_counter_calls: valgrind is not installed; nothing measured")
            return 0
        counted = {name: instructions(tree, args.file, args.strategies) for name, tree in sides}
        for name, n in counted.items():
            print(f"{name}: {n:,} instructions, one pass over the calls")
        if "before" in counted:
            print(f"after / before {counted['after'] / counted['before']:.3f}")
        return 0
    cpu: dict[str, list[float]] = {name: [] for name, _ in sides}
    digests: dict[str, str] = {}
    calls = 0
    print(f"Counter.measure calls of a replay ({args.strategies}, the calibrating measure's first), on a seeded counter:")
    for k in range(args.rounds):
        for name, tree in sides if k % 2 == 0 else sides[::-1]:
            calls, seconds, digests[name] = run_side(tree, args.file, args.strategies, args.passes)
            cpu[name].append(seconds)
            print(f"round {k + 1} {name}: {calls} calls, least CPU {seconds:.3f} s ({seconds / calls * 1e6:.1f} us a call)")
    after = statistics.median(cpu["after"])
    print(f"after: median {after:.3f} s over {args.rounds} rounds")
    if before is not None:
        median = statistics.median(cpu["before"])
        same = "same counts" if digests["before"] == digests["after"] else "COUNTS DIFFER"
        print(f"before: median {median:.3f} s; after / before {after / median:.3f} ({same})")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
