"""`foldscope sessions`: the agent sessions on this machine (Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode, Cline,
Copilot CLI, Aider)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from foldscope.core.formats.registry import sample_flag
from foldscope.core.readout.words import dollars

if TYPE_CHECKING:
    from pathlib import Path

COLUMNS = (
    ("agent", "the agent that wrote the session (--agent's choices name them)"),
    ("start (UTC)", "the first message's or request's time; the list is newest start first"),
    ("end", "the last message's or request's time (its date too when another day than the start's)"),
    ("size", "the session file's size"),
    ("requests", "calls to the model, the subagents' and the compaction summariser's included"),
    (
        "cost",
        "the reported usage priced (subagents and summariser included); - when the model has no price; ~ when the "
        "agent records approximate usage (Aider)",
    ),
    ("model", "the session's model"),
    (
        "project / file",
        "the folder the agent ran in (its problem when the file does not read), then under it the "
        "session's title (the agent's own, else the first prompt, in quotes) and its file",
    ),
)


def register(subparsers) -> None:
    from foldscope.core.cli.output import columns_help

    parser = subparsers.add_parser(
        "sessions",
        help="the agent sessions on this machine (Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode, "
        "Cline, Roo Code, Kilo Code, GitHub Copilot CLI, Aider), newest first",
        **columns_help("Every agent session on this machine, newest start first, read from its reported usage (nothing counted).", COLUMNS),
    )
    from foldscope.core.formats.registry import agents

    parser.add_argument("--since", metavar="DATE", help="only sessions that ran on or after DATE (YYYY-MM-DD, UTC)")
    parser.add_argument(
        "--agent",
        action="append",
        choices=[spec.name for spec in agents()],
        metavar="AGENT",
        help="only this agent's sessions (repeat for several): " + ", ".join(spec.name for spec in agents()),
    )
    parser.add_argument("--project", metavar="TEXT", help="only sessions whose project (folder) contains TEXT")
    parser.add_argument(
        "--in",
        dest="folders",
        action="append",
        default=[],
        metavar="FOLDER",
        help="also look for the sessions an agent keeps in each project (Aider's .aider.chat.history.md) in FOLDER "
        "and its folders three levels down (repeat for several); without it: $AIDER_CHAT_HISTORY_FILE, the current "
        "folder and its git root",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_sessions, format=format_sessions)


def run_sessions(args) -> dict[str, Any]:
    from pathlib import Path

    from foldscope.core.formats.discover import find_sessions, places

    since = _since(args.since)
    folders = [Path(f) for f in getattr(args, "folders", None) or []]
    for folder in folders:  # a mistyped --in is said, not searched in silence
        if not folder.is_dir():
            from foldscope.core.cli.main import UsageError

            raise UsageError(f"--in {folder}: " + ("is not a folder" if folder.exists() else "no such folder"))
    found = find_sessions(agents_=set(args.agent) if args.agent else None, folders=folders)
    rows = [
        f.as_dict()
        for f in found
        if (since is None or (f.end or f.start or f.mtime) >= since)
        and (not args.project or args.project.casefold() in f.project.casefold())
    ]
    # in find_sessions' order: newest start first, a file that gave no time at its last change
    chosen = {k: v for k, v in (("since", args.since), ("agent", args.agent), ("project", args.project)) if v}
    looked = {agent: ", ".join(_where(agent, p) for p in paths) for agent, paths in places(folders=folders).items()}
    return {"folders": looked, "filters": chosen, "sessions": rows}


def _where(agent: str, place: Path) -> str:
    """The folders searched at an agent's place: the place, or the pattern its declaration says (Cline's tasks)."""
    from foldscope.core.formats.registry import format_named

    spec = format_named(agent)
    where = spec.sessions.where if spec is not None and spec.sessions is not None else None
    return str(place) if where is None else where(place)


def _since(text: str | None) -> float | None:
    """--since's date as a UTC timestamp (its midnight); one clear line when it is not a date."""
    if text is None:
        return None
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        from foldscope.core.cli.main import UsageError

        raise UsageError(f"--since: {text!r} is not a date (YYYY-MM-DD)") from None
    return day.timestamp()


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


def format_sessions(result: dict[str, Any]) -> str:
    from foldscope.core.cli.output import terminal_safe

    rows = result["sessions"]
    if not rows:
        folders = ", ".join(f"{a}: {p}" for a, p in result["folders"].items())
        filters = result.get("filters")
        if filters:
            said = ", ".join(f"--{k} {', '.join(v) if isinstance(v, list) else v}" for k, v in filters.items())
            return f"no agent sessions match {said} (looked in {folders})"
        return f"no agent sessions found (looked in {folders})"
    lines = [f"{'agent':<12} {'start (UTC)':<16} {'end':<11} {'size':>9} {'requests':>8} {'cost':>9}  {'model':<28} project / file"]
    for r in rows:
        near = "~" if r.get("usage_precision") == "approximate" else ""  # the agent's rounded figures (Aider's)
        cost = near + dollars(r["cost_usd"]) if r["cost_usd"] is not None else "-"
        requests = "-" if r["requests"] is None else f"{r['requests']:,}"
        tail = r["project"] + ("  (" + r["problem"] + ")" if r["problem"] else "")
        end = _end(r["start"], r.get("end"))
        lines.append(
            f"{r['agent']:<12} {_when(r['start']):<16} {end:<11} {_size(r['size']):>9} {requests:>8} {cost:>9}  "
            f"{(r['model'] or '-')[:28]:<28} {terminal_safe(tail)}"
        )
        if r.get("title"):
            said = f'"{r["title"]}"' if r.get("title_source") == "first prompt" else r["title"]
            lines.append(f"{'':<12} {terminal_safe(said)}")
        flag = sample_flag(r["agent"])  # an Aider history's runs by --session, as the README and its error name them
        lines.append(f"{'':<12} {terminal_safe(r['path'])}" + (f"  {flag} {terminal_safe(r['sample'])}" if r.get("sample") else ""))
    if any(r.get("usage_precision") == "approximate" for r in rows):
        lines.append("~: the cost of approximate usage (the agent records rounded figures, or its own estimate)")
    return "\n".join(lines)
