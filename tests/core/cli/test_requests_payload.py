"""`requests --payload K` in text prints the payload itself, each cache mark on the line after the block it ends."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.cli.payload_text import payload_text


def both(capsys, path, k):
    argv = ["requests", str(path), "--payload", str(k), "--caching"]
    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["payload"]
    assert main(argv) == 0
    return shown, capsys.readouterr().out


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "cache_control":  # said by the mark's own line
                yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@pytest.mark.parametrize(
    "name, k", [("claude_code/tool_heavy.jsonl", 3), ("codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl", 0)]
)
def test_the_text_holds_every_string_of_the_payload_and_a_line_per_mark(capsys, corpus_dev, name, k):
    path = corpus_dev / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    shown, text = both(capsys, path, k)
    assert shown["marks"], "the case needs a request with cache marks"
    lines = text.splitlines()
    for value in strings(shown["payload"]):
        for line in value.splitlines():
            assert any(line in said for said in lines), line
    assert sum("◀ cache mark" in line for line in lines) == len(shown["marks"])


def test_a_mark_line_follows_the_block_it_ends_before_the_next_block():
    payload = {
        "system": [
            {"type": "text", "text": "rules"},
            {"type": "text", "text": "more rules", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "first\nsecond"},
                    {"type": "text", "text": "last", "cache_control": {"type": "ephemeral"}},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "after"}]},
        ],
    }
    marks = [
        {"where": "system", "item": -1, "block": None, "lifetime": "1h", "anchor": "stable", "index": None},
        {"where": "messages", "item": 0, "block": 1, "lifetime": "5m", "anchor": "tail", "index": 4},
    ]
    lines = payload_text(2, payload, marks)
    said = [i for i, line in enumerate(lines) if "◀ cache mark" in line]
    assert len(said) == 2

    def block_before(i):  # the lines from the nearest block heading up to line i
        start = max(j for j in range(i) if lines[j].strip().startswith("["))
        return lines[start:i]

    assert any('"more rules"' in line for line in block_before(said[0])) and "1h" in lines[said[0]]
    assert any('"last"' in line for line in block_before(said[1])) and "5m" in lines[said[1]]
    assert "message #4" in lines[said[1]]
    assert (
        next(i for i, line in enumerate(lines) if line.strip() == "second")
        < said[1]
        < next(i for i, line in enumerate(lines) if '"after"' in line)
    )
    assert not any("cache_control" in line for line in lines)  # said by the mark's line instead
