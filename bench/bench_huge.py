"""One huge message: `foldscope inspect` (and with --gui the window's screenshot) of a Claude Code session whose one user
message is N MB of one kind of text, each process of the command polled from /proc (issue 48: at most 0.1 s of CPU a MB,
every process, and each process's peak under 3x the message).

Run: .venv/bin/python bench/bench_huge.py [--mb 50] [--kinds lowercase,CJK,base64] [--runs 1] [--gui] [--no-db] [--first]
    [--dir DIR]
For each kind (prose, code, JSON logs, CJK sentences and base64 from bench_count.huge_text; lowercase and CJK, one
unbroken piece each, from bench_count.one_piece) a session file is written (one JSON line an entry, as
bench/fresh_session.py writes them: a file-history snapshot, the user's line holding the text, then an assistant reply
with its usage; --first: no snapshot, so the file opens on the huge line, as 4 of the dev corpus's first 10 Claude
Code files open on the user's), then `foldscope inspect FILE --db TMP` is run (a library in a temporary folder;
--no-db: `inspect FILE` alone) and every process of its tree is polled every 20 ms: VmHWM from /proc/PID/status,
utime+stime from /proc/PID/stat (every thread's). Printed per kind: the wall, the CPU of all the command's processes
(its rusage once reaped, which holds the children it reaped; at least the polled sum), CPU seconds a MB (target 0.1),
and each process's peak in MiB, as a multiple of the message and as its growth over the same process of the same
command on a tiny file (the baseline, measured in the same run); and as its growth over the same command on a file of
--small-mb (2 MB of prose: over tokens.SMALL_INPUT_BYTES, so it builds the tokenizer's tables, about 60 MiB, as any
session of a few MB does and the tiny file does not) a MiB of the message beyond that file's: what the message's size
costs, the tables apart. With --gui the same for `foldscope --screenshot
OUT.png --db TMP FILE` (QT_QPA_PLATFORM=offscreen). The commands run with bytecode written to a temporary folder (as an
install has it; a tiny file's run first writes it), whatever PYTHONDONTWRITEBYTECODE says. --dir keeps the session
files there and reuses them (making 50 MB of CJK takes about 15 s).

Run: .venv/bin/python bench/bench_huge.py --before COPY [--rounds 2] [...]
The same, each command run in turn with COPY on PYTHONPATH (a folder holding `foldscope`, e.g. a `git archive` of main
before a change) and without it, alternated for each kind; the outputs of `inspect` compared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_count import huge_text, one_piece, prose  # noqa: E402

KINDS = ("prose", "code", "JSON logs", "CJK sentences", "base64", "lowercase", "CJK")
POLL = 0.02  # seconds between two looks at the processes
TICK = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20


def text_of(kind: str, size: int) -> str:
    """About `size` bytes of UTF-8 of one kind; lowercase and CJK are each one piece of the pattern's."""
    if kind == "prose":
        return prose(random.Random(3), size // 6)[:size]
    if kind in ("lowercase", "CJK"):
        return one_piece(kind, size)
    return huge_text(kind, size)


def write_session(path: Path, text: str, first: bool = False) -> None:
    """A Claude Code session as bench/fresh_session.py opens one (a file-history snapshot first; with `first` none, so
    the file opens on the huge line), then a user line whose message content is `text`, then an assistant reply with its
    usage."""
    base = {"sessionId": "0f7c-huge-bench", "version": "2.0.76", "cwd": "/home/user/project", "gitBranch": "main"}
    base |= {"userType": "external", "isSidechain": False}
    reply = {"model": "claude-sonnet-4-5-20250929", "id": "msg_0000001", "type": "message", "role": "assistant"}
    reply |= {"content": [{"type": "text", "text": "Read it."}], "stop_reason": "end_turn", "stop_sequence": None}
    reply["usage"] = {"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": len(text) // 3}
    reply["usage"] |= {"output_tokens": 5, "service_tier": "standard"}
    lines = (
        {"parentUuid": None, **base, "type": "file-history-snapshot", "messageId": "snap0", "snapshot": {"trackedFileBackups": {}}},
        {"parentUuid": None, **base, "type": "user", "uuid": "u0", "message": {"role": "user", "content": text}},
        {"parentUuid": "u0", **base, "type": "assistant", "uuid": "a0", "requestId": "req_0000001", "message": reply},
    )
    stamps = ("2026-12-06T05:00:00.000Z", "2026-12-06T05:00:01.000Z", "2026-12-06T05:00:09.000Z")
    with open(path, "w", encoding="utf-8") as out:
        for stamp, line in list(zip(stamps, lines, strict=True))[1 if first else 0 :]:
            out.write(json.dumps({**line, "timestamp": stamp}, ensure_ascii=False) + "\n")


def session_file(folder: Path, kind: str, mb: float, first: bool = False) -> tuple[Path, int]:
    """The session file of `kind` at `mb` MB in folder (made when absent; `first`: opening on the huge line) and its
    message's size in bytes."""
    path = folder / f"huge-{kind.replace(' ', '-')}-{mb:g}MB{'-first' if first else ''}.jsonl"
    size = int(mb * 1_000_000)
    if not path.exists():
        text = text_of(kind, size)
        write_session(path, text, first)
        size = len(text.encode())
        path.with_suffix(".bytes").write_text(str(size))
    return path, int(path.with_suffix(".bytes").read_text())


@dataclass
class Seen:
    """What was last seen of one process: its parent, its command line, its peak (kB) and its CPU (ticks)."""

    ppid: int
    argv: list[str]
    hwm_kb: int = 0
    ticks: int = 0


@dataclass
class Run:
    """One command's run: wall, the CPU of all its processes, each process as seen, its output."""

    wall: float
    cpu: float
    processes: dict[int, Seen] = field(default_factory=dict)
    output: bytes = b""
    code: int = 0


def _parents() -> dict[int, int]:
    """Each process's parent, from /proc/*/stat."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    out[int(name)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return out


def _look(pid: int, seen: Seen) -> None:
    """Update seen from /proc/pid (it may have ended meanwhile)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    seen.hwm_kb = max(seen.hwm_kb, int(line.split()[1]))
                    break
    except (OSError, IndexError, ValueError):
        return
    seen.ticks = max(seen.ticks, int(fields[11]) + int(fields[12]))  # utime, stime: every thread's


def run_polled(argv: list[str], env: dict[str, str]) -> Run:
    """Run argv, polling each process of its tree every POLL seconds until it ends (a process whose parent ended
    meanwhile is still followed); its CPU the sum of what was last seen of each."""
    began = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(child.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    processes: dict[int, Seen] = {}
    while child.poll() is None:
        parents = _parents()
        tree = {child.pid} | {pid for pid in processes if pid in parents}
        while more := {pid for pid, ppid in parents.items() if ppid in tree} - tree:  # every descendant, any depth
            tree |= more
        for pid in tree:
            if pid not in processes:
                try:
                    words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
                except OSError:
                    continue
                processes[pid] = Seen(parents[pid], words)
            _look(pid, processes[pid])
        time.sleep(POLL)
    wall = time.perf_counter() - began
    reader.join()
    cpu = sum(seen.ticks for seen in processes.values()) / TICK
    return Run(wall, cpu, processes, b"".join(out), child.returncode)


def run_measured(argv: list[str], env: dict[str, str]) -> Run:
    """run_polled, with the CPU of all the command's processes taken from this process's children's rusage (the
    command's own and every child it reaped), never less than what the poller saw."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = run_polled(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = max(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, run.cpu)
    return run


def roles(run: Run) -> list[tuple[str, int, Seen]]:
    """Each process seen with its role and pid: the command, a fork of it (the same command line) or the module it
    runs, in the order they started; a process gone before its first look is left out."""
    root = min(run.processes, key=lambda pid: (run.processes[pid].ppid in run.processes, pid))
    out = []
    for pid in sorted(run.processes):
        seen = run.processes[pid]
        if not seen.argv:
            continue
        if pid == root:
            role = "command"
        elif seen.argv == run.processes[root].argv:
            role = "fork"
        elif "-m" in seen.argv[:-1]:
            role = ".".join(seen.argv[seen.argv.index("-m") + 1].split(".")[-2:])
        else:
            role = Path(seen.argv[0]).name
        out.append((role, pid, seen))
    return out


def report(label: str, run: Run, size: int, baseline: Run | None, small: tuple[Run, int] | None = None) -> None:
    """One run's line and each process's peak: in MiB, as a multiple of the message and, with a baseline (the same
    command on a tiny file), as its growth over the baseline's process of the same role (the k-th fork to the k-th);
    with `small` (the same command on a file of a few MB, and its message's size), the growth over it a MiB of the
    message beyond small's: what the message's size costs, without the tokenizer's tables (about 60 MiB, built for any
    file over tokens.SMALL_INPUT_BYTES but not for the tiny file)."""
    mb, mib = size / 1e6, size / MIB
    rate = f"  {run.cpu / mb:6.3f} s/MB (target 0.1)" if baseline else ""
    print(
        f"  {label:22} wall {run.wall:6.2f} s  CPU of all {run.cpu:6.2f} s{rate}  processes {len(run.processes)}"
        + ("" if run.code == 0 else f"  EXIT {run.code}"),
        flush=True,
    )
    before: dict[str, list[Seen]] = {}
    for role, _, seen in roles(baseline) if baseline else ():
        before.setdefault(role, []).append(seen)
    smaller: dict[str, list[Seen]] = {}
    for role, _, seen in roles(small[0]) if small else ():
        smaller.setdefault(role, []).append(seen)
    for role, pid, seen in roles(run):
        peak = seen.hwm_kb / 1024
        line = f"    {f'{role} {pid}':34} peak {peak:7.1f} MiB"
        if baseline:
            line += f" ({peak / mib:5.2f}x the message)"
        line += f"  CPU {seen.ticks / TICK:6.2f} s"
        if baseline and (same := before.get(role)):
            growth = peak - same.pop(0).hwm_kb / 1024
            line += f"  growth over the tiny file's {growth:7.1f} MiB ({growth / mib:5.2f}x the message)"
        if small and (same := smaller.get(role)):
            extra = (size - small[1]) / MIB
            growth = peak - same.pop(0).hwm_kb / 1024
            line += f"  over the {small[1] / 1e6:.3g} MB file's {growth:7.1f} MiB ({growth / extra:5.2f}x the MiB beyond it)"
        print(line)


def commands(gui: bool, db: bool = True) -> list[tuple[str, list[str]]]:
    """(label, argv after `python -m foldscope`) of each command measured; {file}, {db} and {png} filled in per run."""
    out = [("inspect", ["inspect", "{file}", "--db", "{db}"] if db else ["inspect", "{file}"])]
    if gui:
        out.append(("gui screenshot", ["--screenshot", "{png}", "--db", "{db}", "{file}"]))
    return out


def holding_foldscope(copy: str) -> str:
    """The folder to put on PYTHONPATH for COPY: COPY itself when it holds foldscope, its parent when COPY is the package
    (a checkout named foldscope). Given the package itself, Python found no foldscope there and imported the installed
    one: the run compared this tree with itself."""
    path = Path(copy)
    if (path / "foldscope" / "core").is_dir():
        return str(path)
    if (path / "core").is_dir() and path.name == "foldscope":
        return str(path.parent)
    raise SystemExit(f"bench_huge: --before {copy}: no foldscope in it (give the folder holding it)")


def one(words: list[str], file: Path, scratch: Path, copy: str | None) -> Run:
    """One run of one command on file in a fresh library, under COPY's foldscope when given."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    places = {"{file}": str(file), "{db}": str(work / "library.db"), "{png}": str(work / "out.png")}
    env = {**os.environ, "FOLDSCOPE_DB": str(work / "library.db"), "QT_QPA_PLATFORM": "offscreen"}
    # Bytecode as a user's install has it, kept apart (compiling every module again cost each process 0.8 s of CPU)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    if copy:
        env["PYTHONPATH"] = copy + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else copy
    run = run_measured([sys.executable, "-m", "foldscope", *(places.get(w, w) for w in words)], env)
    shutil.rmtree(work, ignore_errors=True)
    return run


def huge_arguments(parser: argparse.ArgumentParser, kinds: str) -> None:
    """The options this bench and bench_gui_reopen share: the message's size, its kinds (default `kinds`), where its
    files are kept, and a copy to run in turn with."""
    parser.add_argument("--mb", type=float, default=50.0, help="the message's size in MB (default 50)")
    parser.add_argument("--kinds", default=kinds, help=f"comma-separated, of: {', '.join(KINDS)}")
    parser.add_argument("--dir", type=Path, help="keep the session files here and reuse them")
    parser.add_argument("--before", metavar="COPY", help="in turn with COPY (a folder holding foldscope) on PYTHONPATH")


def huge_setup(parser: argparse.ArgumentParser, args: argparse.Namespace, prefix: str) -> tuple[list[str], Path, Path, list]:
    """The kinds asked for (an unknown one refused by the parser), a scratch folder, the folder the files are kept in,
    and the variants run in turn ((label, COPY or None), "before" first when --before is given)."""
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if unknown := [k for k in kinds if k not in KINDS]:
        parser.error(f"--kinds: unknown {', '.join(unknown)}")
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    folder = args.dir or scratch
    folder.mkdir(parents=True, exist_ok=True)
    if args.before:
        args.before = holding_foldscope(args.before)
    variants = [("before", args.before), ("after", None)] if args.before else [("", None)]
    return kinds, scratch, folder, variants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    huge_arguments(parser, ",".join(KINDS))
    parser.add_argument("--gui", action="store_true", help="also the window's screenshot of each file")
    parser.add_argument("--runs", type=int, default=1, help="runs of each command on each file")
    parser.add_argument("--no-db", action="store_true", help="`inspect FILE` alone, not stored in a library")
    parser.add_argument("--first", action="store_true", help="the file opens on the huge line (no snapshot before it)")
    parser.add_argument(
        "--small-mb", type=float, default=2.0, help="the second baseline's message in MB, over the tokenizer's small input (default 2)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --before: pairs run for each kind")
    args = parser.parse_args(argv)
    kinds, scratch, folder, variants = huge_setup(parser, args, "bench_huge-")
    repeats = args.rounds if args.before else args.runs
    try:
        tiny, tiny_size = session_file(folder, "prose", 0.0001)
        small_file, small_size = session_file(folder, "prose", args.small_mb) if 0 < args.small_mb < args.mb else (None, 0)
        print(f"one huge message of {args.mb:g} MB, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        for label, words in commands(args.gui, db=not args.no_db):
            print(f"{label}: `foldscope {' '.join(words)}`", flush=True)
            baselines, smalls = {}, {}
            for name, copy in variants:
                one(words, tiny, scratch, copy)  # bytecode written, not measured
                baselines[name] = one(words, tiny, scratch, copy)
                report(f"tiny file {name}".strip(), baselines[name], tiny_size, None)
                if small_file is not None:
                    smalls[name] = (one(words, small_file, scratch, copy), small_size)
                    report(f"{args.small_mb:g} MB file {name}".strip(), smalls[name][0], small_size, baselines[name])
            for kind in kinds:
                file, size = session_file(folder, kind, args.mb, args.first)
                print(f" {kind}: {size / 1e6:.1f} MB ({size / MIB:.1f} MiB) in one message", flush=True)
                for k in range(repeats):
                    outputs = set()
                    for name, copy in variants:
                        run = one(words, file, scratch, copy)
                        outputs.add(run.output)
                        report(f"{name} run {k + 1}".strip(), run, size, baselines[name], smalls.get(name))
                    if args.before and label == "inspect":
                        print(f"  outputs {'the same' if len(outputs) == 1 else 'DIFFER'}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
