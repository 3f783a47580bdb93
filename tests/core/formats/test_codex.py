"""The Codex rollout reader: every dev corpus file opens with counts checked against the file itself."""

from __future__ import annotations

import json
from pathlib import Path

from foldscope.core.formats import codex, detect_format
from tests.core.reader_checks import check_session, file_lines, write_lines


def _expected(path: Path) -> dict:
    """Counts a person can check in the file: one distinct running total per model call, and so on."""
    totals, peak, outputs, window = set(), 0, 0, None
    for entry in file_lines(path):
        payload = entry["payload"]
        if entry["type"] == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            info = payload["info"]
            totals.add(json.dumps(info["total_token_usage"], sort_keys=True))
            peak = max(peak, info["last_token_usage"]["input_tokens"])
            window = info.get("model_context_window", window)
        if entry["type"] == "response_item" and payload.get("type", "").endswith("_call_output"):
            outputs += 1
    return {"requests": len(totals), "peak": peak, "outputs": outputs, "window": window}


def test_every_dev_codex_file_imports_with_requests_peak_window_and_links_checked(corpus_dev):
    files = sorted((corpus_dev / "codex").glob("*.jsonl"))
    assert files
    for path in files:
        session = codex.read(path)
        expected = _expected(path)
        check_session(session)
        assert len(session.trace) == expected["requests"], path.name
        assert max(r.usage.reported_input for r in session.trace if r.usage) == expected["peak"], path.name
        answers = [m for m in session.record if m.kind == "action_response"]
        assert len(answers) == expected["outputs"] and not any(m.metadata.get("orphan") for m in answers)
        assert session.extras["context_window"] == expected["window"]
        assert session.record[0].kind == "system" and session.record[0].id == "base_instructions"
        assert detect_format(path) == "codex", path.name


def test_sanitised_text_is_kept_as_it_is(corpus_dev):
    path = corpus_dev / "codex" / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
    session = codex.read(path)
    assert session.record[0].text.startswith("[REDACTED_TEXT len=")


def _line(kind, payload):
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def _tokens(total, cached=0):
    usage = {"input_tokens": total, "cached_input_tokens": cached, "output_tokens": 5}
    return _line(
        "event_msg", {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": usage, "model_context_window": 1000}}
    )


def test_compacted_with_replacement_history_is_a_note_and_a_new_view(tmp_path):
    path = write_lines(
        tmp_path / "r.jsonl",
        [
            _line("session_meta", {"id": "x", "base_instructions": {"text": "be brief"}}),
            _line("turn_context", {"model": "gpt-x"}),
            _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
            _line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}),
            _line("response_item", {"type": "function_call", "name": "sh", "arguments": '{"cmd": "ls"}', "call_id": "c1"}),
            _tokens(100, 40),
            _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a b"}),
            _line(
                "compacted",
                {
                    "message": "summary so far",
                    "replacement_history": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
                },
            ),
            _line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}),
            _tokens(30),
        ],
    )
    session = codex.read(path)
    check_session(session)
    assert len(session.trace) == 2
    first, second = session.trace
    assert first.usage.input == 60 and first.usage.cache_read == 40 and first.model == "gpt-x"
    # The base instructions go with every request (the Responses API's `instructions`): they survive.
    assert second.view[0] == "base_instructions"
    note = session.record.get(second.view[1])
    assert note.kind == "note" and note.text == "summary so far"
    assert [session.record.get(m).kind for m in second.view] == ["system", "note", "instruction"]
    assert session.record.get(second.view[2]).metadata["replacement"] is True
    call = session.record.get("c1")
    assert call.content["arguments"] == {"cmd": "ls"} and call.content["action_response_id"] == "c1:output"
    assert session.record.get(first.response_id).metadata["thinking"] == "think"
    assert session.events[0]["at_request"] == 1


def test_unknown_items_and_orphan_outputs_warn_and_import(tmp_path):
    path = write_lines(
        tmp_path / "r.jsonl",
        [
            _line("session_meta", {"id": "x", "base_instructions": {"text": "sys"}}),
            _line("response_item", {"type": "hologram"}),
            _line("response_item", {"type": "function_call_output", "call_id": "nope", "output": "x"}),
            _line("mystery", {}),
        ],
    )
    session = codex.read(path)
    assert [w.split(": ")[1] for w in session.warnings] == ["line 2", "line 3", "line 4"]
    assert session.record.get("nope:output").metadata["orphan"] is True


def _rollout(corpus_dev, stem: str) -> Path:
    (path,) = (corpus_dev / "codex").glob(f"rollout-{stem}*.jsonl")
    return path


def _instructions(session) -> list[str]:
    return [m.text for m in session.view_messages() if m.kind == "instruction"]


def test_prompts_that_exist_only_as_user_message_events_are_the_instructions(corpus_dev, tmp_path):
    source = _rollout(corpus_dev, "2026-05-11")
    kept, dropped = [], 0
    for raw in source.read_bytes().splitlines(keepends=True):
        entry = json.loads(raw)
        payload = entry.get("payload", {})
        if (
            entry.get("type") == "response_item"
            and payload.get("role") == "user"
            and payload["content"][0]["text"] in ("show tools", "let's update the defailt context compart to 90 in env var")
        ):
            dropped += 1
            continue
        kept.append(raw)
    assert dropped == 2
    stripped = tmp_path / "events-only.jsonl"
    stripped.write_bytes(b"".join(kept))
    original, only_events = codex.read(source), codex.read(stripped)
    assert _instructions(only_events) == _instructions(original)
    assert _instructions(original).count("show tools") == 1  # the event copy of an item is not a second prompt
    first = only_events.trace[0]
    assert only_events.record.get(first.view[-1]).text == "show tools"  # the first request ends with the prompt
    assert [len(r.view) for r in only_events.trace] == [len(r.view) for r in original.trace]


def test_developer_messages_added_at_a_turn_keep_their_place_and_the_prefix_holds(corpus_dev, tmp_path):
    # Codex writes a developer message at a turn when its settings change (permissions, collaboration
    # mode); no dev rollout has one after the first prompt, so one is written before each later prompt.
    from foldscope.core.request.trace_measure import measure_trace

    source = _rollout(corpus_dev, "2026-02-23T12-40-23")
    lines, prompts = [], 0
    for raw in source.read_bytes().splitlines(keepends=True):
        entry = json.loads(raw)
        payload = entry.get("payload", {})
        if entry.get("type") == "response_item" and payload.get("role") == "user" and prompts >= 3:
            developer = {
                "timestamp": entry["timestamp"],
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": f"<permissions instructions> turn {prompts}"}],
                },
            }
            lines.append(json.dumps(developer).encode() + b"\n")
        if entry.get("type") == "response_item" and payload.get("role") == "user":
            prompts += 1
        lines.append(raw)
    path = tmp_path / "turn-developer.jsonl"
    path.write_bytes(b"".join(lines))
    session = codex.read(path)
    added = [m for m in session.record if m.metadata.get("role") == "developer" and "turn" in m.text]
    assert len(added) >= 3 and all(m.kind == "instruction" for m in added)
    rows = measure_trace(session).rows
    # The share of each request the next one repeats (hoisted into the system block, it fell to ~3%).
    breaks = [r.index for r in rows if r.prefix_share is not None and r.prefix_share < 0.5]
    assert breaks == [] and len(rows) > 40


def test_a_web_search_names_its_unseen_results_as_input_of_its_request(corpus_dev):
    session = codex.read(_rollout(corpus_dev, "2026-05-11"))
    searched = [r for r in session.trace if r.response_id and session.record.get(r.response_id).metadata.get("web_search")]
    assert len(searched) >= 1
    assert all(r.unseen_input and "web search results" in r.unseen_input[0] for r in searched)
    assert not [r for r in session.trace if r.unseen_input and r not in searched]
