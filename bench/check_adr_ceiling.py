"""Over every dev corpus session, at ceilings of 60,000 and 150,000: is any adr request over its ceiling while
its floor view is not? Prints per session the adr peak, the requests over, the refused and their floor views.

    .venv/bin/python bench/check_adr_ceiling.py [--caching] [CEILING ...]

Exit status 1 when some adr request is over the ceiling with a floor view under it (the fold could have
brought it under), else 0. docs/testing.md records the last run.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # run with the project's .venv, where foldscope is installed


def main(argv: list[str]) -> int:
    from foldscope.core.formats import load_session
    from foldscope.core.model.policy import Policy
    from foldscope.core.model.session import ReadError
    from foldscope.core.replay.lab import run_strategy
    from foldscope.core.request.measure import Measure

    caching = "--caching" in argv
    ceilings = [int(a) for a in argv if a.isdigit()] or [60_000, 150_000]
    corpus = ROOT.parent / "shared" / "corpus" / "dev"
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and not p.name.startswith(".") and "tmp-private" not in p.parts)
    bad = 0
    for ceiling in ceilings:
        print(f"ceiling {ceiling:,}{' with caching' if caching else ''}")
        for path in files:
            try:
                session = load_session(path)
            except ReadError:
                continue  # not a session (a run manifest beside its Branch)
            policy = Policy(max_input_tokens=ceiling, prompt_caching=True if caching else None)
            rows = run_strategy(session, "adr", Measure(session, policy)).rows
            over = [r for r in rows if r.estimate >= ceiling]
            wrong = [r for r in over if not r.refused or r.floor_estimate is None or r.floor_estimate < ceiling]
            bad += len(wrong)
            floors = ", ".join(f"#{r.request} floor {r.floor_estimate:,}" for r in over if r.floor_estimate is not None)
            print(
                f"  {path.relative_to(corpus)}: {len(rows)} requests, peak {max((r.estimate for r in rows), default=0):,}, "
                f"over {len(over)}, refused {sum(r.refused for r in rows)}{' (' + floors + ')' if floors else ''}"
                f"{'  <-- over with a floor under the ceiling' if wrong else ''}"
            )
    print(f"{bad} adr requests over the ceiling whose floor view is under it")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
