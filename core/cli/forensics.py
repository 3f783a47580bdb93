"""`foldscope cache FILE|DIR` and `foldscope compactions FILE|DIR`: why each cache write happened, what each
compaction cost and lost. On a folder, one row per session plus totals, on a process pool as `replay DIR`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from foldscope.core.cli.options import folder_files, is_folder
from foldscope.core.cli.words import FILE_HELP, num, plural
from foldscope.core.model import collector
from foldscope.core.model.launch import session_policy
from foldscope.core.model.money_text import usd_text as _usd
from foldscope.core.model.session import ReadError

# The cache table: a row per part of the bill (the reported input split by why each written token was written),
# then bill and total; its columns, and the folder's and the compactions' lines, as --help and docs/cli.md say them.
CACHE_COLUMNS = (
    (
        "part",
        "fresh (input neither read from nor written to the cache), cache_read, the cache writes by cause: first "
        "(nothing cached yet), append (the new tail: the cost of growing), rewrite (bytes changed before the end "
        "of what was cached: a compaction, a fold note, an edit, a changed system prompt or tool list, a model "
        "switch), expired (unchanged, but past its mark's lifetime), provider (unchanged and in time, written "
        "again by the provider: a miss on its side, or a change in the head the file does not hold), unexplained "
        "(what no rule places); then output; bill: the session's own requests; total: with its subagents and the "
        "compaction summariser",
    ),
    ("tokens", "the tokens of that part, as the provider reported them"),
    ("cost", "their price at the model's prices"),
    ("waste", "what a write of text that could have been read (rewrite, expired, provider, unexplained) cost beyond reading it"),
    ("requests", "in a folder's row: the session's requests"),
    ("cache write", "in a folder's row: the tokens written to the cache"),
    (
        "read share",
        "for a format whose provider caches by itself and bills reads only (Gemini CLI, Qwen Code, Codex): the part of "
        "each request's input read from the cache, in place of the write causes (no write is billed)",
    ),
    (
        "what broke the read prefix",
        "where such a read fell short of the prefix the request before had sent: rewrite (the request changed there), "
        "expired (idle past five minutes), provider (unchanged and in time, not read), unexplained (no time recorded)",
    ),
)
COMPACTION_COLUMNS = (
    ("before -> after", "the request's size before and after the compaction or fold, in tokens"),
    ("summariser", "what the call that wrote the summary cost"),
    ("rewrite", "what writing the changed prefix to the cache again cost"),
    (
        "lost ... exact details",
        "the paths, names, numbers and URLs of the dropped messages the summary does not repeat "
        "word for word (the spec calls them literals)",
    ),
    ("refetched", "tokens of results the agent fetched again after the compaction"),
    ("paid back", "after how many requests the smaller requests had saved what the compaction cost, or never"),
    ("compactions", "in a folder's row: the session's compactions and folds"),
    ("exact details lost", "in a folder's row: the sum over its compactions"),
)


def register(subparsers) -> None:
    from foldscope.core.cli.output import columns_help

    for name, run, fmt, what in (
        ("cache", run_cache, format_cache, "why each cache write happened, and its price"),
        (
            "compactions",
            run_compactions,
            format_compactions,
            "what each compaction or fold cost, dropped and lost, and whether it paid back",
        ),
    ):
        p = subparsers.add_parser(
            name,
            help=f"{what} (a session, or every session in a folder)",
            **columns_help(
                f"{what[0].upper()}{what[1:]}: a session, or a row per session of a folder with the folder's totals.",
                CACHE_COLUMNS if name == "cache" else COMPACTION_COLUMNS,
            ),
        )
        p.add_argument("path", metavar="FILE|DIR", help=f"{FILE_HELP}; or a folder, every session under it")
        p.add_argument("--workers", type=int, metavar="N", help="for a folder: processes (default: CPU count)")
        p.add_argument(
            "--sample",
            "--session",
            metavar="ID[:EPOCH]",
            help="for one file: the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history",
        )
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(run=run, format=fmt)


@collector.spared()  # read and measured in one go: the collector off, as for `requests` (core.model.collector)
def cache_file(path: str, sample: str | None = None) -> dict[str, Any]:
    """One session's cache report as plain data (a process pool carries it)."""
    from foldscope.core.cli.options import read_session, with_estimate_said
    from foldscope.core.forensics.many_sessions import cache_of
    from foldscope.core.readout.usage_precision import marks

    session = read_session(path, sample=sample)
    return with_estimate_said(session, {**cache_of(session), **marks(session)})


@collector.spared()  # read and measured in one go: the collector off, as for `requests` (core.model.collector)
def compactions_file(path: str, sample: str | None = None) -> dict[str, Any]:
    """One session's compaction reports as plain data."""
    from foldscope.core.cli.options import read_session, with_estimate_said
    from foldscope.core.forensics.compactions import compaction_report
    from foldscope.core.readout.usage_precision import marks

    session = read_session(path, sample=sample)
    return with_estimate_said(session, {**compaction_report(session, session_policy(session)).as_dict(), **marks(session)})


def run_cache(args) -> Any:
    return _run(args, cache_file, _cache_row, _cache_totals)


def run_compactions(args) -> Any:
    return _run(args, compactions_file, _compactions_row, _compactions_totals)


def _run(
    args,
    one: Callable[..., dict[str, Any]],
    row: Callable[[dict[str, Any]], dict[str, Any]],
    total: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> Any:
    from foldscope.core.cli.main import UsageError

    path = Path(args.path)
    if not is_folder(path):
        return one(str(path), args.sample)
    if args.sample is not None:
        raise UsageError(f"--sample: for one file; {path} is a folder")
    files = folder_files(path)  # its own files and the sessions in the folders under it, as usage finds them
    if not files:
        raise UsageError(f"{path}: the folder holds no files")
    from foldscope.core.cli.progress import Progress
    from foldscope.core.formats.discover import file_sessions

    # A file of several sessions (an Aider history's runs, an Inspect AI log's samples) is each of them, as `usage`
    # and `sessions` count them, its rows named FILE --session N / --sample ID: asked for one, it was skipped whole.
    each = [(str(f), sample, name) for f in files for sample, name in file_sessions(f)]
    workers = args.workers or os.cpu_count() or 1
    results, skipped = [], []
    progress = Progress(len(each), sys.stderr.isatty())  # a folder of many sessions takes seconds: say how far
    with ProcessPoolExecutor(max_workers=max(1, min(workers, len(each)))) as pool:
        futures = [(name, pool.submit(_or_error, one, f, sample)) for f, sample, name in each]
        for name, future in futures:
            result = future.result()
            progress.step(result)
            if "error" in result:
                skipped.append({"file": name, "error": result["error"]})
            else:
                results.append({**result, "file": name})
    progress.close()
    from foldscope.core.forensics.many_sessions import own_sessions, top_wasted

    own = own_sessions(results)
    table = [row(r) for r in own]
    out = {
        "folder": str(path),
        "sessions": len(table),
        "skipped": skipped,
        "table": table,
        "totals": total(table),
        "children_in_parents": len(results) - len(table),
    }
    if one is cache_file:
        out["top_wasted"] = top_wasted(own)
    return out


def _or_error(one: Callable[[str, str | None], dict[str, Any]], path: str, sample: str | None) -> dict[str, Any]:
    try:
        return one(path, sample)
    except ReadError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # one bad file is a recorded skip, never the end of a folder run
        return {"error": f"{path}: {type(exc).__name__}: {exc}"}


def _cache_row(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "file": result["file"],
        "format": result["format"],
        "model": result["model"],
        "requests": len(result["requests"]),
        "totals": result["totals"],
    }


def _cache_totals(table: list[dict[str, Any]]) -> dict[str, Any]:
    """The folder's totals: tokens per cause summed; cost_usd summed where every session is priced."""
    from foldscope.core.forensics.many_sessions import cache_totals

    return cache_totals(table)


def _compactions_row(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "file": result["file"],
        "format": result["format"],
        "model": result["model"],
        "compactions": result["compactions"],
        "unsent": result.get("unsent", []),
        "totals": result["totals"],
    }


def _compactions_totals(table: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("compactions", "summariser_cost_usd", "rewrite_cost_usd", "lost_literals", "refetched_tokens", "paid_back")
    out: dict[str, Any] = {}
    for key in keys:
        values = [r["totals"][key] for r in table]
        out[key] = (
            sum(v for v in values if v is not None)
            if key in ("compactions", "lost_literals", "refetched_tokens", "paid_back")
            else _sum_or_none(values)
        )
    return out


def _sum_or_none(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known), 8) if known else None


def format_cache(result: dict[str, Any]) -> str:
    from foldscope.core.forensics.cause_prices import PARTS
    from foldscope.core.readout.usage_precision import figure
    from foldscope.core.readout.usage_precision import lines as precision_lines

    if "table" in result:
        lines = [f"{plural(result['sessions'], 'session')} in {result['folder']}, {num(len(result['skipped']))} skipped"]
        lines += [f"  skipped {s['error']}" for s in result["skipped"]]
        for r in result["table"]:
            t = r["totals"]
            if "reads" in t:  # an implicit cache: what was read, not written
                cached = f"cache read {_share(t['reads']['share']):>5}"
            else:
                cached = f"cache write {t['cache_write']:>11,}"
            lines.append(f"  {r['file']}  requests {r['requests']:>6,}  {cached}  bill {_usd(t['bill_usd'])}")
        totals = result["totals"]
    elif result.get("cache_model") == "implicit":
        return "\n".join(_implicit_lines(result) + precision_lines(result))
    else:
        lines = [
            f"{result['file']} ({result['format']}, model {result['model'] or 'unknown'}): {plural(len(result['requests']), 'request')}"
        ]
        if result["requests"] and all(r["reported"] is None for r in result["requests"]):
            lines.append("no request reported its usage: the file holds no bill, so every figure below is 0")
        totals = result["totals"]
    lines += ["", f"{'part':<13}{'tokens':>14}{'cost':>14}{'waste':>14}"]
    for part in PARTS:
        if part not in totals["by_cause"]:
            continue  # a folder of implicit caches only: no write part
        cell = totals["by_cause"][part]
        waste = _usd(cell["waste_usd"]) if "waste_usd" in cell else ""
        lines.append(f"{part:<13}{figure(cell['tokens'], result):>14}{_usd(cell['cost_usd']):>14}{waste:>14}")
    own = "the sessions' own requests" if "table" in result and result["sessions"] != 1 else "this session's own requests"
    lines.append(f"{'bill':<13}{'':>14}{_usd(totals['bill_usd']):>14}  ({own})")
    lines += _children_lines(totals)
    lines.append(f"{'total':<13}{'':>14}{_usd(totals['total_usd']):>14}  (with subagents and the compaction summariser)")
    for top in result.get("top_wasted", []):
        where = f"{top['file']} " if "file" in top else ""
        lines.append(f"  {where}request {top['index']}: wasted {_usd(top['waste_usd'])} {_wasting(top['causes'])}")
    return "\n".join(lines + precision_lines(result))


def _wasting(causes: dict[str, int]) -> str:
    """A request's writes, the wasting ones named: 'writing provider 35,225 tokens (also append 8,126, not waste)'."""
    from foldscope.core.forensics.cause_prices import READ_INSTEAD

    wasting = ", ".join(f"{c} {n:,}" for c, n in causes.items() if c in READ_INSTEAD)
    growing = ", ".join(f"{c} {n:,}" for c, n in causes.items() if c not in READ_INSTEAD)
    return f"writing {wasting} tokens" + (f" (also {growing}, not waste)" if growing else "")


def _children_lines(totals: dict[str, Any]) -> list[str]:
    """The subagents' and the summariser's rows, each its own reported usage priced."""
    lines = []
    for kind in ("subagents", "summariser"):
        cell = totals["children"][kind]
        if cell.get("requests"):
            lines.append(
                f"{kind:<13}{cell['tokens']:>14,}{_usd(cell['cost_usd']):>14}  ({plural(cell['requests'], 'request')}, "
                f"{cell['cache_read']:,} read from the cache)"
            )
    return lines


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _implicit_lines(result: dict[str, Any]) -> list[str]:
    """An implicit cache (core.forensics.reads): the bill's parts, then the read share per request and, where a
    read fell short of the prefix the request before had sent, what broke it. No write rows: none is billed."""
    from foldscope.core.readout.usage_precision import figure

    totals, reads = result["totals"], result["totals"]["reads"]
    lines = [
        f"{result['file']} ({result['format']}, model {result['model'] or 'unknown'}): {plural(len(result['requests']), 'request')}",
        "the provider caches by itself and bills reads only: no cache write to explain, the reads shown instead",
        "",
        f"{'part':<13}{'tokens':>14}{'cost':>14}",
    ]
    for part, cell in totals["by_cause"].items():
        lines.append(f"{part:<13}{figure(cell['tokens'], result):>14}{_usd(cell['cost_usd']):>14}")
    lines.append(f"{'bill':<13}{'':>14}{_usd(totals['bill_usd']):>14}  (this session's own requests)")
    lines += _children_lines(totals)
    lines.append(f"{'total':<13}{'':>14}{_usd(totals['total_usd']):>14}  (with subagents and the compaction summariser)")
    lines += ["", f"read from the cache: {reads['read']:,} of {reads['input']:,} input tokens ({_share(reads['share'])})"]
    if reads["short"]:
        causes = ", ".join(f"{c} {n:,}" for c, n in reads["broke"].items() if n)
        lines.append(
            f"short of the prefix the request before had sent: {reads['short']:,} tokens in "
            f"{plural(reads['requests_short'], 'request')} ({causes})"
        )
    lines += ["", f"{'request':>8}{'input':>12}{'read':>12}{'share':>7}  what broke the read prefix"]
    for r in result["requests"]:
        u, read = r["reported"], r["read"]
        if u is None:
            lines.append(f"{r['index']:>8}  no usage reported")
            continue
        broke = "; ".join(_broke_words(cause, n, read, r) for cause, n in read["broke"].items())
        sent = u["fresh"] + u["cache_read"]
        lines.append(f"{r['index']:>8}{sent:>12,}{u['cache_read']:>12,}{_share(read['share']):>7}  {broke}")
    return lines


def _broke_words(cause: str, tokens: int, read: dict[str, Any], row: dict[str, Any]) -> str:
    if cause == "rewrite" and "rewrite" in read:
        return f"rewrite {tokens:,} ({read['rewrite']['why']})"
    if cause == "expired" and row["gap_s"] is not None:
        return f"expired {tokens:,} (idle {row['gap_s']:,.0f} s)"
    if cause == "provider":
        return f"provider miss {tokens:,}"
    return f"{cause} {tokens:,}"


def format_compactions(result: dict[str, Any]) -> str:
    if "table" in result:
        lines = [f"{plural(result['sessions'], 'session')} in {result['folder']}, {num(len(result['skipped']))} skipped"]
        lines += [f"  skipped {s['error']}" for s in result["skipped"]]
        lines += [
            f"  {r['file']}  compactions {len(r['compactions']):>4,}  exact details lost "
            f"{r['totals']['lost_literals']:>6,}"
            f"  summariser {_usd(r['totals']['summariser_cost_usd'])}"
            for r in result["table"]
        ]
        return "\n".join(lines)
    n = len(result["compactions"])
    lines = [
        f"{result['file']} ({result['format']}): {plural(n, 'compaction or fold', 'compactions or folds')} carried by a recorded request"
    ]
    for c in result["compactions"]:
        payback = "never" if c["payback_requests"] is None else f"after {plural(c['payback_requests'], 'request')}"
        lines.append(
            f"  before request {c['request']} ({c['kind']}): {c['before']:,} -> {c['after']:,} tokens; "
            f"summariser {_usd(c['summariser_cost_usd'])}; rewrite {_usd(c['rewrite_cost_usd'])}; "
            f"lost {c['literals']['lost']:,} of {c['literals']['kept'] + c['literals']['lost']:,} exact details "
            "(paths, names, numbers, URLs); "
            f"refetched {sum(r['tokens'] for r in c['refetched']):,} tokens; paid back {payback}"
        )
    unsent = result.get("unsent") or []
    if unsent:
        lines.append(f"  not carried by any recorded request: {len(unsent):,}")
    for u in unsent:
        if u["before"] is not None and u["after"] is not None:
            sizes = f"; {u['before']:,} -> {u['after']:,} tokens"
        else:
            sizes = f"; before it {u['before']:,} tokens" if u["before"] is not None else ""
        lines.append(f"  {u['kind']} ({u['source']}, note #{u['note_index']}): {u['fate']}: {u['why']}{sizes}")
    from foldscope.core.readout.usage_precision import lines as precision_lines

    return "\n".join(lines + precision_lines(result))
