"""One file's strategies one after another against at once (core.replay.parallel), back to back: wall time, peak
memory, and what each forked process costs beyond what it shares with the parent.

Run: .venv/bin/python bench/bench_replay_parallel.py [FILE ...] [--sizes 10000] [--repeat 1] [--workers 2]

Each run is `foldscope replay FILE --strategy adr,band,compaction --json` (output to /dev/null) in a fresh
interpreter, with `--workers 1` and then `--workers N`, alternating `--repeat` times. Without FILE, Claude Code shaped
sessions of `--sizes` messages are generated (bench_scale's shape). `wall` is the wall clock of the whole command;
`peak` the largest resident set of its processes (the kernel's ru_maxrss over the command and its children, as
/usr/bin/time's %M: the largest one, not their sum). For each strategy, read in the process that ran it just after its
run: `private` is Private_Dirty from /proc/self/smaps_rollup, the pages that process wrote (a forked child's copies of
pages it shares with the parent, touched by reference counts, and what it built), against `rss`, which counts the
shared pages too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

STRATEGIES = "adr,band,compaction"


def _kb(name: str, key: str) -> int:
    with open(f"/proc/self/{name}", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def child(path: str, workers: int, notes: str) -> int:
    """The CLI's replay in this interpreter, each strategy's process noting its memory after its run."""
    from foldscope.core.cli.main import main as cli
    from foldscope.core.replay import lab

    parent, real = os.getpid(), lab.run_strategy

    def noting(session, strategy, *args, **kwargs):
        run = real(session, strategy, *args, **kwargs)
        # appended by each process to one file (one short line each, so the writes do not interleave)
        with open(notes, "a", encoding="utf-8") as handle:
            handle.write(
                json.dumps(
                    {
                        "strategy": strategy,
                        "forked": os.getpid() != parent,
                        "private": _kb("smaps_rollup", "Private_Dirty:"),
                        "rss": _kb("smaps_rollup", "Rss:"),
                    }
                )
                + "\n"
            )
        return run

    lab.run_strategy = noting
    sys.stdout = open(os.devnull, "w", encoding="utf-8")
    return cli(["replay", path, "--strategy", STRATEGIES, "--json", "--workers", str(workers)])


def measure(path: str, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        notes = str(Path(tmp) / "notes.jsonl")
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, __file__, "--child", path, str(workers), notes])
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            raise SystemExit(f"{path}: the replay failed (status {process.returncode})")
        with open(notes, encoding="utf-8") as handle:
            per = [json.loads(line) for line in handle]
    return {"wall": wall, "peak": usage.ru_maxrss, "per": per}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", metavar="FILE")
    parser.add_argument("--sizes", default="10000", help="messages per generated session, comma separated")
    parser.add_argument("--repeat", type=int, default=1, help="serial and parallel runs, alternating")
    parser.add_argument("--workers", type=int, default=2, help="the parallel run's --workers")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], int(args.child[1]), args.child[2])
    with tempfile.TemporaryDirectory() as tmp:
        files = list(args.files)
        if not files:
            from bench_scale import SHAPES

            make, suffix = SHAPES["claude code"]
            for size in (int(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"claude_code_{size}{suffix}"
                make(path, size)
                files.append(str(path))
        print(f"`foldscope replay FILE --strategy {STRATEGIES} --json`, --workers 1 against --workers {args.workers}")
        print("| file | workers | wall s | peak MB | per strategy: process, private MB / rss MB |")
        print("|---|---|---|---|---|")
        for path in files:
            for _ in range(args.repeat):
                for workers in (1, args.workers):
                    got = measure(path, workers)
                    per = "; ".join(
                        f"{p['strategy']} {'child' if p['forked'] else 'parent'} {p['private'] / 1024:.0f} / {p['rss'] / 1024:.0f}"
                        for p in got["per"]
                    )
                    print(f"| {Path(path).name} | {workers} | {got['wall']:.2f} | {got['peak'] / 1024:.0f} | {per} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
