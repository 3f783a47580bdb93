"""One huge message opened in the window and reopened from the library: each process's peak, and its growth over a tiny file's.

Run: .venv/bin/python bench/bench_gui_reopen.py [--mb 50] [--kinds prose,code,lowercase] [--dir DIR] [--before COPY]
For each kind (bench_huge's session files: a Claude Code session whose one user message is N MB of that kind of text)
`foldscope --screenshot OUT.png --db LIB FILE` (QT_QPA_PLATFORM=offscreen) is run three times on one new library: the
first open (read, counted, imported, its snapshot kept), then twice reopened from the snapshot (nothing read or
counted again). Every process of each run is polled as bench_huge polls it (VmHWM, utime+stime from /proc); printed per
run: the wall, the CPU of all, and each process's peak in MiB, as a multiple of the message and as its growth over the
same run (first or reopened) on a tiny file, measured in the same run of this script (issue 48: under 3x the message).
--before COPY: the same three runs with COPY (a folder holding foldscope, e.g. a `git archive` of main before a change)
on PYTHONPATH, in turn with this checkout for each kind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_huge import MIB, Run, huge_arguments, huge_setup, report, run_measured, session_file  # noqa: E402

STEPS = ("first open", "reopened", "reopened again")


def opened_three_times(file: Path, scratch: Path, copy: str | None) -> list[Run]:
    """The window's screenshot of file run three times on one new library, under COPY's foldscope when given."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as an install has it, kept apart
    if copy:
        env["PYTHONPATH"] = copy + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else copy
    argv = [sys.executable, "-m", "foldscope", "--screenshot", str(work / "out.png"), "--db", str(work / "library.db"), str(file)]
    runs = [run_measured(argv, env) for _ in STEPS]
    shutil.rmtree(work, ignore_errors=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    huge_arguments(parser, "prose,code,lowercase")
    args = parser.parse_args(argv)
    kinds, scratch, folder, variants = huge_setup(parser, args, "bench_gui_reopen-")
    try:
        print(f"one huge message of {args.mb:g} MB in the window, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        tiny, tiny_size = session_file(folder, "prose", 0.0001)
        baselines = {}
        for name, copy in variants:
            opened_three_times(tiny, scratch, copy)  # bytecode written, not measured
            baselines[name] = opened_three_times(tiny, scratch, copy)
            for step, run in zip(STEPS, baselines[name]):
                report(f"tiny file {step} {name}".strip(), run, tiny_size, None)
        for kind in kinds:
            file, size = session_file(folder, kind, args.mb)
            print(f" {kind}: {size / 1e6:.1f} MB ({size / MIB:.1f} MiB) in one message", flush=True)
            for name, copy in variants:
                for step, run, baseline in zip(STEPS, opened_three_times(file, scratch, copy), baselines[name]):
                    report(f"{step} {name}".strip(), run, size, baseline)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
