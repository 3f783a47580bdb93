"""Invariants every reader's Session must hold, and small helpers for writing session files in tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foldscope.core.model.session import Session


def write_lines(path: Path, entries: list[Any]) -> Path:
    """Write entries as JSONL; a str entry is written as it is (for broken lines)."""
    with open(path, "w", encoding="utf-8") as handle:
        for entry in entries:
            handle.write((entry if isinstance(entry, str) else json.dumps(entry)) + "\n")
    return path


def check_session(session: Session) -> None:
    """The record/view/trace invariants, and every call and result linked to a message of the right kind."""
    record = session.record
    session.check_view(session.view)
    for request in session.trace:
        session.check_view(request.view)
        if request.response_id is not None:
            assert record.get(request.response_id).kind == "assistant"
            assert request.response_id not in request.view  # compiled before its own response
    assert [r.index for r in session.trace] == list(range(len(session.trace)))
    for message in record:
        assert message.provenance is not None and message.provenance.file == session.source
        if message.kind == "action_response" and not message.metadata.get("orphan"):
            request = record.get(message.content["action_request_id"])
            assert request.kind == "action_request"
            assert request.metadata["call_id"] == message.metadata["call_id"]
        if message.kind == "action_request" and message.content["action_response_id"] is not None:
            answer = record.get(message.content["action_response_id"])
            assert answer.content["action_request_id"] == message.id
    for event in session.events:
        if event["kind"] == "compaction":
            assert record.get(event["note_id"]).kind == "note"


def file_lines(path: Path) -> list[Any]:
    """Each line of a JSONL file parsed (None for a line that does not parse), index 0 = line 1."""
    out = []
    with open(path, "rb") as handle:
        for raw in handle:
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append(None)
    return out
