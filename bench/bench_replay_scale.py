"""Replay at scale (issue 17), phase by phase: the CPU time of reading the file, calibrating its trace, and each
strategy's run, against the number of messages, with each phase's growth exponent.

Run: .venv/bin/python bench/bench_replay_scale.py [--sizes 10000,50000] [--shapes "claude code,short messages"]

The sessions are bench_scale's generated shapes. Each size runs in a fresh interpreter, timed by process time
(user and system CPU of that interpreter and of the children it waited for, core.request.counting.ahead's counting child
among them), which a loaded machine disturbs far less than the wall clock, and by the wall clock too, since
counting ahead spends the second core's time to save the first's:
`load` is core.formats.load_session, `calibrate` the replay's one trace measure (core.replay.layouts.Layouts),
then `adr`, `band` and `compaction` are core.replay.lab.run_strategy on that one measure, as `foldscope replay
FILE --strategy adr,band,compaction` runs them. The exponent is the slope of log time against log messages between
the two largest sizes (the issue's target: at most 1.1); `total` is what the CLI's replay spends beyond starting.
`--collector default` runs with Python's own garbage collector thresholds instead of the CLI's
(core.model.collector), to see what that setting is worth. `--ahead off` runs with FOLDSCOPE_COUNTING=local (no
counting child), `--ahead both` (the default) runs each size both ways, back to back, and prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import DEFAULT_SHAPES, SHAPES, TARGET_EXPONENT, exponent  # noqa: E402

PHASES = ("load", "calibrate", "adr", "band", "compaction")


def child(path: str, collector_default: bool = False) -> dict:
    """The phases of one replay, in this interpreter: CPU seconds each, and the messages read."""
    import time

    from foldscope.core.model import collector

    if not collector_default:
        collector.tune()  # as the CLI's entry point does
    from foldscope.core.formats import load_session
    from foldscope.core.model.launch import session_policy
    from foldscope.core.replay.lab import run_strategy
    from foldscope.core.replay.layouts import Layouts
    from foldscope.core.request import tokens
    from foldscope.core.request.measure import Measure

    tokens.encoding()  # the tokenizer's load is the interpreter's, not the replay's
    out: dict = {}

    def clock() -> tuple[float, float]:
        t = os.times()  # children's times count once they are waited for (the counting child is, at its close)
        return time.perf_counter(), t.user + t.system + t.children_user + t.children_system

    def phase(name: str, since: tuple[float, float]) -> None:
        now = clock()
        out[name], out[name + " wall"] = now[1] - since[1], now[0] - since[0]

    start = clock()
    session = load_session(path)
    phase("load", start)
    start = clock()
    layouts = Layouts(Measure(session, session_policy(session)))
    phase("calibrate", start)
    for strategy in PHASES[2:]:
        start = clock()
        run_strategy(session, strategy, layouts)
        phase(strategy, start)
    out["messages"] = len(session.record)
    return out


def busy() -> None:
    """A pure-Python loop of about a second: what one core does alone."""
    total = 0
    for i in range(8_000_000):
        total += i


def capacity() -> float:
    """How many cores' worth two processes get here now: two busy loops at once against one alone (2.0 on two free
    cores; 1.0 when the second core gives nothing). Counting ahead and one file's strategies at once need it."""
    import time

    code = f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); from bench_replay_scale import busy; busy()"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    two = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
    for p in two:
        p.wait()
    return 2 * alone / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3000,10000", help="messages per session, comma separated")
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), help=f"some of: {', '.join(SHAPES)}")
    parser.add_argument(
        "--collector",
        choices=("tuned", "default"),
        default="tuned",
        help="the garbage collector as the CLI sets it (core.model.collector), or Python's default",
    )
    parser.add_argument(
        "--ahead",
        choices=("on", "off", "both"),
        default="both",
        help="count ahead in a child process (core.request.counting.ahead), not, or each size both ways",
    )
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.collector == "default")))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"cores' worth for two processes at the start: {capacity():.2f}")
    ways = ("on", "off") if args.ahead == "both" else (args.ahead,)
    for shape in [s.strip() for s in args.shapes.split(",") if s.strip()]:
        make, suffix = SHAPES[shape]
        rows: dict[str, list[dict]] = {way: [] for way in ways}
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"session{suffix}"
                make(path, size)
                for way in ways:
                    env = {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}
                    if way == "off":
                        env["FOLDSCOPE_COUNTING"] = "local"
                    run = subprocess.run(
                        [sys.executable, __file__, "--collector", args.collector, "--child", str(path)],
                        capture_output=True,
                        text=True,
                        check=False,
                        env=env,
                    )
                    if run.returncode != 0:
                        print(f"{shape} {size}: failed: {run.stderr.strip().splitlines()[-1:]}")
                        return 1
                    got = json.loads(run.stdout.strip().splitlines()[-1])
                    for suffix_ in ("", " wall"):
                        got["total" + suffix_] = sum(got[p + suffix_] for p in PHASES)
                    rows[way].append(got)
        for way in ways:
            for suffix_, what in (("", "CPU seconds, children included"), (" wall", "wall seconds")):
                print(f"\n{shape}, counting ahead {way} ({what}, {args.collector} collector)")
                print("| messages | " + " | ".join(PHASES) + " | total |")
                print("|---|" + "---|" * (len(PHASES) + 1))
                for got in rows[way]:
                    print(f"| {got['messages']:,} | " + " | ".join(f"{got[p + suffix_]:.2f}" for p in (*PHASES, "total")) + " |")
                cells = []
                for p in (*PHASES, "total"):
                    e = exponent([(got["messages"], got[p + suffix_]) for got in rows[way]])
                    cells.append(f"{e:.2f} ({'met' if e <= TARGET_EXPONENT else 'NOT met'})")
                print("| exponent | " + " | ".join(cells) + " |")
        if len(ways) == 2:
            print(f"\n{shape}: wall time with counting ahead over without, back to back")
            print("| messages | " + " | ".join(PHASES) + " | total |")
            print("|---|" + "---|" * (len(PHASES) + 1))
            for on, off in zip(rows["on"], rows["off"]):
                print(
                    f"| {on['messages']:,} | "
                    + " | ".join(f"{on[p + ' wall'] / off[p + ' wall']:.2f}" if off[p + " wall"] else "-" for p in (*PHASES, "total"))
                    + " |"
                )
    print(f"\ncores' worth for two processes at the end: {capacity():.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
