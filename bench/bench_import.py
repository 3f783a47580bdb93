"""Import benchmark: a generated Claude Code session imported (parse, map, store) against json.loads alone.

    .venv/bin/python bench/bench_import.py [--sizes 4,100] [--keep DIR] [--claude-code-log BIN] [--real FILE]

For each size (MB) it writes a Claude Code-shaped session (split assistant responses sharing message.id,
tool results of varied sizes, progress and snapshot lines, a compaction every ~600 KB of record as a
real 200k-token window would) into a temporary folder, then prints:
- json.loads time over the file's lines (best of 3), import time (load_session + Library.import_session
  into a fresh library file, best of 3 for small files, once for large ones) and their ratio (target < 5),
  with the reader's share (load_session: parse and map) and the store's shown apart;
- peak memory of the import, measured in a fresh subprocess: tracemalloc's peak of Python allocations,
  and the rise in max RSS over the process before the import, both as multiples of the file size
  (target < 4);
- wall time of `foldscope inspect --json --db` on FILE (--real, else a generated 3.4 MB session; import
  and exact count, interpreter start included) against `claude-code-log FILE --no-cache -o out.html`, best
  of 3, using BIN (--claude-code-log, default /tmp/cclog-venv/bin/claude-code-log); skipped with a message
  when claude-code-log is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CCLOG = "/tmp/cclog-venv/bin/claude-code-log"  # its own venv, for this comparison only
WORDS = ("context window fold request tool result assistant cache prefix note record view token line target "
         "ceiling compile estimate replay session message summary delivered clipped copy").split()


def _text(rng: random.Random, chars: int) -> str:
    out, size = [], 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def generate(path: Path, megabytes: float, seed: int = 7) -> int:
    """Write a Claude Code-shaped session of about `megabytes` MB; returns the number of requests."""
    rng = random.Random(seed)
    target = int(megabytes * 1024 * 1024)
    base = {"sessionId": "bench", "version": "2.1.0", "cwd": "/bench", "gitBranch": "main", "userType": "external",
            "isSidechain": False}
    written, n, cache = 0, 0, 20000
    parent = None
    with open(path, "w", encoding="utf-8") as out:
        def emit(entry: dict) -> None:
            nonlocal written, parent
            line = json.dumps({**base, **entry, "parentUuid": parent}, ensure_ascii=False)
            parent = entry.get("uuid", parent)
            out.write(line + "\n")
            written += len(line) + 1

        emit({"type": "file-history-snapshot", "messageId": "snap0", "snapshot": {"files": {}}})
        emit({"type": "user", "uuid": "u0", "message": {"role": "user", "content": _text(rng, 400)}})
        while written < target:
            n += 1
            mid, calls = f"msg_{n:07d}", rng.randint(1, 3)
            fresh, write = rng.randint(3, 20), rng.randint(200, 4000)
            usage = {"input_tokens": fresh, "cache_read_input_tokens": cache, "cache_creation_input_tokens": write,
                     "output_tokens": 1}
            blocks = [{"type": "thinking", "thinking": _text(rng, 300), "signature": "s" * 200},
                      {"type": "text", "text": _text(rng, 200)}]
            blocks += [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": "Read",
                        "input": {"file_path": f"/bench/src/{rng.randint(1, 500)}.py"}} for i in range(calls)]
            for i, block in enumerate(blocks):
                last = i == len(blocks) - 1
                emit({"type": "assistant", "uuid": f"a{n}_{i}", "requestId": f"req_{n}",
                      "message": {"id": mid, "type": "message", "role": "assistant", "model": "claude-bench",
                                  "content": [block], "stop_reason": "tool_use" if last else None,
                                  "usage": {**usage, "output_tokens": 300 if last else 1}}})
            for i in range(calls):
                emit({"type": "progress", "uuid": f"p{n}_{i}", "data": {"type": "hook_progress", "hookName": "x"}})
                body = _text(rng, rng.choice((200, 800, 3000, 12000)))
                emit({"type": "user", "uuid": f"r{n}_{i}", "toolUseResult": {"stdout": body[:200]},
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}_{i}",
                                                               "content": body}]}})
            cache += write + fresh
            if cache > 160000:
                emit({"type": "system", "subtype": "compact_boundary", "uuid": f"b{n}", "content": "Conversation compacted",
                      "compactMetadata": {"trigger": "auto", "preTokens": cache}})
                emit({"type": "user", "uuid": f"s{n}", "isCompactSummary": True,
                      "message": {"role": "user", "content": _text(rng, 4000)}})
                cache = 20000
            elif rng.random() < 0.1:
                emit({"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": _text(rng, 300)}})
    return n


def loads_only(path: Path) -> float:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        for raw in handle:
            json.loads(raw)
    return time.perf_counter() - start


def import_once(path: Path, folder: Path) -> tuple[float, float, float]:
    """(read + store until committed, of which reading: parse and map, closing the library) in seconds.

    The library file is created and migrated before the clock starts (a user's library exists
    already); the clock covers opening it, load_session and import_session (committed). Closing
    it runs SQLite's WAL checkpoint, which copies the new pages into the database file and
    syncs it; that is timed apart and reported beside the ratio.
    """
    from core.formats import load_session
    from core.store import Library

    db = folder / f"library-{time.monotonic_ns()}.db"
    Library(db).close()
    start = time.perf_counter()
    library = Library(db)
    session = load_session(path)
    read = time.perf_counter() - start
    library.import_session(session)
    committed = time.perf_counter() - start
    library.close()
    closed = time.perf_counter() - start - committed
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return committed, read, closed


def measure_memory(path: Path, folder: Path) -> dict:
    """Run one import in a fresh interpreter and report its memory peaks."""
    code = (
        "import sys, json, resource, tracemalloc; from pathlib import Path; sys.path.insert(0, sys.argv[3]);"
        "from core.formats import load_session; from core.store import Library;"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss;"
        "tracemalloc.start(); lib = Library(Path(sys.argv[2]));"
        "lib.import_session(load_session(sys.argv[1])); lib.close();"
        "peak = tracemalloc.get_traced_memory()[1];"
        "print(json.dumps({'tracemalloc_peak': peak, 'rss_rise': (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024}))"
    )
    db = folder / "memory.db"
    done = subprocess.run([sys.executable, "-c", code, str(path), str(db), str(ROOT)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def compare_claude_code_log(binary: str, real: Path, folder: Path) -> None:
    """Wall time of `foldscope inspect --json --db` (import and exact count) against claude-code-log's convert."""
    import shutil

    copy = folder / real.name  # claude-code-log writes beside its input; the source stays untouched
    shutil.copyfile(real, copy)
    foldscope = [str(Path(sys.executable).with_name("foldscope")), "inspect", "--json", "--db", str(folder / "cmp.db"),
                 str(copy)]
    theirs = [binary, str(copy), "--no-cache", "-o", str(folder / "out.html")]

    def best(command: list[str]) -> float:
        times = []
        for _ in range(3):
            (folder / "cmp.db").unlink(missing_ok=True)
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return min(times)

    ours, other = best(foldscope), best(theirs)
    print(f"{real.name} ({real.stat().st_size / 1e6:.2f} MB): foldscope inspect {ours:.2f} s, claude-code-log "
          f"{other:.2f} s, ratio {ours / other:.2f} (target < 0.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,100", help="file sizes in MB, comma-separated")
    parser.add_argument("--keep", help="write the generated files here instead of a temporary folder")
    parser.add_argument("--claude-code-log", metavar="BIN", help="claude-code-log executable (its own venv) to compare")
    parser.add_argument("--real", metavar="FILE", help="a real Claude Code session for the claude-code-log comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
        for mb in (float(s) for s in args.sizes.split(",")):
            path = folder / f"bench-{mb:g}mb.jsonl"
            requests = generate(path, mb)
            size = path.stat().st_size
            repeats = 3 if mb <= 10 else 1
            parse = min(loads_only(path) for _ in range(repeats))
            imported, read, closed = min(import_once(path, Path(scratch)) for _ in range(repeats))
            memory = measure_memory(path, Path(scratch))
            print(f"{size / 1e6:7.1f} MB, {requests} requests: json.loads {parse:6.3f} s | import {imported:6.3f} s, "
                  f"ratio {imported / parse:4.2f}x (read {read:6.3f} s, {read / parse:4.2f}x; store "
                  f"{(imported - read) / parse:4.2f}x); closing the library (checkpoint) {closed:6.3f} s, with it "
                  f"{(imported + closed) / parse:4.2f}x | peak tracemalloc {memory['tracemalloc_peak'] / size:4.2f}x, "
                  f"RSS rise {memory['rss_rise'] / size:4.2f}x file size")
        binary = args.claude_code_log or (DEFAULT_CCLOG if Path(DEFAULT_CCLOG).exists() else None)
        if binary is None or not Path(binary).exists():
            print(f"claude-code-log comparison skipped: {binary or DEFAULT_CCLOG} is not installed (python3 -m venv "
                  "/tmp/cclog-venv && /tmp/cclog-venv/bin/pip install claude-code-log; never a project dependency)")
            return
        real = Path(args.real) if args.real else folder / "generated" / "bench-3.4mb.jsonl"
        real.parent.mkdir(exist_ok=True)
        if not args.real:
            generate(real, 3.4)
        compare_claude_code_log(binary, real, Path(scratch))


if __name__ == "__main__":
    main()
