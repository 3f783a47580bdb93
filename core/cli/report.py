"""`foldscope report FILE -o OUT.html`: the session as one self-contained HTML file to share (core.readout.report)."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.requests import add_policy_flags, policy_from_args


def list_values(values: list[str] | None) -> list[str]:
    """A list option given repeated, with commas, or both: `--strategy adr --strategy band` = `--strategy adr,band`."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="write the session as one self-contained HTML file (offline, no loads)")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("-o", "--output", metavar="OUT.html", required=True, help="the HTML file to write")
    add_policy_flags(parser)
    parser.add_argument("--replay", action="store_true", help="add the replay lab's comparison of strategies")
    parser.add_argument("--strategy", action="append", metavar="S[,S...]",
                        help="the strategies --replay compares (repeat or use commas; default: all)")
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(run=run_report, format=format_report)


def run_report(args) -> dict[str, Any]:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.formats import load_session
    from foldscope.core.readout.report import write_report
    from foldscope.core.replay.strategies import STRATEGIES

    strategies = list_values(args.strategy)
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise UsageError(f"--strategy: unknown {', '.join(unknown)} (known: {', '.join(STRATEGIES)})")
    if strategies and not args.replay:
        raise UsageError("--strategy chooses what --replay compares: add --replay")
    session = load_session(args.file, getattr(args, "input_format", None))
    policy = policy_from_args(args, session)
    try:
        data = write_report(session, args.output, policy, replay=(strategies or list(STRATEGIES)) if args.replay else ())
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write the report: {exc.strerror or exc}") from None
    return {"file": session.source, "written": args.output, "requests": len(data.measure.trace.rows),
            "largest_request": data.largest, "sections": [s.title for s in data.sections]}


def format_report(result: dict[str, Any]) -> str:
    largest = "" if result["largest_request"] is None else f"; the largest is request {result['largest_request']}"
    return f"wrote {result['written']}: {result['requests']:,} requests{largest}; sections: {', '.join(result['sections'])}"
