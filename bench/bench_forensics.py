"""Benchmark: `cache` and `compactions` on a 1,000-request session, against one full count of its messages.

Run: .venv/bin/python bench/bench_forensics.py [--requests 1000] [--repeat 1]

The session is the demo generator's coding session grown to the wanted number of requests (its usage
reported per request, its early tool_io fold kept, so the compaction report has a fold to explain). The
baseline is one cold count of every message of its full record as one request, as bench_replay.py takes
it. `cache` is core.forensics.cache_report (one incremental count of every request, its divergence, the
causes and their prices); `compactions` is core.forensics.compaction_report built on its own (its own
cache report, then each fold's dropped span, literals, refetches and payback). Each runs cold (fresh
counter). The issue's target: each under 2x the full count.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.forensics.cache_report import cache_report  # noqa: E402
from foldscope.core.forensics.compactions import compaction_report  # noqa: E402
from foldscope.core.formats.demo import generate  # noqa: E402
from foldscope.core.request.count import Counter  # noqa: E402
from foldscope.core.request.trace import session_tools  # noqa: E402

TARGET = 2.0


def timed(fn):
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests in the generated session")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure; the best is kept")
    args = parser.parse_args(argv)

    session = generate(rounds=max(args.requests - 1, 3))
    base = [
        timed(lambda: Counter().count(list(session.record), record=session.record, tools=session_tools(session)))
        for _ in range(args.repeat)
    ]
    count_s, tokens = min(t for t, _ in base), base[0][1]
    print(f"session: {len(session.trace):,} requests, {len(session.record):,} messages, full record {tokens:,} o200k tokens")
    print(f"one full count of its messages (cold): {count_s * 1000:,.0f} ms\n")
    cache = [timed(lambda: cache_report(session)) for _ in range(args.repeat)]
    comp = [timed(lambda: compaction_report(session)) for _ in range(args.repeat)]
    cache_s, report = min(t for t, _ in cache), cache[0][1]
    comp_s, compactions = min(t for t, _ in comp), comp[0][1]
    totals = report.totals()
    written = sum(r.usage.cache_write for r in session.trace if r.usage)
    assert totals["cache_write"] == written, "the causes must sum to the reported writes"
    worst = 0.0
    print(f"{'command':<13}{'time':>10}{'ratio':>9}  target < {TARGET:g}x")
    for name, seconds in (("cache", cache_s), ("compactions", comp_s)):
        ratio = seconds / count_s
        worst = max(worst, ratio)
        print(f"{name:<13}{seconds * 1000:>8,.0f} ms{ratio:>8.2f}x  {'met' if ratio < TARGET else 'missed'}")
    causes = ", ".join(f"{k} {v['tokens']:,}" for k, v in totals["by_cause"].items() if v["tokens"])
    print(f"\ncache writes {written:,} tokens: {causes}")
    print(f"compactions and folds explained: {len(compactions.compactions)}")
    return 0 if worst < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
