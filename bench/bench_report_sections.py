"""The report's own work beside the count, an older checkout's against this one's, alternated by CPU (issue 48).

`report` does four things a request or a message at a time that `requests` does not: it hears each request's bar as
the trace is counted (core.readout.report_bars.RequestBars.hear), draws the every-request table's rows and writes the
conversation's segments (core.readout.report_transcript), the two in forked children that fall behind on a busy
machine, the parent making the rest, and makes the cost sections (core.readout.report_cost: the cache report's
attribution and prices, the compaction report's own work, the literal checks collected as made). This reads FILE and
gathers the report once in a process of each tree (`git archive` of a commit unpacked into DIR/foldscope: pass
DIR/foldscope as --before), then times each step alone by CPU
(time.process_time, the least of --inner): the bars heard again from the measurements the count made, every row,
every segment, the cost sections. The processes alternate, --rounds of each; the rows, segments and cost sections of
both must be the same text, or it stops. Prints each round, the least of each step and the ratio this / before.

    .venv/bin/python bench/bench_report_sections.py FILE --before DIR/foldscope [--rounds 2] [--inner 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

STEPS = ("hear", "rows", "segments", "cost")


def one(file: str, inner: int) -> dict:
    """This process's tree (whichever foldscope is imported): each step's least CPU and its output's digest."""
    import gc

    # As `report` runs (core.model.collector.spared): with the collector on, a full collection walking the session's
    # millions of objects fell inside one step or another by how many objects each tree made, not by its work.
    gc.disable()
    from foldscope.core.cli.main import build_parser
    from foldscope.core.cli.options import measure_for, policy_choice, read_session
    from foldscope.core.readout import report, report_bars, report_cost, report_transcript

    session = read_session(file)
    measure = measure_for(session, policy_choice(build_parser().parse_args(["report", file, "-o", os.devnull])), threads=None)
    heard: list = []
    hear = report_bars.RequestBars.hear

    def kept(self, m) -> None:
        heard.append(m)
        hear(self, m)

    from foldscope.core.forensics.literals_ahead import LiteralChecks

    collect, collected = LiteralChecks.collect, []

    def keeping(self, keys=None):  # the checks as the report collected them, for the cost step below
        got = collect(self, keys)
        collected.append(got)
        return got

    report_bars.RequestBars.hear = kept  # type: ignore[method-assign]
    LiteralChecks.collect = keeping  # type: ignore[method-assign]
    try:
        data = report.gather(session, measure=measure)
    finally:
        report_bars.RequestBars.hear = hear  # type: ignore[method-assign]
        LiteralChecks.collect = collect  # type: ignore[method-assign]
    window = data.composition.window if data.composition else None
    largest = getattr(report, "largest_of", None) or report.largest_part  # type: ignore[attr-defined]
    segments = report_transcript.conversation_segments(session)

    def bars() -> str:
        again = report_bars.RequestBars(measure)
        for m in heard:
            again.hear(m)
        assert [tuple(f) for f in again._figures] == [tuple(f) for f in data.bars._figures], "the bars heard again differ"
        return ""

    def rows() -> str:
        jobs = report_transcript.every_request_jobs(measure, window, report.mini_bar, largest, data.bars, data.head)
        return "".join(job() for job in jobs)

    def texts() -> str:
        view = set(session.view)
        return "".join(report_transcript.segment_text(session, view, a, b) for a, b, _ in segments)

    # The cost sections as the parent makes them once the checks are in (the checks themselves: bench_literals): the
    # cache report's attribution and prices, the compaction report's own work (what left, fetched again, payback).
    checked = next((c for c in collected if c is not None), None)

    class Collected:  # the checks made, as a child that made every one gives them
        spans, keys = getattr(data.literals, "spans", []), getattr(data.literals, "keys", [])

        def of(self, keys):  # the checks of these compactions, collected later (a newer tree's compaction report)
            return self

        def collect(self, keys=None):
            return checked

    data.literals = Collected() if checked is not None else None

    def cost() -> str:
        text = "".join(s.title + s.body for s in report_cost.cost_sections(data))
        assert "<p>Not available" not in text, "a cost section was not made: " + text[:300]
        return text

    out: dict = {}
    for name, step in zip(STEPS, (bars, rows, texts, cost)):
        best = None
        for _ in range(inner):
            start = time.process_time()
            made = step()
            took = time.process_time() - start
            best = took if best is None else min(best, took)
        out[name] = best
        out[name + "_sha"] = hashlib.sha256(made.encode("utf-8", "surrogatepass")).hexdigest()
    out["load"] = os.getloadavg()[0]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--before", type=Path, help="an older checkout's foldscope folder (a git archive)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: this tree's figures as JSON
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.file, args.inner)))
        return 0
    if args.before is None:
        ap.error("--before DIR/foldscope is needed")
    here = Path(__file__).resolve()
    trees = {"before": str(args.before.resolve().parent), "this": ""}
    got: dict[str, list[dict]] = {"before": [], "this": []}
    for r in range(1, args.rounds + 1):
        for side in ("before", "this") if r % 2 else ("this", "before"):
            env = dict(os.environ, PYTHONPATH=trees[side]) if trees[side] else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            done = subprocess.run(
                [sys.executable, str(here), args.file, "--one", "--inner", str(args.inner)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            got[side].append(figures)
            print(
                f"round {r} {side}: " + ", ".join(f"{s} {figures[s]:.3f} s" for s in STEPS) + f" (load {figures['load']:.1f})", flush=True
            )
    for s in ("rows", "segments", "cost"):
        digests = {f[s + "_sha"] for side in got.values() for f in side}
        if len(digests) != 1:
            print(f"{s}: the two trees' texts differ", file=sys.stderr)
            return 1
    for s in STEPS:
        least = {side: min(f[s] for f in got[side]) for side in got}
        print(f"{s}: before {least['before']:.3f} s, this {least['this']:.3f} s, this / before {least['this'] / least['before']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
