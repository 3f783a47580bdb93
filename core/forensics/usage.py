"""Where the money went over time: many sessions' reported usage per request, grouped by day, week, month,
session, project, model or agent, with foldscope's own columns (wasted writes by cause, compactions' payback).

A request's figures are the provider's (fresh input, cache read, cache write, output), priced at its own model
as in force when it was sent (core.model.session_totals.request_cost, the figure `inspect` totals), so a group
of one session adds up to `inspect`'s total. Subagents' and the compaction summariser's requests are their
parent session's, each at its own model. Days are UTC dates of each request's time (a file that dates none of
its requests, its session's start). The foldscope columns need
the session counted (the cache report and the compaction report): `plain` leaves them out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from foldscope.core.forensics.cause_prices import READ_INSTEAD
from foldscope.core.model.session import Session

GROUPS = ("day", "week", "month", "session", "project", "model", "agent")
FIGURES = ("requests", "fresh", "cache_read", "cache_write", "cache_write_1h", "output")
WASTE_CAUSES = tuple(c for c in ("rewrite", "expired", "provider", "unexplained") if c in READ_INSTEAD)


@dataclass(frozen=True)
class SessionFacts:
    """Where and when a session ran: its first and last wall time (UTC seconds), project, agent and version."""

    file: str
    agent: str
    project: str
    start: float | None
    end: float | None
    version: str | None
    title: str | None = None

    @property
    def duration_s(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "agent": self.agent,
            "project": self.project,
            "start": self.start,
            "end": self.end,
            "duration_s": self.duration_s,
            "agent_version": self.version,
        }


def session_facts(session: Session) -> SessionFacts:
    """The session's wall times (its messages' and requests' times, subagents' included), project and version."""
    from foldscope.core.formats.discover import project_of

    times = [m.created_at for m in session.record if m.created_at is not None]
    times += [r.at for r in session.trace if r.at is not None]
    for child in session.children:
        times += [r.at for r in child.trace if r.at is not None]
    path = Path(session.source) if session.source else Path(".")
    version = session.extras.get("agent_version")
    meta = session.extras.get("session_meta")
    if version is None and isinstance(meta, list) and meta and isinstance(meta[0], dict):
        version = meta[0].get("cli_version")
    return SessionFacts(
        session.source,
        session.format,
        project_of(session.format, path, session),
        min(times) if times else None,
        max(times) if times else None,
        version if isinstance(version, str) else None,
    )


@dataclass
class Cell:
    """Summed figures of some requests: reported usage, its price, and foldscope's columns."""

    requests: int = 0
    fresh: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    output: int = 0
    cost_usd: float = 0.0
    unpriced_requests: int = 0
    unreported_requests: int = 0
    wasted_usd: dict[str, float] = field(default_factory=lambda: dict.fromkeys(WASTE_CAUSES, 0.0))
    compactions: int = 0
    payback_usd: float = 0.0  # modelled saving less modelled cost, over the compactions with a model
    sessions: set[str] = field(default_factory=set)

    def add(self, other: Cell) -> None:
        for name in (*FIGURES, "unpriced_requests", "unreported_requests", "compactions"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost_usd += other.cost_usd
        self.payback_usd += other.payback_usd
        for cause in WASTE_CAUSES:
            self.wasted_usd[cause] += other.wasted_usd[cause]
        self.sessions |= other.sessions

    def as_dict(self, forensics: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sessions": len(self.sessions),
            **{k: getattr(self, k) for k in FIGURES},
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_requests": self.unpriced_requests,
            "unreported_requests": self.unreported_requests,
        }
        if forensics:
            out["wasted_usd"] = {c: round(v, 6) for c, v in self.wasted_usd.items()}
            out["wasted_total_usd"] = round(sum(self.wasted_usd.values()), 6)
            out["compactions"] = self.compactions
            out["payback_net_usd"] = round(self.payback_usd, 6)
        return out


@dataclass(frozen=True)
class Line:
    """One request (or a compaction) of one session, with what it is grouped by."""

    facts: SessionFacts
    model: str
    at: float | None
    cell: Cell


def request_lines(session: Session, facts: SessionFacts, forensics: dict[int, Cell] | None = None) -> list[Line]:
    """Every request of the session and its children, each priced at its own model; `forensics`, by the
    main session's request index: the waste and compactions to add to that request."""
    from foldscope.core.model.session_totals import request_cost

    out = []
    for owner, fallback in ((session, session.model), *((c, c.model or session.model) for c in session.children)):
        # A file that dates none of its requests (an Aider history: only each run's start) is dated by its start, as
        # `inspect` says it ran: its requests were grouped under an "unknown" day and left out by --since and --until.
        undated = facts.start if all(r.at is None for r in owner.trace) else None
        for r in owner.trace:
            model = r.model or fallback or "unknown"
            cell = Cell(requests=1, sessions={facts.file})
            if r.usage is None:
                cell.unreported_requests = 1
            else:
                u = r.usage
                cell.fresh, cell.cache_read, cell.cache_write, cell.output = u.input, u.cache_read, u.cache_write, u.output
                cell.cache_write_1h = u.cache_write_1h
                cost = request_cost(r, fallback)
                if cost is None:
                    cell.unpriced_requests = 1
                else:
                    cell.cost_usd = cost
            if owner is session and forensics is not None and r.index in forensics:
                extra = forensics[r.index]
                cell.wasted_usd = dict(extra.wasted_usd)
                cell.compactions, cell.payback_usd = extra.compactions, extra.payback_usd
            out.append(Line(facts, model.rsplit("/", 1)[-1], r.at if r.at is not None else undated, cell))
    return out


def forensic_cells(session: Session) -> dict[int, Cell]:
    """Per main request index: what its cache writes wasted, by cause, and the compactions it carried first with
    their net payback (the compaction report's modelled saving less its modelled cost)."""
    from foldscope.core.forensics.compactions import compaction_report
    from foldscope.core.model.launch import session_policy

    report = compaction_report(session, session_policy(session))
    out: dict[int, Cell] = {}
    for row in report.cache.rows:
        waste = row.priced.waste_usd or {}
        if any(waste.get(c) for c in WASTE_CAUSES):
            cell = out.setdefault(row.index, Cell())
            for cause in WASTE_CAUSES:
                cell.wasted_usd[cause] += waste.get(cause, 0.0)
    for c in report.compactions:
        cell = out.setdefault(c.request, Cell())
        cell.compactions += 1
        if c.payback is not None:
            cell.payback_usd += c.payback.saved_usd - c.payback.spent_usd
    return out


def session_lines(path: str, forensics: bool) -> dict[str, Any]:
    """One file's request lines as plain data (a process pool carries it), or its error."""
    from foldscope.core.formats import detect_format, load_session
    from foldscope.core.formats.discover import sessions_in
    from foldscope.core.formats.registry import session_name
    from foldscope.core.model.session import ReadError

    lines: list[Line] = []
    children: list[str] = []
    try:
        # A file of several sessions (an Aider history's runs, an Inspect AI log's samples, an OpenCode database)
        # is each of them, as `sessions` lists them: asked for one, such a file was skipped whole.
        samples = sessions_in(detect_format(Path(path)), Path(path))
        for sample in samples:
            session = load_session(path, sample=sample)
            facts = session_facts(session)
            if sample is not None:
                facts = replace(facts, file=session_name(path, facts.agent, sample))
            lines += request_lines(session, facts, forensic_cells(session) if forensics else None)
            children += [str(Path(c).resolve()) for c in session.children_files()]
    except ReadError as exc:
        return {"file": path, "error": str(exc)}
    except Exception as exc:  # one bad file is a recorded skip, never the end of a folder's summary
        return {"file": path, "error": f"{path}: {type(exc).__name__}: {exc}"}
    return {"file": path, "facts": facts, "lines": lines, "children": children, "sessions": len(samples)}


def day_of(at: float | None) -> date | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).date()


def group_key(by: str, line: Line) -> str:
    day = day_of(line.at)
    if by in ("day", "week", "month") and day is None:
        return "unknown"
    if by == "day":
        return day.isoformat()  # type: ignore[union-attr]
    if by == "week":  # the Monday the ISO week starts on, as a date
        return (day - timedelta(days=day.weekday())).isoformat()  # type: ignore[operator,union-attr]
    if by == "month":
        return day.isoformat()[:7]  # type: ignore[union-attr]
    if by == "session":
        return line.facts.file
    if by == "project":
        return line.facts.project
    if by == "model":
        return line.model
    return line.facts.agent


def within(line: Line, since: date | None, until: date | None) -> bool:
    """Inside the dates (both ends included); a request with no time only when no date is given."""
    if since is None and until is None:
        return True
    day = day_of(line.at)
    return day is not None and (since is None or day >= since) and (until is None or day <= until)


def summarise_usage(
    results: Iterable[dict[str, Any]], by: str, since: date | None = None, until: date | None = None, forensics: bool = True
) -> dict[str, Any]:
    """The groups (sorted by key), each with its totals and its models apart, and the grand total."""
    results = list(results)
    owned = {c for r in results for c in r.get("children", [])}
    own = [r for r in results if "error" not in r and str(Path(r["file"]).resolve()) not in owned]
    groups: dict[str, dict[str, Any]] = {}
    total = Cell()
    for r in own:
        for line in r["lines"]:
            if not within(line, since, until):
                continue
            key = group_key(by, line)
            group = groups.setdefault(key, {"cell": Cell(), "models": {}, "facts": line.facts})
            group["cell"].add(line.cell)
            group["models"].setdefault(line.model, Cell()).add(line.cell)
            total.add(line.cell)
    rows = []
    for key in sorted(groups):
        g = groups[key]
        row: dict[str, Any] = {
            by: key,
            **g["cell"].as_dict(forensics),
            "models": {m: c.as_dict(forensics) for m, c in sorted(g["models"].items())},
        }
        if by == "session":
            row.update({k: v for k, v in g["facts"].as_dict().items() if k != "file"})
        rows.append(row)
    if by == "session":  # sessions in the order they started
        rows.sort(key=lambda r: (r["start"] is None, r["start"] or 0.0, r["session"]))
    from foldscope.core.formats.registry import format_named

    # Sessions whose agent records approximate usage (Aider's rounded figures): said, the figures kept in the sums.
    rounded = [r for r in own if (spec := format_named(r["facts"].agent)) is not None and spec.usage_precision != "exact"]
    return {
        **({"approximate_sessions": sum(r.get("sessions", 1) for r in rounded)} if rounded else {}),
        "by": by,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
        "forensics": forensics,
        "rows": rows,
        "total": total.as_dict(forensics),
        "files": len(results),
        "sessions": sum(r.get("sessions", 1) for r in own),
        "children_in_parents": sum(1 for r in results if "error" not in r) - len(own),
        "skipped": [{"file": r["file"], "error": r["error"]} for r in results if "error" in r],
    }


def parse_date(text: str) -> date:
    """YYYY-MM-DD or YYYYMMDD (ccusage's form); ValueError otherwise."""
    for form in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return datetime.strptime(text, form).date()
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)")
