"""Per-request facts the timeline and window map draw: size, reported input, folds; and the policy's rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from core.count import Counter
from core.model import Session

from app.document import is_note

Report = Callable[[int, int, str], None]

DEFAULT_LINE = 0.8  # context_fold_at
DEFAULT_TARGET = 0.6  # context_fold_target


@dataclass(frozen=True)
class RequestFacts:
    """One request of the trace as drawn: its view, its size and what the provider reported."""

    index: int
    view: tuple[str, ...]
    size: int  # the exact o200k_base count of the compiled request
    reported_input: int | None
    folded_before: bool  # a note entered the view since the previous request (a fold or compaction)


@dataclass(frozen=True)
class Rules:
    """The ceiling and the line and target under it, in tokens, and where the ceiling came from."""

    ceiling: int | None
    line: float = DEFAULT_LINE
    target: float = DEFAULT_TARGET
    source: str = ""

    def at(self, name: str) -> int | None:
        if self.ceiling is None:
            return None
        return {"ceiling": self.ceiling, "line": round(self.ceiling * self.line), "target": round(self.ceiling * self.target)}[name]


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def session_rules(session: Session) -> Rules:
    """The ceiling as the session recorded it: its launch policy, else the cap its fold records name."""
    launch = session.branch_metadata.get("api_launch") if isinstance(session.branch, dict) else None
    launch = launch if isinstance(launch, dict) else {}
    line = launch.get("context_fold_at", DEFAULT_LINE)
    target = launch.get("context_fold_target", DEFAULT_TARGET)
    line = line if isinstance(line, float) and 0 < line <= 1 else DEFAULT_LINE
    target = target if isinstance(target, float) and 0 < target <= 1 else DEFAULT_TARGET
    ceiling = _number(launch.get("max_input_tokens"))
    if ceiling is not None:
        return Rules(ceiling, line, target, "the launch policy")
    folds = (session.manifest or {}).get("context_folds") or []
    caps = [_number(f.get("cap")) for f in folds if isinstance(f, dict)]
    caps = [c for c in caps if c]
    if caps:
        return Rules(caps[-1], line, target, "the fold records")
    return Rules(None, line, target, "no ceiling recorded")


def measure_requests(session: Session, counter: Counter, report: Report) -> tuple[list[RequestFacts], int]:
    """Every request's facts and the estimate of the active view as it stands now, counted exactly
    (the counter memoises each message, so a trace costs about one count of its messages)."""
    record = session.record
    out: list[RequestFacts] = []
    previous_notes: set[str] = set()
    total = len(session.trace)

    def size_of(view: Sequence[str]) -> int:
        return counter.count([record.get(mid) for mid in view], record=record)

    for k, request in enumerate(session.trace):
        view = tuple(mid for mid in request.view if mid in record)
        size = size_of(view)
        notes = {mid for mid in view if is_note(record.get(mid))}
        usage = request.usage
        out.append(
            RequestFacts(
                index=k,
                view=view,
                size=size,
                reported_input=usage.reported_input if usage is not None else None,
                folded_before=bool(notes - previous_notes) and k > 0,
            )
        )
        previous_notes = notes
        if k % 20 == 0:
            report(k, total, "Measuring requests")
    return out, size_of(session.view)
