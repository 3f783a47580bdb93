"""Reader for OpenCode sessions: its SQLite database (`opencode.db`, one session of many) and the older storage/ JSON files.

The writer is anomalyco/opencode (formerly sst/opencode): packages/opencode/src/session/session.sql.ts @
063e8306d9895af9bdd175306cfa4fa3291fd83a (tables `session`, `message` and `part`; a message's and a part's `data`
column is its JSON without its ids) and packages/opencode/src/session/message-v2.ts @
007a9409bafea06d6b9084ff1f6d1fe9f5e3a803 (the message and part shapes, toModelMessages: what is sent). The older
layout (storage/json-migration.ts) keeps the same JSON in `storage/session/<project>/<session>.json`,
`storage/message/<session>/<message>.json` and `storage/part/<message>/<part>.json`; its FILE is the session's JSON.
Mapping, in the vocabulary of DESIGN.md:
- A database holds many sessions: `samples(path)` lists them and `read(path, sample=ID)` reads one (`--sample ID`,
  the GUI asks), as an Inspect AI log's samples. It is opened read-only (`mode=ro`): never locked or changed.
- Messages in the order OpenCode reads them (time created, then id; the older files by name), parts by id.
- A user message -> an instruction: its text parts not `ignored`, a non-text file part as `[Attached MIME: NAME]`,
  a `compaction` part as "What did we do so far?" and a `subtask` part as the line OpenCode sends for it.
- An assistant message -> one model call per step: a step ends at its `step-finish` part, whose `tokens` are that
  call's usage (session.ts getUsage: `input` is fresh input, the cache read and write apart; `reasoning` is billed
  at the output rate beside `output`): fresh input = input, cache read/write = cache.read/write, output = output +
  reasoning. Text parts are the response, reasoning parts its thinking (metadata "thinking"), a tool part an
  action_request and its state's output (or error) the action_response. A step with content but no step-finish
  (an aborted call) is a request without usage; a message with no step-finish at all takes the message's `tokens`.
  An assistant message with an error, other than an abort after content, is never sent again (toModelMessages):
  it leaves the view.
- A tool output pruned later (`state.time.compacted`) is sent as "[Old tool result content cleared]" from then on:
  the requests made after that time see a cleared copy in its place.
- Compaction: a user message with a `compaction` part (auto, overflow, tail_start_id), answered by an assistant
  message with `summary: true`. When that summary finishes, the view becomes the summary (a note), the messages
  kept from `tail_start_id` on, and the compaction's user message (filterCompacted). Size before: the summary
  call's reported input.
- A session a subagent ran (the task tool's, its `parentID` set) is its parent's: read as one of the parent's children
  (Session.children: in the database, the sessions whose `parent_id` is its id; in the older storage, beside it in
  `session/<project>/`), counted in it as Claude Code's subagents are; `sessions` and the folder commands give it no
  row of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.child_files import readable_children
from foldscope.core.formats.spec import Figure, FormatSpec, Sessions
from foldscope.core.formats.stream import SessionBuilder
from foldscope.core.model.session import ReadError, Session, Usage, bad_usage_warning, usage_figures, usage_object_warning

if TYPE_CHECKING:
    import sqlite3  # imported where a database is opened: every command imports this reader, few open one

DATABASE = "opencode.db"  # its sessions, in its data folder (~/.local/share/opencode)
FORMAT = "opencode"
SQLITE_MAGIC = b"SQLite format 3\x00"
CLEARED = "[Old tool result content cleared]"  # message-v2.ts toModelMessages, for a pruned tool output
INTERRUPTED = "[Tool execution was interrupted]"
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"
MAX_JSON_BYTES = 64 * 1024 * 1024  # one message's or part's JSON file larger than this is refused
_TABLE = re.compile(rb"CREATE TABLE [`\"]?(session|message|part)[`\"]?\s*\(")
_LEGACY_KEYS = ("id", "projectID", "directory", "time")


def sniff(head: bytes, path: Path) -> bool:
    if head.startswith(SQLITE_MAGIC):
        return {m.group(1) for m in _TABLE.finditer(head)} == {b"session", b"message", b"part"}
    text = head.lstrip()
    if not text.startswith(b"{"):
        return False
    try:
        value = json.loads(head)
    except ValueError:
        return False
    return isinstance(value, dict) and all(k in value for k in _LEGACY_KEYS) and isinstance(value.get("id"), str)


# -- the two layouts, as one list of (message, parts) -------------------------------------------------------------
class _Row:
    """A message or part as OpenCode's reader rebuilds it: its JSON data with its ids, and where it came from."""

    __slots__ = ("data", "line", "where")

    def __init__(self, data: dict[str, Any], line: int, where: str) -> None:
        self.data, self.line, self.where = data, line, where


def _connect(path: Path) -> sqlite3.Connection:
    """The database read-only, never locked or changed. While OpenCode has it open (its `-wal` file is there) a
    `mode=ro` reader shares its WAL index without blocking it. A WAL database with no `-wal` file is open nowhere
    (the last connection to close removes it), and is read as immutable: a `mode=ro` open would leave new `-wal` and
    `-shm` files beside it. A rollback-journal database is read `mode=ro`, which waits for (and names) a writer's lock."""
    resolved = Path(path).resolve()
    with open(resolved, "rb") as handle:
        header = handle.read(20)
    in_wal_mode = header[18:20] == b"\x02\x02"  # the file format's write and read versions: 2 is WAL
    idle = in_wal_mode and not resolved.with_name(resolved.name + "-wal").exists()
    uri = f"{resolved.as_uri()}?{'immutable=1' if idle else 'mode=ro'}"
    import sqlite3

    try:
        db = sqlite3.connect(uri, uri=True, timeout=1.0)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise ReadError(str(path), "", f"cannot read the OpenCode database: {_sqlite_problem(exc)}") from None
    return db


def _sqlite_problem(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "it is locked by another program (try again when OpenCode is idle)"
    if "not a database" in text or "malformed" in text:
        return "not an SQLite database, or a damaged one"
    return text


def _query(path: Path, db: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import sqlite3

    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        raise ReadError(str(path), "", f"cannot read the OpenCode database: {_sqlite_problem(exc)}") from None


def _json_column(path: Path, where: str, raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
    except ValueError:
        raise ReadError(str(path), where, "its data is not JSON") from None
    if not isinstance(value, dict):
        raise ReadError(str(path), where, f"its data is a JSON {type(value).__name__}, not an object")
    return value


def _db_sessions(path: Path, db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return _query(path, db, "SELECT id, title, directory, time_created, parent_id FROM session ORDER BY time_created, id")


def samples(path: str | Path) -> list[dict[str, Any]]:
    """The sessions a database holds (`--sample ID` opens one), or the one session of an older JSON file."""
    path = Path(path)
    if not _is_db(path):
        info = _legacy_session(path)
        sid = str(info.get("id"))
        return [{"id": sid, "epoch": None, "name": sid, "title": info.get("title"), "requests": None, "messages": None}]
    db = _connect(path)
    try:
        counts = dict(_query(path, db, "SELECT session_id, count(*) FROM message GROUP BY session_id"))
        steps = dict(
            _query(path, db, "SELECT session_id, count(*) FROM part WHERE json_extract(data, '$.type') = 'step-finish' GROUP BY session_id")
        )
        return [
            {
                "id": sid,
                "epoch": None,
                "name": sid,
                "title": title,
                "directory": directory,
                "parent": parent,
                "requests": steps.get(sid, 0),
                "messages": counts.get(sid, 0),
            }
            for sid, title, directory, _created, parent in _db_sessions(path, db)
        ]
    finally:
        db.close()


def _is_db(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _db_read(path: Path, sample: str | None) -> tuple[dict[str, Any], list[tuple[_Row, list[_Row]]], list[str]]:
    """The session's row, its messages with their parts, and the ids of the sessions a subagent ran for it (their
    `parent_id` its id). Alone in the database but for its subagents' sessions, a session opens unnamed."""
    db = _connect(path)
    try:
        rows = _db_sessions(path, db)
        ids = [str(r[0]) for r in rows]
        if not ids:
            raise ReadError(str(path), "", "the OpenCode database holds no sessions")
        if sample is None:
            own = [str(r[0]) for r in rows if str(r[4] or "") not in ids] or ids  # a subagent's is its parent's
            if len(own) > 1:
                names = ", ".join(own[:8]) + (", ..." if len(own) > 8 else "")
                raise ReadError(
                    str(path),
                    "",
                    f"the database holds {len(own)} sessions ({names}): choose one with --sample ID (foldscope inspect DB lists them)",
                )
            sample = own[0]
        if sample not in ids:
            raise ReadError(
                str(path), "", f"no session {sample!r} in the database (sessions: {', '.join(ids[:8])}{', ...' if len(ids) > 8 else ''})"
            )
        sid, title, directory, created, parent = rows[ids.index(sample)]
        info = {"id": sid, "title": title, "directory": directory, "time": {"created": created}, "parentID": parent}
        messages = _query(path, db, "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sample,))
        parts: dict[str, list[_Row]] = {}
        for n, (pid, mid, data) in enumerate(
            _query(path, db, "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id", (sample,))
        ):
            where = f"part {pid}"
            parts.setdefault(mid, []).append(_Row({**_json_column(path, where, data), "id": pid}, n + 1, where))
        out = []
        for n, (mid, _created, data) in enumerate(messages, 1):
            where = f"message {mid}"
            out.append((_Row({**_json_column(path, where, data), "id": mid}, n, where), parts.get(mid, [])))
        return info, out, [str(r[0]) for r in rows if r[4] == sid and r[0] != sid]
    finally:
        db.close()


def _legacy_session(path: Path) -> dict[str, Any]:
    value = _json_file(path)
    if not isinstance(value.get("id"), str):
        raise ReadError(str(path), "$.id", "the session has no string `id`")
    return value


def _json_file(path: Path) -> dict[str, Any]:
    value = fast_json.read_document(path, MAX_JSON_BYTES)
    if not isinstance(value, dict):
        raise ReadError(str(path), "", f"a JSON {type(value).__name__}, not an object")
    return value


def _legacy_read(path: Path) -> tuple[dict[str, Any], list[tuple[_Row, list[_Row]]], list[str]]:
    """`storage/session/<project>/<id>.json` and its messages' and parts' files beside it, under storage/."""
    info = _legacy_session(path)
    storage = path.parent.parent.parent
    missing: list[str] = []
    folder = storage / "message" / info["id"]
    if not folder.is_dir():
        missing.append(f"no messages folder {folder}")
    out = []
    for n, file in enumerate(_json_files(folder), 1):
        message = _json_file(file)
        mid = message.get("id")
        if not isinstance(mid, str):
            raise ReadError(str(file), "$.id", "the message has no string `id`")
        parts = [_Row(_json_file(p), k, str(p)) for k, p in enumerate(_json_files(storage / "part" / mid), 1)]
        out.append((_Row(message, n, str(file)), parts))
    # OpenCode reads messages in the order of their ids, which grow with time; the files are named by them.
    out.sort(key=lambda mp: (_created(mp[0].data), mp[0].where))
    return info, out, missing


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".json")
    except OSError:
        return []


def _created(message: dict[str, Any]) -> float:
    time = message.get("time")
    created = time.get("created") if isinstance(time, dict) else None
    return float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else 0.0


def read(path: Path, sample: str | None = None, *, children: bool = True) -> Session:
    """The session; with `children`, its subagents' sessions (their `parentID` its id) as Session.children, counted
    in it as Claude Code's subagents are (core.forensics.children)."""
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    found: list[Path] = []
    db_children: list[str] = []
    if _is_db(path):
        info, messages, db_children = _db_read(path, sample)
        db_children = db_children if children else []
    else:
        info, messages, missing = _legacy_read(path)
        found = _storage_children(path, info["id"]) if children else []
        if sample is not None and sample != info["id"]:
            raise ReadError(str(path), "", f"the file holds session {info['id']!r}, not {sample!r}")
        for problem in missing:
            builder.warn(0, problem)
    builder.extras["header"] = {
        "id": info.get("id"),
        "title": info.get("title"),
        "cwd": info.get("directory"),
        "parent": info.get("parentID"),
    }
    if isinstance(info.get("directory"), str):
        builder.extras["cwd"] = info["directory"]
    builder.extras["sample"] = info.get("id")
    _Reader(builder).run(messages)
    session = builder.build()
    kids = [child for _, child in readable_children(session, db_children, lambda sid: read(path, sid, children=False))]
    kids += [child for _, child in readable_children(session, found, lambda file: read(file, children=False))]
    for child in kids:
        child.extras.update({"agent_id": child.extras["header"]["id"], "child_kind": "subagent"})
        session.children.append(child)
    return session


# A project folder's subagent sessions by the parent they name, kept while the folder holds the same files (its
# mtime): `sessions` reads each of a project's N sessions, and each looking through its N siblings again was N^2
# small reads (7 s of CPU at 500 sessions).
_BY_PARENT: dict[str, tuple[int, dict[str, list[Path]]]] = {}


def _storage_children(path: Path, sid: str) -> list[Path]:
    """The sessions a subagent ran for this one (the task tool's): beside it in `session/<project>/`, their `parentID`
    its id. `sessions` leaves them out of its list as their parent's; read here, they are counted in it."""
    folder = path.parent
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return []
    kept = _BY_PARENT.get(str(folder))
    if kept is None or kept[0] != stamp:
        by_parent: dict[str, list[Path]] = {}
        for p in _json_files(folder):
            parent = _parent_of(p)
            if parent is not None:
                by_parent.setdefault(parent, []).append(p)
        kept = _BY_PARENT[str(folder)] = (stamp, by_parent)
    return [p for p in kept[1].get(sid, []) if p != path]


def _parent_of(path: Path) -> str | None:
    try:
        value = json.loads(path.read_bytes()) if path.stat().st_size < MAX_JSON_BYTES else None
    except (OSError, ValueError):
        return None
    parent = value.get("parentID") if isinstance(value, dict) else None
    return parent if isinstance(parent, str) else None


def _ms(value: Any) -> float | None:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class _Reader:
    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.ids: dict[str, list[str]] = {}  # an OpenCode message's id -> the record messages it made
        self.pending_compaction: dict[str, dict[str, Any]] = {}  # user message id -> its compaction part
        self.pruned: list[tuple[float, str, str]] = []  # (compacted at, result id, call id)

    def run(self, messages: list[tuple[_Row, list[_Row]]]) -> None:
        for message, parts in messages:
            role = message.data.get("role")
            if role == "user":
                self._user(message, parts)
            elif role == "assistant":
                self._assistant(message, parts)
            else:
                self.b.warn(message.line, f"{message.where}: a message of role {role!r}; skipped")
        self.b.end_turn()

    def _user(self, message: _Row, parts: list[_Row]) -> None:
        texts = []
        for part in parts:
            p = part.data
            kind = p.get("type")
            if kind == "text" and isinstance(p.get("text"), str) and not p.get("ignored"):
                texts.append(p["text"])
            elif kind == "file" and p.get("mime") not in ("text/plain", "application/x-directory"):
                texts.append(f"[Attached {p.get('mime')}: {p.get('filename') or 'file'}]")
            elif kind == "compaction":
                texts.append(COMPACTION_PROMPT)
                self.pending_compaction[str(message.data["id"])] = p
            elif kind == "subtask":
                texts.append(SUBTASK_PROMPT)
        mid = str(message.data["id"])
        self.ids[mid] = [
            self.b.add(mid, "instruction", {"instruction": "\n".join(texts)}, message.line, at=_ms(_time(message.data, "created")))
        ]

    def _assistant(self, message: _Row, parts: list[_Row]) -> None:
        b, m = self.b, message.data
        mid = str(m["id"])
        at = _ms(_time(m, "created"))
        given: dict[str, Any] = m["model"] if isinstance(m.get("model"), dict) else {}  # older: {providerID, modelID}
        model = next((v for v in (m.get("modelID"), given.get("modelID")) if isinstance(v, str)), None)
        self._prune(at)
        before = len(b.record)
        steps = _steps(parts)
        finished = any(p.data.get("type") == "step-finish" for p in parts)
        for n, step in enumerate(steps):
            b.start_response(
                mid if n == 0 else f"{mid}-step{n + 1}",
                message.line,
                at,
                model,
                {"model": model, "provider": m.get("providerID")} if model else None,
            )
            for part in step:
                self._part(message, part, at)
            if not finished:  # an older message without steps: the message's tokens are its one call's
                b.report_usage(self._usage(m.get("tokens"), message))
            b.end_turn()
        made = [msg.id for msg in list(b.record)[before:]]
        self.ids[mid] = made
        error = m.get("error")
        content = any(p.data.get("type") not in ("step-start", "reasoning") for p in parts)
        if isinstance(error, dict) and not (error.get("name") == "MessageAbortedError" and content):
            gone = set(made)  # never sent again (toModelMessages skips it)
            b.view = [v for v in b.view if v not in gone]
        if m.get("summary") is True and isinstance(m.get("parentID"), str) and m["parentID"] in self.pending_compaction:
            self._compaction(message, m["parentID"], parts, at)

    def _part(self, message: _Row, part: _Row, at: float | None) -> None:
        b, p = self.b, part.data
        kind = p.get("type")
        if kind == "text" and isinstance(p.get("text"), str):
            b.turn_text(p["text"])
        elif kind == "reasoning" and isinstance(p.get("text"), str):
            b.turn_thinking(p["text"])
        elif kind == "tool":
            self._tool(message, part, at)
        elif kind == "step-finish":
            b.report_usage(self._usage(p.get("tokens"), part))
            if isinstance(p.get("reason"), str):
                b.turn_meta(finish=p["reason"])

    def _tool(self, message: _Row, part: _Row, at: float | None) -> None:
        b, p = self.b, part.data
        call_id: str = p["callID"] if isinstance(p.get("callID"), str) else str(p.get("id"))
        name: str = p["tool"] if isinstance(p.get("tool"), str) else ""
        state: dict[str, Any] = p["state"] if isinstance(p.get("state"), dict) else {}
        args = state.get("input") if isinstance(state.get("input"), dict) else {}
        b.turn_call(call_id, name, args, message.line, at)
        status = state.get("status")
        if status == "completed":
            output = state.get("output") if isinstance(state.get("output"), str) else json.dumps(state.get("output"))
        elif status == "error":
            meta: dict[str, Any] = state["metadata"] if isinstance(state.get("metadata"), dict) else {}
            interrupted = meta.get("interrupted") is True and isinstance(meta.get("output"), str)
            output = meta["output"] if interrupted else str(state.get("error", ""))
        else:
            output = INTERRUPTED
        rid = f"{p.get('id') or call_id}-result"
        b.result(call_id, output, message.line, _ms(_time(state, "end")) or at, id=rid)
        compacted = _ms(_time(state, "compacted"))
        if compacted is not None:
            self.pruned.append((compacted, rid, call_id))

    def _prune(self, at: float | None) -> None:
        """Tool outputs OpenCode pruned before `at`: later requests see the cleared text in their place."""
        if at is None:
            return
        due = [p for p in self.pruned if p[0] <= at]
        if not due:
            return
        self.pruned = [p for p in self.pruned if p[0] > at]
        b = self.b
        b.end_turn()
        view = list(b.view)
        for when, rid, call_id in due:
            actual = b.record.get(rid).id if rid in b.record else None
            if actual is None or actual not in view:
                continue
            original = b.record.get(actual)
            cleared = b.add(
                f"{actual}-cleared",
                "action_response",
                {**original.content, "output": CLEARED},
                original.provenance.line if original.provenance else 0,
                at=when,
                metadata={"call_id": call_id, "pruned": True, "replaces": actual},
                in_view=False,
            )
            view[view.index(actual)] = cleared
        b.view = view

    def _compaction(self, message: _Row, user_id: str, parts: list[_Row], at: float | None) -> None:
        b = self.b
        part = self.pending_compaction.pop(user_id)
        summary = "\n".join(p.data["text"] for p in parts if p.data.get("type") == "text" and isinstance(p.data.get("text"), str))
        tail = part.get("tail_start_id")
        order = list(self.ids)
        kept: list[str] = []
        if isinstance(tail, str) and tail in self.ids:
            for oid in order[order.index(tail) : order.index(user_id)]:
                kept += self.ids[oid]
        kept += self.ids.get(user_id, [])
        b.end_turn()
        b.close_request()  # the summary call is over: its reported input is the size compacted
        report = b.trace[-1].usage if b.trace else None
        b.compact(
            summary,
            message.line,
            id=f"{message.data['id']}-summary",
            at=at,
            keep=kept,
            event={
                "source": FORMAT,
                "tokens_before": report.reported_input if report else None,
                "auto": part.get("auto"),
                "overflow": part.get("overflow"),
                "kept_messages": len(kept),
            },
        )

    def _usage(self, raw: Any, row: _Row) -> Usage | None:
        """A step's `tokens` as the provider's usage; a figure of the wrong type makes it unknown, said."""
        b = self.b
        if not isinstance(raw, dict):
            if raw is not None:
                b.warn(row.line, f"{row.where}: {usage_object_warning(raw)}")
            return None
        cache = raw.get("cache", {})
        if not isinstance(cache, dict):
            b.warn(row.line, f"{row.where}: {usage_object_warning(cache)}")
            return None
        got, bad = usage_figures(
            {**{k: v for k, v in raw.items() if k != "cache"}, **{f"cache.{k}": v for k, v in cache.items()}},
            ("input", "output", "reasoning", "cache.read", "cache.write"),
        )
        if bad:
            b.warn(row.line, f"{row.where}: {bad_usage_warning(bad)}")
            return None
        return Usage(
            input=got["input"], cache_read=got["cache.read"], cache_write=got["cache.write"], output=got["output"] + got["reasoning"]
        )


def _time(value: dict[str, Any], key: str) -> Any:
    time = value.get("time")
    return time.get(key) if isinstance(time, dict) else None


def _steps(parts: list[_Row]) -> list[list[_Row]]:
    """A message's parts cut into model calls: each step ends at its step-finish; parts after the last one make a
    call (one aborted before its step-finish) only when the model wrote something: text, reasoning or a tool call."""
    steps: list[list[_Row]] = [[]]
    for part in parts:
        steps[-1].append(part)
        if part.data.get("type") == "step-finish":
            steps.append([])
    last = steps[-1]
    if not any(p.data.get("type") in ("text", "reasoning", "tool") for p in last):
        steps.pop()
    return steps or [[]]


# -- where OpenCode keeps its sessions -------------------------------------------------------------------------------
def _session_files(root: Path) -> Iterator[Path]:
    """`opencode.db` (its sessions each a row of `sessions`), and the older `storage/session/<project>/*.json`."""
    db = root / DATABASE
    if db.is_file():
        yield db
    folder = root / "storage" / "session"
    try:
        projects = sorted(folder.iterdir())
    except OSError:
        return
    for project in projects:
        try:
            files = sorted(project.iterdir())
        except OSError:
            continue
        yield from (f for f in files if f.suffix == ".json" and not _subagent(f))


def _subagent(path: Path) -> bool:
    """A session a subagent ran (the task tool's) names its parent: it is its parent's (read as one of its children),
    not one of its own; one that does not read is listed, its row saying what is wrong with it."""
    return _parent_of(path) is not None


def _project(path: Path) -> str:
    return path.parent.name


def _window(model: str | None) -> Figure | None:
    return None  # the limit is per model (models.dev); the price list's window is used instead


def _compaction(window: int) -> Figure | None:
    return None  # OpenCode compacts on overflow: usable input = the model's limit less its output (overflow.ts)


SPEC = FormatSpec(
    name=FORMAT,
    title="OpenCode",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=samples,
    unseen_head=True,
    provider_text=False,
    follow=None,
    first_part=False,  # rows and files, not lines
    sessions=Sessions(env="XDG_DATA_HOME", default=".local/share", folder="opencode", files=_session_files, project=_project),
    window=_window,
    compaction=_compaction,
    no_summary="OpenCode's summary call is the request just before the compaction: its usage is in this session",
    cache="explicit",
    usage_precision="exact",
    no_requests=None,
)
