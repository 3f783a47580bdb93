"""`fold`, `read-result`, `restore`, `clip` and `evict`: the fold core and its actions on a session file."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.options import add_policy_flags, add_threads, measure_for, policy_choice, read_session
from foldscope.core.cli.words import DECIDES_ON, FILE_HELP, OUTCOMES, plural
from foldscope.core.model.launch import read_launch_policy
from foldscope.core.model.session import ReadError, Session
from foldscope.core.request.estimators import ADR, ESTIMATORS
from foldscope.core.request.measure import Measure, refused

# Where an action's indices come from: said in each action's --help.
INDEX_HELP = "its index in the full record, as `foldscope view FILE --record` lists it (`foldscope view FILE` lists the active view's)"


def register(subparsers) -> None:
    fold = subparsers.add_parser("fold", help="fold a session's view under a ceiling: the passes, their records, the view after")
    _file(fold)
    add_policy_flags(fold)
    add_threads(fold)
    fold.add_argument("--at-request", type=int, metavar="K", help="fold the view as it stood before request K")
    fold.add_argument("--apply", action="store_true", help="write the folded session to -o OUT")
    fold.add_argument("-o", "--output", metavar="OUT", help="where --apply writes the native file")
    fold.set_defaults(run=run_fold, format=format_fold)

    read = subparsers.add_parser("read-result", help="characters of an original tool result, by its index in the full record")
    _file(read)
    read.add_argument("--index", type=int, required=True, metavar="N", help=f"the tool result: {INDEX_HELP}")
    read.add_argument("--offset", type=int, default=0, metavar="O", help="the first character to read (default 0)")
    read.add_argument("--limit", type=int, default=16_000, metavar="L", help="at most this many characters (default 16,000)")
    read.add_argument("--result-max", type=int, metavar="N", help="tool_result_max_chars: a read returns at most this many")
    read.set_defaults(run=run_read_result, format=_format_read)

    restore = subparsers.add_parser("restore", help="bring messages back into the view by index, writing -o OUT")
    _file(restore, output=True)
    restore.add_argument(
        "--index",
        type=int,
        nargs="+",
        required=True,
        metavar="N",
        help=f"the messages, each by {INDEX_HELP}; or the first and last with --range",
    )
    restore.add_argument("--range", action="store_true", help="restore every index from the first to the second")
    restore.add_argument("--ceiling", type=int, metavar="N", help="admit a clipped original only if the view fits under N")
    restore.set_defaults(run=run_restore, format=_format_action)

    clip = subparsers.add_parser("clip", help="clip a tool result by hand to KEEP characters per body, writing -o OUT")
    _file(clip, output=True)
    clip.add_argument("--index", type=int, required=True, metavar="N", help=f"the tool result: {INDEX_HELP}")
    clip.add_argument("--keep", type=int, required=True, metavar="KEEP", help="characters kept of each body")
    clip.add_argument(
        "--into-view", action="store_true", help="clip a result out of the active view into it (with its call): the request grows"
    )
    clip.set_defaults(run=run_clip, format=_format_action)

    evict = subparsers.add_parser("evict", help="take messages out of the view by index, writing -o OUT")
    _file(evict, output=True)
    evict.add_argument("--index", type=int, nargs="+", required=True, metavar="N", help=f"the messages, each by {INDEX_HELP}")
    evict.set_defaults(run=run_evict, format=_format_action)


def _file(parser, output: bool = False) -> None:
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    if output:
        parser.add_argument("-o", "--output", required=True, metavar="OUT", help="the native file to write")


def _load(args) -> Session:

    return read_session(args.file, args.input_format, args.sample)


def _write(session: Session, args) -> str:
    """Write the changed session to -o: the writer refuses the input, its manifest, a device or a link's
    replacement in one line (core.model.outputs), printed by core.cli.main."""
    from foldscope.core.formats.lionagi import write_session

    return write_session(session, args.output)


def run_fold(args) -> dict[str, Any]:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.fold.fold import Fold
    from foldscope.core.fold.history import decide_from_trace, session_for_request

    if args.apply and not args.output:
        raise UsageError("fold --apply needs -o OUT, the file to write")
    if args.apply and args.at_request is not None:
        raise UsageError("--apply writes the session as it is now; it cannot be combined with --at-request")
    choice = policy_choice(args)  # flags are checked before the file is read
    session = _load(args)
    measure = measure_for(session, choice, threads=args.threads)
    if measure.ceiling is None:
        raise UsageError(f"no ceiling ({measure.resolution.why}): give --ceiling N, or a model the pricing table prices by prompt length")
    # The earlier requests' compiles decided the first round, at the scale they ran at; then the trace is
    # measured for the scale and unseen head the next request runs at.
    target = session
    if args.at_request is not None:
        n = len(measure.requests)
        if not 0 <= args.at_request < n:
            raise UsageError(f"{session.source}: --at-request {args.at_request}: the session has {plural(n, 'request')} (0 to {n - 1:,})")
        session.trace = measure.requests
        target = session_for_request(session, measure, args.at_request)  # as the GUI's fold preview takes it
    else:
        decide_from_trace(target, measure.policy, measure.counter)
    report = measure.calibrate(prefix=False)
    fold = Fold(target, measure)
    before = fold.estimate()
    runs, refusal = fold.prepare_request()
    records = [r for run in runs for r in run.records]
    policy = measure.policy
    result: dict[str, Any] = {
        "file": args.file,
        "at_request": args.at_request,
        "ceiling": fold.ceiling,
        "ceiling_source": measure.resolution.source,
        "ceiling_why": measure.resolution.why,
        "line": policy.fold_at,
        "target": policy.fold_target,
        "scale": round(fold.scale, 6),  # as requests, inspect and composition give it
        "estimate_before": before,
        "estimate_after": fold.estimate(),
        # what the fold decided on (core.request.estimators), and the ceiling's two verdicts by their names:
        # over_ceiling, the estimate at or past it (the fold core refuses); reported_over_ceiling, the provider's count
        "estimator": ADR,
        "over_ceiling": refused(before, fold.ceiling),
        **(_reported(report.rows[args.at_request], fold.ceiling) if target is not session else {}),
        "folded": bool(runs),
        "target_reached": fold.estimate() <= fold.target_tokens,
        "floor_estimate": next((r.floor_estimate for r in reversed(runs) if r.floor_estimate is not None), None),
        "records": records,
        "refused": None
        if refusal is None
        else {
            "estimate": refusal.estimate,
            "ceiling": refusal.ceiling,
            "counted": refusal.own_count,
            "unseen_head": refusal.unseen_head,
            "scale": round(refusal.scale, 6),
            **({"calls_without_results": list(refusal.unanswered)} if refusal.unanswered else {}),
        },
        "first_round": _first_round(target, policy),
        "view": [_row(target, mid) for mid in target.view],
    }
    if args.apply:
        from foldscope.core.model.launch import store_launch_policy, write_startup_fields

        # the written file was folded under this policy: keep it as its launch record and say so in the
        # manifest's startup fields (Amendment 3), beside the first-round decision made under it
        store_launch_policy(target, policy)
        write_startup_fields(target, policy, measure.per_call)
        result["output"] = _write(target, args)
    return result


def _first_round(session: Session, policy) -> dict[str, Any] | None:
    """The protected first round the fold kept (Amendment 4): None without caching."""
    from foldscope.core.request.first_round import find_round, read_decision

    if not policy.caching:
        return None
    decision = read_decision(session)
    if decision is None:
        found = find_round(session.view_messages())
        members = list(found.members) if found else []
        return {"state": "pending" if found else "none", "members": _indices(session, members)}
    return {
        "state": "included" if decision["included"] else "excluded",
        "members": _indices(session, decision["members"]),
        "size": decision["size"],
        "budget": decision["budget"],
        "bound": decision["bound"],
    }


def _indices(session: Session, ids) -> list[int]:
    return [session.record.index_of(i) for i in ids if i in session.record]


def _row(session: Session, mid: str) -> dict[str, Any]:
    m = session.record.get(mid)
    row: dict[str, Any] = {"index": session.record.index_of(mid), "kind": m.kind, "chars": len(m.text)}
    source = m.clipped_from
    if m.is_clipped_copy and source is not None and source in session.record:
        row["clipped_from"] = session.record.index_of(source)
    return row


def _reported(row: Any, ceiling: int) -> dict[str, Any]:
    """A recorded request's reported input and whether the provider's own count was at or past the ceiling."""
    return {
        "reported_input": row.reported_input,
        "reported_over_ceiling": row.reported_input is not None and refused(row.reported_input, ceiling),
    }


def format_fold(result: dict[str, Any]) -> str:
    at = f" before request {result['at_request']}" if result["at_request"] is not None else ""
    lines = [
        f"{result['file']}{at}: estimate {result['estimate_before']:,} -> {result['estimate_after']:,} "
        f"(ceiling {result['ceiling']:,}, line {result['line']}, target {result['target']})",
        f"decides on: {DECIDES_ON.get(result['estimator'], ESTIMATORS[result['estimator']])}; "
        f"over_ceiling: {'yes' if result['over_ceiling'] else 'no'}"
        + (
            f"; reported_input {result['reported_input']:,}, reported_over_ceiling: {'yes' if result['reported_over_ceiling'] else 'no'}"
            if result.get("reported_input")
            else ""
        ),
    ]
    if not result["folded"]:
        lines.append("under the line: nothing folded")
    for r in result["records"]:
        what = (
            f"{plural(r['clipped_total'], 'body', 'bodies')} clipped"
            if r["stage"] == "clip"
            else f"{plural(r['messages_folded'], 'message')} folded into a note, the last "
            f"{plural(r['kept_tail'], 'message')} kept as they were"
        )
        lines.append(
            f"  {r['reason']} {r['stage']}: {what}, estimate {r['estimate_before']:,} -> {r['estimate_after']:,}, "
            f"{OUTCOMES.get(r['outcome'], r['outcome'])}"
        )
    if result["refused"]:
        lines.append(f"refused: {result['refused']['estimate']:,} is over the ceiling of {result['refused']['ceiling']:,}")
    first = result.get("first_round")
    if first:
        lines.append(f"first round: {first['state']}, indices {first['members']}")
    lines.append(f"target reached: {'yes' if result['target_reached'] else 'no'}; view: {plural(len(result['view']), 'message')}")
    if result.get("output"):
        lines.append(f"wrote {result['output']}")
    return "\n".join(lines)


def run_read_result(args) -> dict[str, Any] | int:
    from foldscope.core.actions.commands import ReadResult

    session = _load(args)
    bound = args.result_max if args.result_max is not None else read_launch_policy(session).tool_result_max_chars
    action = ReadResult(args.index, args.offset, args.limit, max_chars=bound)
    action.do(session)
    return _checked(args, action.result)


def _format_read(result: dict[str, Any]) -> str:
    """The text alone on stdout (so it pipes cleanly); where it sits and how to go on, on stderr."""
    import sys

    end = result["offset"] + len(result["text"])
    more = f"; next: --offset {result['next_offset']}" if result.get("next_offset") is not None else "; the end"
    print(f"[#{result['index']}: characters {result['offset']:,} to {end:,} of {result['total']:,}{more}]", file=sys.stderr)
    return result["text"]


def _checked(args, result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("success"):
        raise ReadError(args.file, "", result.get("error", "the action failed"))
    return result


def run_restore(args) -> dict[str, Any]:
    from foldscope.core.actions.commands import Restore
    from foldscope.core.cli.main import UsageError
    from foldscope.core.fold.fold import Fold

    session = _load(args)
    indices = args.index
    if args.range:
        if len(indices) != 2:
            raise UsageError("restore --range takes two indices: the first and the last")
        indices = list(range(min(indices), max(indices) + 1))
    # Admission counts the request as it compiles under the session's own policy: a bounded original projected.
    fits = None
    if args.ceiling:
        policy = read_launch_policy(session).with_values(max_input_tokens=args.ceiling)
        fits = Fold(session, Measure(session, policy)).fits
    action = Restore(indices, fits)
    before = list(session.view)
    action.do(session)
    return _finish(args, session, action.result, before)


def run_clip(args) -> dict[str, Any]:
    from foldscope.core.actions.commands import Clip

    session = _load(args)
    action = Clip(args.index, args.keep, into_view=args.into_view)
    before = list(session.view)
    action.do(session)
    return _finish(args, session, action.result, before)


def run_evict(args) -> dict[str, Any]:
    from foldscope.core.actions.commands import Evict

    session = _load(args)
    action = Evict(args.index)
    before = list(session.view)
    action.do(session)
    return _finish(args, session, action.result, before)


def _finish(args, session: Session, result: dict[str, Any], before: list[str]) -> dict[str, Any]:
    result = dict(_checked(args, result))
    if session.view == before:
        # Writing an unchanged copy and exiting 0 would hide that the indices named nothing to change.
        from foldscope.core.cli.main import UsageError

        raise UsageError(f"{args.file}: {args.command} changed nothing (check the indices against the active view); nothing written")
    result["output"] = _write(session, args)
    result["view"] = len(session.view)
    return result


def _format_action(result: dict[str, Any]) -> str:
    details = ", ".join(f"{k} {v}" for k, v in result.items() if k not in ("success", "output", "view"))
    return f"wrote {result['output']} ({details}; view: {plural(result['view'], 'message')})"
