"""`foldscope view FILE`: the active view (or the full record) a message a line, with the index the actions take."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.options import add_list, read_session
from foldscope.core.cli.output import columns_help
from foldscope.core.cli.words import FILE_HELP, num, plural
from foldscope.core.model import collector
from foldscope.core.model.one_line import collapsed_start

# --kind's words: the kinds the lists and the window map name (core.readout.document.KIND_LABELS), and "copy" for
# a clipped copy standing in for a result.
KIND_WORDS = ("system", "instruction", "assistant", "call", "result", "note", "copy")
PREVIEW_CHARS = 60

COLUMNS = (
    ("index", "the message's index in the full record: what read-result, restore, clip and evict take as --index"),
    (
        "kind",
        "system, instruction (a user's prompt or the harness's text), assistant, call NAME (a tool call), "
        "result NAME (its result), note (a fold's or a compaction's summary), clipped copy (a result cut short "
        "standing in for its original)",
    ),
    (
        "view",
        "in: the request carries it; out: it is only in the full record, and why: folded into note #N (a note "
        "replaced it), clipped (a clipped copy #N stands in for it), out of the active view (evicted, or dropped "
        "without a stand-in), a note since folded or replaced, on an abandoned branch, or not yet in the record "
        "at this request (with --at-request)",
    ),
    ("tokens", "the message's part of the full record compiled as one request (the size the lists, the window map and inspect show)"),
    ("preview", f"the first {PREVIEW_CHARS} characters of its text, on one line"),
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "view",
        help="list the active view (or --record, the full record): each message's index, kind, in or out and why, tokens and a preview",
        **columns_help(
            "Each message a line. The index is the message's place in the full record, the one read-result, "
            "restore, clip and evict take as --index.",
            COLUMNS,
        ),
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    parser.add_argument(
        "--record", action="store_true", help="list every message of the full record, in the view or out of it (default: the view only)"
    )
    parser.add_argument(
        "--at-request", type=int, metavar="K", help="the view as it stood before recorded request K (default: the active view now)"
    )
    add_list(parser, "--kind", KIND_WORDS, "KIND", "only these kinds (call and result match every tool's)")
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_view, format=format_view)


@collector.spared()  # read and measured in one go: the collector off (core.model.collector)
def run_view(args) -> dict[str, Any]:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.readout.document import kind_label
    from foldscope.core.readout.opening import build_document

    session = read_session(args.file, args.input_format, args.sample)
    # The Document the GUI opens: its sizes, its reasons and its kind labels are the lists' own.
    document = build_document(session, session.source)
    k = args.at_request
    if k is not None:
        n = len(document.requests)
        if not 0 <= k < n:
            raise UsageError(
                f"{session.source}: --at-request {k}: the session has {plural(n, 'request')}" + (f" (0 to {n - 1:,})" if n else "")
            )
        document.show_view(list(document.requests[k].view), at_request=True, request=k)
    wanted = set(args.kind or ())
    order = range(len(session.record)) if args.record else [document.view_index(p) for p in range(document.view_size)]
    rows = []
    for index in order:
        message = document.message(index)
        label = kind_label(document, index)
        word = "copy" if message.is_clipped_copy else label.split(" ", 1)[0]
        if wanted and word not in wanted:
            continue
        inside = document.in_view(index)
        text = collapsed_start(message.text, PREVIEW_CHARS + 1)
        rows.append(
            {
                "index": index,
                "kind": label,
                "in_view": inside,
                "why_out": None if inside else document.out_reason[index],
                "tokens": document.tokens[index],
                "chars": len(message.text),
                "preview": text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else ""),
            }
        )
    return {
        "file": session.source,
        "format": session.format,
        "at_request": k,
        "record": bool(args.record),
        "kind": sorted(wanted) or None,
        "record_messages": len(session.record),
        "view_messages": document.view_size,
        "rows": rows,
    }


def format_view(result: dict[str, Any]) -> str:
    when = "the active view now" if result["at_request"] is None else f"the view before request {result['at_request']:,}"
    which = (
        f"the full record, {plural(result['record_messages'], 'message')}, {num(result['view_messages'])} in {when}"
        if result["record"]
        else f"{when}, {num(result['view_messages'])} of the full record's {plural(result['record_messages'], 'message')}"
    )
    kinds = f"; only {', '.join(result['kind'])}: {plural(len(result['rows']), 'row')}" if result["kind"] else ""
    lines = [f"{result['file']}: {which}{kinds}"]
    if not result["rows"]:
        return "\n".join([*lines, "no messages to list"])
    width = max(len(r["kind"]) for r in result["rows"])
    width = min(max(width, 4), 28)
    lines.append(f"{'index':>7}  {'kind':<{width}}  {'tokens':>9}  {'view':<4}  preview")
    for r in result["rows"]:
        where = "in" if r["in_view"] else "out"
        why = "" if r["in_view"] else f"({r['why_out']}) "
        lines.append(f"{r['index']:>7,}  {r['kind'][:width]:<{width}}  {r['tokens']:>9,}  {where:<4}  {why}{r['preview']}")
    if not result["record"]:
        lines.append(
            "index: the message's place in the full record, as read-result, restore, clip and evict take it "
            "(--record lists the messages out of the view too)"
        )
    return "\n".join(lines)
