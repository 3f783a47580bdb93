"""Import benchmark: a generated Claude Code session imported (parse, map, store) against json.loads alone.

    .venv/bin/python bench/bench_import.py [--sizes 4,100] [--keep DIR] [--claude-code-log BIN] [--real FILE ...]

For each size (MB) it writes a Claude Code-shaped session (see generate: real source and docstring text,
split assistant responses sharing message.id, thinking, markdown answers, seven tools with results of 20
to 32,000 characters, progress and snapshot lines, compactions as a 200k-token window would have them)
into a temporary folder, then prints:
- json.loads time over the file's lines (best of 3), import time (load_session + Library.import_session
  into a fresh library file, best of 3 for small files, once for large ones) and their ratio (target < 5),
  with the reader's share (load_session: parse and map) and the store's shown apart;
- peak memory of the import, measured in a fresh subprocess: tracemalloc's peak of Python allocations,
  and the rise in max RSS over the process before the import, both as multiples of the file size
  (target < 4);
- wall time of `foldscope inspect --json --db NEW.db` on a generated 3.4 MB session and on each --real FILE
  (import into a new library and exact count, interpreter start included) against
  `claude-code-log FILE --no-cache -o out.html`, best of 3, the two alternating, using BIN (--claude-code-log, default /tmp/cclog-venv/bin/claude-code-log); skipped with a message
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CCLOG = "/tmp/cclog-venv/bin/claude-code-log"  # its own venv, for this comparison only
# Real text to cut sessions from: these standard-library modules' source (for Read, Edit, Write, grep and
# code fences) and their docstrings (for prose), fixed for a given Python version.
TEXT_MODULES = (
    "argparse",
    "difflib",
    "textwrap",
    "json.decoder",
    "json.encoder",
    "pathlib",
    "shutil",
    "tempfile",
    "csv",
    "configparser",
    "logging",
    "dataclasses",
    "heapq",
    "bisect",
    "fractions",
    "statistics",
)
TOOLS = (("Bash", 39), ("Read", 12), ("TodoWrite", 6), ("Grep", 7), ("Edit", 8), ("Glob", 3), ("Write", 2))
# Tool result sizes, in characters, shaped on the dev corpus (median about 300, one in ten over 6,000).
RESULT_SIZES = ((20, 12), (150, 15), (300, 20), (1000, 20), (3000, 14), (6500, 10), (15000, 5), (32000, 2))


class Texts:
    """Real-shaped pieces of text: code lines and prose paragraphs from the standard library."""

    def __init__(self) -> None:
        import ast
        import importlib.util

        self.files: list[tuple[str, list[str]]] = []
        self.prose: list[str] = []
        for name in TEXT_MODULES:
            source = Path(importlib.util.find_spec(name).origin).read_text(encoding="utf-8")
            self.files.append((name.replace(".", "/") + ".py", source.splitlines()))
            for node in ast.walk(ast.parse(source)):
                doc = ast.get_docstring(node) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) else None
                if doc:
                    self.prose += [p.replace("\n", " ") for p in doc.split("\n\n") if len(p) > 40]

    def paragraph(self, rng: random.Random, chars: int) -> str:
        out, size = [], 0
        while size < chars:
            out.append(rng.choice(self.prose))
            size += len(out[-1]) + 1
        return " ".join(out)

    def code(self, rng: random.Random, chars: int) -> tuple[str, int, list[str]]:
        """(file name, first line number, lines) of a run of real source about chars long."""
        name, lines = rng.choice(self.files)
        start = rng.randrange(len(lines))
        out, size, i = [], 0, start
        while size < chars:
            out.append(lines[i % len(lines)])
            size += len(out[-1]) + 8
            i += 1
        return name, start + 1, out

    def markdown(self, rng: random.Random, chars: int) -> str:
        """An assistant's answer: headings, paragraphs, lists with inline code, sometimes a code fence."""
        parts, size = [], 0
        while size < chars:
            roll = rng.random()
            if roll < 0.15:
                part = "## " + rng.choice(self.prose)[:50].rstrip()
            elif roll < 0.45:
                words = [w.strip(".,()") for w in rng.choice(self.prose).split()[:40]]
                part = "\n".join(
                    f"- **{w}**: `{rng.choice(words)}()` " + rng.choice(self.prose)[:90]
                    for w in rng.sample(words, min(len(words), rng.randint(2, 5)))
                )
            elif roll < 0.6:
                name, _, lines = self.code(rng, rng.randint(150, 900))
                part = "```python\n" + "\n".join(lines) + "\n```"
            else:
                part = self.paragraph(rng, rng.randint(80, 500))
            parts.append(part)
            size += len(part) + 2
        return "\n\n".join(parts)


def _tool_call(texts: Texts, rng: random.Random, name: str, size: int) -> tuple[dict, str, Any]:
    """(input, result text, toolUseResult) of one call of a Claude Code tool, its result about size characters."""
    file, first, lines = texts.code(rng, size)
    path = f"/home/user/repo/src/{file}"
    if name == "Read":
        body = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, first))
        return (
            {"file_path": path},
            body,
            {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": "\n".join(lines),
                    "numLines": len(lines),
                    "startLine": first,
                    "totalLines": first + len(lines),
                },
            },
        )
    if name == "Grep":
        body = "\n".join(f"src/{file}:{n}:{line}" for n, line in enumerate(lines, first) if line.strip())
        return (
            {"pattern": rng.choice(lines).strip()[:30] or "def ", "output_mode": "content", "path": "/home/user/repo", "-n": True},
            body,
            {"mode": "content", "numFiles": 1, "filenames": [], "content": body, "numLines": len(lines)},
        )
    if name == "Glob":
        names = [f"/home/user/repo/src/{f}" for f, _ in rng.sample(texts.files, rng.randint(1, 6))]
        return (
            {"pattern": "**/*.py", "path": "/home/user/repo/src"},
            "\n".join(names),
            {"filenames": names, "durationMs": rng.randint(5, 400), "numFiles": len(names), "truncated": False},
        )
    if name == "Edit":
        old = "\n".join(lines[:8])
        new = old.replace("self", "this", 2) + "\n    # " + texts.paragraph(rng, 60)[:60]
        body = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" + "\n".join(
            f"{n:>6}\u2192{line}" for n, line in enumerate(lines, first)
        )
        return (
            {"file_path": path, "old_string": old, "new_string": new},
            body,
            {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": "\n".join(lines),
                "structuredPatch": [
                    {
                        "oldStart": first,
                        "oldLines": 8,
                        "newStart": first,
                        "newLines": 9,
                        "lines": ["-" + line for line in old.splitlines()] + ["+" + line for line in new.splitlines()],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            },
        )
    if name == "Write":
        content = "\n".join(lines)
        return (
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            {"type": "create", "filePath": path, "content": content, "structuredPatch": []},
        )
    if name == "TodoWrite":
        todos = [
            {
                "content": texts.paragraph(rng, 10)[:70],
                "status": rng.choice(("pending", "in_progress", "completed")),
                "activeForm": texts.paragraph(rng, 10)[:70],
            }
            for _ in range(rng.randint(3, 8))
        ]
        return (
            {"todos": todos},
            "Todos have been modified successfully. Ensure that you continue to use the todo list "
            "to track your progress. Please proceed with the current tasks if applicable",
            {"oldTodos": [], "newTodos": todos},
        )
    # Bash: a test run, a log or a listing; the output is real source lines shaped as a command's output.
    command = rng.choice(
        (
            f"python -m pytest -q tests/test_{rng.randint(1, 40)}.py",
            f"git log --oneline -n {len(lines)}",
            f"grep -rn 'def ' src/{file} | head -{len(lines)}",
            f"sed -n '{first},+{len(lines)}p' src/{file}",
        )
    )
    body = "\n".join(lines)
    return (
        {"command": command, "description": texts.paragraph(rng, 10)[:60]},
        body,
        {"stdout": body, "stderr": "", "interrupted": False, "isImage": False},
    )


def generate(path: Path, megabytes: float, seed: int = 7) -> int:
    """Write a Claude Code-shaped session of about `megabytes` MB; returns the number of requests.

    Real-shaped throughout, like the dev corpus's sessions: thinking with its signature, markdown answers,
    Bash, Read, Grep, Edit, Write, TodoWrite and Glob calls with their inputs, results of real source text
    (20 to 32,000 characters) and the toolUseResult Claude Code keeps beside each, timestamps, progress and
    snapshot lines, and a compaction whenever the modelled window passes 160k tokens.
    """
    rng = random.Random(seed)
    texts = Texts()
    tool_names = [name for name, weight in TOOLS for _ in range(weight)]
    result_sizes = [size for size, weight in RESULT_SIZES for _ in range(weight)]
    target = int(megabytes * 1024 * 1024)
    base = {
        "sessionId": "5b1d3f0e-bench",
        "version": "2.0.76",
        "cwd": "/home/user/repo",
        "gitBranch": "main",
        "userType": "external",
        "isSidechain": False,
        "slug": "bright-singing-wolf",
    }
    written, n, cache, clock = 0, 0, 20000, 1_767_000_000.0
    parent = None
    with open(path, "w", encoding="utf-8") as out:

        def emit(entry: dict) -> None:
            nonlocal written, parent, clock
            clock += rng.uniform(0.5, 20)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock)) + f".{int(clock % 1 * 1000):03d}Z"
            line = json.dumps({"parentUuid": parent, **base, **entry, "timestamp": stamp}, ensure_ascii=False)
            parent = entry.get("uuid", parent)
            out.write(line + "\n")
            written += len(line.encode("utf-8")) + 1

        emit({"type": "file-history-snapshot", "messageId": "snap0", "snapshot": {"trackedFileBackups": {}}})
        emit({"type": "user", "uuid": "u0", "message": {"role": "user", "content": texts.paragraph(rng, 400)}})
        while written < target:
            n += 1
            mid, calls = f"msg_bdrk_{n:07d}", rng.choice((1, 1, 1, 2, 3))
            fresh, write = rng.randint(3, 20), rng.randint(200, 4000)
            usage = {
                "input_tokens": fresh,
                "cache_read_input_tokens": cache,
                "cache_creation_input_tokens": write,
                "output_tokens": 1,
                "service_tier": "standard",
            }
            blocks: list[dict] = []
            if rng.random() < 0.75:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": texts.paragraph(rng, rng.choice((200, 600, 1500, 4000))),
                        "signature": "".join(
                            rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                            for _ in range(rng.choice((600, 1200, 2400)))
                        ),
                    }
                )
            if rng.random() < 0.35:
                blocks.append({"type": "text", "text": texts.markdown(rng, rng.choice((100, 400, 1500, 5000, 12000)))})
            tools = [rng.choice(tool_names) for _ in range(calls)]
            made = [_tool_call(texts, rng, name, rng.choice(result_sizes)) for name in tools]
            blocks += [
                {"type": "tool_use", "id": f"toolu_bdrk_{n:07d}{i}", "name": name, "input": made[i][0]} for i, name in enumerate(tools)
            ]
            for i, block in enumerate(blocks):
                last = i == len(blocks) - 1
                emit(
                    {
                        "type": "assistant",
                        "uuid": f"a{n}_{i}",
                        "requestId": f"req_{n:07d}",
                        "message": {
                            "model": "claude-sonnet-4-5-20250929",
                            "id": mid,
                            "type": "message",
                            "role": "assistant",
                            "content": [block],
                            "stop_reason": "tool_use" if last else None,
                            "stop_sequence": None,
                            "usage": {**usage, "output_tokens": 300 if last else 1},
                        },
                    }
                )
            for i, (_, body, kept) in enumerate(made):
                emit(
                    {
                        "type": "progress",
                        "uuid": f"p{n}_{i}",
                        "toolUseID": f"toolu_bdrk_{n:07d}{i}",
                        "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:" + tools[i]},
                    }
                )
                result = {"tool_use_id": f"toolu_bdrk_{n:07d}{i}", "type": "tool_result", "content": body}
                if tools[i] == "Bash" and rng.random() < 0.08:
                    result.update(content="Exit code 1\n" + body[:300], is_error=True)
                emit({"type": "user", "uuid": f"r{n}_{i}", "toolUseResult": kept, "message": {"role": "user", "content": [result]}})
            cache += write + fresh
            if cache > 160000:
                emit(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": f"b{n}",
                        "content": "Conversation compacted",
                        "level": "info",
                        "compactMetadata": {"trigger": "auto", "preTokens": cache},
                    }
                )
                emit(
                    {
                        "type": "user",
                        "uuid": f"s{n}",
                        "isCompactSummary": True,
                        "isVisibleInTranscriptOnly": True,
                        "message": {
                            "role": "user",
                            "content": "This session is being continued from a previous "
                            "conversation that ran out of context. The conversation is summarized below:\n" + texts.markdown(rng, 4000),
                        },
                    }
                )
                cache = 20000
            elif rng.random() < 0.08:
                emit({"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": texts.paragraph(rng, 300)}})
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
    from foldscope.core.formats import load_session
    from foldscope.core.store.library import Library

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
        "from foldscope.core.formats import load_session; from foldscope.core.store.library import Library;"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss;"
        "tracemalloc.start(); lib = Library(Path(sys.argv[2]));"
        "lib.import_session(load_session(sys.argv[1])); lib.close();"
        "peak = tracemalloc.get_traced_memory()[1];"
        "print(json.dumps({'tracemalloc_peak': peak, 'rss_rise': (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024}))"
    )
    db = folder / "memory.db"
    done = subprocess.run([sys.executable, "-c", code, str(path), str(db), str(ROOT)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def compare_claude_code_log(binary: str, real: Path, folder: Path) -> None:
    """Wall time of `foldscope inspect --json --db` (import and exact count) against claude-code-log's convert."""
    import shutil

    copy = folder / real.name  # claude-code-log writes beside its input; the source stays untouched
    shutil.copyfile(real, copy)
    foldscope = [str(Path(sys.executable).with_name("foldscope")), "inspect", "--json", "--db", str(folder / "cmp.db"), str(copy)]
    theirs = [binary, str(copy), "--no-cache", "-o", str(folder / "out.html")]

    def once(command: list[str]) -> tuple[float, float]:
        """(wall, CPU) seconds of one run: the CPU is the child's user and system time, which the machine's other work
        does not inflate as it does the wall time."""
        for suffix in ("", "-wal", "-shm"):
            Path(str(folder / "cmp.db") + suffix).unlink(missing_ok=True)
        before = _children_cpu()
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        return time.perf_counter() - start, _children_cpu() - before

    # Alternating, so that a busy spell on this shared machine hits both sides alike.
    runs = [(once(foldscope), once(theirs)) for _ in range(3)]
    ours, other = min(r[0][0] for r in runs), min(r[1][0] for r in runs)
    ours_cpu, other_cpu = min(r[0][1] for r in runs), min(r[1][1] for r in runs)
    print(
        f"{real.name} ({real.stat().st_size / 1e6:.2f} MB): foldscope inspect {ours:.2f} s ({ours_cpu:.2f} s CPU), "
        f"claude-code-log {other:.2f} s ({other_cpu:.2f} s CPU), ratio {ours / other:.2f} wall, {ours_cpu / other_cpu:.2f} CPU "
        "(target < 0.5)"
    )


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,100", help="file sizes in MB, comma-separated")
    parser.add_argument("--keep", help="write the generated files here instead of a temporary folder")
    parser.add_argument("--claude-code-log", metavar="BIN", help="claude-code-log executable (its own venv) to compare")
    parser.add_argument(
        "--real",
        metavar="FILE",
        action="append",
        default=[],
        help="a real Claude Code session to compare with claude-code-log on too (repeatable)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
        for mb in (float(s) for s in args.sizes.split(",") if s):
            path = folder / f"bench-{mb:g}mb.jsonl"
            requests = generate(path, mb)
            size = path.stat().st_size
            repeats = 3 if mb <= 10 else 1
            parse = min(loads_only(path) for _ in range(repeats))
            imported, read, closed = min(import_once(path, Path(scratch)) for _ in range(repeats))
            memory = measure_memory(path, Path(scratch))
            print(
                f"{size / 1e6:7.1f} MB, {requests} requests: json.loads {parse:6.3f} s | import {imported:6.3f} s, "
                f"ratio {imported / parse:4.2f}x (read {read:6.3f} s, {read / parse:4.2f}x; store "
                f"{(imported - read) / parse:4.2f}x); closing the library (checkpoint) {closed:6.3f} s, with it "
                f"{(imported + closed) / parse:4.2f}x | peak tracemalloc {memory['tracemalloc_peak'] / size:4.2f}x, "
                f"RSS rise {memory['rss_rise'] / size:4.2f}x file size"
            )
        binary = args.claude_code_log or (DEFAULT_CCLOG if Path(DEFAULT_CCLOG).exists() else None)
        if binary is None or not Path(binary).exists():
            print(
                f"claude-code-log comparison skipped: {binary or DEFAULT_CCLOG} is not installed (python3 -m venv "
                "/tmp/cclog-venv && /tmp/cclog-venv/bin/pip install claude-code-log; never a project dependency)"
            )
            return
        generated = folder / "generated" / "bench-3.4mb.jsonl"
        generated.parent.mkdir(exist_ok=True)
        generate(generated, 3.4)
        for path in [*([generated] if args.sizes else []), *map(Path, args.real)]:
            compare_claude_code_log(binary, path, Path(scratch))


if __name__ == "__main__":
    main()
