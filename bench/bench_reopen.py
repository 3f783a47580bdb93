"""Reopening a session the library holds (issue 17): its first open against its reopen from the stored snapshot and counts.

Command: `.venv/bin/python bench/bench_reopen.py [--messages 10000] [--shapes "claude code,short messages,branch"]`.
Each shape is generated at the size asked (bench_scale's generators), then opened twice with
core.readout.opening.open_document (the GUI load worker's call) into one new library: the first open reads, counts,
imports and keeps the snapshot; the second rebuilds the session from the snapshot and seeds the counter with the
counts kept. Both in one process after a warm-up open of a small file (imports and the tokenizer already built), so
the ratio compares the work, not the start-up. Printed per shape: the file's size, messages and requests; the two
opens' wall times and their ratio; inside the reopen, the time to rebuild the session (`Library.stored_session`)
against the reader's time for the file (`load_session`, timed apart); the text tokenised on reopen (0 when nothing
is counted again); the library's size, and the part of it the snapshot and memo take.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--shapes", default="claude code,short messages,branch")
    args = parser.parse_args(argv)
    from bench_scale import branch, claude_code, short_messages

    from foldscope.core.formats import load_session
    from foldscope.core.readout.opening import open_document
    from foldscope.core.store.library import Library

    makers = {"claude code": (claude_code, ".jsonl"), "short messages": (short_messages, ".jsonl"), "branch": (branch, ".json")}
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    print(
        f"{'shape':<15} {'file MB':>7} {'messages':>8} {'requests':>8} {'first s':>8} {'reopen s':>8} {'ratio':>6} "
        f"{'rebuild s':>9} {'read s':>7} {'tokenised':>9} {'library MB':>10} {'snapshot MB':>11}"
    )
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        warm = folder / "warm.jsonl"
        short_messages(warm, 20)
        open_document(warm, str(folder / "warm.db"))
        for shape in shapes:
            make, suffix = makers[shape]
            path = folder / f"{shape.replace(' ', '_')}{suffix}"
            make(path, args.messages)
            db = folder / f"{shape.replace(' ', '_')}.db"
            start = time.perf_counter()
            first = open_document(path, str(db))
            first_s = time.perf_counter() - start
            start = time.perf_counter()
            again = open_document(path, str(db))
            reopen_s = time.perf_counter() - start
            assert [r.estimate for r in again.requests] == [r.estimate for r in first.requests]
            assert again.tokens == first.tokens and again.now_size == first.now_size
            start = time.perf_counter()
            with Library(db) as library:
                library.stored_session(path)
            rebuild_s = time.perf_counter() - start
            start = time.perf_counter()
            load_session(path)
            read_s = time.perf_counter() - start
            size = sum(p.stat().st_size for p in folder.glob(f"{db.name}*"))
            with Library(db) as library:
                kept = library.conn.execute("SELECT SUM(LENGTH(session) + COALESCE(LENGTH(memo), 0)) FROM snapshots").fetchone()[0]
            print(
                f"{shape:<15} {path.stat().st_size / 1e6:>7.1f} {len(first.session.record):>8} "
                f"{len(first.requests):>8} {first_s:>8.2f} {reopen_s:>8.2f} {reopen_s / first_s:>6.2f} "
                f"{rebuild_s:>9.2f} {read_s:>7.2f} {again.counter.tokenised_chars:>9} {size / 1e6:>10.1f} {kept / 1e6:>11.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
