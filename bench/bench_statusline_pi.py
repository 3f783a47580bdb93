"""A turn's CPU for foldscope's line in pi's footer (resources/pi/foldscope-status.js), on a pi session file.

For each of RUNS rounds, in fresh cache folders, the file less its last line is shown once, the last line is appended,
and the line is shown again, two ways: with `--file` (no warm reader: the run measures what the file gained from the
kept engine) and as the extension does it, the session file as Claude Code's status line object on stdin (the first run
leaves a warm reader, which reads the new line as it is written). Prints the medians of the client's CPU (user +
system, from its rusage), the warm reader's CPU for that line (from /proc/PID/stat, before and after), a bare
`python -c pass` in the same run, and the load average. CPU, not wall: the machine is shared.

    .venv/bin/python bench/bench_statusline_pi.py [FILE] [RUNS]   (default the dev corpus's pi-mono_large-session, 5)
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = ROOT / ".." / "shared" / "corpus" / "dev" / "pi" / "pi-mono_large-session.jsonl"
FOLDSCOPE = Path(sys.executable).with_name("foldscope")
TICK = os.sysconf("SC_CLK_TCK")


def client_cpu(argv: list[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    """One run's CPU in ms (user + system), from the children's rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def readers(cache: str) -> dict[int, float]:
    """The warm readers of this cache folder (they carry its FOLDSCOPE_CACHE) and their CPU so far in ms."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"FOLDSCOPE_CACHE={cache}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                found[int(pid)] = (int(fields[11]) + int(fields[12])) * 1000 / TICK
        except OSError:
            pass
    return found


def one_round(lines: list[bytes], out: dict[str, list[float]]) -> None:
    folder = tempfile.mkdtemp()
    try:
        session = os.path.join(folder, "session.jsonl")
        out["bare"].append(client_cpu([sys.executable, "-c", "pass"], dict(os.environ)))
        env = dict(os.environ, FOLDSCOPE_CACHE=os.path.join(folder, "file"), FOLDSCOPE_STATUSLINE_IDLE="0")
        Path(session).write_bytes(b"".join(lines[:-1]))
        client_cpu([str(FOLDSCOPE), "statusline", "--file", session, "--no-color"], env)
        with open(session, "ab") as handle:
            handle.write(lines[-1])
        out["file"].append(client_cpu([str(FOLDSCOPE), "statusline", "--file", session, "--no-color"], env))
        cache = os.path.join(folder, "warm")
        env = dict(os.environ, FOLDSCOPE_CACHE=cache, FOLDSCOPE_STATUSLINE_IDLE="60")
        stdin = json.dumps({"transcript_path": session}).encode()
        Path(session).write_bytes(b"".join(lines[:-1]))
        client_cpu([str(FOLDSCOPE), "statusline", "--no-color"], env, stdin)
        time.sleep(1)  # the first run's reader settles
        before = readers(cache)
        with open(session, "ab") as handle:
            handle.write(lines[-1])
        time.sleep(2)  # pi's turn goes on; the reader reads the line meanwhile
        out["client"].append(client_cpu([str(FOLDSCOPE), "statusline", "--no-color"], env, stdin))
        after = readers(cache)
        out["reader"].append(sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items()))
        for pid in after:  # this bench's own readers, by their id
            os.kill(pid, signal.SIGTERM)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else FILE
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    lines = source.read_bytes().splitlines(keepends=True)
    out: dict[str, list[float]] = {"bare": [], "file": [], "client": [], "reader": []}
    load = os.getloadavg()[0]
    for _ in range(runs):
        one_round(lines, out)
    m = {key: statistics.median(values) for key, values in out.items()}
    print(f"{source.name}: {len(lines):,} lines, medians of {runs}, load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"bare python -c pass: {m['bare']:.0f} ms CPU")
    print(f"after one new line, --file (no warm reader): {m['file']:.0f} ms = {m['file'] / m['bare']:.1f}x bare")
    print(
        f"after one new line, the extension's way (stdin object): client {m['client']:.0f} ms = {m['client'] / m['bare']:.1f}x bare, warm reader {m['reader']:.0f} ms"
    )


if __name__ == "__main__":
    main()
