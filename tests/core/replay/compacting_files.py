"""A Claude Code file whose agent compacts by itself, in the shape the format shows: rounds whose reported usage is the
unseen head plus the view's text, and, once a response's context reaches Claude Code's point (the window less 33,000),
a compact_boundary line (trigger auto, preTokens) and the isCompactSummary line the next round continues from."""

from __future__ import annotations

from pathlib import Path

from foldscope.core.request.tokens import count_text
from tests.core.live_sessions import SESSION, append, assistant, user

HEAD = 15_000  # the system prompt and tools the file does not hold
POINT = 200_000 - 20_000 - 13_000  # Claude Code's default point on a 200,000-token window
SUMMARY = "This session is being continued from a previous conversation that ran out of context. Summary: " + "gist " * 2500


def summary_lines(n: int, pre_tokens: int) -> list[dict]:
    at = f"2026-05-01T10:{n // 60:02d}:{n % 60:02d}.5Z"
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
            "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens},
        },
        {
            "type": "user",
            "uuid": f"s{n}",
            "parentUuid": f"b{n}",
            "sessionId": SESSION,
            "timestamp": at,
            "isCompactSummary": True,
            "message": {"role": "user", "content": SUMMARY},
        },
    ]


def compacting_file(path: Path, rounds: int = 34, size: int = 11_000, point: int = POINT) -> list[int]:
    """Write the file; return the requests its compactions preceded (the request after the one that crossed)."""
    lines: list[dict] = []
    carried, after, compacted = 0, None, []
    for n in range(rounds):
        question = user(n, f"step {n}: " + f"w{n} " * size)
        if after is not None:
            question["parentUuid"], after = after, None
        carried += count_text(question["message"]["content"])
        reply = assistant(n, f"done with step {n}", input_tokens=HEAD + carried - 14)
        lines += [question, reply]
        carried += count_text(reply["message"]["content"][0]["text"])
        reported = HEAD + carried + reply["message"]["usage"]["output_tokens"]
        if reported >= point:  # Claude Code checks the last response's context, then compacts before the next request
            lines += summary_lines(n, reported)
            after, carried = f"s{n}", count_text(SUMMARY)
            compacted.append(n + 1)
    append(path, lines)
    return [k for k in compacted if k < rounds]
