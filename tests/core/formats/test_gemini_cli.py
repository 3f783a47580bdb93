"""The Gemini CLI reader: a request per gemini message with the tokens it recorded, rewinds, checkpoints as compactions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions, project_of
from tests.core.reader_checks import check_session
from tests.paths import CORPUS


def _sessions() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved. Both are walked so the tests keep running. The
    # `*.responses.jsonl` files beside them are recorded API responses, not session files.
    found = sorted(
        p
        for folder in ("staged/gemini-cli", "dev/gemini_cli")
        for p in (CORPUS / folder).glob("*")
        if p.suffix in (".json", ".jsonl") and not p.name.endswith(".responses.jsonl")
    )
    if not found:
        pytest.skip("no Gemini CLI sessions in the corpus")
    return found


def independent_calls(path: Path) -> list[dict | None]:
    """Each model call's `tokens`, read from the file as chatRecordingTypes.ts documents it, without the reader:
    a `gemini` message is one call; a message written again under its id is patched (its last write holds its
    tokens); a message first seen inside a `$set.messages` checkpoint is a synthetic turn, not a call."""
    text = path.read_text()
    try:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        if len(records) == 1 and "messages" in records[0]:
            raise ValueError
    except ValueError:  # the older layout: one object holding `messages`
        records = json.loads(text)["messages"]
    order: list[str] = []
    last: dict[str, dict] = {}
    for record in records:
        if record.get("type") == "gemini":
            if record["id"] not in last:
                order.append(record["id"])
            last[record["id"]] = record
    return [last[i].get("tokens") for i in order]


def as_usage(tokens: dict | None) -> tuple[int, int, int, int] | None:
    """(fresh input, cache read, cache write, output) from a `tokens` object: input counts the cached tokens
    (promptTokenCount), the tool-use prompt is input too, thoughts are billed as output; no cache write."""
    if tokens is None:
        return None
    cached = tokens.get("cached", 0)
    return (tokens["input"] - cached + tokens.get("tool", 0), cached, 0, tokens["output"] + tokens.get("thoughts", 0))


def test_each_gemini_message_is_one_request_with_the_tokens_it_recorded():
    for path in _sessions():
        assert detect_format(path) == "gemini_cli", path
        session = load_session(path)
        check_session(session)
        expected = [as_usage(t) for t in independent_calls(path)]
        got = [(u.input, u.cache_read, u.cache_write, u.output) if u else None for u in (r.usage for r in session.trace)]
        assert got == expected, path
        assert len(session.trace) == len(expected) > 0


def test_the_real_numbers_read_as_gemini_s_implicit_cache():
    path = CORPUS / "staged" / "gemini-cli" / "agent-sessions-jsonl_v040.jsonl"
    if not path.exists():
        path = CORPUS / "dev" / "gemini_cli" / path.name
    if not path.exists():
        pytest.skip("the v0.40 Gemini CLI sample is not in the corpus")
    second = load_session(path).trace[1].usage
    assert second is not None
    assert (second.reported_input, second.cache_read, second.cache_write) == (12_069, 11_502, 0)


# A session as chatRecordingService.ts writes one (google-gemini/gemini-cli @ 5411f113 :
# packages/core/src/services/chatRecordingService.ts): the metadata line, messages re-appended when their tokens
# and tool calls arrive, a `$set` of metadata, and /compress's `$set.messages` checkpoint (updateMessagesFromHistory):
# a new summary turn and the model's acknowledgement (chatCompressionService.ts), then the kept history.
COMPRESSED = [
    {"sessionId": "s1", "projectHash": "abc", "startTime": "2026-05-01T10:00:00.000Z", "kind": "main"},
    {"id": "u1", "timestamp": "2026-05-01T10:00:01.000Z", "type": "user", "content": [{"text": "Summarise the README."}]},
    {"id": "g1", "timestamp": "2026-05-01T10:00:02.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-pro"},
    {
        "id": "g1",
        "timestamp": "2026-05-01T10:00:02.000Z",
        "type": "gemini",
        "content": "",
        "model": "gemini-2.5-pro",
        "tokens": {"input": 9000, "output": 40, "cached": 0, "thoughts": 12, "tool": 0, "total": 9052},
        "toolCalls": [
            {
                "id": "read_file-1",
                "name": "read_file",
                "args": {"path": "README.md"},
                "status": "success",
                "timestamp": "2026-05-01T10:00:03.000Z",
                "result": [
                    {
                        "functionResponse": {
                            "id": "read_file-1",
                            "name": "read_file",
                            "response": {"output": "# Project\n" + "words " * 3000},
                        }
                    }
                ],
            }
        ],
    },
    {"$set": {"lastUpdated": "2026-05-01T10:00:03.000Z"}},
    {
        "id": "g2",
        "timestamp": "2026-05-01T10:00:05.000Z",
        "type": "gemini",
        "content": "It describes the project.",
        "model": "gemini-2.5-pro",
        "tokens": {"input": 12100, "output": 30, "cached": 8900, "thoughts": 0, "tool": 0, "total": 12130},
    },
    {"id": "u2", "timestamp": "2026-05-01T10:01:00.000Z", "type": "user", "content": [{"text": "Now list the tests."}]},
    {
        "id": "g3",
        "timestamp": "2026-05-01T10:01:02.000Z",
        "type": "gemini",
        "content": "There are three tests.",
        "model": "gemini-2.5-pro",
        "tokens": {"input": 12200, "output": 20, "cached": 12000, "thoughts": 0, "tool": 0, "total": 12220},
    },
    {
        "$set": {
            "messages": [
                {
                    "id": "c1",
                    "timestamp": "2026-05-01T10:02:00.000Z",
                    "type": "user",
                    "content": [{"text": "<state_snapshot>A README summary, then the tests.</state_snapshot>"}],
                },
                {
                    "id": "c2",
                    "timestamp": "2026-05-01T10:02:00.000Z",
                    "type": "gemini",
                    "content": [{"text": "Got it. Thanks for the additional context!"}],
                },
                {"id": "u2", "timestamp": "2026-05-01T10:01:00.000Z", "type": "user", "content": [{"text": "Now list the tests."}]},
                {"id": "g3", "timestamp": "2026-05-01T10:01:02.000Z", "type": "gemini", "content": "There are three tests."},
            ],
            "lastUpdated": "2026-05-01T10:02:00.000Z",
        }
    },
    {"id": "u3", "timestamp": "2026-05-01T10:03:00.000Z", "type": "user", "content": [{"text": "Thanks."}]},
    {
        "id": "g4",
        "timestamp": "2026-05-01T10:03:02.000Z",
        "type": "gemini",
        "content": "You're welcome.",
        "model": "gemini-2.5-pro",
        "tokens": {"input": 400, "output": 8, "cached": 0, "thoughts": 0, "tool": 0, "total": 408},
    },
]


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_patched_message_is_one_request_with_its_last_tokens_and_its_tool_call(tmp_path):
    session = load_session(_write(tmp_path / "session-a.jsonl", COMPRESSED))
    check_session(session)
    assert [as_usage(t) for t in independent_calls(tmp_path / "session-a.jsonl")] == [
        (u.input, u.cache_read, u.cache_write, u.output) for u in (r.usage for r in session.trace)
    ]
    assert len(session.trace) == 4  # g1, g2, g3, g4: the checkpoint's acknowledgement is no call
    calls = [m for m in session.record if m.kind == "action_request"]
    assert [c.content["function"] for c in calls] == ["read_file"]
    assert [m.kind for m in session.record].count("action_response") == 1
    assert session.record.get(session.trace[1].view[-1]).kind == "action_response"  # g2 was sent g1's result


def test_a_messages_checkpoint_with_a_new_summary_is_a_compaction_with_its_size_before_and_after(tmp_path, capsys):
    path = _write(tmp_path / "session-a.jsonl", COMPRESSED)
    session = load_session(path)
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    note = session.record.get(event["note_id"])
    assert "<state_snapshot>" in note.text
    after = session.trace[3]  # g4, the first call after the checkpoint
    assert [session.record.get(m).text for m in after.view] == [
        note.text,
        "Got it. Thanks for the additional context!",
        "Now list the tests.",
        "There are three tests.",
        "Thanks.",
    ]
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (12_200, 400)  # g3's reported input, then g4's
    assert row["dropped"]["messages"] == 5  # u1, g1, its call and result, g2


def test_a_rewind_takes_the_message_and_what_followed_out_of_the_view(tmp_path):
    records = COMPRESSED[:8] + [
        {"$rewindTo": "u2"},
        {"id": "u2b", "timestamp": "2026-05-01T10:04:00.000Z", "type": "user", "content": "Other."},
        {
            "id": "g5",
            "timestamp": "2026-05-01T10:04:01.000Z",
            "type": "gemini",
            "content": "Ok.",
            "model": "gemini-2.5-pro",
            "tokens": {"input": 12150, "output": 2, "cached": 12000},
        },
    ]
    session = load_session(_write(tmp_path / "session-r.jsonl", records))
    check_session(session)
    last = session.trace[-1]
    texts = [session.record.get(m).text for m in last.view]
    assert "Now list the tests." not in texts and "There are three tests." not in texts and texts[-1] == "Other."
    assert len(session.trace) == 4 and last.usage is not None and last.usage.cache_read == 12_000


def test_sessions_finds_a_gemini_chat_under_its_project_and_follows_gemini_cli_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    chat = _write(home / ".gemini" / "tmp" / "my-project" / "chats" / "session-2026-05-01T10-00-s1.jsonl", COMPRESSED)
    _write(chat.parent / "s1" / "subagent-1.jsonl", COMPRESSED)  # a subagent's chat: not a session of its own
    rows = [f for f in find_sessions({}, home) if f.agent == "gemini_cli"]
    assert [(r.path, r.project, r.requests, r.model, r.problem) for r in rows] == [(str(chat), "my-project", 4, "gemini-2.5-pro", None)]
    assert rows[0].cost_usd is not None and rows[0].cost_usd > 0
    moved = tmp_path / "other"
    _write(moved / ".gemini" / "tmp" / "p" / "chats" / "session-x.jsonl", COMPRESSED)
    assert [f.project for f in find_sessions({"GEMINI_CLI_HOME": str(moved)}, home) if f.agent == "gemini_cli"] == ["p"]


def test_a_gemini_chat_kept_outside_a_chats_folder_names_no_project_rather_than_its_folders_name(tmp_path):
    staged = _write(tmp_path / "staged" / "session-x.jsonl", COMPRESSED)
    session = load_session(staged)
    assert project_of("gemini_cli", staged, session) == "unknown"
    chat = _write(tmp_path / ".gemini" / "tmp" / "my-project" / "chats" / "session-x.jsonl", COMPRESSED)
    assert project_of("gemini_cli", chat, load_session(chat)) == "my-project"
    subagent = _write(chat.parent / "s1" / "subagent-1.jsonl", COMPRESSED)
    assert project_of("gemini_cli", subagent, None) == "my-project"


@pytest.mark.parametrize(
    "records, problem",
    [
        ([COMPRESSED[0], {"id": "g", "type": "gemini", "tokens": {"input": "many"}}], "wrong type"),
        ([COMPRESSED[0], {"id": "g", "type": "gemini", "tokens": "lots"}], "usage is a string"),
        ([COMPRESSED[0], COMPRESSED[1], {"$rewindTo": "nowhere"}], "rewind to 'nowhere'"),
        ([COMPRESSED[0], COMPRESSED[1], {"$set": {"messages": "all"}}], "`$set.messages` is not a list"),
    ],
)
def test_a_bad_record_is_one_warning_naming_its_line(tmp_path, records, problem):
    session = load_session(_write(tmp_path / "session-bad.jsonl", records))
    assert any(problem in w and "line" in w for w in session.warnings), session.warnings


def test_a_truncated_older_session_file_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "session-old.json"
    path.write_text('{\n  "sessionId": "s", "projectHash": "h", "messages": [ {"id": "m1", "type": "us')
    assert main(["inspect", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err


def test_a_gemini_chat_is_stored_in_the_library_and_reopened_unread_while_unchanged(tmp_path, capsys):
    path = _write(tmp_path / "session-a.jsonl", COMPRESSED)
    db = tmp_path / "library.db"
    opened = []
    for _ in range(2):
        assert main(["inspect", str(path), "--db", str(db), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["format"], out["requests"]) == ("gemini_cli", 4)
        opened.append(out["library_reopened"])
    assert opened == [False, True]


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay"])
def test_every_command_reads_each_gemini_sample(command, capsys):
    for path in _sessions():
        assert main([command, str(path), "--json"]) == 0, (command, path)
        assert json.loads(capsys.readouterr().out)


def test_the_status_line_says_when_a_gemini_chat_last_read_its_cache_not_a_lifetime_it_does_not_have(tmp_path):
    # review9: `follow --line` said "expires in 4:00 (5m)" and "expired 220d ago" of Gemini's implicit cache, which
    # the provider keeps by itself for minutes, not a set lifetime (the Cost tab says so): it now says when it was read.
    from foldscope.core.cli import statusline

    path = _write(tmp_path / "session-a.jsonl", COMPRESSED)
    shown = statusline.status_figures(str(path), folder=tmp_path / "state")
    assert shown["cache"]["implicit"]
    at = shown["cache"]["touched"]["at"]
    line = statusline.render(shown, at + 120, colour=False)
    assert "last read 2:00 ago (the provider's own cache)" in line and "expire" not in line, line
