"""Where the time goes (issue 48): cProfile of one replay of three strategies and one GUI load on a session that
repeats nothing, the top functions by their own CPU time.

    .venv/bin/python bench/profile_scale.py [--messages 20000] [--repeat 0] [--top 10] [--file F.jsonl]

The session is bench/fresh_session.py's (Claude Code shaped, `--repeat` of its long texts earlier ones again). The
replay is `foldscope replay FILE --strategy adr,band,compaction` in this process, with no helper process
(FOLDSCOPE_COUNTING=local: one core's work, all of it seen by the profiler); the GUI load is what bench_scale's `gui worker`
times (core.readout.opening.open_document into a new library, then document_cache, as app/loading.py's worker).
The profiler's clock is CPU time (time.process_time), so the host's other work does not show; its own overhead
weighs on Python calls, so read the shares, and the unprofiled CPU seconds printed beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
os.environ["FOLDSCOPE_COUNTING"] = "local"


def replay(path: str, folder: str) -> None:
    from foldscope.core.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        main(["replay", path, "--strategy", "adr,band,compaction"])


def gui_load(path: str, folder: str) -> None:
    from foldscope.core.readout.cost_facts import document_cache
    from foldscope.core.readout.opening import open_document

    db = os.path.join(folder, "lib.db")
    for old in Path(folder).glob("lib.db*"):
        old.unlink()
    document_cache(open_document(path, db))


def top(profile: cProfile.Profile, n: int) -> str:
    """The n functions with the most CPU time of their own, as a markdown table (with their cumulative time)."""
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:n]  # type: ignore[attr-defined]
    out = ["| function | calls | own s | own share | with callees s |", "| --- | ---: | ---: | ---: | ---: |"]
    for (file, line, name), (_, calls, own, cumulative, _) in rows:
        where = f"{Path(file).relative_to(ROOT)}:{line}" if file.startswith(str(ROOT)) else (file if file != "~" else "")
        out.append(f"| `{name}` {where} | {calls:,} | {own:.2f} | {own / total:.0%} | {cumulative:.2f} |")
    return "\n".join(out) + f"\n\nprofiled CPU in all: {total:.2f} s"


RUNS = {"replay of adr, band and compaction": replay, "GUI load (gui worker)": gui_load}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=float, default=0.0)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--file", type=Path, help="profile this session instead of generating one")
    parser.add_argument("--plain", help=argparse.SUPPRESS)  # run this one unprofiled and print its CPU seconds
    args = parser.parse_args(argv)
    from foldscope.core.model import collector
    from foldscope.core.request import tokens

    collector.tune()  # the collector as the CLI and the app set it
    tokens.encoding()  # the encoder is built before the clocks start: the start-up's figure is its own
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            from fresh_session import generate

            path = Path(tmp) / "session.jsonl"
            stats = generate(path, args.messages, args.repeat)
            print(
                f"session: {args.messages:,} messages asked, {path.stat().st_size / 1e6:.1f} MB, {stats.share:.0%} of long texts' characters repeated"
            )
        for name, run in RUNS.items():
            if args.plain:
                if name == args.plain:
                    start = time.process_time()
                    run(str(path), tmp)
                    print(time.process_time() - start)
                continue
            # the same run unprofiled, in an interpreter of its own (nothing counted by the profiled run reused)
            child = [sys.executable, __file__, "--plain", name, "--file", str(path)]
            plain = float(subprocess.run(child, capture_output=True, text=True, check=True).stdout.split()[-1])
            profile = cProfile.Profile(time.process_time)
            profile.enable()
            run(str(path), tmp)
            profile.disable()
            print(f"\n### {name}: {plain:.2f} s CPU unprofiled (load average {os.getloadavg()[0]:.2f})\n")
            print(top(profile, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
