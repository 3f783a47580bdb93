"""Accuracy benchmark: our sizes against what the provider reported, over the dev corpus, per format.

Run: .venv/bin/python bench/bench_accuracy.py [CORPUS_DIR]
Prints, per format, the median and p90 of |predicted/reported - 1| (predicted input, core.request.predict) and of
|estimate/reported - 1| (the ADR estimate, count times scale) on requests that have an anchor (an earlier report
in the same stretch), the trivial baseline (the previous request's reported/counted ratio times this count) on the
same requests, the first requests of a stretch apart, and the recorded replay's cost against the bill (the reported
usage priced per request). Sessions whose usage is hand-written (core.readout.accuracy.provider_usage) are left out.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.formats import load_session  # noqa: E402
from foldscope.core.model.cost import lookup_prices  # noqa: E402
from foldscope.core.model.session import ReadError, Session  # noqa: E402
from foldscope.core.readout.accuracy import Accuracy, accuracy, provider_usage  # noqa: E402
from foldscope.core.replay.lab import replay_runs  # noqa: E402
from foldscope.core.request.measure import Measure  # noqa: E402
from foldscope.core.request.trace import measure_trace  # noqa: E402

FORMATS = ("claude_code", "codex", "pi")


def sessions(root: Path) -> list[Session]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        try:
            out.append(load_session(str(path)))
        except ReadError:
            continue
    return out


def pct(value: float | None) -> str:
    return "    -" if value is None else f"{value * 100:5.2f}%"


def bill(session: Session) -> float | None:
    total = 0.0
    for r in session.trace:
        if r.usage is None:
            continue
        prices = lookup_prices(r.model or session.model)
        if prices is None:
            return None
        u = r.usage
        total += prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    return total


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent.parent / "shared/corpus/dev"
    pools: dict[str, Accuracy] = {}
    costs: dict[str, list[float]] = {}
    for session in sessions(root):
        if session.format not in FORMATS or not any(r.usage for r in session.trace):
            continue
        report = measure_trace(session, prefix=False)
        if not provider_usage(session, report):
            continue
        pools.setdefault(session.format, Accuracy()).extend(accuracy(session, report))
        run = replay_runs(session, ["recorded"], Measure(session)).runs[0].totals()
        billed = bill(session)
        entry = costs.setdefault(session.format, [0.0, 0.0, 0.0])
        if run["cost_usd"] is not None and billed is not None:
            entry[0] += run["cost_usd"]
            entry[1] += billed
            entry[2] += run["modelled_cost_usd"] or 0.0
    print(f"{'format':<12} {'n':>4}  {'predicted p50':>13} {'p90':>7}  {'trivial p90':>11}  {'estimate p50':>12} {'p90':>7}"
          f"  {'first n':>7} {'pred p50':>8} {'est p50':>8}")
    for fmt in FORMATS:
        a = pools.get(fmt)
        if a is None:
            continue
        print(f"{fmt:<12} {len(a.predicted.values):>4}  {pct(a.predicted.median):>13} {pct(a.predicted.p90):>7}  "
              f"{pct(a.trivial.p90):>11}  {pct(a.estimate.median):>12} {pct(a.estimate.p90):>7}  "
              f"{len(a.first_predicted.values):>7} {pct(a.first_predicted.median):>8} {pct(a.first_estimate.median):>8}")
    print()
    print(f"{'format':<12} {'recorded cost':>14} {'the bill':>12} {'modelled':>12}")
    for fmt, (recorded, billed, modelled) in costs.items():
        print(f"{fmt:<12} {recorded:>14.4f} {billed:>12.4f} {modelled:>12.4f}")


if __name__ == "__main__":
    main()
