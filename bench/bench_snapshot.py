"""A session's snapshot written into the library (core.store.snapshot.dump_session_to): its CPU and its size.

Run: .venv/bin/python bench/bench_snapshot.py FILE... [--repeat 3] [--before COPY] [--rounds 2]
Each FILE is read once, then its snapshot written to a temporary file `--repeat` times in one process; printed: the
best CPU seconds (time.process_time), the snapshot's size and, from one more write, its traced peak (tracemalloc:
the picklers' memos and what they keep alive, the compressor's buffers). With --before, the same is run in turn with
COPY on PYTHONPATH (a folder holding `foldscope`, e.g. a `git archive` of main before a change) and without it,
`--rounds` times for each file, the ratio after/before of each file's best CPU and each side's least traced peak.
bench/bench_huge.py --dir keeps 50 MB one-message files to give it (the coding of a huge text: docs/performance.md,
"A huge text's coding").
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
sys.path.insert(0, str(ROOT / "bench"))

from bench_huge import holding_foldscope  # noqa: E402  # the folder --before names, as bench_huge takes it


def measure(path: str, repeat: int) -> dict:
    """In this process: read `path`, then write its snapshot `repeat` times; the best CPU and the size; then once more
    under tracemalloc, the most the writing held at once over what was held before it (`traced`, MiB: the picklers'
    memos and what they keep alive, the compressor's buffers)."""
    import tracemalloc

    from foldscope.core.formats import load_session
    from foldscope.core.store import snapshot

    session = load_session(path)
    best, size = float("inf"), 0
    for _ in range(repeat):
        with tempfile.TemporaryFile() as out:
            start = time.process_time()
            snapshot.dump_session_to(session, out)
            best = min(best, time.process_time() - start)
            size = out.tell()
    with tempfile.TemporaryFile() as out:
        tracemalloc.start()
        held = tracemalloc.get_traced_memory()[0]
        snapshot.dump_session_to(session, out)
        traced = (tracemalloc.get_traced_memory()[1] - held) / 2**20
        tracemalloc.stop()
    return {"cpu": best, "bytes": size, "traced": traced}


def run(path: str, repeat: int, tree: str | None) -> dict:
    """measure() in a fresh interpreter, with `tree` (a folder holding foldscope) first on PYTHONPATH, else this one's."""
    env = dict(os.environ, PYTHONPATH=tree or str(ROOT.parent))
    code = f"import json, sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import bench_snapshot as b; print(json.dumps(b.measure({path!r}, {repeat})))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--repeat", type=int, default=3, help="snapshots written per process (the best is kept)")
    parser.add_argument("--before", metavar="COPY", help="in turn with COPY (a folder holding foldscope) on PYTHONPATH")
    parser.add_argument("--rounds", type=int, default=2, help="with --before: pairs run for each file")
    args = parser.parse_args(argv)
    if args.before:
        args.before = holding_foldscope(args.before)
    for path in args.files:
        name = Path(path).name
        if not args.before:
            got = run(path, args.repeat, None)
            print(f"{name}: snapshot {got['cpu']:.2f} s CPU, {got['bytes'] / 1e6:.1f} MB, traced peak {got['traced']:.2f} MiB")
            continue
        before, after = [], []
        for _ in range(args.rounds):
            before.append(run(path, args.repeat, args.before))
            after.append(run(path, args.repeat, None))
        b, a = min(r["cpu"] for r in before), min(r["cpu"] for r in after)
        print(
            f"{name}: snapshot before {b:.2f} s CPU, {before[0]['bytes'] / 1e6:.1f} MB; "
            f"after {a:.2f} s CPU, {after[0]['bytes'] / 1e6:.1f} MB; after/before {a / b:.2f}; "
            f"traced peak before {min(r['traced'] for r in before):.2f} MiB, after {min(r['traced'] for r in after):.2f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
