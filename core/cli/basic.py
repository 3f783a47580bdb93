"""The first subcommands: `inspect` a session, `export` the native file (`count` is core.cli.count)."""

from __future__ import annotations

import sys
from collections import Counter as Counter_
from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.core.cli.words import FILE_HELP, plural
from foldscope.core.model import collector
from foldscope.core.model.session import KINDS, ReadError, Session, estimated_usage
from foldscope.core.readout.free_window import free_window, free_words, over_window


def register(subparsers) -> None:
    inspect = subparsers.add_parser("inspect", help="summarise a session: kinds, sizes, requests, folds")
    inspect.add_argument("file", metavar="FILE", help=FILE_HELP)
    inspect.add_argument("--json", action="store_true", help="print JSON")
    # dest is not `format`: core.cli.main reads args.format as the text formatter.
    inspect.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    inspect.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    inspect.add_argument("--db", metavar="PATH", help="also import the session into this library")
    inspect.add_argument("--prices", metavar="FILE", help="a prices.json whose models override every other price")
    from foldscope.core.cli.options import add_head_flag, add_window_flag

    add_window_flag(inspect)
    add_head_flag(inspect)
    inspect.set_defaults(run=run_inspect, format=format_inspect)

    export = subparsers.add_parser("export", help="write a session as a native (lionagi) file")
    export.add_argument("file", metavar="FILE", help=FILE_HELP)
    export.add_argument("-o", "--output", required=True, metavar="OUT", help="the native file to write (lionagi Branch and run manifest)")
    export.add_argument("--json", action="store_true", help="print JSON")
    export.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    export.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    export.set_defaults(run=run_export, format=lambda r: f"wrote {r['output']} ({plural(r['messages'], 'message')})")


def view_size(session: Session, measure: Any, view: list) -> dict[str, Any]:
    """The next request's size as inspect reports it: its messages, count, estimate, unseen head and the head's parts
    where the --head file or this machine names them (core.readout.head_split)."""
    from foldscope.core.readout.head_split import sources_for

    return {
        "messages": len(session.view),
        "tokens": measure.count(view),
        "estimate": measure.estimate(view),
        "unseen_head": measure.unseen_head,
        "scale": round(measure.scale, 6),
        "unseen_head_parts": [p.as_dict() for p in sources_for(session).split(measure.unseen_head)],
    }


def summarise(session: Session, threads: int | None = None, counter: Any = None, choice: Any = None) -> dict[str, Any]:
    """The facts `inspect` reports, as a JSON-ready dict.

    Sizes are exact o200k_base counts of the compiled request (core.request.count.Counter): the active view
    as the next request would carry it, and the full record compiled as one request. The policy is
    the session's launch policy (branch metadata api_launch) with its ceiling resolved for its model, and `choice`
    (core.model.policy.PolicyChoice: `--context-window`) over it. The context window is
    core.readout.agent_limits's, with its source.
    The record and the view are counted by one Counter, so the view's messages, counted with the
    record's, are not tokenised twice; `threads` is the Counter's (2: its new text in one batch). `counter`: one
    to count with (seeded from the library's memo for a reopened session), else a new one.
    """
    from foldscope.core.forensics.usage import session_facts
    from foldscope.core.model import pricing
    from foldscope.core.model.caching import caching_of
    from foldscope.core.model.launch import session_policy
    from foldscope.core.readout.agent_limits import context_window
    from foldscope.core.readout.usage_precision import marks as precision_marks
    from foldscope.core.request.measure import Measure

    measure = Measure(session, session_policy(session, choice), threads=threads, counter=counter)
    policy, model, resolution, record = measure.policy, measure.model, measure.resolution, session.record
    measure.calibrate(prefix=False)  # the scale and unseen head the next request runs at
    # The full record compiled as one request with no head: the total of core.readout.message_sizes.record_sizes,
    # which the GUI's full record heading shows, without cutting it into each message's part (a million parts
    # on a file of tiny lines, for one figure). Counted after the trace, so it extends the last request's layout
    # (the same count: each block's is memoised) rather than the trace's first request starting again from it.
    record_tokens = measure.count(list(record), first_round=None)
    view = session.view_messages()
    # a clipped copy is not an execution: counts of tool calls and results stay counts of work done (Amendment 2)
    by_kind = Counter_("clipped_copy" if m.is_clipped_copy else m.kind for m in record)
    reported = [r.usage.reported_input for r in session.trace if r.usage is not None]
    folds = (session.manifest or {}).get("context_folds")
    price = pricing.resolve(model)
    limit = context_window(session, policy)
    window = limit.as_dict() if limit is not None else None
    following = measure.calibrate(prefix=False).next_predicted if session.trace else None
    predicted = following.predicted if following is not None else None
    if window is not None and predicted is not None:
        window["free"] = free_window(window["tokens"], predicted)
        over = over_window(window["tokens"], predicted)
        if over is not None:  # the free figure's 0 hides how far past the window the request is
            window["over_by"] = over
    return {
        "file": session.source,
        "format": session.format,
        "model": model,
        "messages": len(record),
        "by_kind": {kind: by_kind[kind] for kind in (*KINDS, "clipped_copy") if by_kind[kind]},
        "record_size": {"messages": len(record), "tokens": record_tokens},
        "view_size": view_size(session, measure, view),
        "requests": len(session.trace),
        "folds": len(folds) if isinstance(folds, list) else 0,
        "copies": sum(1 for m in record if m.is_clipped_copy),
        "notes": by_kind["note"],
        "peak_reported_input": max(reported) if reported else None,
        "next_predicted": predicted,
        "priced": price.priced,
        "price_source": price.source if price.priced else None,
        "price_reason": None if price.priced else price.reason,
        "context_window": window,
        "policy": {
            "ceiling": resolution.ceiling,
            "source": resolution.source,
            "why": resolution.why,
            "line": policy.fold_at,
            "target": policy.fold_target,
            "result_max_chars": policy.tool_result_max_chars,
            "caching": policy.prompt_caching,  # None: left unset, caching as recorded (caching_why says what that is)
            "caching_why": caching_of(policy, session).words,
            "from": policy.source,
        },
        "warnings": list(session.warnings),
        "session": session_facts(session).as_dict(),
        **_usage_parts(session),
        **precision_marks(session),
        **({"usage_estimated": why} if (why := estimated_usage(session)) else {}),  # Copilot CLI's totals shared out
    }


def _usage_parts(session: Session) -> dict[str, Any]:
    """With subagents: reported usage of main, subagents and the compaction summariser apart, and in total."""
    if not session.children:
        return {}
    from foldscope.core.model.session_totals import rolled_up

    return {"usage": {part: totals.as_dict() for part, totals in rolled_up(session).items()}}


@collector.spared()  # read and measured in one go: the collector off (core.model.collector)
def run_inspect(args) -> dict[str, Any]:
    from foldscope.core.cli.options import policy_choice, use_head
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import helper

    choice = policy_choice(args)  # `--context-window`, checked before the file is read
    use_head(args)  # a damaged --head file: one line before the session is read
    _not_a_folder(args.file)

    # The tokenizer is built in a forked helper on the other core while this process reads and stores
    # the file, and the text to count goes to it in one batch (threads=2). docs/performance.md, Importing.
    # A small file is counted without building one (core.request.tokens.expect): no helper.
    small = tokens.expect(args.file)
    helping = helper.helping() if small else helper.start_helper()
    opened = None
    try:
        from foldscope.core.formats import detect_format
        from foldscope.core.formats.registry import format_named

        spec = format_named(args.input_format or detect_format(args.file))
        if args.sample is None and spec is not None and spec.samples is not None:
            listed = file_samples(args.file, spec.name, spec.samples)
            if len(listed["samples"]) != 1:
                return listed
        from foldscope.core.cli.library_open import keep, library_facts, open_session, store_before_read

        # A small file read for a library is stored by a forked child while it is counted (core.cli.store_child): into
        # a new library, one forked now, which reads the file itself while this process imports what it counts with.
        storing = store_before_read(args.file, args.db, args.input_format, args.sample) if small else None
        from foldscope.core.request.count import Counter

        counter = Counter(2 if helping else None)
        try:
            opened = open_session(
                args.file, args.db, counter, input_format=args.input_format, sample=args.sample, store_early=small, storing=storing
            )
        except BaseException:
            if storing is not None:
                storing.abandon()  # the read failed here: the child's transaction is never committed
            raise
        with counting_progress():
            result = summarise(opened.session, counter=opened.counter, choice=choice)
        kept = library_facts(opened, keep(opened, args.file, args.db, args.sample)) if args.db else {}
    finally:
        if opened is not None and opened.storing is not None:
            opened.storing.abandon()  # stopped before keep(): the child's transaction is never committed
        if helping:
            helper.stop_helper()
    result.update(kept)
    return result


# A record kind as inspect's text counts it: the lists' word (core.readout.document.KIND_LABELS), as a noun.
KIND_NOUNS = {
    "system": "system message",
    "instruction": "instruction",
    "assistant": "assistant message",
    "action_request": "call",
    "action_response": "result",
    "note": "note",
}
FOLDER_COMMANDS = "usage, cache, compactions and replay read every session in a folder; sessions lists those on this machine"


def _not_a_folder(path: str) -> None:
    """A folder given to inspect (but one a format keeps a session in, a Cline task): one line naming the commands
    that take a folder."""
    from foldscope.core.cli.options import is_folder
    from foldscope.core.formats import folder_format

    if is_folder(path) and folder_format(Path(path)) is None:
        raise ReadError(path, "", f"is a folder, not a session file ({FOLDER_COMMANDS})")


def counting_progress():
    """One long message's count, shown as one line on stderr rewritten in place, only when stderr is a terminal."""
    import contextlib

    from foldscope.core.request.long_pieces import reporting

    if not sys.stderr.isatty():
        return contextlib.nullcontext()

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rcounting one long message: {done / 1e6:.1f} of {total / 1e6:.1f} MB{end}")
        sys.stderr.flush()

    return reporting(show)


def file_samples(file: str, format_name: str, samples: Callable[[Path], list[dict[str, Any]]]) -> dict[str, Any]:
    """`inspect LOG` on a file of several samples (or none; an Inspect AI log): the samples, to choose one with --sample."""
    listed = samples(Path(file))
    if not listed:
        raise ReadError(file, "", "the log holds no samples")
    return {"file": file, "format": format_name, "samples": listed}


def format_inspect(result: dict[str, Any]) -> str:
    if "samples" in result and "by_kind" not in result:
        n = len(result["samples"])
        if any(s.get("epoch") is not None for s in result["samples"]):  # samples of epochs: an Inspect AI log's
            rows = [f"{result['file']}: Inspect AI log, {plural(n, 'sample')} (open one with --sample ID[:EPOCH])"]
        else:
            rows = [f"{result['file']}: {result['format']}, {plural(n, 'session')} (open one with --sample ID)"]
        rows += [f"  {s['name']}: {plural(s['requests'], 'request')}, {plural(s['messages'], 'message')}" for s in result["samples"]]
        return "\n".join(rows)
    from foldscope.core.readout.usage_precision import figure
    from foldscope.core.readout.usage_precision import lines as precision_lines

    # The kinds in the words `view`, the lists and the map use ("65 calls", not "65 action_request"), each agreeing with
    # its count; --json keeps the record's own kind names as its keys.
    kinds = ", ".join(plural(n, KIND_NOUNS.get(kind, kind)) for kind, n in result["by_kind"].items())
    policy = result["policy"]
    lines = [
        f"{result['file']}: {result['format']}" + (f", model {result['model']}" if result["model"] else ""),
        f"full record: {plural(result['record_size']['messages'], 'message')}, "
        f"{result['record_size']['tokens']:,} tokens compiled ({kinds})",
        f"active view: {plural(result['view_size']['messages'], 'message')}, {result['view_size']['tokens']:,} tokens compiled, "
        f"estimate {result['view_size']['estimate']:,} (the next request: the unseen head "
        f"{result['view_size']['unseen_head']:,} added, scale {result['view_size']['scale']:.3f})",
        f"requests: {result['requests']:,}, peak reported input: {figure(result['peak_reported_input'], result)}",
        f"ceiling: {_thousands(policy['ceiling'], 'none')} ({policy['why']}), line {policy['line']}, target {policy['target']}",
        policy["caching_why"],  # it names itself: "caching as recorded: ...", "caching on: ...", "gpt-4o caches automatically"
        f"folds: {result['folds']:,}, notes: {result['notes']:,}, clipped copies: {result['copies']:,}",
        f"prices: {result['price_source']}" if result["priced"] else f"prices: {result['price_reason']}",
    ]
    facts = result.get("session") or {}
    if facts.get("start") is not None:
        from foldscope.core.readout.cost_facts import duration

        version = f", {facts['agent']} {facts['agent_version']}" if facts.get("agent_version") else ""
        # A file that gives its messages one time (an Aider history: each run's start) ran at it, not for "0 s".
        when = (
            f"{_utc(facts['start'])} UTC"
            if facts["end"] == facts["start"]
            else f"{_utc(facts['start'])} to {_utc(facts['end'])} UTC ({duration(facts['duration_s'])})"
        )
        lines.insert(1, f"ran {when} in {facts['project']}{version}")
    window = result.get("context_window")
    if window:
        note = f"; {window['note']}" if window.get("note") else ""
        lines.append(f"context window: {window['tokens']:,} ({window['why']}{note})")
    if "usage" in result:
        from foldscope.core.model.session_totals import PART_LABELS

        parts = result["usage"]
        cost = parts["total"]["cost_usd"]
        lines.append(
            "requests with subagents: "
            + ", ".join(f"{PART_LABELS[k]} {parts[k]['requests']:,}" for k in ("main", "subagents", "summariser"))
            + f"; total {parts['total']['requests']:,}"
            + (f", ${cost:,.4f}" if cost is not None else ", cost unpriced")
        )
    if result.get("next_predicted") is not None:
        window = result.get("context_window") or {}
        free = f", {free_words(window['tokens'], result['next_predicted'])}" if "free" in window else ""
        lines.append(f"next request: predicted {figure(result['next_predicted'], result)} tokens{free}")
    from foldscope.core.cli.library_open import library_line

    library = library_line(result)
    if library is not None:
        lines.append(library)
    lines += precision_lines(result)
    lines += [f"warning: {w}" for w in result["warnings"]]
    return "\n".join(lines)


def run_export(args) -> dict[str, Any]:
    from foldscope.core.formats import load_session
    from foldscope.core.formats.lionagi import write_session

    source = Path(args.file)
    session = load_session(source, args.input_format, args.sample)
    # The writer refuses the source, the run manifest beside a Branch, a device and a link's replacement in one
    # line each (core.model.outputs): core.cli.main prints its ReadError and exits 2.
    output = write_session(session, args.output)
    return {"file": str(source), "output": str(output), "messages": len(session.record), "format": "lionagi"}


def _thousands(value: int | None, absent: str = "-") -> str:
    return f"{value:,}" if value is not None else absent


def _utc(at: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M")
