"""Benchmark: the fold on a generated 1,000,000-token view, against one full count of that view.

Run: .venv/bin/python bench/bench_fold.py [--tokens 1000000] [--repeat 3] [--result-max N] [--caching]

The view is the demo generator's coding session grown to the wanted size (no early fold), its
last round undelivered, under a ceiling that puts it just past the line. Counting the view once
warms the incremental counter, as the request before the fold would have; the fold's own cost is
then what it measures: building candidate views, counting what changed, writing notes and copies.
The target is under 1 s on this 2-core machine (lionagi 0.36.0's fold takes 3.3 s on such a view,
recounting the whole request for every estimate). With `--result-max` or `--caching` the fold runs
under that policy (ADR-0130 Amendments 3 and 4): every count compiles the bound and
the marks, the first round is decided by the request before the fold, and the clip takes
Amendment 3's arithmetic.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.fold.delivery import DELIVERED_KEY  # noqa: E402
from foldscope.core.fold.fold import Fold  # noqa: E402
from foldscope.core.formats.demo import generate  # noqa: E402
from foldscope.core.model.policy import Policy  # noqa: E402
from foldscope.core.model.session import Session  # noqa: E402
from foldscope.core.request.count import Counter  # noqa: E402
from foldscope.core.request.first_round import decide_first_round, request_options  # noqa: E402
from foldscope.core.request.measure import Measure  # noqa: E402
from foldscope.core.request.tokens import encoding  # noqa: E402


def big_session(tokens: int, undelivered: float, seed: int = 11) -> Session:
    """A demo session of about `tokens` tokens; its last round, or its newest `undelivered` share, is undelivered."""
    rounds = max(12, tokens // 2_750)
    session = generate(seed=seed, rounds=rounds, fold=False)
    last_answer = max(i for i, m in enumerate(session.record) if m.kind == "assistant")
    cut = max(i for i in range(last_answer) if session.record[i].kind == "assistant") + 1
    if undelivered:
        cut = min(cut, int(len(session.record) * (1 - undelivered)))
    session.branch_metadata[DELIVERED_KEY] = [session.record[i].id for i in range(cut)]
    return session


def one_fold(tokens: int, undelivered: float, bound: int | None = None, caching: bool = False) -> dict[str, float]:
    session = big_session(tokens, undelivered)
    counter = Counter()
    policy = Policy(tool_result_max_chars=bound, prompt_caching=caching or None) if bound or caching else None
    if policy is None:
        count = lambda messages: counter.count(list(messages), record=session.record)  # noqa: E731
    else:
        count = lambda messages: counter.count(list(messages), **request_options(session, policy))  # noqa: E731
    started = time.perf_counter()
    counted = count(session.view_messages())
    full_count = time.perf_counter() - started
    ceiling = int(counted / 0.85)
    if policy is not None:
        policy = Policy(max_input_tokens=ceiling, tool_result_max_chars=bound, prompt_caching=caching or None)
        decide_first_round(session, policy, counter)  # the request before the fold carried the round whole
        count(session.view_messages())  # that request's own count, with the decision it made
    fold = Fold(session, Measure(session, (policy or Policy()).with_values(max_input_tokens=ceiling)), count=count)
    started = time.perf_counter()
    run = fold.run()
    fold_time = time.perf_counter() - started
    cold = Counter()
    started = time.perf_counter()
    cold.count(session.view_messages(), record=session.record)
    after_count = time.perf_counter() - started
    return {
        "view_tokens": counted,
        "messages": len(session.record),
        "full_count_s": full_count,
        "fold_s": fold_time,
        "passes": len(run.records),
        "estimate_after": run.estimate_after,
        "target_reached": run.target_reached,
        "count_after_s": after_count,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--undelivered", type=float, default=0.0, help="share of the newest messages not yet delivered (forces clip and all passes)"
    )
    parser.add_argument("--result-max", type=int, help="tool_result_max_chars: fold under the result bound")
    parser.add_argument("--caching", action="store_true", help="prompt_caching: the first round, notes and reset")
    args = parser.parse_args(argv)
    encoding()  # load the vocabulary once, outside every timing
    results = [one_fold(args.tokens, args.undelivered, args.result_max, args.caching) for _ in range(args.repeat)]
    fold_s = statistics.median(r["fold_s"] for r in results)
    count_s = statistics.median(r["full_count_s"] for r in results)
    first = results[0]
    print(f"view: {first['view_tokens']:,} tokens, {first['messages']:,} messages")
    print(f"one full count (cold counter): {count_s:.3f} s")
    print(f"fold (warm counter):           {fold_s:.3f} s  ({fold_s / count_s:.2f}x one full count)")
    print(f"passes: {first['passes']}, estimate after: {first['estimate_after']:,}, target reached: {first['target_reached']}")
    print(f"target: under 1 s -> {'met' if fold_s < 1.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
