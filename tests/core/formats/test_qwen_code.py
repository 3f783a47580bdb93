"""The Qwen Code reader: one branch of the uuid tree, a request per assistant record with its usageMetadata, and
chat_compression as a compaction with its sizes before and after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions
from tests.core.reader_checks import check_session
from tests.paths import CORPUS

# Its uuids are all trimmed to one placeholder ("[trimmed for fixture]"): there is no tree to read, and the reader
# says so in one line (test_a_file_whose_records_share_one_uuid_is_refused_in_one_line).
NO_TREE = "agent-sessions-system_telemetry.jsonl"


def _sessions() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved. Both are walked so the tests keep running.
    found = sorted(p for folder in ("staged/qwen-code", "dev/qwen_code") for p in (CORPUS / folder).glob("*.jsonl") if p.name != NO_TREE)
    if not found:
        pytest.skip("no Qwen Code sessions in the corpus")
    return found


def independent_calls(path: Path) -> list[dict | None]:
    """Each model call's usageMetadata, read as chatRecordingService.ts documents the records, without the reader:
    the branch is the parentUuid chain from the last record holding a message; an assistant record on it is one
    call (written over several lines under one uuid, it is still one, its usage the last line's that has one)."""
    records: dict[str, dict] = {}
    leaf = None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("isSidechain"):
            continue
        known = records.get(record["uuid"])
        if known is None:
            records[record["uuid"]] = record
        elif known["type"] == record["type"] == "assistant" and record.get("usageMetadata") is not None:
            known["usageMetadata"] = record["usageMetadata"]
        if "message" in record:
            leaf = record["uuid"]
    branch = []
    while leaf is not None:
        branch.append(records[leaf])
        leaf = records[leaf].get("parentUuid")
    return [r.get("usageMetadata") for r in reversed(branch) if r["type"] == "assistant"]


def as_usage(meta: dict | None) -> tuple[int, int, int, int] | None:
    """(fresh input, cache read, cache write, output): promptTokenCount is the whole prompt, the cached part in it;
    thoughts are output; no cache write is reported."""
    if meta is None:
        return None
    cached = meta.get("cachedContentTokenCount", 0)
    return (meta.get("promptTokenCount", 0) - cached, cached, 0, meta.get("candidatesTokenCount", 0) + meta.get("thoughtsTokenCount", 0))


def test_each_assistant_record_on_the_branch_is_one_request_with_its_usage_metadata():
    for path in _sessions():
        assert detect_format(path) == "qwen_code", path
        session = load_session(path)
        check_session(session)
        expected = [as_usage(m) for m in independent_calls(path)]
        got = [(u.input, u.cache_read, u.cache_write, u.output) if u else None for u in (r.usage for r in session.trace)]
        assert got == expected and len(expected) > 0, path


def test_the_real_writer_s_file_has_its_two_calls_and_the_tool_result_between_them():
    path = CORPUS / "staged" / "qwen-code" / "splitrail-qwen_code.jsonl"
    if not path.exists():
        path = CORPUS / "dev" / "qwen_code" / path.name
    if not path.exists():
        pytest.skip("the Qwen Code 0.18.1 sample is not in the corpus")
    session = load_session(path)
    first, second = session.trace
    assert (first.usage.reported_input, second.usage.reported_input, second.usage.cache_read) == (500, 600, 50)
    assert session.record.get(second.view[-1]).kind == "action_response"
    assert session.extras["cwd"] == "/tmp/qwentest"


def test_a_rewound_answer_is_off_the_branch():
    path = CORPUS / "staged" / "qwen-code" / "agent-sessions-019f0000-0000-7000-8000-000000000004.jsonl"
    if not path.exists():
        pytest.skip("the Qwen Code rewind fixture is not in the corpus")
    session = load_session(path)
    texts = [m.text for m in session.record]
    assert "Discarded branch answer." not in texts and "Continue from the rewound branch." in texts
    (request,) = session.trace  # the response written over two lines under one uuid is one call
    assert request.usage is not None and request.usage.reported_input == 12


def _record(uid, parent, kind, **fields):
    return {
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-06-15T14:40:22.000Z",
        "type": kind,
        "cwd": "/work/qwen-project",
        "version": "0.18.1",
        **fields,
    }


def _usage(prompt, cached, out):
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "thoughtsTokenCount": 0,
        "totalTokenCount": prompt + out,
        "cachedContentTokenCount": cached,
    }


# Records as chatRecordingService.ts writes them (QwenLM/qwen-code @ 015346f1 : recordUserMessage,
# recordAssistantTurn, recordToolResult, recordChatCompression); the compressed history is what
# chatCompressionService.ts makes: the summary as a user turn, the model's acknowledgement, then the kept turns.
COMPRESSED = [
    _record("u1", None, "user", message={"role": "user", "parts": [{"text": "Read the README."}]}),
    _record(
        "a1",
        "u1",
        "assistant",
        model="qwen3-coder-plus",
        usageMetadata=_usage(3000, 0, 20),
        message={"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "README.md"}}}]},
    ),
    _record(
        "t1",
        "a1",
        "tool_result",
        message={
            "role": "user",
            "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "words " * 2000}}}],
        },
    ),
    _record(
        "a2",
        "t1",
        "assistant",
        model="qwen3-coder-plus",
        usageMetadata=_usage(5000, 2900, 30),
        message={"role": "model", "parts": [{"text": "It is a README."}]},
    ),
    _record("u2", "a2", "user", message={"role": "user", "parts": [{"text": "List the tests."}]}),
    _record(
        "a3",
        "u2",
        "assistant",
        model="qwen3-coder-plus",
        usageMetadata=_usage(5100, 5000, 10),
        message={"role": "model", "parts": [{"text": "Three tests."}]},
    ),
    _record(
        "x1",
        "a3",
        "system",
        subtype="chat_compression",
        systemPayload={
            "info": {"originalTokenCount": 5110, "newTokenCount": 1200, "compressionStatus": 1},
            "compressedHistory": [
                {"role": "user", "parts": [{"text": "<state_snapshot>README read; tests listed.</state_snapshot>"}]},
                {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
                {"role": "user", "parts": [{"text": "List the tests."}]},
                {"role": "model", "parts": [{"text": "Three tests."}]},
            ],
        },
    ),
    _record("u3", "x1", "user", message={"role": "user", "parts": [{"text": "Thanks."}]}),
    _record(
        "a4",
        "u3",
        "assistant",
        model="qwen3-coder-plus",
        usageMetadata=_usage(1250, 0, 5),
        message={"role": "model", "parts": [{"text": "Welcome."}]},
    ),
]


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_chat_compression_is_a_compaction_keeping_the_turns_its_history_holds(tmp_path, capsys):
    path = _write(tmp_path / "s.jsonl", COMPRESSED)
    session = load_session(path)
    check_session(session)
    assert [as_usage(m) for m in independent_calls(path)] == [
        (u.input, u.cache_read, u.cache_write, u.output) for u in (r.usage for r in session.trace)
    ]
    last = session.trace[-1]
    assert [session.record.get(m).text for m in last.view] == [
        "<state_snapshot>README read; tests listed.</state_snapshot>",
        "Got it. Thanks for the additional context!",
        "List the tests.",
        "Three tests.",
        "Thanks.",
    ]
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (5110, 1200)
    assert row["dropped"]["messages"] == 5  # u1, a1, its call, its result, a2


def test_a_kept_history_that_matches_nothing_keeps_nothing_and_says_so(tmp_path):
    records = [dict(r) for r in COMPRESSED]
    payload = json.loads(json.dumps(records[6]["systemPayload"]))
    payload["compressedHistory"][2]["parts"][0]["text"] = "Something never said."
    records[6] = {**records[6], "systemPayload": payload}
    session = load_session(_write(tmp_path / "s.jsonl", records))
    assert any("does not match" in w for w in session.warnings)
    assert "List the tests." not in [session.record.get(m).text for m in session.trace[-1].view]


def test_sessions_finds_a_qwen_chat_under_its_project_and_follows_qwen_home(tmp_path):
    home = tmp_path / "home"
    chat = _write(home / ".qwen" / "projects" / "-work-qwen-project" / "chats" / "s.jsonl", COMPRESSED)
    rows = [f for f in find_sessions({}, home) if f.agent == "qwen_code"]
    assert [(r.path, r.project, r.requests, r.model, r.problem) for r in rows] == [
        (str(chat), "/work/qwen-project", 4, "qwen3-coder-plus", None)
    ]
    moved = tmp_path / "elsewhere"
    _write(moved / "projects" / "p" / "chats" / "t.jsonl", COMPRESSED)
    assert [f.path for f in find_sessions({"QWEN_HOME": str(moved)}, home) if f.agent == "qwen_code"] == [
        str(moved / "projects" / "p" / "chats" / "t.jsonl")
    ]


def test_a_file_whose_records_share_one_uuid_is_refused_in_one_line(capsys):
    path = CORPUS / "staged" / "qwen-code" / NO_TREE
    if not path.exists():
        pytest.skip("the trimmed Qwen Code telemetry fixture is not in the corpus")
    assert main(["inspect", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no messages found" in err


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay"])
def test_every_command_reads_each_qwen_sample(command, capsys):
    for path in _sessions():
        assert main([command, str(path), "--json"]) == 0, (command, path)
        assert json.loads(capsys.readouterr().out)


def test_a_claude_code_file_is_not_taken_for_qwen_code(corpus_dev):
    for path in sorted((corpus_dev / "claude_code").glob("*.jsonl")):
        assert detect_format(path) == "claude_code", path
