"""`foldscope replay FILE|DIR`: a session (or a folder of them) under several strategies, side by side."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from foldscope.core.cli.options import (
    POLICY_FLAGS,
    add_list,
    add_policy_flags,
    add_threads,
    add_workers,
    folder_files,
    is_folder,
    measure_from_args,
    policy_choice,
    read_session,
    say_warnings,
)
from foldscope.core.cli.words import DECIDES_ON, FILE_HELP, num, plural
from foldscope.core.model import collector
from foldscope.core.model.money_text import usd_text as _usd
from foldscope.core.model.session import ReadError
from foldscope.core.readout.replay_facts import BILL_LABEL, MODELLED_LABEL, beside_bill, compare_line, no_ceiling_line
from foldscope.core.replay.rows import cost_text, model_vs_reported
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.estimators import ADR, ESTIMATORS

TOTALS = (
    "requests",
    "peak",
    "reported_peak",
    "over_ceiling",
    "reported_over_ceiling",
    "refused",
    "fresh",
    "cache_read",
    "cache_write",
    "cache_write_1h",
    "output",
    "rewrites",
    "appends",
    "folds",
    "cost_usd",
)
# The cache model's figures beside the recorded ones (for a counterfactual strategy, its own figures again).
MODELLED = ("modelled_fresh", "modelled_cache_read", "modelled_cache_write", "modelled_cache_write_1h", "modelled_cost_usd")


# The totals table: a column per strategy, a row per figure; --per-request's columns (ROW_COLUMNS) after.
ROWS = (
    (
        "recorded, as billed / recorded, modelled",
        "the session as it ran: its reported usage priced (the bill), and the "
        "same views under foldscope's cache model, which the other strategies "
        "are set against",
    ),
    ("none", "no management: every message kept, requests past the ceiling refused"),
    ("adr", "foldscope's fold: clip long results, then fold old messages into a note, at the line, down to the target"),
    (
        "band",
        "pi-fold's way: closed stretches marked as they finish, folded stalest first in one rewrite at 80% of the ceiling, down to 20%",
    ),
    ("compaction", "the agent's way: the whole conversation summarised at the line"),
    ("estimator", "what a folding strategy decides on: the estimate (count x scale) or the predicted input"),
    ("requests", "requests made"),
    ("peak", "the largest request, in tokens"),
    ("reported_peak", "the largest reported input"),
    ("over_ceiling", "requests whose estimate is at or past the ceiling"),
    ("reported_over_ceiling", "requests whose reported input is at or past it"),
    ("refused", "requests not sent: over the ceiling with nothing left to fold"),
    ("fresh", "input tokens neither read from nor written to the cache"),
    ("cache_read", "input read from the cache"),
    ("cache_write", "input written to the cache"),
    ("cache_write_1h", "of which with one-hour marks"),
    ("output", "output tokens"),
    ("rewrites", "requests that changed what was cached before its end"),
    ("appends", "requests that only added to it"),
    ("folds", "folds or compactions made"),
    ("cost_usd", "the cost at the model's prices"),
    (
        "request, messages, estimate, reported, fresh, cache read, cache write, output, folds, cost, change",
        "--per-request: a line per request and strategy with its figures and what the strategy changed there",
    ),
)


def register(subparsers) -> None:
    from foldscope.core.cli.output import columns_help

    p = subparsers.add_parser(
        "replay",
        help="replay a session (or every session in a folder) under strategies",
        **columns_help("A column per strategy, a row per figure:", ROWS),
    )
    p.add_argument("path", metavar="FILE|DIR", help=f"{FILE_HELP}; or a folder, every session under it")
    add_policy_flags(p)
    add_list(p, "--strategy", sorted(STRATEGIES), "S", f"one or more of {', '.join(STRATEGIES)} (default: all)")
    p.add_argument(
        "--estimator",
        choices=sorted(ESTIMATORS),
        default=ADR,
        help="what the adr fold decides on: adr, the spec's estimate (count x scale; default), or "
        "predicted, the predicted input (what a better estimator would have done)",
    )
    p.add_argument(
        "--count",
        action="store_true",
        help="for a folder replayed --strategy recorded: count the requests too (peak, over_ceiling and the "
        "cache model's modelled_*); without it the summary reads the reported usage and prices it, "
        "tokenising nothing",
    )
    p.add_argument("--per-request", action="store_true", help="include a row per request")
    p.add_argument("--check", action="store_true", help="compare the recorded replay's cache with reported usage")
    p.add_argument("-o", "--output", metavar="OUT", help="for a folder: write OUT.csv and OUT.json")
    add_workers(
        p,
        "processes: for a folder, files replayed at once (each file's strategies one after another); for "
        "one file, its strategies run at once after the one calibrated measure, a process each up to N + 1 "
        "(1: one after another)",
    )
    add_threads(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    p.add_argument(
        "--db",
        metavar="PATH",
        help="for one file: reopen it from this library when it holds the file as it is now (nothing read or "
        "counted again), else read it and import it, with what the replay counted",
    )
    p.set_defaults(run=run_replay, format=format_replay)


@collector.spared()
def replay_file(path: str, args_dict: dict[str, Any]) -> dict[str, Any]:
    """Replay one file; the result is plain data, so a process pool can carry it. The collector is off while it
    runs (core.model.collector), and a folder's worker collects what cycles one file left before the next."""
    from argparse import Namespace

    from foldscope.core.readout.usage_precision import marks as precision_marks
    from foldscope.core.replay.cache_check import check_cache
    from foldscope.core.replay.lab import replay

    args = Namespace(**args_dict)
    db, sample = args_dict.get("db"), getattr(args, "sample", None)
    if db:
        from foldscope.core.cli.library_open import open_session
        from foldscope.core.request.count import Counter

        opened = open_session(path, db, Counter(getattr(args, "threads", None)), sample=sample)
        session = opened.session
        say_warnings(session.warnings)
        measure = measure_from_args(args, session, opened.counter)
        early = None
    else:
        early = _during_read(path, args, args_dict) if sample is None else None
        session = read_session(path, sample=sample, during=early)
        measure = measure_from_args(args, session)
        if early is not None:  # the record's start, counted by the child forked during the read
            early.seed(measure.counter, session.record)
    # One file's strategies at once in forked processes (core.replay.parallel): a folder's files already go through
    # a pool, which replays each file in its own process with `workers` 1, never a pool inside a pool.
    strategies = args.strategy or list(STRATEGIES)
    result = replay(
        session,
        strategies,
        measure,
        estimator=getattr(args, "estimator", ADR),
        workers=args_dict.get("workers") or 1,
        said=_say,
        rows=bool(args.per_request),
    )
    if early is not None:
        early.close()  # the child that counted during the read, reaped now that it is long gone
    result["file"] = str(path)
    result["format"] = session.format
    result["ceiling"] = {"tokens": measure.ceiling, "source": measure.resolution.source, "why": measure.resolution.why}
    # Without a ceiling none of the managing strategies acts: said in one line, with a ceiling to give instead.
    result["no_ceiling"] = no_ceiling_line(measure, strategies)
    # The reader's warnings travel with the result (said on stderr as read), so a folder's row carries them.
    result["read_warnings"] = list(session.warnings)
    result.update(precision_marks(session, "replay"))
    if args.check:
        check = check_cache(session, measure)
        result["check"] = check.summary() if check else None
    if not args.per_request:
        result.pop("rows")
    with_children(result, session, args_dict)
    if db:
        from foldscope.core.cli.library_open import keep, library_facts

        result.update(library_facts(opened, keep(opened, path, db, sample)))
    return result


def _during_read(path: str, args: Any, args_dict: dict[str, Any]) -> Any:
    """A child to count the record's start while the rest of one file is read (core.request.counting.during_read), where
    the replay may use more than one process (`workers`) and the file is worth it; else None."""
    from foldscope.core.request.counting import during_read

    if (args_dict.get("workers") or 1) < 2 or not during_read.wanted(path):
        return None
    return during_read.DuringRead(path, lambda session: measure_from_args(args, session).policy)


def _say(line: str) -> None:
    """A worker's failure, said on stderr in one line (the run goes on and its result is whole)."""
    from foldscope.core.cli.output import terminal_safe

    print(f"foldscope: replay: {terminal_safe(line)}", file=sys.stderr)


def billed_file(path: str, args_dict: dict[str, Any]) -> dict[str, Any]:
    """One file's recorded totals from its reported usage alone (core.replay.billed), tokenising nothing; a file
    with a request that reported no usage is replayed whole, since its recorded figures need the cache model."""
    from argparse import Namespace

    from foldscope.core.formats import load_session
    from foldscope.core.model.launch import session_policy
    from foldscope.core.replay.billed import billed_summary

    args = Namespace(**args_dict)
    session = load_session(path, sample=getattr(args, "sample", None))
    choice = policy_choice(args)
    result = billed_summary(session, session_policy(session, choice), choice.per_call)
    if result is None:
        return replay_file(path, args_dict)
    from foldscope.core.readout.usage_precision import marks as precision_marks

    result["file"] = str(path)
    result["format"] = session.format
    result["read_warnings"] = list(session.warnings)
    result.update(precision_marks(session, "replay"))
    return with_children(result, session, args_dict)


def with_children(result: dict[str, Any], session: Any, args_dict: dict[str, Any]) -> dict[str, Any]:
    """In a folder's run, the files of the session's subagents, so the folder counts a subagent file beside its
    session in it (as `cache` and `usage` do), not as another session; one file's output unchanged."""
    if args_dict.get("in_folder"):
        result["children"] = session.children_files()
    return result


def untokenised(args) -> bool:
    """A folder's recorded-only summary reads the reported usage without counting, unless a count is asked for."""
    return args.strategy == ["recorded"] and not args.count and not args.check and not args.per_request


def run_replay(args) -> Any:
    from foldscope.core.cli.main import UsageError

    policy_choice(args)  # flags are checked once, before any file is read
    path = Path(args.path)
    keys = (*POLICY_FLAGS, "threads", "strategy", "per_request", "check", "estimator")
    args_dict = {k: getattr(args, k) for k in keys}
    if not is_folder(path):
        return replay_file(str(path), {**args_dict, "db": args.db, "sample": args.sample, "workers": args.workers or os.cpu_count() or 1})
    if args.db:
        raise UsageError("--db: for one file (a folder's files are replayed at once, by several processes)")
    if args.sample is not None:  # as cache and compactions refuse it: a folder's rows are each of its sessions
        raise UsageError(f"--sample: for one file; {path} is a folder")
    args_dict["in_folder"] = True
    files = folder_files(path)  # its own files and the sessions in the folders under it, as usage finds them
    if not files:
        raise UsageError(f"{path}: the folder holds no files")
    from foldscope.core.cli.progress import Progress
    from foldscope.core.formats.discover import file_sessions

    # A file of several sessions (an Aider history's runs, an Inspect AI log's samples) is each of them, as `usage`
    # and `sessions` count them, its rows named FILE --session N / --sample ID: asked for one, it was skipped whole.
    each = [(name, str(f), {**args_dict, "sample": sample}) for f in files for sample, name in file_sessions(f)]
    progress = Progress(len(each), sys.stderr.isatty())  # a folder of many sessions takes seconds: say how far
    results = []
    if untokenised(args):  # reading and pricing usage is quicker than starting processes: one, in order
        for name, f, one_args in each:
            results.append((name, _replay_or_error(f, one_args, billed_file)))
            progress.step(results[-1][1])
    else:
        workers = args.workers or os.cpu_count() or 1
        with ProcessPoolExecutor(max_workers=max(1, min(workers, len(each)))) as pool:
            futures = [(name, pool.submit(_replay_or_error, f, one_args)) for name, f, one_args in each]
            for name, future in futures:
                results.append((name, future.result()))
                progress.step(results[-1][1])
    progress.close()
    table, skipped = [], []
    for f, result in results:
        if "error" in result:
            skipped.append({"file": str(f), "error": result["error"]})
            continue
        warnings = file_warnings(result)
        for totals in result["totals"]:
            table.append(
                {
                    "file": str(f),
                    "format": result["format"],
                    "model": result["model"],
                    "ceiling": result["ceiling"]["tokens"],
                    **totals,
                    "warnings": warnings,
                    "no_ceiling": result.get("no_ceiling"),
                }
            )
    # A subagent's file beside its session (Claude Code's older layout) is replayed as a file of its own, but counted
    # as `cache` and `usage` count it: in its session, not as another session.
    owned = {str(Path(c).resolve()) for _, r in results if "error" not in r for c in r.get("children", [])}
    apart = sum(1 for f, r in results if "error" not in r and str(Path(f).resolve()) in owned)
    out = {"folder": str(path), "sessions": len(each) - len(skipped) - apart, "subagent_files": apart, "skipped": skipped, "table": table}
    if args.output:
        write_table(args.output, out, read=files)
        out["written"] = [f"{args.output}.csv", f"{args.output}.json"]
    return out


def file_warnings(result: dict[str, Any]) -> list[str]:
    """Every warning one file's replay gave, its reader's first: what the file replayed alone would say."""
    return [*result.get("read_warnings", []), *result.get("warnings", [])]


def _replay_or_error(path: str, args_dict: dict[str, Any], how: Any = None) -> dict[str, Any]:
    try:
        return (how or replay_file)(path, args_dict)
    except ReadError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # one bad file is a recorded skip, never the end of a fleet run
        return {"error": f"{path}: {type(exc).__name__}: {exc}"}


def write_table(base: str, out: dict[str, Any], read: Sequence[str | Path] = ()) -> None:
    """OUT.csv and OUT.json, never over a replayed file, a device or a link (core.model.outputs)."""
    from foldscope.core.model.outputs import output_target, write_output

    fields = [
        "file",
        "format",
        "model",
        "ceiling",
        "strategy",
        "estimator",
        *TOTALS,
        *MODELLED,
        "cost_not_comparable",
        "cost_sent_usd",
        "warnings",
    ]
    names = [f"{base}.csv", f"{base}.json"]
    for name in names:
        output_target(name, read)
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows({**row, "warnings": "; ".join(row.get("warnings") or [])} for row in out["table"])
    write_output(names[0], table.getvalue(), read)
    write_output(names[1], json.dumps(out, indent=2, ensure_ascii=False), read)


def format_replay(result: dict[str, Any]) -> str:
    from foldscope.core.cli.output import terminal_safe

    if "table" in result:
        return format_folder(result)
    from foldscope.core.cli.library_open import library_line

    totals = result["totals"]
    columns = beside_bill(totals)  # the recorded column as the bill, and the modelled recording beside it
    table = [
        [
            cost_text(t) if key == "cost_usd" else (t[key] or "-") if key == "estimator" else "-" if t.get(key) is None else f"{t[key]:,}"
            for _, t in columns
        ]
        for key in ("estimator", *TOTALS)
    ]
    widths = [max(14, len(label) + 2, *(len(row[i]) + 2 for row in table)) for i, (label, _) in enumerate(columns)]
    library = library_line(result)
    lines = [
        f"{result['file']} ({result['format']}, model {result['model'] or 'unknown'})",
        *([library] if library else []),
        f"ceiling: {num(result['ceiling']['tokens'], 'none')} ({result['ceiling']['why']}); "
        f"cache: {result['cache']['mode']} ({result['cache']['why']})",
        *([result["no_ceiling"]] if result.get("no_ceiling") else []),
        decides_line(totals),
        "",
        f"{'':<23}" + "".join(f"{label:>{width}}" for (label, _), width in zip(columns, widths)),
    ]
    for key, cells in zip(("estimator", *TOTALS), table):
        lines.append(f"{key:<23}" + "".join(f"{c:>{width}}" for c, width in zip(cells, widths)))
    for t in totals:
        if t["strategy"] == "recorded":
            lines.append(model_vs_reported(t))  # core.replay.lab
    compare = compare_line(totals)
    lines += [compare] if compare else []
    lines += [f"{t['strategy']}: cost {t['cost_not_comparable']}" + sent_cost(t) for t in totals if t.get("cost_not_comparable")]
    if not result["priced"]:
        lines.append(f"cost_usd: {result.get('price_reason') or 'no price for the model'}")
    from foldscope.core.readout.usage_precision import lines as precision_lines

    lines += precision_lines(result)
    lines += [f"warning: {terminal_safe(w)}" for w in result.get("warnings", [])]
    if "rows" in result:  # --per-request
        lines += format_rows(result["rows"])
    check = result.get("check")
    if check:
        lines += [
            "",
            f"cache model against reported usage ({plural(check['requests'], 'request')}): "
            f"read error {check['read_error']:.1%}, write error {check['write_error']:.1%} of input; "
            f"on {plural(check['deep_hits'], 'deep hit')} {check['read_error_on_deep_hits']:.1%} and "
            f"{check['write_error_on_deep_hits']:.1%}; provider misses {check['provider_misses']:,}",
        ]
    return "\n".join(lines)


def sent_cost(t: dict[str, Any]) -> str:
    """What the requests a strategy did send cost, when it sent any (never a $0 for a run that sent nothing)."""
    sent = t["requests"] - t["refused"]
    return f"; {_usd(t['cost_sent_usd'])} for the {sent:,} requests sent" if sent else ""


def format_folder(result: dict[str, Any]) -> str:
    """A row per file and strategy, the file's warnings under its rows (the first, then how many more)."""
    from foldscope.core.cli.output import terminal_safe

    apart = result.get("subagent_files") or 0
    beside = f" (and {plural(apart, 'subagent file')} beside their sessions, replayed as files of their own)" if apart else ""
    lines = [f"{plural(result['sessions'], 'session')} in {result['folder']}{beside}, {num(len(result['skipped']))} skipped"]
    lines += [f"  skipped {s['error']}" for s in result["skipped"]]
    files: dict[str, list[dict[str, Any]]] = {}
    for r in result["table"]:
        files.setdefault(r["file"], []).append(r)
    for rows in files.values():
        lines += [folder_row(label, r) for label, r in beside_bill(rows)]
        if rows[0].get("no_ceiling"):  # the line the file alone gives: its strategies do not act, and why
            lines.append(f"    {rows[0]['no_ceiling']}")
        warnings = rows[0].get("warnings") or []
        if warnings:
            lines.append(f"    warning: {terminal_safe(warnings[0])}" + (f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""))
    if any(compare_line(rows) for rows in files.values()):
        lines.append(
            f"{MODELLED_LABEL} is the recorded views under the same cache model as the other strategies: "
            f"set them against it, not against {BILL_LABEL} (the bill also pays the provider's own cache "
            "misses, which no model foresees)"
        )
    if any(r.get("counted") is False for r in result["table"]):
        lines.append(
            "recorded as billed from the reported usage, nothing tokenised (--count for peak, over_ceiling and the cache model's figures)"
        )
    lines += [f"wrote {w}" for w in result.get("written", [])]
    return "\n".join(lines)


def folder_row(label: str, r: dict[str, Any]) -> str:
    """One file under one strategy: requests, refused and over the ceiling, peak, cost (never $0 over refusals)."""
    reported = r.get("reported_over_ceiling")  # None: the provider counted none of the strategy's requests
    over = f"{r['over_ceiling']:,}" if r.get("over_ceiling") is not None else ("-" if reported is None else f"{reported:,} reported")
    return (
        f"  {r['file']}  {label:<19} requests {r['requests']:>6,}  refused {r.get('refused') or 0:>5,}  "
        f"over ceiling {over:>5}  "
        + (f"peak {r['peak']:>9,}  " if r["peak"] is not None else f"reported peak {r['peak_reported_input']:>9,}  ")
        + f"cost {cost_text(r)}"
    )


def decides_line(totals: list[dict[str, Any]]) -> str:
    """Which estimator each deciding strategy's policy decides on, by name (core.request.estimators)."""
    named = [(t["strategy"], t["estimator"]) for t in totals if t.get("estimator")]
    if not named:
        return "decides on: nothing (no strategy here folds)"
    used = dict.fromkeys(e for _, e in named)
    return "decides on: " + "; ".join(
        f"{', '.join(s for s, e in named if e == name)}: {DECIDES_ON.get(name, ESTIMATORS[name])}" for name in used
    )


# --per-request's columns: (heading, row key, width); reported input is the provider's, the rest the strategy's.
ROW_COLUMNS = (
    ("request", "request", 7),
    ("messages", "messages", 8),
    ("estimate", "estimate", 9),
    ("reported", "reported_input", 9),
    ("fresh", "fresh", 8),
    ("cache read", "cache_read", 10),
    ("cache write", "cache_write", 11),
    ("output", "output", 7),
    ("folds", "folds", 5),
    ("cost", "cost_usd", 9),
)


def format_rows(rows: list[dict[str, Any]]) -> list[str]:
    """A table of rows per strategy, in the order they came: one line a request, its change and flags at the end."""
    lines: list[str] = []
    for strategy in dict.fromkeys(row["strategy"] for row in rows):
        lines += ["", f"{strategy}, per request:", "  ".join(f"{heading:>{width}}" for heading, _, width in ROW_COLUMNS) + "  change"]
        for row in (r for r in rows if r["strategy"] == strategy):
            cells = [_cell(key, row.get(key), width) for _, key, width in ROW_COLUMNS]
            flags = [word for word, key in (("OVER", "over_ceiling"), ("refused", "refused")) if row.get(key)]
            tail = " ".join([str(row.get("change") or ""), *flags]).strip()
            if row.get("kind") not in (None, "request"):
                tail = f"{row['kind']} {tail}".strip()
            lines.append("  ".join(cells) + "  " + tail)
    return lines


def _cell(key: str, value: Any, width: int) -> str:
    if value is None:
        text = "-"
    elif key == "cost_usd":
        text = _usd(value)
    else:
        text = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{text:>{width}}"
