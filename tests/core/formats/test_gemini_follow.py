"""Following a Gemini CLI chat as it grows, and its subagents' chats (`chats/<parent>/`) counted as its children."""

from __future__ import annotations

import json
from pathlib import Path

from foldscope.core.forensics.children import children, children_parts
from foldscope.core.formats import load_session
from foldscope.core.formats.discover import find_sessions
from foldscope.core.formats.follow import Follower
from foldscope.core.model.session import Session
from tests.core.formats.test_gemini_cli import COMPRESSED, _sessions, _write
from tests.core.live_sessions import append

CHECKPOINT = next(i for i, r in enumerate(COMPRESSED) if "messages" in r.get("$set", {}))


def _same(followed: Session, whole: Session) -> None:
    assert followed.record.ids() == whole.record.ids()
    assert [m.content for m in followed.record] == [m.content for m in whole.record]
    assert followed.view == whole.view
    assert [(r.view, r.response_id, r.usage) for r in followed.trace] == [(r.view, r.response_id, r.usage) for r in whole.trace]


def test_a_chat_followed_line_by_line_with_its_patched_messages_ends_as_the_whole_read_without_rereading(tmp_path):
    live = tmp_path / "session-live.jsonl"
    append(live, COMPRESSED[:1])
    follower = Follower(live)
    follower.poll()
    for record in COMPRESSED[1:CHECKPOINT]:
        append(live, [record])
        follower.poll()
    assert follower.rereads == 0, "a model message patched before the next one starts is read once"
    _same(follower.session(), load_session(live))


def test_the_real_chats_followed_line_by_line_end_as_their_whole_read(tmp_path):
    for source in _sessions():
        if source.suffix != ".jsonl":
            continue  # the older layout is one JSON object: not followed
        lines = [line for line in source.read_text().splitlines() if line.strip()]
        live = tmp_path / source.name
        live.write_text(lines[0] + "\n")
        follower = Follower(live)
        follower.poll()
        for line in lines[1:]:
            with open(live, "a") as handle:
                handle.write(line + "\n")
            follower.poll()
        _same(follower.session(), load_session(live))


def test_the_newest_model_message_waits_for_its_tokens_before_it_is_a_request(tmp_path):
    live = tmp_path / "session-live.jsonl"
    g1_bare, g1 = COMPRESSED[2], COMPRESSED[3]
    assert g1_bare["id"] == g1["id"] == "g1" and "tokens" not in g1_bare
    append(live, COMPRESSED[:3])
    follower = Follower(live)
    follower.poll()
    assert follower.session().trace == [], "g1 has no tokens yet: its lines are still coming"
    append(live, [g1])
    grown = follower.poll()
    assert grown.requests == 1 and follower.session().trace[0].usage is not None
    assert follower.rereads == 0


def test_a_compression_checkpoint_or_a_patch_of_an_entered_message_reads_the_file_again_whole(tmp_path):
    live = tmp_path / "session-live.jsonl"
    append(live, COMPRESSED[: CHECKPOINT + 1])
    follower = Follower(live)
    follower.poll()
    assert follower.rereads == 1  # the checkpoint
    append(live, COMPRESSED[CHECKPOINT + 1 :])
    follower.poll()
    _same(follower.session(), load_session(live))
    # a patch of a message entered long before (g1 written again with other tokens)
    other = tmp_path / "session-patch.jsonl"
    append(other, COMPRESSED[:CHECKPOINT])
    follower = Follower(other)
    follower.poll()
    assert follower.rereads == 0
    append(other, [{**COMPRESSED[3], "tokens": {**COMPRESSED[3]["tokens"], "input": 9100}}])
    assert follower.poll().reread
    _same(follower.session(), load_session(other))
    assert follower.session().trace[0].usage.reported_input == 9100 + COMPRESSED[3]["tokens"]["tool"]


# A subagent's chat as chatRecordingService.ts (google-gemini/gemini-cli @ 5411f113, initialize) writes it:
# `chats/<parent sessionId, sanitizeFilenamePart>/<its sessionId>.jsonl`, metadata `kind: "subagent"`.
SUBAGENT = [
    {"sessionId": "sub-1", "projectHash": "abc", "startTime": "2026-05-01T10:00:10.000Z", "kind": "subagent", "directories": ["/w"]},
    {"id": "su1", "timestamp": "2026-05-01T10:00:10.000Z", "type": "user", "content": [{"text": "Investigate the tests."}]},
    {
        "id": "sg1",
        "timestamp": "2026-05-01T10:00:12.000Z",
        "type": "gemini",
        "content": "Three tests.",
        "model": "gemini-2.5-flash",
        "tokens": {"input": 5000, "output": 30, "cached": 0, "thoughts": 5, "tool": 0, "total": 5035},
    },
]


def test_a_subagent_s_chat_in_the_parent_s_folder_is_a_child_counted_apart_and_no_session_of_its_own(tmp_path, capsys):
    from foldscope.core.cli.main import main

    chats = tmp_path / "home" / ".gemini" / "tmp" / "proj" / "chats"
    parent = _write(chats / "session-2026-05-01T10-00-s1.jsonl", [{**COMPRESSED[0], "sessionId": "s1.x"}, *COMPRESSED[1:]])
    _write(chats / "s1_x" / "sub-1.jsonl", SUBAGENT)
    _write(chats / "s1_x" / "not-a-subagent.jsonl", [{**SUBAGENT[0], "kind": "main"}, *SUBAGENT[1:]])
    session = load_session(parent)
    assert [Path(c.source).name for c in session.children] == ["sub-1.jsonl"]
    part = children_parts(children(session))["subagents"]
    # the subagent's own `tokens`, read from the fixture: input 5000, output 30 + thoughts 5
    assert (part["requests"], part["fresh"], part["output"]) == (1, 5000, 35)
    assert main(["cache", str(parent), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert totals["children"]["subagents"]["requests"] == 1
    assert totals["total_usd"] > totals["bill_usd"]
    rows = [f for f in find_sessions({}, tmp_path / "home") if f.agent == "gemini_cli"]
    assert [r.path for r in rows] == [str(parent)], "a subagent's chat is its parent's, not a session of its own"


def test_the_older_single_json_chat_is_refused_for_following_in_one_line_naming_why(tmp_path):
    import pytest

    from foldscope.core.model.session import ReadError

    old = tmp_path / "session-old.json"
    old.write_text(json.dumps({**COMPRESSED[0], "messages": COMPRESSED[1:3]}, indent=2))
    assert load_session(old).format == "gemini_cli"
    with pytest.raises(ReadError, match="rewritten whole, not grown by lines"):
        Follower(old)
