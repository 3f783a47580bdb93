"""The pi reader: v1 and v3 files of the dev corpus, branches, leaves, cycles and compactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from foldscope.core.formats import detect_format, pi
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session, file_lines, write_lines


def _expected(path: Path) -> dict:
    assistants, peak, results = 0, 0, 0
    for entry in file_lines(path):
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            assistants += 1
            u = message.get("usage") or {}
            peak = max(peak, u.get("input", 0) + u.get("cacheRead", 0) + u.get("cacheWrite", 0))
        results += message.get("role") == "toolResult"
    return {"requests": assistants, "peak": peak, "results": results}


def test_every_dev_pi_file_imports_with_requests_peak_and_links_checked(corpus_dev):
    files = sorted((corpus_dev / "pi").glob("*.jsonl"))
    assert files
    for path in files:
        session = pi.read(path)
        expected = _expected(path)
        check_session(session)
        assert len(session.trace) == expected["requests"], path.name
        assert max(r.usage.reported_input for r in session.trace if r.usage) == expected["peak"], path.name
        answers = [m for m in session.record if m.kind == "action_response"]
        assert len(answers) == expected["results"] and not any(m.metadata.get("orphan") for m in answers)
        assert detect_format(path) == "pi", path.name


def test_excerpt_whose_root_parent_is_missing_opens_with_a_warning(corpus_dev):
    session = pi.read(corpus_dev / "pi" / "earendil-works-pi_personal-assistant_session-sample.EXCERPT.jsonl")
    assert len(session.warnings) == 1 and "not in the file" in session.warnings[0]


def _msg(eid, parent, role, content, **extra):
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": role, "content": content, **extra},
    }


def _assistant(eid, parent, text, calls=(), tokens=10):
    blocks = [{"type": "text", "text": text}] + [{"type": "toolCall", "id": c, "name": "read", "arguments": {}} for c in calls]
    return _msg(eid, parent, "assistant", blocks, model="m", usage={"input": tokens, "cacheRead": 1, "cacheWrite": 2, "output": 3})


HEADER = {"type": "session", "version": 3, "id": "sess", "cwd": "/tmp"}


def test_tree_opens_the_branch_of_the_newest_leaf_and_lists_the_others(tmp_path):
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            HEADER,
            _msg("a", None, "user", "start"),
            _assistant("b", "a", "first try"),
            _msg("c", "b", "user", "no, again"),
            _assistant("d", "a", "second try"),
        ],
    )
    session = pi.read(path)
    assert session.view == ["a", "d"]
    assert session.extras["leaves"] == [{"id": "c", "line": 4, "depth": 3}]
    other = pi.read(path, leaf="c")
    assert other.view == ["a", "b", "c"] and other.extras["leaves"][0]["id"] == "d"


def test_a_parent_cycle_is_a_read_error(tmp_path):
    path = write_lines(
        tmp_path / "p.jsonl",
        [HEADER, _msg("a", "c", "user", "x"), _msg("b", "a", "user", "y"), _msg("c", "b", "user", "z"), _msg("d", "b", "user", "leaf")],
    )
    with pytest.raises(ReadError, match="cycle"):
        pi.read(path)


def test_tool_results_link_to_calls_and_compaction_keeps_from_the_first_kept_entry(tmp_path):
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            HEADER,
            _msg("u1", None, "user", "one"),
            _assistant("a1", "u1", "reading", calls=["t1"]),
            _msg("r1", "a1", "toolResult", [{"type": "text", "text": "data"}], toolCallId="t1", isError=True),
            _msg("u2", "r1", "user", "two"),
            _assistant("a2", "u2", "ok", tokens=50),
            {"type": "compaction", "id": "k1", "parentId": "a2", "summary": "earlier work", "firstKeptEntryId": "u2", "tokensBefore": 999},
            _msg("u3", "k1", "user", "three"),
            _assistant("a3", "u3", "done"),
        ],
    )
    session = pi.read(path)
    check_session(session)
    assert session.record.get("t1").content["action_response_id"] == "r1"
    assert session.record.get("r1").metadata["is_error"] is True
    assert session.trace[2].view == ("k1", "u2", "a2", "u3")
    assert session.events[0]["tokens_before"] == 999 and session.events[0]["at_request"] == 2
    assert session.trace[1].usage.reported_input == 53


def test_v1_compaction_by_first_kept_entry_index(tmp_path):
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {"type": "session", "id": "old", "cwd": "/tmp"},
            {"type": "message", "message": {"role": "user", "content": "one"}},
            {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}]}},
            {"type": "message", "message": {"role": "user", "content": "two"}},
            {"type": "compaction", "summary": "sum", "firstKeptEntryIndex": 3, "tokensBefore": 5},
            {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "b"}]}},
        ],
    )
    session = pi.read(path)
    assert session.extras["version"] == 1
    assert [session.record.get(m).text for m in session.trace[1].view] == ["sum", "two"]


# A 1x1 PNG: its size is read from the header, so each provider's rule gives an exact count.
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


@pytest.mark.parametrize(
    ("model", "rule"),
    [("chatgpt-4o-latest", "openai"), ("gpt-5", "openai"), ("o3-mini", "openai"), ("claude-sonnet-4-5", "anthropic")],
)
def test_an_image_is_counted_by_the_rule_of_the_model_in_use_as_caching_names_its_provider(tmp_path, model, rule):
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            HEADER,
            {"type": "model_change", "id": "m", "parentId": None, "modelId": model},
            _msg("u", "m", "user", [{"type": "text", "text": "look"}, {"type": "image", "data": _PNG, "mimeType": "image/png"}]),
            _assistant("a", "u", "seen"),
        ],
    )
    (image,) = pi.read(path).record.get("u").metadata["images"]
    assert image["rule"] == rule and image["exact"]
