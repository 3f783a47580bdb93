"""The status line's cost per run, against a bare interpreter's start-up (issue 46's targets).

Builds a Claude Code file of 1,000 requests (tests.core.live_sessions), runs `foldscope statusline` on it as Claude
Code does (a fresh process, the JSON object on stdin, its state in a private cache folder): once cold, then after
each of STEPS appended lines (the median is the target: within 3x `python -c pass` and under 150 ms), first with no
warm reader (the engine loaded from the cache folder each run), then as installed (the first run's reader stays warm
for the next), then on the unchanged file; and once cold on a file of 10,000 messages (the target: under 3 s).
Prints each median, its ratio to the bare start-up and whether each target is met, wall time first, then the CPU time
(user + system) of the status line's own process beside the bare interpreter's (the reading is done by the reader it
forks, or by the warm reader: its wall time is in the run's, its CPU is not), and the load average when it ran (on a shared machine the
ratios are what to compare). The children run with their bytecode written, as an installed package has it
(PYTHONDONTWRITEBYTECODE is unset for them: compiling every module again would be most of a run).

    .venv/bin/python bench/bench_statusline.py [REQUESTS] [MESSAGES] [STEPS]   (default 1000 10000 9)
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.core.live_sessions (foldscope itself is installed)

from tests.core.live_sessions import append, assistant, rounds, user  # noqa: E402

STEPS = 9
SCRIPT = Path(sys.executable).parent / "foldscope"


CPU: list[tuple[str, float]] = []  # (what ran, user + system seconds of its process) for each run


def timed(argv: list[str], stdin: str = "", env: dict | None = None, what: str = "") -> tuple[float, str]:
    env = {**(env if env is not None else os.environ)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = child.communicate(stdin)
    took = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((what, usage.ru_utime + usage.ru_stime))
    if child.returncode != 0:
        raise SystemExit(f"{argv} exited {child.returncode}: {err}")
    return took, out


def cpu_of(what: str) -> list[float]:
    """The CPU seconds of each run named `what` (RUSAGE_CHILDREN grows by each waited child's own)."""
    runs, before = [], 0.0
    for name, total in CPU:
        if name == what:
            runs.append(total - before)
        before = total
    return runs


def statusline(path: Path, env: dict, what: str = "") -> tuple[float, str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "foldscope.app.main"]
    return timed([*command, "statusline", "--no-color"], json.dumps({"transcript_path": str(path)}), env, what)


READER: list[float] = []  # the warm reader's CPU seconds over each warm run (its update, read ahead or asked for)


def reader_pid(cache: str) -> int | None:
    """The warm reader serving the cache folder `cache` (Linux: found through /proc), or None."""
    want = f"FOLDSCOPE_CACHE={cache}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"statusline" in command and want in environ:
            return int(entry)
    return None


def cpu_of_pid(pid: int | None) -> float | None:
    """The process's CPU seconds so far (schedstat's nanoseconds on the CPU), or None."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9 if pid else None
    except (OSError, ValueError, IndexError):
        return None


def grown_runs(path: Path, env: dict, requests: int, start: int, what: str) -> list[float]:
    times = []
    pid = reader_pid(env["FOLDSCOPE_CACHE"]) if what == "warm" else None
    for k in range(STEPS):  # one new line per run: a user line, then the assistant's (a new request)
        before = cpu_of_pid(pid)
        n = requests + (start + k) // 2
        append(
            path,
            [
                user(n, f"question {n}: " + "word " * 40)
                if (start + k) % 2 == 0
                else assistant(n, f"answer {n}: " + "reply " * 60, 3_000 + 200 * n)
            ],
        )
        times.append(statusline(path, env, what)[0])
        after = cpu_of_pid(pid)
        if before is not None and after is not None:
            READER.append(after - before)
    return times


def main(requests: int, messages: int) -> None:
    load = os.getloadavg()
    timed([*([str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "foldscope.app.main"]), "--help"])  # bytecode written
    bare = statistics.median(timed([sys.executable, "-c", "pass"], what="bare")[0] for _ in range(STEPS))
    with tempfile.TemporaryDirectory() as tmp:
        # No warm reader first: each grown run loads the engine kept in the cache folder and reads the new line.
        env = {**os.environ, "FOLDSCOPE_CACHE": str(Path(tmp) / "cache"), "FOLDSCOPE_STATUSLINE_IDLE": "0"}
        path = Path(tmp) / "live.jsonl"
        append(path, rounds(0, requests))
        cold, line = statusline(path, env)
        grown = grown_runs(path, env, requests, 0, "grown")
        kept = statistics.median(statusline(path, env)[0] for _ in range(STEPS))
        # Then as installed: the first run's reader stays warm and answers the next runs.
        warm_env = {**env, "FOLDSCOPE_CACHE": str(Path(tmp) / "warm"), "FOLDSCOPE_STATUSLINE_IDLE": "5"}
        statusline(path, warm_env)
        warm = grown_runs(path, warm_env, requests, STEPS, "warm")
        big = Path(tmp) / "big.jsonl"
        append(big, rounds(0, messages // 2))
        first_big, _ = statusline(big, env)
        socket = Path(tmp) / "warm" / "statusline" / "reader.sock"
        deadline = time.monotonic() + 60
        while socket.exists() and time.monotonic() < deadline:  # the warm reader ends 5 s after its last run
            time.sleep(0.2)

    bare_cpu = statistics.median(cpu_of("bare"))

    def said(name: str, runs: list[float], what: str) -> str:
        median = statistics.median(runs)
        met = "met" if median <= 3 * bare and median < 0.150 else "NOT met"
        cpu = statistics.median(cpu_of(what))
        return (
            f"{requests:,} requests, after one new line, {name}: median {median * 1000:.0f} ms = "
            f"{median / bare:.1f}x bare (target 3x and 150 ms: {met}); its process's CPU {cpu * 1000:.0f} ms = "
            f"{cpu / bare_cpu:.1f}x bare's; runs {', '.join(f'{t * 1000:.0f}' for t in runs)}"
        )

    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cpus")
    print(f"bare `python -c pass`: {bare * 1000:.0f} ms, CPU {bare_cpu * 1000:.0f} ms (median of {STEPS})")
    print(f"{requests:,} requests, cold: {cold * 1000:.0f} ms")
    print(said("engine loaded from the cache folder", grown, "grown"))
    print(said("warm reader", warm, "warm"))
    if READER:
        print(
            f"  the warm reader's CPU a run (its update, read ahead as the line is written): median {statistics.median(READER) * 1000:.0f} ms"
        )
    print(
        f"{requests:,} requests, file unchanged: median {kept * 1000:.0f} ms = {kept / bare:.1f}x bare "
        f"({'within' if kept <= 3 * bare and kept < 0.150 else 'NOT within'} 3x and 150 ms)"
    )
    print(f"{messages:,} messages, first run: {first_big:.2f} s (target 3 s: {'met' if first_big < 3 else 'NOT met'})")
    print(f"line: {line.strip()}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    STEPS = args[2] if len(args) > 2 else STEPS  # runs of each kind (tests/test_benches.py takes 2)
    main(*(args[:2] + [1000, 10000][len(args[:2]) :]))
