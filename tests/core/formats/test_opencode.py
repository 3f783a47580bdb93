"""The OpenCode reader: a request per step (its step-finish usage), one session of a database chosen like an Inspect
sample, the older storage/ JSON files, compaction with its summary, pruned tool outputs, and the database read-only."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions
from foldscope.core.formats.opencode import CLEARED, samples
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session
from tests.paths import corpus_glob

# -- the older layout: the staged sample (agent-sessions' synthetic storage_v2 fixture) -------------------------------


def _legacy_sessions() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved. Both are walked so the tests keep running.
    found = corpus_glob("opencode/*/session/*/*.json")
    if not found:
        pytest.skip("no OpenCode storage/ sessions in the corpus")
    return found


def independent_legacy_usage(session_file: Path) -> list[tuple[int, int, int, int]]:
    """Each model call's usage as OpenCode's storage documents it (message-v2.ts), without the reader: the session's
    messages (storage/message/<session>/), each assistant message's parts (storage/part/<message>/) in file order;
    a step-finish part's tokens are one call's, and a message with none has its own `tokens` for its one call.
    (fresh input, cache read, cache write, output + reasoning)."""
    storage = session_file.parent.parent.parent
    sid = json.loads(session_file.read_text())["id"]
    out = []
    messages = [json.loads(p.read_text()) for p in sorted((storage / "message" / sid).glob("*.json"))]
    for message in sorted(messages, key=lambda m: m["time"]["created"]):
        if message["role"] != "assistant":
            continue
        parts = [json.loads(p.read_text()) for p in sorted((storage / "part" / message["id"]).glob("*.json"))]
        finishes = [p["tokens"] for p in parts if p["type"] == "step-finish"]
        for tokens in finishes or ([message["tokens"]] if "tokens" in message else []):
            cache = tokens.get("cache", {})
            out.append((tokens["input"], cache.get("read", 0), cache.get("write", 0), tokens["output"] + tokens.get("reasoning", 0)))
    return out


def test_each_step_finish_of_the_older_files_is_a_request_with_its_tokens():
    checked = 0
    for path in _legacy_sessions():
        assert detect_format(path) == "opencode", path
        session = load_session(path)
        check_session(session)
        got = [(u.input, u.cache_read, u.cache_write, u.output) for u in (r.usage for r in session.trace) if u]
        assert got == independent_legacy_usage(path), path
        checked += len(got)
    assert checked > 0


def test_a_session_file_without_its_messages_folder_says_so_in_one_line(tmp_path, capsys):
    path = tmp_path / "storage" / "session" / "p" / "ses_x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"id": "ses_x", "projectID": "p", "directory": "/w", "time": {"created": 1}}))
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "no messages" in err


# -- the database: a fixture in the shape OpenCode writes ---------------------------------------------------------
# Tables as packages/opencode/src/session/session.sql.ts @ 063e8306d9895af9bdd175306cfa4fa3291fd83a declares them
# (drizzle: backquoted names; a message's and a part's `data` is its JSON without its ids), rows as
# message-v2.ts @ 007a9409bafea06d6b9084ff1f6d1fe9f5e3a803 shapes them (Assistant.tokens, StepFinishPart,
# CompactionPart, ToolStateCompleted.time.compacted).
SCHEMA = """
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL);
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL,
  `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer,
  `summary_diffs` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text,
  `permission` text, `goal` text, `agent` text, `model` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""
MODEL = "claude-sonnet-4-5"
T0 = 1_760_000_000_000  # ms
BIG = "line of a long listing\n" * 400


def _tokens(fresh: int, read: int, write: int, output: int, reasoning: int = 0) -> dict:
    return {
        "total": fresh + read + write + output + reasoning,
        "input": fresh,
        "output": output,
        "reasoning": reasoning,
        "cache": {"read": read, "write": write},
    }


def _user(mid: str, at: int, *parts: dict) -> tuple[dict, list[dict]]:
    return (
        {"id": mid, "role": "user", "time": {"created": at}, "agent": "build", "model": {"providerID": "anthropic", "modelID": MODEL}},
        list(parts),
    )


def _assistant(mid: str, parent: str, at: int, *parts: dict, summary: bool = False) -> tuple[dict, list[dict]]:
    steps = [p["tokens"] for p in parts if p["type"] == "step-finish"]
    total = {k: sum(s[k] for s in steps) for k in ("input", "output", "reasoning")}
    info = {
        "id": mid,
        "role": "assistant",
        "time": {"created": at, "completed": at + 900},
        "parentID": parent,
        "modelID": MODEL,
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/work/app", "root": "/work/app"},
        "cost": 0.01 * len(steps),
        "finish": "stop",
        "tokens": {**total, "cache": {"read": sum(s["cache"]["read"] for s in steps), "write": sum(s["cache"]["write"] for s in steps)}},
    }
    if summary:
        info["summary"] = True
    return info, list(parts)


def _text(text: str) -> dict:
    return {"type": "text", "text": text, "time": {"start": T0, "end": T0}}


def _finish(tokens: dict) -> dict:
    return {"type": "step-finish", "reason": "stop", "cost": 0.01, "tokens": tokens}


def _tool(call: str, output: str, compacted: int | None = None) -> dict:
    time = {"start": T0, "end": T0 + 1}
    if compacted is not None:
        time["compacted"] = compacted
    return {
        "type": "tool",
        "callID": call,
        "tool": "bash",
        "state": {"status": "completed", "input": {"command": "ls -R"}, "output": output, "title": "ls -R", "metadata": {}, "time": time},
    }


# Session A: two steps (a tool call, then an answer); a second turn; OpenCode prunes the long listing at T0+25s; an
# auto compaction keeping the turn from u2 on; one turn after it. Session B: one short turn.
PRUNED_AT = T0 + 25_000
SESSION_A = [
    _user("msg_a01", T0, _text("List the project.")),
    _assistant(
        "msg_a02",
        "msg_a01",
        T0 + 1000,
        {"type": "step-start"},
        {"type": "reasoning", "text": "Run ls.", "time": {"start": T0}},
        _tool("toolu_1", BIG, compacted=PRUNED_AT),
        _finish(_tokens(3, 0, 9000, 40, 5)),
        {"type": "step-start"},
        _text("Here is the listing."),
        _finish(_tokens(5, 9000, 2600, 12)),
    ),
    _user("msg_a03", T0 + 20_000, _text("Which file is largest?")),
    _assistant("msg_a04", "msg_a03", T0 + 21_000, {"type": "step-start"}, _text("src/big.py."), _finish(_tokens(4, 11_600, 30, 9))),
    _user("msg_a05", T0 + 30_000, {"type": "compaction", "auto": True, "overflow": False, "tail_start_id": "msg_a03"}),
    _assistant(
        "msg_a06",
        "msg_a05",
        T0 + 31_000,
        {"type": "step-start"},
        _text("## Summary\nListed the project; src/big.py is largest."),
        _finish(_tokens(2100, 0, 0, 60)),
        summary=True,
    ),
    _user("msg_a07", T0 + 40_000, _text("Thanks.")),
    _assistant("msg_a08", "msg_a07", T0 + 41_000, {"type": "step-start"}, _text("You're welcome."), _finish(_tokens(3, 0, 700, 6))),
]
SESSION_B = [
    _user("msg_b01", T0 + 100_000, _text("Hello.")),
    _assistant("msg_b02", "msg_b01", T0 + 101_000, {"type": "step-start"}, _text("Hi."), _finish(_tokens(10, 0, 2000, 3))),
]


def write_db(path: Path, sessions: dict[str, list] | None = None, wal: bool = False) -> Path:
    sessions = {"ses_A": SESSION_A, "ses_B": SESSION_B} if sessions is None else sessions
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    db.execute("INSERT INTO project VALUES ('prj', '/work/app', ?, ?)", (T0, T0))
    part_n = 0
    for n, (sid, messages) in enumerate(sessions.items()):
        created = messages[0][0]["time"]["created"] if messages else T0 + n
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, 'prj', ?, '/work/app', ?, '1.4.0', ?, ?)",
            (sid, sid.lower(), f"Title {sid}", created, created),
        )
        for info, parts in messages:
            data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
            db.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (info["id"], sid, info["time"]["created"], info["time"]["created"], json.dumps(data)),
            )
            for part in parts:
                part_n += 1
                db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"prt_{part_n:04d}", info["id"], sid, T0, T0, json.dumps(part)))
    db.commit()
    db.close()
    return path


def independent_db_usage(path: Path, sid: str) -> list[tuple[int, int, int, int]]:
    """Each step-finish part's tokens, read with SQL as session.sql.ts lays the rows out (messages by time created
    then id, parts by id), without the reader."""
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT p.data FROM part p JOIN message m ON m.id = p.message_id WHERE p.session_id = ? "
        "AND json_extract(p.data, '$.type') = 'step-finish' ORDER BY m.time_created, m.id, p.id",
        (sid,),
    ).fetchall()
    db.close()
    out = []
    for (data,) in rows:
        t = json.loads(data)["tokens"]
        out.append((t["input"], t["cache"]["read"], t["cache"]["write"], t["output"] + t["reasoning"]))
    return out


def test_each_step_finish_in_the_database_is_one_request_with_its_tokens(tmp_path):
    path = write_db(tmp_path / "opencode.db")
    assert detect_format(path) == "opencode"
    for sid in ("ses_A", "ses_B"):
        session = load_session(path, sample=sid)
        check_session(session)
        expected = independent_db_usage(path, sid)
        got = [(u.input, u.cache_read, u.cache_write, u.output) if u else None for u in (r.usage for r in session.trace)]
        assert got == expected and len(expected) > 0
        assert session.model == MODEL


def test_a_database_of_several_sessions_lists_them_and_opens_one_only_when_named(tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db")
    assert [(s["name"], s["requests"], s["messages"]) for s in samples(path)] == [("ses_A", 5, 8), ("ses_B", 1, 2)]
    assert main(["inspect", str(path), "--json"]) == 0
    assert [s["name"] for s in json.loads(capsys.readouterr().out)["samples"]] == ["ses_A", "ses_B"]
    assert main(["requests", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 sessions" in err and "--sample" in err
    assert main(["requests", str(path), "--sample", "ses_B", "--json"]) == 0
    assert [r["reported_input"] for r in json.loads(capsys.readouterr().out)["requests"]] == [2010]
    with pytest.raises(ReadError, match="no session 'ses_C'"):
        load_session(path, sample="ses_C")


def test_the_database_is_read_without_changing_it_even_in_wal_mode(tmp_path):
    path = write_db(tmp_path / "opencode.db", wal=True)
    before = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    load_session(path, sample="ses_A")
    samples(path)
    after = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    assert after == before


def test_a_compaction_keeps_the_tail_it_names_and_the_summary_replaces_the_rest(tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db", {"ses_A": SESSION_A})  # one session: opened without --sample
    session = load_session(path)
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    summary_call = session.trace[3]  # the summary message's step: its view is the whole conversation
    assert event["tokens_before"] == summary_call.usage.reported_input == 2100
    last = session.trace[4]
    texts = [session.record.get(m).text for m in last.view]
    assert texts[0] == "## Summary\nListed the project; src/big.py is largest."
    assert "List the project." not in texts and "Which file is largest?" in texts and "src/big.py." in texts
    assert "What did we do so far?" in texts and texts[-1] == "Thanks."
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (2100, 703)


def test_a_pruned_tool_output_is_whole_before_its_time_and_cleared_after(tmp_path):
    path = write_db(tmp_path / "opencode.db")
    session = load_session(path, sample="ses_A")

    def outputs(k: int) -> list:
        return [session.record.get(m).content["output"] for m in session.trace[k].view if session.record.get(m).kind == "action_response"]

    assert outputs(1) == [BIG] and outputs(2) == [BIG]  # requests before T0+25s: sent whole
    messages = SESSION_A[:4] + [
        _user("msg_a05", T0 + 30_000, _text("And now?")),
        _assistant("msg_a06", "msg_a05", T0 + 31_000, _text("Done."), _finish(_tokens(1, 0, 0, 1))),
    ]
    pruned = load_session(write_db(tmp_path / "b" / "opencode.db", {"ses_P": messages}))
    later = pruned.trace[-1]
    cleared = [pruned.record.get(m) for m in later.view if pruned.record.get(m).kind == "action_response"]
    assert [m.content["output"] for m in cleared] == [CLEARED] and cleared[0].metadata["pruned"] is True


@pytest.mark.parametrize("case", ["locked", "empty", "not a database", "damaged"])
def test_a_database_that_does_not_read_is_refused_in_one_line_and_left_alone(case, tmp_path, capsys):
    path = tmp_path / "opencode.db"
    holder = None
    if case == "locked":
        write_db(path)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "not a database":
        path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    else:
        write_db(path)
        data = bytearray(path.read_bytes())
        data[4096:] = b"\xff" * (len(data) - 4096)  # every page past the schema's
        path.write_bytes(bytes(data))
    before = path.read_bytes()
    try:
        code = main(["inspect", str(path), "--sample", "ses_A", "--db", str(tmp_path / "lib.db")])
    finally:
        if holder is not None:
            holder.rollback()
            holder.close()
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and str(path) in err and "Traceback" not in err
    assert path.read_bytes() == before
    assert not (tmp_path / "lib.db").exists() or _library_sessions(tmp_path / "lib.db") == 0


def _library_sessions(db: Path) -> int:
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.db["sessions"].count


def test_sessions_on_a_fake_home_lists_each_session_of_the_database_and_follows_xdg_data_home(tmp_path):
    home = tmp_path / "home"
    db = write_db(home / ".local" / "share" / "opencode" / "opencode.db")
    rows = sorted((f for f in find_sessions({}, home) if f.agent == "opencode"), key=lambda f: f.sample or "")
    assert [(r.path, r.sample, r.project, r.requests, r.model, r.problem) for r in rows] == [
        (str(db), "ses_A", "/work/app", 5, MODEL, None),
        (str(db), "ses_B", "/work/app", 1, MODEL, None),
    ]
    assert rows[0].start == T0 / 1000 and rows[0].cost_usd is not None and rows[0].cost_usd > 0
    db_child = write_db(tmp_path / "c" / "opencode" / "opencode.db", {"ses_A": SESSION_A, "ses_C": SESSION_B})
    with sqlite3.connect(db_child) as rw:
        rw.execute("UPDATE session SET parent_id = 'ses_A' WHERE id = 'ses_C'")
    rw.close()
    assert [(f.sample, f.requests) for f in find_sessions({"XDG_DATA_HOME": str(tmp_path / "c")}, home) if f.agent == "opencode"] == [
        ("ses_A", 6)
    ]  # the subagent's session no row of its own: its one request counted in its parent's five
    legacy = home / ".local" / "share" / "opencode" / "storage" / "session" / "prj" / "ses_L.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"id": "ses_L", "projectID": "prj", "directory": "/work/old", "time": {"created": T0}}))
    child = legacy.with_name("ses_K.json")  # a subagent's session (the task tool's): its parent's, not a row
    child.write_text(
        json.dumps({"id": "ses_K", "projectID": "prj", "directory": "/work/old", "parentID": "ses_L", "time": {"created": T0}})
    )
    assert sorted(f.path for f in find_sessions({}, home) if f.agent == "opencode") == [str(db), str(db), str(legacy)]
    moved = write_db(tmp_path / "xdg" / "opencode" / "opencode.db", {"ses_Z": SESSION_B})
    found = [f for f in find_sessions({"XDG_DATA_HOME": str(tmp_path / "xdg")}, home) if f.agent == "opencode"]
    assert [(f.path, f.sample) for f in found] == [(str(moved), None)]


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay"])
def test_every_command_reads_an_opencode_session(command, tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db")
    assert main([command, str(path), "--session", "ses_A", "--json"]) == 0, command  # --session: --sample's other name
    assert json.loads(capsys.readouterr().out)
    for legacy in _legacy_sessions():
        assert main([command, str(legacy), "--json"]) == 0, (command, legacy)
        assert json.loads(capsys.readouterr().out)


def test_report_writes_one_session_of_the_database(tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db")
    for sid, requests in (("ses_A", "5 requests"), ("ses_B", "1 request")):
        out = tmp_path / f"{sid}.html"
        assert main(["report", str(path), "--sample", sid, "-o", str(out)]) == 0
        assert f": {requests};" in capsys.readouterr().out and out.stat().st_size > 0


def test_a_session_opened_twice_from_the_library_is_not_read_again_while_unchanged(tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db")
    lib = str(tmp_path / "lib.db")
    reopened = []
    for sid in ("ses_A", "ses_B", "ses_A", "ses_B"):
        assert main(["inspect", str(path), "--sample", sid, "--db", lib, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        reopened.append((out["library_session_id"], out["library_reopened"], out["requests"]))
    assert reopened == [(1, False, 5), (2, False, 1), (1, True, 5), (2, True, 1)]
    assert _library_sessions(Path(lib)) == 2


def test_a_write_waiting_in_the_write_ahead_log_makes_the_library_read_the_database_again(tmp_path, capsys):
    path = write_db(tmp_path / "opencode.db", {"ses_A": SESSION_A[:2]}, wal=True)
    writer = sqlite3.connect(path)  # OpenCode running: its log stays, no checkpoint moves the write into the file
    writer.execute("PRAGMA wal_autocheckpoint=0")
    lib = str(tmp_path / "lib.db")
    try:
        assert main(["inspect", str(path), "--db", lib, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["requests"] == 2
        info, parts = SESSION_A[3]
        data = {k: v for k, v in info.items() if k != "id"}
        writer.execute(
            "INSERT INTO message VALUES (?, 'ses_A', ?, ?, ?)",
            (info["id"], info["time"]["created"], info["time"]["created"], json.dumps(data)),
        )
        writer.execute("INSERT INTO part VALUES ('prt_9999', ?, 'ses_A', 0, 0, ?)", (info["id"], json.dumps(parts[-1])))
        writer.commit()
        assert main(["inspect", str(path), "--db", lib, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["requests"] == 3
    finally:
        writer.close()


def test_another_sqlite_database_is_not_taken_for_opencode(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE session (id text, data text)")
    db.commit()
    db.close()
    with pytest.raises(ReadError):
        detect_format(path)


def test_a_storage_folder_is_its_sessions_to_the_folder_commands_its_message_and_part_files_read_with_them(capsys):
    # review9: `usage` (and cache, replay) on OpenCode's older storage/ read each message and part file as a session
    # of its own and skipped every one as not a session file: 14 skip lines for the staged storage's 2 sessions.
    storage = _legacy_sessions()[0].parent.parent.parent
    sessions = sorted(str(p) for p in (storage / "session").glob("*/*.json"))
    assert main(["usage", str(storage), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["skipped"] == [] and out["sessions"] == len(sessions)
    assert main(["cache", str(storage), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["skipped"] == [] and sorted(row["file"] for row in out["table"]) == sessions


def test_a_storage_subagent_session_is_counted_in_its_parent_on_usage_as_sessions_lists_it(tmp_path, capsys):
    """review10: a session a subagent ran (its `parentID` set) was its own session to `usage` on a storage folder, where
    `sessions` leaves it out of its list as its parent's: two numbers for one thing. It is now read as its parent's
    child, so the folder is one session on both and its bill keeps the subagent's requests, counted once."""
    from foldscope.core.formats.discover import describe

    staged = _legacy_sessions()[0].parent.parent.parent
    storage = tmp_path / "storage"
    shutil.copytree(staged, storage, copy_function=shutil.copyfile)  # the corpus is read-only: copies writable
    for folder in (storage, *storage.rglob("*")):
        if folder.is_dir():
            folder.chmod(0o755)
    parent = storage / "session" / "proj_test" / "ses_s_stage0_large.json"
    for path in (storage / "session" / "proj_test").glob("*.json"):
        if path != parent:
            info = json.loads(path.read_text())
            path.write_text(json.dumps({**info, "parentID": "s_stage0_large"}))  # the small one, a subagent's
    whole = [load_session(p) for p in sorted((storage / "session" / "proj_test").glob("*.json"))]
    requests = sum(len(s.trace) for s in whole)
    output = sum(r.usage.output for s in whole for r in s.trace if r.usage)
    assert main(["usage", str(storage), "--json"]) == 0
    usage = json.loads(capsys.readouterr().out)
    assert usage["skipped"] == [] and usage["sessions"] == 1 and usage["children_in_parents"] == 1
    assert usage["total"]["requests"] == requests == 3 and usage["total"]["output"] == output
    listed = describe("opencode", parent)
    assert listed.requests == requests  # `sessions` lists the parent alone, its subagent's requests in it
    assert main(["cache", str(storage), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == 1


def test_a_project_s_sessions_look_through_their_siblings_once_and_see_a_subagent_added_later(tmp_path, monkeypatch):
    """Reading each of a project's sessions looked through every sibling for its subagents again: N^2 small reads
    for `sessions` on a storage project (7 s of CPU at 500 sessions). The folder is read once while it holds the
    same files, and again when a session is added."""
    from foldscope.core.formats import opencode

    folder = tmp_path / "storage" / "session" / "p"
    folder.mkdir(parents=True)
    for i in range(20):
        (folder / f"ses_{i:02d}.json").write_text(json.dumps({"id": f"s{i}", "projectID": "p", "time": {"created": i}}))
    reads = []
    monkeypatch.setattr(opencode, "_parent_of", lambda p, real=opencode._parent_of: reads.append(p) or real(p))
    assert [opencode._storage_children(folder / f"ses_{i:02d}.json", f"s{i}") for i in range(20)] == [[]] * 20
    assert len(reads) == 20
    child = folder / "ses_zz.json"
    child.write_text(json.dumps({"id": "k", "projectID": "p", "parentID": "s3", "time": {"created": 99}}))
    os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns + 10**9))  # a coarse clock: moved on
    assert opencode._storage_children(folder / "ses_03.json", "s3") == [child]


def test_a_database_subagent_session_is_counted_in_its_parent_on_sessions_usage_and_the_folder_commands(tmp_path, capsys):
    """A session a subagent ran (its `parent_id` set) had no row in `sessions` and was read into no parent: its
    requests were counted nowhere. It is now its parent's child, as in the older storage: one session whose bill holds
    both, on `sessions`, `usage` and `cache` alike, and the database opens unnamed when its one session is the parent."""
    from foldscope.core.formats.discover import describe

    db = write_db(tmp_path / "project" / "opencode.db", {"ses_A": SESSION_A, "ses_C": SESSION_B})
    with sqlite3.connect(db) as rw:
        rw.execute("UPDATE session SET parent_id = 'ses_A' WHERE id = 'ses_C'")
    rw.close()
    both = independent_db_usage(db, "ses_A") + independent_db_usage(db, "ses_C")
    assert describe("opencode", db, sample="ses_A").requests == len(both) == 6
    assert main(["usage", str(db.parent), "--json"]) == 0
    usage = json.loads(capsys.readouterr().out)
    assert usage["skipped"] == [] and usage["sessions"] == 1  # the database found in the folder, one session in it
    assert usage["total"]["requests"] == len(both) and usage["total"]["output"] == sum(u[3] for u in both)
    for command in ("cache", "tune", "compactions"):  # tune took the parent for a subagent's file: "0 sessions"
        assert main([command, str(db.parent), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["sessions"] == 1, command
    session = load_session(db)  # the parent alone is a session to choose
    assert session.extras["sample"] == "ses_A" and [c.extras["agent_id"] for c in session.children] == ["ses_C"]


def test_a_database_subagent_session_whose_parent_is_gone_is_a_session_of_its_own_not_counted_nowhere(tmp_path, capsys):
    """review12: a subagent's session is its parent's only while its parent is in the database to count it; one whose
    parent was deleted had no row and no parent to read it: counted nowhere. It is now a session of its own."""
    from foldscope.core.formats.discover import sessions_in

    db = write_db(tmp_path / "project" / "opencode.db", {"ses_A": SESSION_A, "ses_C": SESSION_B})
    with sqlite3.connect(db) as rw:
        rw.execute("UPDATE session SET parent_id = 'ses_GONE' WHERE id = 'ses_C'")
    rw.close()
    assert sessions_in("opencode", db) == ["ses_A", "ses_C"]
    assert main(["usage", str(db.parent), "--json"]) == 0
    usage = json.loads(capsys.readouterr().out)
    both = independent_db_usage(db, "ses_A") + independent_db_usage(db, "ses_C")
    assert usage["sessions"] == 2 and usage["total"]["requests"] == len(both)
