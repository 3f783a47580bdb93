"""Replay at scale (issue 17), phase by phase: the CPU time of reading the file, calibrating its trace, and each
strategy's run, against the number of messages, with each phase's growth exponent.

Run: .venv/bin/python bench/bench_replay_scale.py [--sizes 10000,50000] [--shapes "claude code,short messages"]

The sessions are bench_scale's generated shapes. Each size runs in a fresh interpreter, timed by process time
(user and system CPU of that interpreter), which a loaded machine disturbs far less than the wall clock:
`load` is core.formats.load_session, `calibrate` the replay's one trace measure (core.replay.lab.Layouts),
then `adr`, `band` and `compaction` are core.replay.lab.run_strategy on that one measure, as `foldscope replay
FILE --strategy adr,band,compaction` runs them. The exponent is the slope of log time against log messages between
the two largest sizes (the issue's target: at most 1.1); `total` is what the CLI's replay spends beyond starting.
`--collector default` runs with Python's own garbage collector thresholds instead of the CLI's
(core.model.collector), to see what that setting is worth.
"""

from __future__ import annotations

import argparse
import json
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
    from foldscope.core.replay.lab import Layouts, run_strategy
    from foldscope.core.request import tokens
    from foldscope.core.request.measure import Measure

    tokens.encoding()  # the tokenizer's load is the interpreter's, not the replay's
    out: dict = {}
    start = time.process_time()
    session = load_session(path)
    out["load"] = time.process_time() - start
    start = time.process_time()
    layouts = Layouts(Measure(session, session_policy(session)))
    out["calibrate"] = time.process_time() - start
    for strategy in PHASES[2:]:
        start = time.process_time()
        run_strategy(session, strategy, layouts)
        out[strategy] = time.process_time() - start
    out["messages"] = len(session.record)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3000,10000", help="messages per session, comma separated")
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), help=f"some of: {', '.join(SHAPES)}")
    parser.add_argument("--collector", choices=("tuned", "default"), default="tuned",
                        help="the garbage collector as the CLI sets it (core.model.collector), or Python's default")
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.collector == "default")))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(","))
    for shape in [s.strip() for s in args.shapes.split(",") if s.strip()]:
        make, suffix = SHAPES[shape]
        rows = []
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"session{suffix}"
                make(path, size)
                run = subprocess.run([sys.executable, __file__, "--collector", args.collector, "--child", str(path)],
                                     capture_output=True, text=True, check=False)
                if run.returncode != 0:
                    print(f"{shape} {size}: failed: {run.stderr.strip().splitlines()[-1:]}")
                    return 1
                got = json.loads(run.stdout.strip().splitlines()[-1])
                got["total"] = sum(got[p] for p in PHASES)
                rows.append(got)
        print(f"\n{shape} (CPU seconds, {args.collector} collector)")
        print("| messages | " + " | ".join(PHASES) + " | total |")
        print("|---|" + "---|" * (len(PHASES) + 1))
        for got in rows:
            print(f"| {got['messages']:,} | " + " | ".join(f"{got[p]:.2f}" for p in (*PHASES, "total")) + " |")
        cells = []
        for p in (*PHASES, "total"):
            e = exponent([(got["messages"], got[p]) for got in rows])
            cells.append(f"{e:.2f} ({'met' if e <= TARGET_EXPONENT else 'NOT met'})")
        print("| exponent | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
