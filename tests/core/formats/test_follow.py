"""Following a growing session file: each poll reads only the new lines, and the end is the whole read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.formats.follow import Follower
from foldscope.core.model.session import ReadError
from tests.core.live_sessions import append, assistant, result, rounds, user


def _grown_files(corpus: Path) -> list[Path]:
    files = [sorted((corpus / name).glob("*.jsonl")) for name in ("claude_code", "codex", "pi")]
    assert all(files), "the dev corpus lacks a line-based format"
    return [f for group in files for f in group]


def test_following_a_file_written_in_steps_reads_each_line_once_and_ends_where_the_whole_read_does(corpus_dev, tmp_path):
    for source in _grown_files(corpus_dev):
        lines = source.read_bytes().splitlines(keepends=True)
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines]
        live = tmp_path / source.name
        live.write_bytes(b"".join(lines[:2]))
        follower = Follower(live)
        follower.poll()
        for start in range(2, len(lines), 5):
            with open(live, "ab") as handle:
                handle.write(b"".join(lines[start : start + 5]))
            follower.poll()
        whole, followed = load_session(live), follower.session()
        assert follower.lines_read == sum(1 for line in lines if line.strip()), source.name
        # The session so far is the whole read's, the response still open shown as it stands.
        assert followed.record.ids() == whole.record.ids(), source.name
        assert [m.content for m in followed.record] == [m.content for m in whole.record], source.name
        assert followed.view == whole.view, source.name
        assert [(r.view, r.response_id) for r in followed.trace] == [(r.view, r.response_id) for r in whole.trace], source.name
        assert [r.usage for r in followed.trace[:-1]] == [r.usage for r in whole.trace[:-1]], source.name


def test_a_poll_reads_only_the_lines_added_since_the_last(tmp_path):
    live = tmp_path / "live.jsonl"
    append(live, rounds(0, 3))
    follower = Follower(live)
    first = follower.poll()
    assert (first.lines, first.requests) == (6, 3)
    append(live, [user(3, "one more question")])
    grown = follower.poll()
    assert (grown.lines, follower.lines_read) == (1, 7)
    # The user line closed the last response and entered the record itself.
    assert grown.messages == 2 and len(follower.session().record) == 7
    assert not follower.poll()  # nothing new: nothing read


def test_a_line_still_being_written_waits_for_its_newline(tmp_path):
    live = tmp_path / "live.jsonl"
    append(live, rounds(0, 1))
    follower = Follower(live)
    follower.poll()
    text = json.dumps(user(1, "half written")) + "\n"
    with open(live, "a") as handle:
        handle.write(text[:25])
    assert follower.poll().lines == 0
    with open(live, "a") as handle:
        handle.write(text[25:])
    assert follower.poll().lines == 1
    assert follower.session().record[-1].text == "half written"


def test_a_response_still_open_shows_as_it_stands_and_settles_when_its_turn_ends(tmp_path):
    live = tmp_path / "live.jsonl"
    append(live, [user(0, "read the file"), assistant(0, "reading", tool=("toolu_1", "Read", {"file_path": "src/app.py"}))])
    follower = Follower(live)
    follower.poll()
    session = follower.session()
    assert [m.kind for m in session.record] == ["instruction", "assistant", "action_request"]
    assert len(follower.builder.record) == 1  # the open response is the snapshot's, not yet the builder's
    assert len(session.trace) == 1 and session.trace[0].response_id == "msg_0"
    append(live, [result(0, "toolu_1", "print('hello')")])
    follower.poll()
    assert [m.kind for m in follower.session().record][-1] == "action_response"  # held with its open call
    append(live, [assistant(1, "done")])
    follower.poll()
    kinds = [m.kind for m in follower.session().record]
    assert kinds == ["instruction", "assistant", "action_request", "action_response", "assistant"]
    assert [m.id for m in follower.builder.record] == [m.id for m in follower.session().record][:4]


def test_a_file_rewritten_shorter_is_one_clear_error(tmp_path):
    live = tmp_path / "live.jsonl"
    append(live, rounds(0, 2))
    follower = Follower(live)
    follower.poll()
    live.write_text(json.dumps(user(0, "new")) + "\n")
    with pytest.raises(ReadError, match="shrank"):
        follower.poll()


def test_a_bad_line_names_its_line(tmp_path):
    live = tmp_path / "live.jsonl"
    append(live, rounds(0, 1))
    follower = Follower(live)
    follower.poll()
    with open(live, "a") as handle:
        handle.write("{not json\n")
    with pytest.raises(ReadError, match="line 3"):
        follower.poll()


def test_a_file_foldscope_cannot_follow_says_why(tmp_path):
    branch = tmp_path / "branch.json"
    branch.write_text(json.dumps({"messages": {"collections": [], "progression": {"order": []}}, "metadata": {}}))
    with pytest.raises(ReadError, match="line-based"):
        Follower(branch, format="lionagi")


def _pi_entry(eid: str, parent: str | None, role: str, text: str) -> dict:
    message: dict = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message["usage"] = {"input": 100, "cacheRead": 0, "cacheWrite": 0, "output": 5}
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-05-01T10:00:00Z", "message": message}


def test_a_pi_file_that_starts_another_branch_is_read_again_whole(tmp_path):
    """pi v3 entries form a tree (spec: shared/corpus/README.md); a new branch changes which entries are the session."""
    live = tmp_path / "pi.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-05-01T10:00:00Z", "cwd": "/tmp"}
    append(live, [header, _pi_entry("e1", None, "user", "hi"), _pi_entry("e2", "e1", "assistant", "hello")])
    follower = Follower(live)
    follower.poll()
    append(live, [_pi_entry("e3", "e2", "user", "more")])
    assert not follower.poll().reread and follower.rereads == 0
    append(live, [_pi_entry("e4", "e1", "user", "another way")])  # a branch from e1
    grown = follower.poll()
    assert grown.reread and follower.rereads == 1
    assert follower.session().record.ids() == load_session(live).record.ids()
