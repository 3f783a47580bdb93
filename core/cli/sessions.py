"""`foldscope sessions`: the agent sessions on this machine (Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode), newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sessions", help="the agent sessions on this machine (Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode), newest first")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_sessions, format=format_sessions)


def run_sessions(args) -> dict[str, Any]:
    from foldscope.core.formats.discover import find_sessions, roots

    return {"folders": {agent: str(path) for agent, path in roots().items()},
            "sessions": [found.as_dict() for found in find_sessions()]}


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M") if at is not None else "-"


def _end(start: float | None, end: float | None) -> str:
    """The end's time of day, with its date when it is another day than the start's."""
    if end is None:
        return "-"
    day = datetime.fromtimestamp(end, UTC)
    if start is not None and datetime.fromtimestamp(start, UTC).date() != day.date():
        return day.strftime("%m-%d %H:%M")
    return day.strftime("%H:%M")


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB"):
        if size < 1000:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1000
    return f"{size:,.1f} GB"


def _cost(usd: float | None) -> str:
    """Dollars with the digits a small bill needs: $0.0007, not $0.00."""
    if usd is None:
        return "-"
    if 0 < usd < 0.0001:
        return "<$0.0001"
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def format_sessions(result: dict[str, Any]) -> str:
    from foldscope.core.cli.output import terminal_safe

    rows = result["sessions"]
    if not rows:
        folders = ", ".join(f"{a}: {p}" for a, p in result["folders"].items())
        return f"no agent sessions found (looked in {folders})"
    lines = [f"{'agent':<12} {'start (UTC)':<16} {'end':<11} {'size':>9} {'requests':>8} {'cost':>9}  {'model':<28} project / file"]
    for r in rows:
        cost = _cost(r["cost_usd"])
        requests = "-" if r["requests"] is None else f"{r['requests']:,}"
        tail = r["project"] + ("  (" + r["problem"] + ")" if r["problem"] else "")
        end = _end(r["start"], r.get("end"))
        lines.append(f"{r['agent']:<12} {_when(r['start']):<16} {end:<11} {_size(r['size']):>9} {requests:>8} {cost:>9}  "
                     f"{(r['model'] or '-')[:28]:<28} {terminal_safe(tail)}")
        lines.append(f"{'':<12} {terminal_safe(r['path'])}" + (f"  --sample {terminal_safe(r['sample'])}"
                                                              if r.get("sample") else ""))
    return "\n".join(lines)
