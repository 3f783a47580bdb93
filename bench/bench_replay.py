"""Benchmark: replaying a 1,000-request session under each strategy, against one full count of its messages.

Run: .venv/bin/python bench/bench_replay.py [--requests 1000] [--ceiling 100000] [--repeat 1]

The session is the demo generator's coding session grown to the wanted number of requests (its
early tool_io fold kept, so `recorded` differs from `none`). The baseline is one cold count of every
message of its full record (`foldscope.core.request.count.Counter().count`, as one request). Each strategy is then
replayed on its own, with a fresh measure (cold counter), caching on (marks placed as ADR-0127 says),
under the ceiling given. DESIGN.md's target: a replay costs under 3x the full count.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.formats.demo import generate  # noqa: E402
from foldscope.core.model.policy import Policy  # noqa: E402
from foldscope.core.replay.lab import replay  # noqa: E402
from foldscope.core.replay.strategies import STRATEGIES  # noqa: E402
from foldscope.core.request.count import Counter  # noqa: E402
from foldscope.core.request.measure import Measure  # noqa: E402
from foldscope.core.request.trace import session_tools  # noqa: E402

TARGET = 3.0


def full_count(session) -> tuple[float, int]:
    """One cold count of the whole full record as one request: the baseline."""
    started = time.perf_counter()
    tokens = Counter().count(list(session.record), record=session.record, tools=session_tools(session))
    return time.perf_counter() - started, tokens


def one_replay(session, strategy: str, policy: Policy) -> tuple[float, dict]:
    started = time.perf_counter()
    result = replay(session, [strategy], Measure(session, policy))
    return time.perf_counter() - started, result["totals"][0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests in the generated session")
    parser.add_argument("--ceiling", type=int, default=100_000, help="max_input_tokens for the replay")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure; the best is kept")
    parser.add_argument("--strategy", action="append", choices=list(STRATEGIES), help="default: all")
    args = parser.parse_args(argv)

    session = generate(rounds=max(args.requests - 1, 3))
    base = [full_count(session) for _ in range(args.repeat)]
    count_s, tokens = min(t for t, _ in base), base[0][1]
    print(f"session: {len(session.trace):,} requests, {len(session.record):,} messages, full record {tokens:,} o200k tokens")
    print(f"one full count of its messages (cold): {count_s * 1000:,.0f} ms\n")
    settings = Policy(max_input_tokens=args.ceiling, prompt_caching=True)
    print(f"replay under ceiling {args.ceiling:,}, caching on")
    print(f"{'strategy':<12}{'time':>10}{'ratio':>9}  {'requests':>9}{'peak':>12}  target < {TARGET:g}x")
    worst = 0.0
    for strategy in args.strategy or list(STRATEGIES):
        runs = [one_replay(session, strategy, settings) for _ in range(args.repeat)]
        seconds = min(t for t, _ in runs)
        totals = runs[0][1]
        ratio = seconds / count_s
        worst = max(worst, ratio)
        verdict = "met" if ratio < TARGET else "missed"
        print(f"{strategy:<12}{seconds * 1000:>8,.0f} ms{ratio:>8.2f}x  {totals['requests']:>9,}{totals['peak']:>12,}  {verdict}")
    if args.repeat > 1:
        print(f"\n(best of {args.repeat}; median full count {statistics.median(t for t, _ in base) * 1000:,.0f} ms)")
    return 0 if worst < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
