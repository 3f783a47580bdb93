"""The library's growth when a live session is re-opened as it grows, and what prune takes back.

Command: `.venv/bin/python bench/bench_library.py [--megabytes 21] [--reopens 5]`. It generates a Claude Code
session shaped like the dev corpus's (bench_import.generate), cuts it to 80% of its lines, then re-opens
it `--reopens` times, each time with a further share of the lines back (the agent writing on), importing every
version into one library. It prints, per version, the file's size, the library's size on disk and the
time of the import; then the size after `prune` (which keeps only the newest version). Baseline in the
same run: the sum of the versions' sizes, what a library storing each version whole would hold at least.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=21.0)
    parser.add_argument("--reopens", type=int, default=5)
    args = parser.parse_args()
    from bench_import import generate

    from foldscope.core.formats import load_session
    from foldscope.core.store.library import Library

    with tempfile.TemporaryDirectory() as folder:
        whole = Path(folder) / "whole.jsonl"
        generate(whole, args.megabytes)
        lines = whole.read_bytes().splitlines(keepends=True)
        live, db = Path(folder) / "live.jsonl", Path(folder) / "library.db"
        total = 0
        print(f"{'version':>7} {'file MB':>8} {'sum of versions MB':>19} {'library MB':>11} {'import s':>9}")
        for version in range(args.reopens + 1):
            keep = int(len(lines) * (0.8 + 0.2 * version / max(args.reopens, 1)))
            live.write_bytes(b"".join(lines[:keep]))
            total += live.stat().st_size
            start = time.perf_counter()
            with Library(db) as library:
                library.import_session(load_session(live))
            took = time.perf_counter() - start
            size = db.stat().st_size
            print(f"{version:>7} {live.stat().st_size / 1e6:>8.1f} {total / 1e6:>19.1f} {size / 1e6:>11.1f} {took:>9.2f}")
        with Library(db) as library:
            result = library.prune()
        print(
            f"after prune: {len(result['sessions'])} older versions removed, library {db.stat().st_size / 1e6:.1f} MB "
            f"for a {live.stat().st_size / 1e6:.1f} MB file"
        )


if __name__ == "__main__":
    main()
