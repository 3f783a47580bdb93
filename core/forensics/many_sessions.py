"""Where the money went across many sessions (a folder, the library): their cache reports summed by cause,
each subagent file counted once (in its parent), and the requests that wasted most on cache writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foldscope.core.forensics.cause_prices import PARTS, READ_INSTEAD
from foldscope.core.forensics.children import KINDS


def session_cache(path: str) -> dict[str, Any]:
    """One session file's cache report as plain data (a process pool carries it)."""
    from foldscope.core.formats import load_session

    return cache_of(load_session(path))


def cache_of(session) -> dict[str, Any]:
    """A session's cache report under its own launch policy, as plain data (counted by the trace measure, so a child
    may count ahead on the other core, as for `requests`)."""
    from foldscope.core.forensics.cache_report import counted_cache_report
    from foldscope.core.model.launch import session_policy

    return counted_cache_report(session, session_policy(session)).as_dict()


def own_sessions(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results that are no other result's child: a subagent file beside its session (Claude Code's older
    layout) is counted in its parent's totals, not twice."""
    owned = {str(Path(c).resolve()) for r in results for c in r.get("children", [])}
    return [r for r in results if str(Path(r["file"]).resolve()) not in owned]


def _sum_or_none(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known), 8) if known else None


def cache_totals(table: list[dict[str, Any]]) -> dict[str, Any]:
    """The sessions' totals: tokens per part summed; cost_usd summed where priced; the children apart."""
    by: dict[str, dict[str, Any]] = {}
    for part in PARTS:
        # a session of an implicit cache has no write parts (core.forensics.reads): it adds none
        cells = [r["totals"]["by_cause"][part] for r in table if part in r["totals"]["by_cause"]]
        if table and not cells:
            continue  # every session's cache is implicit: no write part at all
        by[part] = {"tokens": sum(c["tokens"] for c in cells), "cost_usd": _sum_or_none([c["cost_usd"] for c in cells])}
        if part in READ_INSTEAD:
            by[part]["waste_usd"] = _sum_or_none([c["waste_usd"] for c in cells])
    kids: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        cells = [r["totals"]["children"][kind] for r in table]
        kids[kind] = {k: sum(c[k] for c in cells) for k in cells[0] if k != "cost_usd"} if cells else {}
        kids[kind]["cost_usd"] = _sum_or_none([c["cost_usd"] for c in cells])
    return {
        "cache_write": sum(r["totals"].get("cache_write", 0) for r in table),
        "by_cause": by,
        "bill_usd": _sum_or_none([r["totals"]["bill_usd"] for r in table]),
        "children": kids,
        "total_usd": _sum_or_none([r["totals"]["total_usd"] for r in table]),
        "unpriced_sessions": sum(r["totals"]["bill_usd"] is None for r in table),
    }


def top_wasted(results: list[dict[str, Any]], n: int = 10) -> list[dict[str, Any]]:
    """The requests whose cache writes wasted most over all the sessions, largest first, each with its file."""
    rows = [{"file": r["file"], **top} for r in results for top in r.get("top_wasted", [])]
    return sorted(rows, key=lambda t: (-t["waste_usd"], t["file"], t["index"]))[:n]
