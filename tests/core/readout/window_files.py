"""Claude Code files for the window's rules, in the shape the dev corpus shows: rounds of a user line and an
assistant line naming its model, and automatic compactions (a compact_boundary line whose compactMetadata records
the trigger and preTokens, then the isCompactSummary user line), written small in each test."""

from __future__ import annotations

from pathlib import Path

from tests.core.live_sessions import SESSION, append, rounds


def compaction(n: int, pre_tokens: int, trigger: str = "auto") -> list[dict]:
    """A compaction after round n: its boundary and the summary that continues the conversation."""
    at = f"2026-05-01T11:{n // 60:02d}:{n % 60:02d}Z"
    return [
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": f"b{n}",
            "parentUuid": None,
            "logicalParentUuid": f"a{n}",
            "sessionId": SESSION,
            "timestamp": at,
            "content": "Conversation compacted",
            "level": "info",
            "isMeta": False,
            "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
        },
        {
            "type": "user",
            "uuid": f"s{n}",
            "parentUuid": f"b{n}",
            "sessionId": SESSION,
            "timestamp": at,
            "isCompactSummary": True,
            "message": {
                "role": "user",
                "content": "This session is being continued from a previous conversation that ran out of context. Summary: ...",
            },
        },
    ]


def claude_code_file(path: Path, model: str, compacted_at: tuple[int, ...] = (), trigger: str = "auto") -> Path:
    """Two rounds on `model`, then for each size a compaction at it and two more rounds."""
    lines = rounds(0, 2)
    n = 2
    for size in compacted_at:
        lines += compaction(n - 1, size, trigger)
        lines += rounds(n, 2)
        lines[-2 * 2]["parentUuid"] = f"s{n - 1}"  # the round after a compaction continues from its summary
        n += 2
    for line in lines:
        if line["type"] == "assistant":
            line["message"]["model"] = model
    append(path, lines)
    return path
