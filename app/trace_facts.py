"""Per-request facts the timeline and window map draw: size, reported input, folds; and the policy's rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from core.count import Counter
from core import pricing
from core.model import Session
from core.policy import FOLD_AT, FOLD_TARGET, Policy, PolicyError, resolve_ceiling

from app.document import is_note

Report = Callable[[int, int, str], None]

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
    """The ceiling and the line and target under it, in tokens, the price-tier boundary, and why."""

    ceiling: int | None
    line: float = FOLD_AT
    target: float = FOLD_TARGET
    source: str = ""
    tier: int | None = None  # the model's first price-tier boundary, when the pricing table knows it

    def at(self, name: str) -> int | None:
        if name == "tier":
            return self.tier
        if self.ceiling is None:
            return None
        return {"ceiling": self.ceiling, "line": round(self.ceiling * self.line), "target": round(self.ceiling * self.target)}[name]


def rule_names(rules: Rules) -> list[str]:
    """The rules to draw: target, line, ceiling, and the price-tier boundary when it is a separate place."""
    names = ["target", "line", "ceiling"] if rules.ceiling is not None else []
    if rules.tier is not None and rules.tier != rules.ceiling:
        names.append("tier")
    return names


def rule_label(rules: Rules, name: str) -> str:
    value = rules.at(name)
    if name == "tier":
        return f"price tier {value:,}"
    if name == "ceiling" and rules.tier == rules.ceiling:
        return f"ceiling {value:,} (= price tier)"
    return f"{name} {value:,}"


def session_rules(session: Session) -> Rules:
    """The rules the session ran under: its launch policy resolved by core.policy; when that gives
    no ceiling, the cap its fold records name."""
    launch = session.branch_metadata.get("api_launch")
    launch = launch if isinstance(launch, dict) else {}
    try:
        policy = Policy.from_mapping(launch, "the launch record", stored=True)
    except PolicyError as exc:
        policy, note = Policy(source="default"), f"launch record refused ({exc}); "
    else:
        note = ""
    resolution = resolve_ceiling(policy, session.model)
    tier = pricing.first_boundary(session.model or policy.model)
    ceiling, why = resolution.ceiling, note + resolution.why
    if ceiling is None:
        caps = [f.get("cap") for f in (session.manifest or {}).get("context_folds") or [] if isinstance(f, dict)]
        caps = [c for c in caps if isinstance(c, int) and not isinstance(c, bool) and c > 0]
        if caps:
            ceiling, why = caps[-1], f"{why}; the fold records name a cap of {caps[-1]:,}"
    return Rules(ceiling, policy.fold_at, policy.fold_target, why, tier)


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
