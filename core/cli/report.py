"""`foldscope report FILE -o OUT.html`: the session as one self-contained HTML file to share (core.readout.report)."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.options import (
    add_head_flag,
    add_list,
    add_policy_flags,
    add_threads,
    add_window_flag,
    measure_for,
    policy_choice,
    read_session,
    use_head,
)
from foldscope.core.model import collector
from foldscope.core.model.session import ReadError


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="write the session as one self-contained HTML file (offline, no loads)")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("-o", "--output", metavar="OUT.html", required=True, help="the HTML file to write")
    add_policy_flags(parser)
    add_window_flag(parser)
    add_head_flag(parser)
    add_threads(parser)
    from foldscope.core.replay.strategies import STRATEGIES

    parser.add_argument("--replay", action="store_true", help="add the replay lab's comparison of strategies")
    add_list(parser, "--strategy", list(STRATEGIES), "S", "the strategies --replay compares (default: all)")
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(run=run_report, format=format_report)


@collector.spared()  # read, measured and written in one go: the collector off, as for `requests` (core.model.collector)
def run_report(args) -> dict[str, Any]:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.readout.report import write_report
    from foldscope.core.replay.strategies import STRATEGIES

    strategies = args.strategy or []
    if strategies and not args.replay:
        raise UsageError("--strategy chooses what --replay compares: add --replay")
    choice = policy_choice(args)  # flags are checked before the file is read
    use_head(args)
    early = _checks_during_read(args)
    try:
        session = read_session(args.file, getattr(args, "input_format", None), args.sample, during=early)
        measure = measure_for(session, choice, threads=args.threads)
    except BaseException:
        if early is not None:
            early.stop()
        raise
    try:
        replay = (strategies or list(STRATEGIES)) if args.replay else ()
        data = write_report(session, args.output, measure=measure, replay=replay, early=early)
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write the report: {exc.strerror or exc}") from None
    except ReadError as exc:  # the output's own refusal (core.model.outputs): said as the report's
        if exc.problem.startswith("cannot write: "):
            raise UsageError(f"{args.output}: cannot write the report: {exc.problem.removeprefix('cannot write: ')}") from None
        raise
    return {
        "file": session.source,
        "written": args.output,
        "requests": len(data.measure.trace.rows),
        "largest_request": data.largest,
        "sections": [s.title for s in data.sections],
    }


def _checks_during_read(args) -> Any:
    """A child to check the compactions read by then while the rest of the file is read
    (core.forensics.literals_during_read), where the file is worth it and is one session (no sample of a log, as for
    replay's child during the read); else None."""
    from foldscope.core.forensics import literals_during_read

    if args.sample is not None or not literals_during_read.wanted(args.file):
        return None
    return literals_during_read.ChecksDuringRead(args.file)


def format_report(result: dict[str, Any]) -> str:
    largest = "" if result["largest_request"] is None else f"; the largest is request {result['largest_request']}"
    from foldscope.core.cli.words import plural

    return f"wrote {result['written']}: {plural(result['requests'], 'request')}{largest}; sections: {', '.join(result['sections'])}"
