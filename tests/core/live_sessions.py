"""Claude Code lines built in the shape the dev corpus shows (user, assistant with usage, tool_use and tool_result), for following tests."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "5e551011-0000-4000-8000-000000000001"


def user(n: int, text: str) -> dict:
    return {
        "type": "user",
        "uuid": f"u{n}",
        "parentUuid": f"a{n - 1}" if n else None,
        "sessionId": SESSION,
        "timestamp": f"2026-05-01T10:{n // 60:02d}:{n % 60:02d}Z",
        "message": {"role": "user", "content": text},
    }


def assistant(n: int, text: str, input_tokens: int = 3_000, tool: tuple[str, str, dict] | None = None) -> dict:
    content: list[dict] = [{"type": "text", "text": text}]
    if tool is not None:
        content.append({"type": "tool_use", "id": tool[0], "name": tool[1], "input": tool[2]})
    return {
        "type": "assistant",
        "uuid": f"a{n}",
        "parentUuid": f"u{n}",
        "sessionId": SESSION,
        "timestamp": f"2026-05-01T10:{n // 60:02d}:{n % 60:02d}Z",
        "message": {
            "id": f"msg_{n}",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "usage": {"input_tokens": 4, "cache_read_input_tokens": input_tokens, "cache_creation_input_tokens": 10, "output_tokens": 20},
        },
    }


def result(n: int, call_id: str, output: str) -> dict:
    return {
        "type": "user",
        "uuid": f"r{n}",
        "parentUuid": f"a{n}",
        "sessionId": SESSION,
        "timestamp": f"2026-05-01T10:{n // 60:02d}:{n % 60:02d}Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}]},
    }


def rounds(start: int, count: int) -> list[dict]:
    """`count` rounds of a user line and an assistant line, numbered from `start`."""
    out: list[dict] = []
    for n in range(start, start + count):
        out += [user(n, f"question {n}: " + "word " * 40), assistant(n, f"answer {n}: " + "reply " * 60, 3_000 + 200 * n)]
    return out


def append(path: Path, lines: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")
