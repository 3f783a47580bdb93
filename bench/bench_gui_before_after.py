"""The window's launch on one file, before and after a change, back to back (issue 17's GUI at 50k).

Launches the window on FILE (1600x1000, a new library, as bench_scale.py's `gui launch` does) in a fresh interpreter
with the old checkout's `foldscope` first on the path, then with this one's, alternating which goes first each round,
and prints each run and the medians: `usable` and `complete`
(seconds from the interpreter's start to the first step painted and to the counted document painted, bench_scale's
`launch to usable` and `timeline complete`), `cpu` (this process's CPU until complete, both threads, the counting
child apart: steadier than the wall clock on a shared machine) and the peak memory.

    .venv/bin/python bench/bench_gui_before_after.py FILE --before /path/to/old/checkout [--rounds 4]

The old checkout is imported as `foldscope` from its parent directory (a `git archive` of a commit unpacked into
DIR/foldscope: pass DIR/foldscope). The measuring code is this file's, the same for both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(path: str, folder: str) -> None:
    """In the fresh interpreter: bench_scale.gui_launch on the file (the app first on the path: the old checkout's
    with --before), its moments printed as one JSON line."""
    from bench_scale import gui_launch

    got = gui_launch(path, folder)
    print(json.dumps({"usable": got["usable_at"], "complete": got["complete_at"], "complete_cpu": got["complete_cpu"],
                      "peak_mb": got["peak_mb"]}), flush=True)
    os._exit(0)  # the library's import may still run in the worker: not part of what is measured


def launch(path: str, env: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.time()
        out = subprocess.run([sys.executable, __file__, path, "--child", tmp], capture_output=True, text=True,
                             env={**os.environ, **env}, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {"usable": got["usable"] - started, "complete": got["complete"] - started, "cpu": got["complete_cpu"],
            "peak_mb": got["peak_mb"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--before", help="the old checkout (its directory is named foldscope)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.file, args.child)
        return 0
    if not args.before:
        parser.error("--before is needed")
    before = Path(args.before).resolve()
    # The old checkout's package first on the path; this one's from the project's own (editable) install.
    runs = {"before": {"PYTHONPATH": str(before.parent)}, "after": {}}
    got: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            got[name].append(launch(args.file, runs[name]))
            shown = ", ".join(f"{k} {v:.2f}" for k, v in got[name][-1].items())
            print(f"round {r} {name}: {shown} (load {os.getloadavg()[0]:.1f})", flush=True)
    for name, rows in got.items():
        print(f"median {name}: " + ", ".join(f"{k} {statistics.median(row[k] for row in rows):.2f}" for k in rows[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
