"""Passages benchmark (core.request.passages): a trace's calibration with long texts counted by passages against the
same calibration counting every text whole, in one process, alternated, least of --repeat each.

Run: .venv/bin/python bench/bench_passages.py [--messages 10000] [--repeat 3] [FILE ...]
Shapes: bench_scale's Claude Code file and growing lionagi Branch at --messages, bench_count's generated view (every
file read once: nothing to find again), and any FILE given (the dev corpus, say). For each it prints the seconds
with and without passages, their ratio (under 1: passages save time), the characters the counter tokenised, and the
share of the long texts' characters found in the memo. Counting ahead is off (FOLDSCOPE_COUNTING=local), so the times are
one core's work and the two runs count exactly the same texts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ["FOLDSCOPE_COUNTING"] = "local"

from foldscope.core.formats import load_session  # noqa: E402
from foldscope.core.model import collector  # noqa: E402
from foldscope.core.model.launch import session_policy  # noqa: E402
from foldscope.core.model.session import FullRecord, Request, Session, Usage  # noqa: E402
from foldscope.core.request import passages  # noqa: E402
from foldscope.core.request.count import Counter  # noqa: E402
from foldscope.core.request.trace_measure import measure_trace  # noqa: E402

PASSAGES_FROM = passages.PASSAGES_FROM  # the module's own, restored for each run with passages on


def generated_session(tokens: int) -> Session:
    """bench_count's generated view as a session, a request after each answer: file reads never read again."""
    from bench_count import generated_view

    msgs = generated_view(tokens)
    trace: list[Request] = []
    for k, m in enumerate(msgs):
        if m.kind == "assistant":
            trace.append(Request(len(trace), tuple(x.id for x in msgs[: k + 1]), m.id, Usage(input=1000)))
    return Session(FullRecord(msgs), [m.id for m in msgs], trace=trace)


def calibrate(session: Session, on: bool) -> tuple[float, Counter]:
    """One calibration (a trace measured without prefix or predictions), passages on or off: seconds and counter."""
    passages.PASSAGES_FROM = PASSAGES_FROM if on else 1 << 62
    counter = Counter()
    policy = session_policy(session)
    start = time.perf_counter()
    with collector.spared():
        measure_trace(session, policy, counter=counter, prefix=False, predict=False)
    return time.perf_counter() - start, counter


def row(name: str, session: Session, repeat: int) -> None:
    best = {True: float("inf"), False: float("inf")}
    counters: dict[bool, Counter] = {}
    for _ in range(repeat):
        for on in (False, True):
            seconds, counters[on] = calibrate(session, on)
            best[on] = min(best[on], seconds)
    tokenised = counters[True].tokenised_chars
    found = counters[True]._passages.found_chars
    print(
        f"{name:<34} {len(session.trace):>7,} {best[False]:>8.2f} {best[True]:>8.2f} {best[True] / best[False]:>6.2f}"
        f" {tokenised / 1e6:>10.1f} {found / max(tokenised, 1):>7.0%}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="session files to measure too")
    ap.add_argument("--messages", type=int, default=10_000, help="size of the generated Claude Code file and Branch")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    collector.tune()
    from bench_scale import branch, claude_code

    print(f"{'session':<34} {'requests':>7} {'whole s':>8} {'passages':>8} {'ratio':>6} {'chars (M)':>10} {'found':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, suffix in (("claude code", claude_code, ".jsonl"), ("lionagi branch", branch, ".json")):
            path = Path(tmp) / f"{name.replace(' ', '_')}{suffix}"
            make(path, args.messages)
            row(f"{name}, {args.messages:,} msgs", load_session(path), args.repeat)
    row("generated view, read once, 2M tok", generated_session(2_000_000), args.repeat)
    for file in args.files:
        row(Path(file).name[:34], load_session(file), args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
