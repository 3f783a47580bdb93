"""Subagents as child sessions: found beside the session, linked to the call that started them, rolled up apart."""

from __future__ import annotations

import json
from pathlib import Path

from foldscope.core.formats import claude_code, load_session
from foldscope.core.model.session_totals import rolled_up
from tests.core.reader_checks import file_lines, write_lines


def _reported(path: Path) -> list[tuple[int, int, int, int]]:
    """Each response's usage as the file holds it (last line of a message id wins), read without the reader."""
    by_id: dict = {}
    for entry in file_lines(path):
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry and entry.get("type") == "assistant" and isinstance(message, dict) and message.get("usage"):
            u = message["usage"]
            by_id[message.get("id")] = (
                u.get("input_tokens", 0),
                u.get("cache_read_input_tokens", 0),
                u.get("cache_creation_input_tokens", 0),
                u.get("output_tokens", 0),
            )
    return list(by_id.values())


def test_the_dev_session_reads_its_subagent_files_as_children_counted_in_its_totals(corpus_dev):
    path = corpus_dev / "claude_code" / "tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    session = claude_code.read(path)
    names = sorted(Path(c.source).name for c in session.children)
    assert names == ["agent-36541525.jsonl", "agent-50243ee8.jsonl"]
    assert all(c.extras["child_kind"] == "subagent" for c in session.children)
    # These are Claude Code 2.0's warmup calls: no tool call started them.
    assert all(c.extras["parent_call"] is None for c in session.children)
    parts = rolled_up(session)
    child_usage = [u for c in session.children for u in _reported(Path(c.source))]
    assert parts["subagents"].requests == len(child_usage) == 2
    assert parts["subagents"].cache_write == sum(u[2] for u in child_usage)
    assert parts["subagents"].input == sum(u[0] for u in child_usage)
    main = _reported(path)
    assert parts["main"].cache_read == sum(u[1] for u in main)
    assert parts["total"].requests == len(main) + 2
    assert parts["total"].cost_usd == parts["main"].cost_usd + parts["subagents"].cost_usd


def _line(kind, uuid, parent, message, **extra):
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": extra.pop("at"), "message": message, **extra}


def _assistant_message(mid, content, read, write, fresh=3, out=10):
    return {
        "id": mid,
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "usage": {"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": out},
    }


def _session_with_subagents(tmp_path: Path) -> Path:
    # The shape Claude Code 2.1 writes (shared/corpus/README.md, and spotter's subagent.jsonl fixture for
    # toolUseResult.agentId): <session>.jsonl beside <session>/subagents/agent-<agentId>.jsonl, the
    # compaction summariser's own call as agent-acompact-<id>.jsonl; subagent lines are isSidechain.
    main = write_lines(
        tmp_path / "s1.jsonl",
        [
            _line("user", "u1", None, {"role": "user", "content": "explore the repo"}, at="2026-01-01T10:00:00Z"),
            _line(
                "assistant",
                "a1",
                "u1",
                _assistant_message(
                    "msg_1", [{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "look around"}}], 0, 9000
                ),
                at="2026-01-01T10:00:01Z",
            ),
            _line(
                "user",
                "u2",
                "a1",
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "found it"}]},
                toolUseResult={"agentId": "a1b2c3", "status": "completed"},
                at="2026-01-01T10:01:00Z",
            ),
            _line(
                "assistant",
                "a2",
                "u2",
                _assistant_message("msg_2", [{"type": "text", "text": "done"}], 9000, 200),
                at="2026-01-01T10:01:01Z",
            ),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "b1",
                "parentUuid": None,
                "logicalParentUuid": "a2",
                "sessionId": "s1",
                "timestamp": "2026-01-01T10:05:00Z",
                "content": "Compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 9300, "postTokens": 1200},
            },
            _line(
                "user",
                "u3",
                "b1",
                {"role": "user", "content": "This session is being continued ..."},
                isCompactSummary=True,
                at="2026-01-01T10:05:00Z",
            ),
            _line("user", "u4", "u3", {"role": "user", "content": "go on"}, at="2026-01-01T10:06:00Z"),
            _line(
                "assistant", "a3", "u4", _assistant_message("msg_3", [{"type": "text", "text": "ok"}], 0, 1500), at="2026-01-01T10:06:01Z"
            ),
        ],
    )
    folder = tmp_path / "s1" / "subagents"
    folder.mkdir(parents=True)
    side = {"isSidechain": True, "agentId": "a1b2c3"}
    write_lines(
        folder / "agent-a1b2c3.jsonl",
        [
            _line("user", "c1", None, {"role": "user", "content": "look around"}, at="2026-01-01T10:00:02Z", **side),
            _line(
                "assistant",
                "c2",
                "c1",
                _assistant_message("msg_c", [{"type": "text", "text": "found it"}], 0, 4000),
                at="2026-01-01T10:00:50Z",
                **side,
            ),
        ],
    )
    summariser = {"isSidechain": True, "agentId": "acompact-77"}
    write_lines(
        folder / "agent-acompact-77.jsonl",
        [
            _line("user", "k1", None, {"role": "user", "content": "Summarise the conversation"}, at="2026-01-01T10:04:00Z", **summariser),
            # It sends the parent's conversation with its cache marks: it reads the parent's cache.
            _line(
                "assistant",
                "k2",
                "k1",
                _assistant_message("msg_k", [{"type": "text", "text": "summary"}], 9000, 300, out=800),
                at="2026-01-01T10:04:50Z",
                **summariser,
            ),
        ],
    )
    return main


def test_a_subagent_is_linked_to_the_call_that_started_it_and_the_summariser_to_its_compaction(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    by_kind = {c.extras["child_kind"]: c for c in session.children}
    assert set(by_kind) == {"subagent", "summariser"}
    subagent, summariser = by_kind["subagent"], by_kind["summariser"]
    call = session.record.get(subagent.extras["parent_call"])
    assert call.kind == "action_request" and call.content["function"] == "Task"
    assert summariser.extras["parent_call"] is None
    (compaction,) = [e for e in session.events if e["kind"] == "compaction"]
    assert summariser.extras["compaction_note"] == compaction["note_id"]
    assert (compaction["pre_tokens"], compaction["post_tokens"]) == (9300, 1200)


def test_children_are_rolled_up_apart_and_the_summariser_s_cache_reads_stay_reads(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    parts = rolled_up(session)
    assert (parts["main"].requests, parts["subagents"].requests, parts["summariser"].requests) == (3, 1, 1)
    assert parts["summariser"].cache_read == 9000 and parts["summariser"].cache_write == 300
    assert parts["subagents"].cache_write == 4000
    assert parts["total"].cache_read == 9000 + 9000
    assert parts["total"].requests == len(session.trace) + 2  # the children are not in the parent's trace


def test_a_subagent_file_that_does_not_read_is_left_out_with_a_warning(tmp_path):
    main = _session_with_subagents(tmp_path)
    (tmp_path / "s1" / "subagents" / "agent-broken.jsonl").write_text('{"not": "claude"}\n{bad\n{"x": 1}\n')
    session = load_session(main)
    assert len(session.children) == 2
    assert any("subagent file left out" in w and "agent-broken" in w for w in session.warnings)


def test_the_inspect_summary_shows_main_subagents_and_summariser_apart(tmp_path, capsys):
    from foldscope.core.cli.main import main

    path = _session_with_subagents(tmp_path)
    assert main(["inspect", str(path), "--json"]) == 0
    usage = json.loads(capsys.readouterr().out)["usage"]
    assert [usage[k]["requests"] for k in ("main", "subagents", "summariser", "total")] == [3, 1, 1, 5]
    assert main(["inspect", str(path)]) == 0
    assert "compaction summariser 1" in capsys.readouterr().out
