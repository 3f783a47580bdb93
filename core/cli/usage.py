"""`foldscope usage [DIR|FILE...|--from-library]`: reported usage and cost over many sessions, by day, week,
month, session, project, model or agent, with foldscope's wasted writes and compactions beside them."""

from __future__ import annotations

import csv
import io
import os
import sys
from typing import Any

from foldscope.core.forensics.usage import GROUPS, WASTE_CAUSES
from foldscope.core.readout.words import dollars

HELP_COLUMNS = """columns:
  sessions     sessions with a request in the row
  requests     calls to the model (subagents' and the compaction summariser's included)
  fresh        input tokens the provider billed at the full price (not read from or written to the cache)
  cache read   input tokens read from the prompt cache
  cache write  input tokens written to the prompt cache (5-minute and 1-hour lifetimes together)
  output       output tokens
  cost         the reported usage priced at each request's own model, as in force when it was sent (USD);
               - when no request of the row has a price (its requests at a priced model are summed otherwise)
  wasted       (foldscope) what cache writes of text that could have been read cost beyond reading it:
               rewrite (text changed before it), expired (the cache lapsed), provider (the provider missed
               a cached prefix), unexplained; `cache FILE` shows each request's cause
  compactions  (foldscope) compactions and folds the row's requests carried first
  payback      (foldscope) their modelled saving less their modelled cost (summariser and rewrite), USD
Days and weeks (from the Monday) are UTC dates of each request's time (a file that dates no request, an Aider
history, its session's start). A model line under a row is that model's share of it (subagents often run
another model). A file of several sessions (an Aider history's runs, an Inspect AI log's samples, an OpenCode
database) counts each, as `sessions` lists them. --plain leaves out the foldscope columns, which need each session
counted; it reads the reported usage only."""


def register(subparsers) -> None:
    import argparse

    p = subparsers.add_parser(
        "usage",
        help="reported usage and cost over many sessions, by day, project, model ...",
        epilog=HELP_COLUMNS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", metavar="DIR|FILE", help="session files or folders (walked whole)")
    p.add_argument("--from-library", action="store_true", help="the sessions in the library")
    p.add_argument("--db", metavar="PATH", help="the library, with --from-library")
    p.add_argument("--by", choices=GROUPS, default="day", help="what a row is (default: day)")
    p.add_argument("--since", metavar="DATE", help="from this UTC date on (YYYY-MM-DD)")
    p.add_argument("--until", metavar="DATE", help="up to this UTC date, included (YYYY-MM-DD)")
    p.add_argument("--plain", action="store_true", help="reported usage and cost only: no counting, faster")
    p.add_argument("--workers", type=int, metavar="N", help="processes for the foldscope columns (default: CPU count)")
    p.add_argument("--prices", metavar="FILE", help="a prices.json whose models override every other price")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV (one line a row, models apart)")
    p.set_defaults(run=run_usage, format=format_usage)


def run_usage(args) -> Any:
    from foldscope.core.cli.main import UsageError
    from foldscope.core.forensics.usage import parse_date, session_lines, summarise_usage

    dates = {}
    for flag, text in (("since", args.since), ("until", args.until)):
        try:
            dates[flag] = parse_date(text) if text else None
        except ValueError as exc:
            raise UsageError(f"--{flag}: {exc}") from None  # the words sessions' --since uses
    since, until = dates["since"], dates["until"]
    if not args.paths and not args.from_library:
        raise UsageError("usage needs sessions: DIR, FILE... or --from-library")
    # a path that is not there is a typo to say, not a session to skip under an all-zero table
    missing = [p for p in args.paths if "://" not in p and not os.path.lexists(p)]
    if missing:
        raise UsageError(f"{missing[0]}: no such file or folder")
    from foldscope.core.cli.progress import Progress
    from foldscope.core.cli.tune import library_paths
    from foldscope.core.replay.tune import session_paths

    files = session_paths(args.paths) + (library_paths(args.db) if args.from_library else [])
    files = list(dict.fromkeys(files))
    if not files:
        raise UsageError(f"{', '.join(args.paths) or 'the library'}: no session files")
    forensics = not args.plain
    workers = max(1, min(args.workers or os.cpu_count() or 1, len(files)))
    progress = Progress(len(files), sys.stderr.isatty())  # a folder of many sessions takes seconds: say how far
    results = []
    if forensics and workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        from functools import partial

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(partial(session_lines, forensics=True), files):
                results.append(result)
                progress.step(result)
    else:
        for f in files:
            results.append(session_lines(f, forensics))
            progress.step(results[-1])
    progress.close()
    from foldscope.core.cli.options import refuse_when_nothing_read

    refuse_when_nothing_read(args.paths, args.from_library, results)
    summary = summarise_usage(results, args.by, since, until, forensics)
    if args.csv:
        args.format = format_csv
        args.json = False
    return summary


def _usd(value: float | None) -> str:
    """As `sessions` writes money (core.readout.words.dollars): a cost under a hundredth of a cent "<$0.0001", where
    usage rounded it to $0.0000 or $0.0001."""
    return dollars(value)


def _when(at: float | None) -> str:
    from datetime import UTC, datetime

    return "-" if at is None else datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M")


def _cells(row: dict[str, Any], forensics: bool) -> str:
    # A row none of whose requests had a price (a model the price list lacks) has no cost, not a cost of $0.0000:
    # "-", as `sessions` shows it; a row some of whose requests had one keeps their sum, the note below saying so.
    unpriced = row.get("unpriced_requests", 0)
    priced = unpriced == 0 or row["requests"] - unpriced - row.get("unreported_requests", 0) > 0
    money = _usd if priced else lambda _value: "-"
    text = (
        f"{row['sessions']:>8,} {row['requests']:>9,} {row['fresh']:>13,} {row['cache_read']:>15,} "
        f"{row['cache_write']:>13,} {row['output']:>11,} {money(row['cost_usd']):>11}"
    )
    if forensics:
        text += f" {money(row['wasted_total_usd']):>10} {row['compactions']:>11,} {money(row['payback_net_usd']):>10}"
    return text


def format_usage(result: dict[str, Any]) -> str:
    from foldscope.core.cli.output import terminal_safe
    from foldscope.core.cli.words import plural

    by, forensics = result["by"], result["forensics"]
    width = 40 if by in ("session", "project") else 24
    if by != "model":  # a group's models are listed under it: wide enough for each name whole, never cut silently
        width = max([width] + [len(f"  {m}") for row in result["rows"] if len(row["models"]) > 1 for m in row["models"]])
    head = f"{by:<{width}} {'sessions':>8} {'requests':>9} {'fresh':>13} {'cache read':>15} {'cache write':>13} {'output':>11} {'cost':>11}"
    if forensics:
        head += f" {'wasted':>10} {'compactions':>11} {'payback':>10}"
    lines = [head]
    for row in result["rows"]:
        key = str(row[by])
        shown = key if len(key) <= width else "…" + key[-(width - 1) :]
        lines.append(f"{terminal_safe(shown):<{width}} {_cells(row, forensics)}")
        if by == "session":
            lines.append(
                f"  {row['agent']}, {_when(row['start'])} to {_when(row['end'])} UTC, project "
                f"{terminal_safe(row['project'])}" + (f", version {row['agent_version']}" if row.get("agent_version") else "")
            )
        if by != "model" and len(row["models"]) > 1:
            for model, cell in row["models"].items():
                label = f"  {model}"
                lines.append(f"{terminal_safe(label):<{width}} {_cells(cell, forensics)}")
    lines.append(f"{'total':<{width}} {_cells(result['total'], forensics)}")
    total = result["total"]
    if forensics:
        wasted = ", ".join(f"{c} {_usd(total['wasted_usd'][c])}" for c in WASTE_CAUSES)
        lines.append(f"wasted by cause: {wasted}")
    notes = []
    if total["unpriced_requests"]:
        notes.append(f"{plural(total['unpriced_requests'], 'request')} at a model with no price (cost left out)")
    if total["unreported_requests"]:
        notes.append(f"{plural(total['unreported_requests'], 'request')} reported no usage (counted as requests only)")
    if result.get("approximate_sessions"):
        notes.append(
            f"~ {plural(result['approximate_sessions'], 'session')} of approximate usage (the agent's rounded figures, "
            "Aider's) in these figures"
        )
    if result["children_in_parents"]:
        notes.append(f"{plural(result['children_in_parents'], 'subagent file')} counted in their parent sessions")
    span = ""
    if result["since"] or result["until"]:
        span = f" from {result['since'] or 'the start'} to {result['until'] or 'now'}"
    lines.append(f"{plural(result['sessions'], 'session')}{span}; days are UTC" + "".join(f"; {n}" for n in notes))
    lines += [f"skipped {terminal_safe(s['error'])}" for s in result["skipped"]]
    return "\n".join(lines)


def format_csv(result: dict[str, Any]) -> str:
    """One line a group and one a group's model (model column filled), then the total; session text escaped."""
    from foldscope.core.cli.output import terminal_safe

    by, forensics = result["by"], result["forensics"]
    columns = [
        "sessions",
        "requests",
        "fresh",
        "cache_read",
        "cache_write",
        "cache_write_1h",
        "output",
        "cost_usd",
        "unpriced_requests",
        "unreported_requests",
    ]
    if forensics:
        columns += [f"wasted_{c}_usd" for c in WASTE_CAUSES] + ["wasted_total_usd", "compactions", "payback_net_usd"]
    extra = ["start", "end", "project", "agent", "agent_version"] if by == "session" else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([by, "model", *extra, *columns])

    def values(cell: dict[str, Any]) -> list[Any]:
        flat = {**cell, **{f"wasted_{c}_usd": v for c, v in cell.get("wasted_usd", {}).items()}}
        return [flat[c] for c in columns]

    for row in result["rows"]:
        facts = [_when(row[k]) if k in ("start", "end") else row[k] for k in extra]
        writer.writerow([row[by], "", *facts, *values(row)])
        for model, cell in row["models"].items():
            writer.writerow([row[by], model, *facts, *values(cell)])
    writer.writerow(["total", "", *([""] * len(extra)), *values(result["total"])])
    return terminal_safe(out.getvalue().rstrip("\n"))
