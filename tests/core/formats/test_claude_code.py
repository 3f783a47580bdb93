"""The Claude Code reader: every dev corpus file opens with counts checked against the file itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from foldscope.core.formats import claude_code, detect_format, load_session
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session, file_lines, write_lines


def _claude_files(corpus: Path) -> list[Path]:
    files = sorted((corpus / "claude_code").rglob("*.jsonl"))
    assert files, "no Claude Code files in the dev corpus"
    return files


def _expected(path: Path) -> dict:
    """Counts a person can check in the file, computed here without the reader."""
    responses, peak, boundaries, results = set(), 0, 0, 0
    for entry in file_lines(path):
        if not isinstance(entry, dict) or not isinstance(entry.get("message"), dict):
            if isinstance(entry, dict) and entry.get("subtype") == "compact_boundary":
                boundaries += 1
            continue
        message = entry["message"]
        if entry.get("type") == "assistant" and isinstance(message.get("content"), list):
            if message.get("model") == "<synthetic>":
                continue
            usage = message.get("usage") or {}
            size = (usage.get("input_tokens", 0), usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0))
            responses.add(message.get("id") or size)
            peak = max(peak, sum(size))
        if entry.get("type") == "user" and isinstance(message.get("content"), list):
            results += sum(1 for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    return {"requests": len(responses), "peak": peak, "compactions": boundaries, "results": results}


def test_every_dev_claude_code_file_imports_with_requests_peak_compactions_and_links_checked(corpus_dev):
    for path in _claude_files(corpus_dev):
        session = claude_code.read(path)
        expected = _expected(path)
        check_session(session)
        reported = [r.usage.reported_input for r in session.trace if r.usage]
        assert len(session.trace) == expected["requests"], path.name
        assert max(reported, default=0) == expected["peak"], path.name
        compactions = [e for e in session.events if e["kind"] == "compaction"]
        assert len(compactions) == expected["compactions"], path.name
        answers = [m for m in session.record if m.kind == "action_response"]
        assert len(answers) == expected["results"], path.name
        assert all(not m.metadata.get("orphan") for m in answers), path.name
        assert detect_format(path) == "claude_code", path.name


def test_provenance_points_at_the_line_that_holds_the_message(corpus_dev):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    lines = file_lines(path)
    session = claude_code.read(path)
    for message in session.record:
        entry = lines[message.provenance.line - 1]
        if message.kind == "action_request":
            ids = [b.get("id") for b in entry["message"]["content"] if isinstance(b, dict)]
            assert message.metadata["call_id"] in ids
        elif message.kind in ("instruction", "action_response"):
            assert entry["uuid"] == message.metadata["uuid"]


def test_lines_never_sent_stay_out_of_the_record_and_are_counted(corpus_dev):
    path = corpus_dev / "claude_code" / "subagent.jsonl"
    lines = file_lines(path)
    progress = [i + 1 for i, e in enumerate(lines) if isinstance(e, dict) and e.get("type") == "progress"]
    session = claude_code.read(path)
    assert [line for line, _ in session.extras["unsent"]["progress"]] == progress
    assert not {m.provenance.line for m in session.record} & set(progress)


def test_compaction_in_extracted_file_is_a_note_that_a_later_rewind_abandons(corpus_dev):
    # Line 145 compacts (manual, 46,742 tokens before), but line 150 names line 144 as its parent: the
    # user went back to before the compaction. The provider agrees: the request after it reports
    # 46,759 tokens, on from 46,661 before, not the summary's few thousand.
    path = corpus_dev / "claude_code" / "extracted-dd381a75.jsonl"
    session = claude_code.read(path)
    assert session.extras["extractor"]["_type"] == "hive-mind-meta"
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    assert (event["trigger"], event["pre_tokens"]) == ("manual", 46742)
    note = session.record.get(event["note_id"])
    assert note.text.startswith("This session is being continued")
    (rewind,) = [e for e in session.events if e["kind"] == "branch" and e["line"] == 150]
    assert rewind["parent_line"] == 144 and note.id in rewind["abandoned"]
    after = session.trace[rewind["at_request"]]
    before = session.trace[rewind["at_request"] - 1]
    assert note.id not in after.view and set(before.view) <= set(after.view)
    assert after.usage.reported_input - before.usage.reported_input == 46759 - 46661


def _line_of(session, mid):
    return session.record.get(mid).provenance.line


def test_the_dev_rewind_leaves_the_abandoned_lines_out_of_the_view_from_the_request_after_it(corpus_dev):
    path = corpus_dev / "claude_code" / "extracted-dd381a75.jsonl"
    session = claude_code.read(path)
    (rewind,) = [e for e in session.events if e["kind"] == "branch" and e["line"] == 20]
    assert rewind["parent_line"] == 4 and rewind["at_request"] == 4
    abandoned = set(rewind["abandoned"])
    assert abandoned == {m.id for m in session.record if 5 <= _line_of(session, m.id) <= 19}
    assert len(abandoned) >= 10 and set(session.extras["abandoned"]) >= abandoned  # kept in the full record
    for request in session.trace[4:]:
        assert not abandoned & set(request.view)
    assert [_line_of(session, m) for m in session.trace[4].view] == [2, 3, 4, 20]


def test_the_estimate_at_the_request_after_the_dev_rewind_follows_the_reported_drop(corpus_dev):
    from foldscope.core.request.trace_measure import measure_trace

    rows = measure_trace(claude_code.read(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")).rows
    drop = rows[3].reported_input - rows[4].reported_input
    assert drop > 4000
    assert rows[3].estimate - rows[4].estimate > 0.8 * drop  # before the tree it rose instead
    assert abs(rows[4].estimate - rows[4].reported_input) < 0.03 * rows[4].reported_input


def test_parallel_tool_results_naming_their_own_calls_as_parents_are_not_a_rewind(corpus_dev):
    # subagent.jsonl lines 13 to 16 answer four calls of one response, each naming its own call's line.
    session = claude_code.read(corpus_dev / "claude_code" / "subagent.jsonl")
    assert not [e for e in session.events if e["kind"] == "branch" and e["abandoned"]]
    results = [m.id for m in session.record if m.kind == "action_response"]
    assert set(results) <= set(session.view)


def test_a_resumed_file_holds_no_message_twice_and_its_requests_are_not_doubled(corpus_dev, tmp_path):
    # On resume Claude Code writes the conversation's earlier lines again (same uuids) before the new ones.
    source = corpus_dev / "claude_code" / "session-196820da.jsonl"
    raw = source.read_bytes().splitlines(keepends=True)
    cut = len(raw) // 2
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_bytes(b"".join(raw[:cut] + raw[:cut] + raw[cut:]))
    original, again = claude_code.read(source), claude_code.read(resumed)
    assert again.record.ids() == original.record.ids()
    assert again.view == original.view
    assert [(r.view, r.usage) for r in again.trace] == [(r.view, r.usage) for r in original.trace]
    assert again.extras["repeated_lines"] == sum(1 for line in raw[:cut] if b'"uuid"' in line)
    assert not [w for w in again.warnings if "duplicate id" in w]


def _assistant(mid, blocks, usage_out, line_uuid, **extra):
    usage = {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7, "output_tokens": usage_out}
    return {
        "type": "assistant",
        "uuid": line_uuid,
        "sessionId": "s",
        "message": {"id": mid, "role": "assistant", "model": "claude-x", "content": blocks, "usage": usage},
        **extra,
    }


def _user(uuid, content, **extra):
    return {"type": "user", "uuid": uuid, "sessionId": "s", "message": {"role": "user", "content": content}, **extra}


def _result(call_id, text="ok", **extra):
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}


def test_one_response_split_over_lines_is_one_assistant_message_with_its_calls_and_the_last_usage(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", "do it"),
            _assistant("msg_1", [{"type": "thinking", "thinking": "hmm", "signature": "x"}], 1, "a1"),
            _assistant("msg_1", [{"type": "text", "text": "calling"}], 1, "a2"),
            _assistant("msg_1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}], 1, "a3"),
            _user("u2", [_result("t1", "boom", is_error=True)]),
            _assistant("msg_1", [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}], 42, "a4"),
            _user("u3", [_result("t2")]),
            _assistant("msg_2", [{"type": "text", "text": "done"}], 3, "a5"),
        ],
    )
    session = claude_code.read(path)
    check_session(session)
    assert [m.kind for m in session.record] == [
        "instruction",
        "assistant",
        "action_request",
        "action_request",
        "action_response",
        "action_response",
        "assistant",
    ]
    first = session.record.get("msg_1")
    assert first.content["assistant_response"] == "calling" and first.metadata["thinking"] == "hmm"
    assert len(session.trace) == 2 and session.trace[0].usage.output == 42
    assert session.trace[0].usage.reported_input == 112
    assert session.trace[1].view == ("u1", "msg_1", "t1", "t2", "u2", "u3")
    assert session.record.get("u2").metadata["is_error"] is True


def test_compact_boundary_then_summary_gives_later_requests_a_view_without_the_older_messages(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", "first"),
            _assistant("m1", [{"type": "text", "text": "a"}], 1, "a1"),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "b1",
                "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 1234},
            },
            _user("s1", "This session is being continued...", isCompactSummary=True),
            _user("u2", "next"),
            _assistant("m2", [{"type": "text", "text": "b"}], 1, "a2"),
        ],
    )
    session = claude_code.read(path)
    check_session(session)
    assert session.trace[1].view == ("s1", "u2")
    assert session.record.get("s1").kind == "note" and session.record.get("s1").metadata["context_first_index"] == 0
    assert session.events[0]["trigger"] == "auto" and session.events[0]["pre_tokens"] == 1234
    assert session.events[0]["at_request"] == 1
    assert len(session.record) == 5 and session.view == ["s1", "u2", "m2"]


def test_synthetic_and_sidechain_lines_stay_in_the_record_out_of_view_and_trace(tmp_path):
    synthetic = _assistant("syn", [{"type": "text", "text": "No response requested."}], 0, "a0")
    synthetic["message"]["model"] = "<synthetic>"
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", "hi"),
            synthetic,
            _user("side1", "warmup", isSidechain=True),
            _assistant("m1", [{"type": "text", "text": "a"}], 1, "a1"),
        ],
    )
    session = claude_code.read(path)
    assert "syn" in session.record and "syn" not in session.view
    assert session.record.get("side1").metadata["sidechain"] and "side1" not in session.view
    assert len(session.trace) == 1


def test_subagent_files_beside_the_session_are_listed_as_children(tmp_path):
    main = write_lines(tmp_path / "abc.jsonl", [_user("u1", "hi")])
    (tmp_path / "abc" / "subagents").mkdir(parents=True)
    child = write_lines(tmp_path / "abc" / "subagents" / "agent-1.jsonl", [_user("c1", "task", isSidechain=True)])
    session = claude_code.read(main)
    assert session.extras["children"] == [str(child)]
    assert claude_code.read(Path(session.extras["children"][0])).view == ["c1"]


def test_recoverable_problems_import_with_one_warning_per_line(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", "hi"),
            {"type": "brand-new-kind", "uuid": "x"},
            _user("u2", [_result("missing")]),
            _user("u1", "again"),
            '{"type": "user", "uuid": "u9", "message": {"role": "us',
        ],
    )
    session = claude_code.read(path)
    problems = [w.split(": ", 2)[1:] for w in session.warnings]
    assert [p[0] for p in problems] == ["line 2", "line 3", "line 4", "line 5"]
    assert "unknown entry type" in problems[0][1] and "no tool call" in problems[1][1]
    assert "already read at line 1 with other content" in problems[2][1] and "truncated last line" in problems[3][1]


def test_a_line_that_is_not_json_mid_file_is_skipped_named_and_its_gap_marked_and_the_rest_is_read(tmp_path):
    """Issue 42: a corrupt line in the middle rejected the whole session. The rest is read, the line is named in
    the warnings, and a `gap` event marks where in the record it was, so no figure pretends it was not there."""
    path = write_lines(tmp_path / "s.jsonl", [_user("u1", "hi"), "{not json", _user("u2", "x")])
    session = claude_code.read(path)
    assert [m.content.get("instruction") for m in session.record] == ["hi", "x"]
    assert [w for w in session.warnings if "line 2" in w] == [
        f"{path}: line 2: not JSON at column 2: expecting property name enclosed in double quotes; skipped, "
        "and the requests after it are counted without it"
    ]
    (gap,) = [e for e in session.events if e["kind"] == "gap"]
    assert (gap["line"], gap["first_index"]) == (2, 1)


def test_detected_by_content_not_name_and_format_can_be_forced(tmp_path, corpus_dev):
    source = corpus_dev / "claude_code" / "short.jsonl"
    renamed = tmp_path / "notes.txt"
    renamed.write_bytes(source.read_bytes())
    assert detect_format(renamed) == "claude_code"
    assert load_session(renamed, format="claude_code").format == "claude_code"
    with pytest.raises(ReadError):
        load_session(renamed, format="codex")


def test_reading_never_writes_the_source_file(corpus_dev):
    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    before = (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    claude_code.read(path)
    assert (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()) == before


def test_cli_inspect_reports_a_bad_file_in_one_line_with_exit_2(tmp_path, capsys):
    from foldscope.core.cli.main import main

    # Mostly damaged lines: too many to read past (one damaged line among good ones is skipped and named)
    path = write_lines(tmp_path / "s.jsonl", [_user("u1", "hi"), "\u0000garbage", "\u0000more", _user("u2", "x")])
    assert main(["inspect", "--json", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 3" in err[0] and str(path) in err[0]


def test_an_export_keeps_the_abandoned_branches_in_the_record_and_every_request_view(corpus_dev, tmp_path):
    from foldscope.core.formats.lionagi import write_session

    source = claude_code.read(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    out = tmp_path / "exported.json"
    write_session(source, out)
    native = load_session(out)
    assert native.record.ids() == source.record.ids()
    assert set(source.extras["abandoned"]) <= set(native.record.ids())
    # (The native reader orders a past view by created_at, and this extractor's times are not always
    # in line order, so the views are compared as sets.)
    views = {r.response_id: set(r.view) for r in native.trace}
    assert all(views[r.response_id] == set(r.view) for r in source.trace)
