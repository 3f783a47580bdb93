"""Claude Code's subagent files: found beside a session, linked to the calls that started them, read as its children."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from foldscope.core.formats.child_files import readable_children
from foldscope.core.model.session import Session

SUMMARISER_PREFIX = "agent-acompact"


def read_children(session: Session, paths: list[Path], agent_calls: Mapping[str, str], read: Callable[..., Session]) -> list[Session]:
    """Each subagent file as a child session (read with `read`) linked to the call that started it; one that does not
    read is left out with a warning on the parent (the parent still opens)."""
    calls = {m.metadata.get("call_id"): m.id for m in session.record if m.kind == "action_request"}
    notes = [m for m in session.record if m.kind == "note"]
    out = []
    for path, child in readable_children(session, paths, lambda path: read(path, children=False)):
        agent = _agent_id(path, child)
        summariser = path.name.startswith(SUMMARISER_PREFIX)
        call = agent_calls.get(agent) if agent else None
        child.extras.update(
            {"agent_id": agent, "child_kind": "summariser" if summariser else "subagent", "parent_call": calls.get(call) if call else None}
        )
        if summariser:
            child.extras["compaction_note"] = _note_after(notes, child)
        out.append(child)
    return out


def _agent_id(path: Path, child: Session) -> str | None:
    """The agent id a subagent file belongs to: its lines' `agentId`, else its name (agent-ID.jsonl)."""
    named = child.extras.get("agent_id_in_file")
    if isinstance(named, str):
        return named
    return path.stem[len("agent-") :] if path.stem.startswith("agent-") else None


def _note_after(notes: list, child: Session) -> str | None:
    """The compaction note a summariser's call wrote: the first note made after the call's last request."""
    times = [r.at for r in child.trace if r.at is not None]
    if not times:
        return None
    later = [m for m in notes if m.created_at is not None and m.created_at >= max(times)]
    return min(later, key=lambda m: m.created_at).id if later else None


def find_children(path: Path, session_id: str | None) -> list[Path]:
    """Subagent session files that belong to this session (core.formats.claude_code's docstring)."""
    found: list[Path] = []
    folder = path.with_suffix("") / "subagents"
    if folder.is_dir():
        found.extend(sorted(p for p in folder.glob("*.jsonl") if p.is_file()))
    if session_id and not path.name.startswith("agent-"):
        for p in sorted(path.parent.glob("agent-*.jsonl")):
            if p != path and _first_session_id(p) == session_id:
                found.append(p)
    return found


def _first_session_id(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            first = json.loads(handle.readline(1 << 20))
    except (OSError, ValueError):
        return None
    return first.get("sessionId") if isinstance(first, dict) else None


def started_agent(kind: str, value: dict) -> tuple[Any, Any]:
    """Which tool call started which subagent, as (agent, call): a progress line's data.agentId with its
    parentToolUseID, or the result line's (top-level or toolUseResult) agentId with its tool_result's tool_use_id."""
    if kind == "progress":
        data = value.get("data")
        return (data.get("agentId") if isinstance(data, dict) else None), value.get("parentToolUseID")
    message = value.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    agent = call = None
    if isinstance(content, list):  # only a line answering one call names the agent that call started
        ids = [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        call = ids[0] if len(ids) == 1 else None
    if isinstance(call, str):
        result = value.get("toolUseResult")
        agent = value.get("agentId") if not value.get("isSidechain") else None
        if isinstance(result, dict) and isinstance(result.get("agentId"), str):
            agent = result["agentId"]
    return agent, call
