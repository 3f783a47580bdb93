"""The Copilot CLI reader: a request per assistant.message, compactions with their sizes, and usage either from the
OpenTelemetry export (per call, the provider's) or shared out of session.shutdown's totals (foldscope's estimate,
named as such everywhere)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions
from foldscope.core.model.session import estimated_usage
from tests.core.reader_checks import check_session
from tests.paths import CORPUS


def _samples() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved: both are walked. The VS Code Copilot Chat `.json` beside
    # them is another product's format, not a Copilot CLI session.
    found = sorted(p for folder in ("staged/copilot-cli", "dev/copilot_cli") for p in (CORPUS / folder).glob("*.jsonl"))
    if not found:
        pytest.skip("no Copilot CLI sessions in the corpus")
    return found


def model_calls(path: Path) -> list[dict]:
    """The session's model calls, read from the file without the reader: each `assistant.message` event that is not
    a subagent's (a subagent's carries `parentToolCallId`), as Copilot CLI writes one per call."""
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e["data"] for e in events if e.get("type") == "assistant.message" and e["data"].get("parentToolCallId") is None]


def shutdown_totals(path: Path) -> dict[str, tuple[int, int, int, int]]:
    """Each model's (fresh input, cache read, cache write, output) summed over the file's session.shutdown events,
    read as ccusage's README documents them (usage.inputTokens includes the cache reads and writes)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") != "session.shutdown":
            continue
        for model, metric in event["data"]["modelMetrics"].items():
            u = metric["usage"]
            got = (
                u["inputTokens"] - u["cacheReadTokens"] - u["cacheWriteTokens"],
                u["cacheReadTokens"],
                u["cacheWriteTokens"],
                u["outputTokens"],
            )
            was = out.get(model, (0, 0, 0, 0))
            out[model] = tuple(a + b for a, b in zip(was, got, strict=True))  # type: ignore[assignment]
    return out


# A session in the shape Copilot CLI 1.0 writes (no public writer: the event and field names are those the staged
# agent-sessions fixtures carry and Piebald-AI/splitrail @ 56e4be45 : src/analyzers/copilot_cli.rs reads:
# session.start{sessionId, selectedModel, context.cwd}, user.message{content, transformedContent},
# assistant.message{messageId, content, toolRequests[], outputTokens, model}, tool.execution_complete{toolCallId,
# result.content}, session.compaction_start/complete{preCompactionTokens, postCompactionTokens, summaryContent},
# session.shutdown{modelMetrics.<model>.{requests.count, usage.{inputTokens, outputTokens, cacheReadTokens,
# cacheWriteTokens}}, systemTokens, toolDefinitionsTokens}).
SID = "5f0c1d2e-1111-4222-8333-944445555666"
MODEL = "claude-sonnet-4.5"


def _event(n: int, kind: str, data: dict, second: int) -> dict:
    return {
        "type": kind,
        "data": data,
        "id": f"e{n}",
        "timestamp": f"2026-06-02T09:00:{second:02d}.000Z",
        "parentId": f"e{n - 1}" if n > 1 else None,
    }


def _session_events(shutdown: bool = True) -> list[dict]:
    listing = "\n".join(f"src/module_{i}.py" for i in range(400))
    rows = [
        (
            "session.start",
            {"sessionId": SID, "version": 1, "copilotVersion": "1.0.40", "selectedModel": MODEL, "context": {"cwd": "/home/u/shop"}},
        ),
        ("user.message", {"content": "List the sources", "transformedContent": "List the sources", "attachments": []}),
        ("assistant.turn_start", {"turnId": "0"}),
        (
            "assistant.message",
            {
                "messageId": "m1",
                "content": "",
                "model": MODEL,
                "outputTokens": 40,
                "toolRequests": [{"toolCallId": "call-1", "name": "bash", "arguments": {"command": "ls src"}, "type": "function"}],
            },
        ),
        ("tool.execution_start", {"toolCallId": "call-1", "toolName": "bash", "arguments": {"command": "ls src"}}),
        ("tool.execution_complete", {"toolCallId": "call-1", "success": True, "result": {"content": listing}}),
        (
            "assistant.message",
            {"messageId": "m2", "content": "There are 400 modules.", "model": MODEL, "outputTokens": 25, "toolRequests": []},
        ),
        ("assistant.turn_end", {"turnId": "0"}),
        ("user.message", {"content": "Which is largest?", "transformedContent": "Which is largest?"}),
        ("assistant.message", {"messageId": "m3", "content": "module_7.py.", "model": MODEL, "outputTokens": 30, "toolRequests": []}),
        ("session.compaction_start", {"toolDefinitionsTokens": 8000}),
        (
            "session.compaction_complete",
            {
                "success": True,
                "preCompactionTokens": 16500,
                "postCompactionTokens": 900,
                "summaryContent": "<summary>Listed 400 modules; module_7 is largest.</summary>",
            },
        ),
        ("user.message", {"content": "Thanks", "transformedContent": "Thanks"}),
        ("assistant.message", {"messageId": "m4", "content": "You're welcome.", "model": MODEL, "outputTokens": 10, "toolRequests": []}),
    ]
    if shutdown:
        rows.append(
            (
                "session.shutdown",
                {
                    "shutdownType": "routine",
                    "currentModel": MODEL,
                    "systemTokens": 5000,
                    "toolDefinitionsTokens": 8000,
                    "conversationTokens": 900,
                    "currentTokens": 13900,
                    "modelMetrics": {
                        MODEL: {
                            "requests": {"count": 4, "cost": 4},
                            "usage": {"inputTokens": 60000, "outputTokens": 105, "cacheReadTokens": 40000, "cacheWriteTokens": 12000},
                        }
                    },
                },
            )
        )
    return [_event(n, kind, data, n) for n, (kind, data) in enumerate(rows, 1)]


# Spans as the OpenTelemetry file exporter writes them, one a line (microsoft/vscode-copilot-chat @ 27e0fe8f :
# src/platform/otel/node/fileExporters.ts serializeSpan: name, traceId, spanId, startTime [s, ns], attributes), a
# `chat` span per model call with the GenAI attributes of src/platform/otel/common/genAiAttributes.ts; input_tokens
# includes the cached parts (the OpenTelemetry GenAI semantic conventions).
SPAN_USAGE = [(9000, 0, 8800, 40), (14600, 8800, 2900, 25), (15200, 14000, 300, 30), (2600, 0, 0, 10)]


def _spans() -> list[dict]:
    spans = [
        {
            "traceId": "t1",
            "spanId": "a0",
            "name": "invoke_agent copilot",
            "startTime": [1780390800, 0],
            "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": SID, "gen_ai.usage.input_tokens": 41400},
        },
        {
            "traceId": "t9",
            "spanId": "z0",
            "name": f"chat {MODEL}",
            "startTime": [1780390801, 0],
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "another-session", "gen_ai.usage.input_tokens": 5},
        },
    ]
    for n, (total, read, written, out) in enumerate(SPAN_USAGE):
        spans.append(
            {
                "traceId": "t1",
                "spanId": f"c{n}",
                "parentSpanId": "a0",
                "name": f"chat {MODEL}",
                "kind": 2,
                "startTime": [1780390804 + 3 * n, 500_000_000],
                "attributes": {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.conversation.id": SID,
                    "gen_ai.request.model": MODEL,
                    "gen_ai.usage.input_tokens": total,
                    "gen_ai.usage.cache_read.input_tokens": read,
                    "gen_ai.usage.cache_creation.input_tokens": written,
                    "gen_ai.usage.output_tokens": out,
                },
            }
        )
    spans.append(spans.pop(3))  # written in the order the spans ended, not started
    return spans


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _home_session(home: Path, events: list[dict] | None = None) -> Path:
    return _write(home / ".copilot" / "session-state" / SID / "events.jsonl", events or _session_events())


def test_each_sample_reads_with_a_request_per_assistant_message():
    for path in _samples():
        assert detect_format(path) == "copilot_cli", path
        session = load_session(path)
        check_session(session)
        assert len(session.trace) == len(model_calls(path)) > 0, path


def test_shutdown_totals_shared_out_sum_to_the_totals_and_say_they_are_estimates(tmp_path):
    path = _home_session(tmp_path / "home")
    session = load_session(path)
    check_session(session)
    assert len(session.trace) == len(model_calls(path)) == 4
    ((model, totals),) = shutdown_totals(path).items()
    summed = tuple(sum(getattr(r.usage, f) for r in session.trace) for f in ("input", "cache_read", "cache_write", "output"))
    assert summed == totals
    # the output of each call is the message's own outputTokens, since they sum to the shutdown's total
    assert [r.usage.output for r in session.trace] == [c["outputTokens"] for c in model_calls(path)]
    # a larger request gets the larger share: the third call carries the listing the first did not
    sizes = [r.usage.reported_input for r in session.trace]
    assert sizes[2] > sizes[0] and sizes[3] < sizes[2]  # the last came after the compaction
    why = estimated_usage(session)
    assert why is not None and "estimate" in why and session.warnings[0].endswith(why)
    assert {r.model for r in session.trace} == {model}


def test_every_screen_of_an_estimated_session_names_its_usage_foldscope_s_estimate(tmp_path, capsys):
    path = _home_session(tmp_path / "home")
    assert main(["requests", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(r["reported_estimated"] for r in out["requests"]) and "estimate" in out["warnings"][0]
    assert main(["requests", str(path)]) == 0
    text = capsys.readouterr().out
    assert "~" in text.splitlines()[2] and "~reported: not the provider's report" in text
    assert main(["inspect", str(path), "--json"]) == 0
    assert "foldscope's estimate" in json.loads(capsys.readouterr().out)["warnings"][0]
    for command in ("composition", "cache", "compactions"):
        assert main([command, str(path), "--json"]) == 0
        assert "foldscope's estimate" in json.loads(capsys.readouterr().out)["usage_estimated"], command
    assert main(["replay", str(path), "--json"]) == 0
    assert any("foldscope's estimate" in w for w in json.loads(capsys.readouterr().out)["read_warnings"])
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert "Reported usage</dt><dd>Copilot CLI records usage only as" in (tmp_path / "r.html").read_text()


def test_the_otel_export_is_the_usage_of_each_call_as_the_provider_reported_it(tmp_path):
    home = tmp_path / "home"
    path = _home_session(home)
    _write(home / ".copilot" / "otel" / "copilot-otel.jsonl", _spans())
    session = load_session(path)
    check_session(session)
    expected = []  # read from the spans themselves: the session's chat spans by start
    for span in sorted(_spans(), key=lambda s: s["startTime"]):
        a = span["attributes"]
        if a["gen_ai.operation.name"] == "chat" and a["gen_ai.conversation.id"] == SID:
            read, written = a["gen_ai.usage.cache_read.input_tokens"], a["gen_ai.usage.cache_creation.input_tokens"]
            expected.append((a["gen_ai.usage.input_tokens"] - read - written, read, written, a["gen_ai.usage.output_tokens"]))
    assert [(u.input, u.cache_read, u.cache_write, u.output) for u in (r.usage for r in session.trace)] == expected
    assert estimated_usage(session) is None and session.extras["usage_source"] == "OpenTelemetry export"


def test_the_export_named_by_its_variable_is_read_and_a_mismatched_one_is_said_and_left(tmp_path, monkeypatch):
    path = _write(tmp_path / "elsewhere" / "events.jsonl", _session_events())
    spans = _write(tmp_path / "spans.jsonl", _spans())
    monkeypatch.setenv("COPILOT_OTEL_FILE_EXPORTER_PATH", str(spans))
    assert load_session(path).trace[1].usage.cache_read == 8800
    _write(spans, _spans()[:-1])  # a call's span missing: the order cannot be trusted
    session = load_session(path)
    assert estimated_usage(session) is not None
    assert any("3 chat spans for 4 requests" in w for w in session.warnings)


def test_a_compaction_has_its_summary_and_its_size_before_and_after(tmp_path, capsys):
    path = _home_session(tmp_path / "home")
    session = load_session(path)
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    assert (event["tokens_before"], event["tokens_after"]) == (16500, 900)
    assert "module_7 is largest" in session.record.get(event["note_id"]).text
    after = session.trace[3]
    assert [session.record.get(m).kind for m in after.view] == ["note", "instruction"]
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (16500, 900)


def test_a_truncation_drops_the_oldest_chat_messages_from_the_view(tmp_path):
    events = _session_events()
    events.insert(
        9,
        _event(
            99,
            "session.truncation",
            {"messagesRemovedDuringTruncation": 2, "preTruncationTokensInMessages": 3000, "postTruncationTokensInMessages": 2200},
            9,
        ),
    )
    session = load_session(_write(tmp_path / "events.jsonl", events))
    third = session.trace[2]
    kinds = [session.record.get(m).kind for m in third.view]
    assert kinds[0] == "note" and "List the sources" not in [session.record.get(m).text for m in third.view]
    assert kinds.count("action_response") == 1  # the user's message, the call's assistant message went; its result stayed


def test_sessions_lists_a_copilot_session_and_follows_copilot_home(tmp_path):
    home = tmp_path / "home"
    path = _home_session(home)
    rows = [f for f in find_sessions({}, home) if f.agent == "copilot_cli"]
    assert [(r.path, r.project, r.requests, r.model, r.problem) for r in rows] == [(str(path), "/home/u/shop", 4, MODEL, None)]
    assert rows[0].cost_usd is not None and rows[0].cost_usd > 0
    moved = tmp_path / "moved"
    _write(moved / "session-state" / "other" / "events.jsonl", _session_events())
    assert [f.path for f in find_sessions({"COPILOT_HOME": str(moved)}, home) if f.agent == "copilot_cli"] == [
        str(moved / "session-state" / "other" / "events.jsonl")
    ]


def test_a_copilot_session_is_stored_in_the_library_and_reopened_unread_while_unchanged(tmp_path, capsys):
    path = _home_session(tmp_path / "home")
    db = tmp_path / "library.db"
    opened = []
    for _ in range(2):
        assert main(["inspect", str(path), "--db", str(db), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["format"], out["requests"]) == ("copilot_cli", 4)
        assert "foldscope's estimate" in out["warnings"][0]
        opened.append(out["library_reopened"])
    assert opened == [False, True]


def test_a_live_session_before_its_shutdown_has_no_usage_and_says_nothing_estimated(tmp_path):
    session = load_session(_write(tmp_path / "events.jsonl", _session_events(shutdown=False)))
    assert len(session.trace) == 4 and all(r.usage is None for r in session.trace)
    assert estimated_usage(session) is None


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay", "report"])
def test_every_command_reads_the_copilot_session_and_each_sample(tmp_path, command, capsys):
    for path in [_home_session(tmp_path / "home"), *_samples()]:
        args = [command, str(path)] + (["-o", str(tmp_path / "r.html")] if command == "report" else ["--json"])
        assert main(args) == 0, (command, path)
        out = capsys.readouterr().out
        if command != "report":
            assert json.loads(out)


def test_following_a_growing_events_file_ends_where_the_whole_read_does(tmp_path):
    from foldscope.core.formats.follow import Follower

    events = _session_events()
    live = _write(tmp_path / "events.jsonl", events[:3])
    follower = Follower(live)
    follower.poll()
    for start in range(3, len(events), 4):
        with open(live, "a") as handle:
            handle.write("".join(json.dumps(e) + "\n" for e in events[start : start + 4]))
        follower.poll()
    whole, followed = load_session(live), follower.session()
    assert follower.lines_read == len(events)
    assert followed.record.ids() == whole.record.ids() and followed.view == whole.view
    assert [(r.view, r.response_id, r.usage) for r in followed.trace] == [(r.view, r.response_id, r.usage) for r in whole.trace]
    assert estimated_usage(followed) == estimated_usage(whole) is not None


def test_a_message_written_in_chunks_is_one_call(tmp_path):
    events = _session_events()
    first = events[3]["data"]
    events.insert(
        4,
        _event(
            50,
            "assistant.message",
            {**first, "content": " more", "toolRequests": [], "chunkIndex": 1, "chunkCount": 2, "outputTokens": 0},
            4,
        ),
    )
    session = load_session(_write(tmp_path / "events.jsonl", events))
    check_session(session)
    assert len(session.trace) == 4 and estimated_usage(session) is not None
    assert (
        session.record.get(session.trace[0].response_id).text == "more" or "more" in session.record.get(session.trace[0].response_id).text
    )


def test_each_sample_s_estimates_before_its_shutdown_sum_to_the_shutdown_s_totals():
    checked = 0
    for path in _samples():
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        shutdowns = [n for n, e in enumerate(events) if e["type"] == "session.shutdown"]
        if len(shutdowns) != 1:
            continue
        data = events[shutdowns[0]]["data"]
        # modelMetrics' usage where a model has one, else tokenDetails (the sample's version writes only that)
        usages = [m["usage"] for m in data["modelMetrics"].values() if "usage" in m]
        if usages:
            keys = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")
            inclusive, read, written, out = (sum(u[k] for u in usages) for k in keys)
        else:
            inclusive, read, written, out = (
                data["tokenDetails"][k]["tokenCount"] for k in ("input", "cache_read", "cache_write", "output")
            )
        before = sum(1 for e in events[: shutdowns[0]] if e["type"] == "assistant.message" and e["data"].get("parentToolCallId") is None)
        trace = load_session(path).trace[:before]
        assert sum(r.usage.reported_input for r in trace) == inclusive, path
        assert (sum(r.usage.cache_read for r in trace), sum(r.usage.cache_write for r in trace)) == (read, written), path
        assert sum(r.usage.output for r in trace) == out, path
        checked += 1
    assert checked, "no sample holds one session.shutdown"


def test_the_followed_status_line_marks_the_cache_figures_as_estimates(tmp_path, capsys):
    path = _home_session(tmp_path / "home")
    assert main(["follow", str(path), "--line", "--polls", "1", "--interval", "0", "--no-color"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "cache read ~" in line and "(usage estimated from totals)" in line


def test_the_text_marks_every_figure_made_from_estimated_usage_as_requests_marks_its_rows(tmp_path, capsys):
    # review9: `requests` marked each row's shared-out usage ~61, where inspect said "peak reported input: 61" and
    # `cache` "fresh 95", unmarked, and both gave the next request's prediction made from it unmarked.
    path = _home_session(tmp_path / "home")
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"peak reported input: ~\d", text) and re.search(r"next request: predicted ~\d", text)
    assert main(["requests", str(path)]) == 0
    assert re.search(r"next request: predicted ~\d", capsys.readouterr().out)
    assert main(["cache", str(path)]) == 0
    assert re.search(r"^fresh +~\d", capsys.readouterr().out, re.M)
    assert main(["inspect", str(path), "--json"]) == 0
    assert "foldscope's estimate" in json.loads(capsys.readouterr().out)["usage_estimated"]
