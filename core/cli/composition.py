"""`foldscope composition FILE`: what a request is made of, by category, by tool and target, and what it carries twice."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from foldscope.core.cli.options import (
    add_head_flag,
    add_policy_flags,
    add_threads,
    add_window_flag,
    measure_for,
    policy_choice,
    read_session,
    use_head,
    with_estimate_said,
)
from foldscope.core.cli.words import FILE_HELP, plural

if TYPE_CHECKING:
    from foldscope.core.request.trace import RequestRow

# Session text goes to a terminal: no control characters (escape sequences, carriage returns, bells).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """Text safe to print: each control character shown as a visible escape."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


COLUMNS = (
    (
        "category",
        "system prompt, tools, the unseen head, and the messages by kind (instructions, assistant text, tool "
        "calls, tool results by tool, notes), then the framing between blocks: they add up to the total",
    ),
    ("tokens", "the category's tokens in the request"),
    ("share", "its share of the request"),
    ("bar", "the share drawn, 30 cells for the whole request"),
    ("largest", "the largest things in the request (--top N), each with how many times it is carried"),
    ("carried more than once", "content the request holds more than once, what the repeats cost and why"),
)


def register(subparsers) -> None:
    from foldscope.core.cli.output import columns_help

    parser = subparsers.add_parser(
        "composition",
        help="what a request is made of: categories adding up to its count, the largest things in it, content carried twice",
        **columns_help("The request's size, then a line per category:", COLUMNS),
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_policy_flags(parser)
    add_window_flag(parser)
    add_head_flag(parser)
    add_threads(parser)
    parser.add_argument(
        "--at-request",
        metavar="K|largest|now",
        default=None,
        help="the request: its index, the largest, or now (the next, from the active view); default the last",
    )
    parser.add_argument("--top", metavar="N", type=int, default=10, help="how many of the largest things to list (default 10)")
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_composition, format=format_composition)


def pick_request(text: str | None, rows: Sequence[RequestRow], file: str) -> int | None:
    """The request index --at-request names (None: now)."""
    from foldscope.core.cli.main import UsageError

    if text == "now" or (text is None and not rows):
        return None
    if text is None:
        return len(rows) - 1
    if text == "largest":
        if not rows:
            raise UsageError(f"{file}: --at-request largest: the session has no requests")
        return max(rows, key=lambda r: (r.count_with_head, -r.index)).index
    try:
        k = int(text)
    except ValueError:
        raise UsageError(f"--at-request: {text!r} is not a request index, largest or now") from None
    if not 0 <= k < len(rows):
        raise UsageError(f"{file}: --at-request {k}: the session has {plural(len(rows), 'request')} (0 to {len(rows) - 1:,})")
    return k


def run_composition(args) -> dict[str, Any]:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.readout.agent_limits import agent_limits
    from foldscope.core.readout.composition import request_composition
    from foldscope.core.readout.usage_precision import marks as precision_marks

    if args.top is not None and args.top < 0:
        raise UsageError("--top: must be 0 or more")
    choice = policy_choice(args)  # flags are checked before the file is read
    use_head(args)
    session = read_session(args.file, getattr(args, "input_format", None), args.sample)
    measure = measure_for(session, choice, threads=args.threads)
    k = pick_request(args.at_request, measure.trace.rows, session.source)
    limits = agent_limits(session, measure.policy)
    window = limits.window
    composition = request_composition(measure, k, window=window.tokens if window else None, window_source=window.said if window else "")
    result = {
        "file": session.source,
        "format": session.format,
        "model": measure.model,
        **composition.as_dict(args.top),
        **precision_marks(session, "composition"),
    }
    if limits.compaction is not None:
        result["compaction_point"] = {"tokens": limits.compaction.tokens, "source": limits.compaction.source}
    return with_estimate_said(session, result)


def format_composition(result: dict[str, Any]) -> str:
    which = "the next request (the active view now)" if result["request"] is None else f"request {result['request']}"
    from foldscope.core.readout.words import sizes_words

    size = result["size"]
    near = "~" if result.get("usage_precision") == "approximate" else ""  # an Aider history's rounded usage
    sizes = sizes_words(result["counted"], result["unseen_head"], result["estimate"], result["scale"], result.get("predicted"), near)
    lines = [plain(f"{result['file']}: {which}: {sizes}")]
    if result["window"] and result["free"] is not None:
        room = (
            f"the predicted input is over it by {result['over_by']:,}"
            if result.get("over_by")
            else f"{result['free']:,} free (the window less the predicted input)"
        )
        lines.append(f"context window {result['window']:,} ({plain(result['window_source'])}): {room}")
    width = max([len(p["name"]) for p in result["parts"]] + [10])
    for part in result["parts"]:
        share = part["tokens"] / size if size else 0.0
        bar = "█" * round(share * 30)
        note = f"  ({part['note']})" if part.get("note") else ""
        lines.append(plain(f"  {part['name']:<{width}} {part['tokens']:>10,} {share:>6.1%} {bar}{note}"))
    lines.append(f"  {'total':<{width}} {sum(p['tokens'] for p in result['parts']):>10,}")
    if result["top"]:
        lines.append("largest:")
        for g in result["top"]:
            times = f", {g['times']:,} times" if g["times"] > 1 else ""
            lines.append(plain(f"  {g['tokens']:>10,}  {g['label']}{times}"))
    if result["repeats"]:
        lines.append("carried more than once:")
        for r in result["repeats"]:
            lines.append(plain(f"  {r['repeat_tokens']:>10,}  {r['why']}: {r['label']}, {r['times']:,} times ({r['tokens']:,} in all)"))
    from foldscope.core.readout.usage_precision import lines as precision_lines

    return "\n".join(lines + precision_lines(result))
