"""Writing a Session as the native file: a lionagi Branch wrapped with its run manifest, losing nothing."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foldscope.core.formats.fast_json import MAX_NESTING
from foldscope.core.formats.lionagi_views import NOT_A_REQUEST, VIEW_EVENT, view_statements
from foldscope.core.model.outputs import write_output
from foldscope.core.model.session import PENDING_TRACE, Message, ReadError, Session

_MESSAGES = "lionagi.protocols.messages."
CLASS_OF_KIND = {
    "system": _MESSAGES + "system.System",
    "instruction": _MESSAGES + "instruction.Instruction",
    "assistant": _MESSAGES + "assistant_response.AssistantResponse",
    "note": _MESSAGES + "assistant_response.AssistantResponse",
    "action_request": _MESSAGES + "action_request.ActionRequest",
    "action_response": _MESSAGES + "action_response.ActionResponse",
}
ROLE_OF_KIND = {
    "system": "system",
    "instruction": "user",
    "assistant": "assistant",
    "note": "assistant",
    "action_request": "action",
    "action_response": "action",
}
BRANCH_CLASS = "lionagi.session.branch.Branch"
PILE_CLASS = "lionagi.protocols.generic.pile.Pile"
PROGRESSION_CLASS = "lionagi.protocols.generic.progression.Progression"
NOTE_KEY = "context_first_index"  # the same key core.formats.lionagi reads a note by
WINDOW_KEY = "model_context_window"  # the manifest's copy of the window a source file stated
TOOLS_KEY = "tools"  # the manifest's copy of the tool definitions a source file sent (an Inspect AI log's)
CHILDREN_KEY = "children"  # the wrapper's subagent sessions (Session.children), each a wrapper of its own
CHILD_KEY = "child"  # in a child's wrapper: where it was read from and its links to the parent
CHILD_LINKS = ("agent_id", "child_kind", "parent_call", "compaction_note")
# Fixed namespace so that ids foldscope invents for a Branch, Pile or view are the same on every write.
_NAMESPACE = uuid.UUID("5d0f8a52-3a6e-4f0e-9a57-6c1f0b8e2f11")


def write_session(session: Session, path: str | Path) -> str:
    """Write the native file (the {branch, manifest} wrapper) atomically, keeping the mode of a file it
    replaces (a new one is private); never over one of the files the session was read from, a device or a
    link (core.model.outputs). `-` writes it to standard output. Returns where it went."""
    read = {source: _which(session, source) for source in input_paths(session)}
    try:
        text = _encode(session)
    except TooDeep as exc:
        raise ReadError(
            str(path),
            "-o",
            f"the session nests {exc.depth} levels deep once written, past the {MAX_NESTING} foldscope reads back; nothing written",
        ) from None
    # A lone surrogate (half an emoji a tool cut) can only stand in a string: written as its JSON escape, read back as it was
    return write_output(path, (text + "\n").encode("utf-8", "backslashreplace"), read)


class TooDeep(ValueError):
    """The native file would nest deeper than MAX_NESTING: written, it would not read back."""

    def __init__(self, depth: int) -> None:
        super().__init__(f"nested {depth} levels deep")
        self.depth = depth


def input_paths(session: Session) -> list[Path]:
    """The files the session was read from: its source and the run manifest found beside a bare Branch."""
    paths = [session.source, session.extras.get("manifest_path")]
    return [Path(p) for p in paths if p]


def _which(session: Session, path: Path) -> str:
    return "the session's source file" if str(path) == str(session.source) else "the run manifest it was read with"


def _encode(session: Session) -> str:
    """The native file's text. JSON as deep as the readers accept (about 990 levels) needs more Python
    frames than the default recursion limit leaves to the encoder (and to the copies native_dict makes),
    so a RecursionError is answered by measuring the depth and allowing room for it once."""
    try:
        return _dumps_within_limit(native_dict(session))
    except RecursionError:
        pass
    import sys

    depth = max(
        _depth(session.branch),
        max((_depth(m.raw) + _depth(m.content) for m in session.record), default=0),
        _depth(session.manifest),
        _depth(session.events),
    )
    needed = _frames() + 4 * depth + 200  # deepcopy takes about three frames a level, the encoder one
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, needed))
    try:
        document = native_dict(session)
        nesting = _depth(document)  # measured only here: the first encoding failed, so the session nests deep
        if nesting > MAX_NESTING:
            raise TooDeep(nesting)
        return json.dumps(document, ensure_ascii=False, indent=1)
    finally:
        sys.setrecursionlimit(old)


def _dumps_within_limit(document: Any) -> str:
    """json.dumps with the interpreter's stack allowing MAX_NESTING levels and a few more: the encoder takes one
    level of it per list or object, so a document nested past the limit raises RecursionError here (and is then
    measured), and one that encodes is one the readers read back, without measuring every save: the two extra
    levels are the frames json.dumps itself takes, so a document of MAX_NESTING levels just fits."""
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + MAX_NESTING + 2)  # + 2: the frames of json.dumps and its encoder call
    try:
        return json.dumps(document, ensure_ascii=False, indent=1)
    finally:
        sys.setrecursionlimit(old)


def _frames() -> int:
    import sys

    frame: Any = sys._getframe()
    count = 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in value, measured without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, Mapping) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in children)
    return deepest


def native_dict(session: Session) -> dict[str, Any]:
    """The whole native file as a JSON-ready dict (shares unmodified parts with the Session: do not edit)."""
    manifest = manifest_to_write(session)
    wrapper: dict[str, Any] = {"branch": branch_dict(session), "manifest": manifest}
    source = session.extras.get("wrapper", {})
    events = [e for e in session.events if e.get("kind") != VIEW_EVENT] + stated_views(session, manifest)
    if events or "events" in source.get("keys", ()):
        wrapper["events"] = events
    if session.children or CHILDREN_KEY in source.get("keys", ()):
        wrapper[CHILDREN_KEY] = [child_dict(child) for child in session.children]
    wrapper.update(source.get("extra", {}))
    return _ordered(wrapper, source.get("keys", []))


def child_dict(child: Session) -> dict[str, Any]:
    """A subagent's session as the file carries it: its own native file, with where it was read from and the links
    to its parent (the call that started it, its kind, the note a summariser wrote)."""
    links = {k: child.extras[k] for k in CHILD_LINKS if k in child.extras}
    return {**native_dict(child), CHILD_KEY: {"source": child.source, **links}}


def stated_views(session: Session, manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The `view` events the file needs to read back as the session is (core.formats.lionagi_views): where
    replaying the record would not give a request the view it was sent with, or only with a warning the session
    does not have, and where the active view was changed after the record's last message. None for a trace not
    built yet (it is the reader's own then)."""
    if PENDING_TRACE in session.caches:
        return []
    sent = {r.response_id: r.view for r in session.trace if r.response_id is not None}
    events = [e for e in session.events if e.get("kind") != VIEW_EVENT]
    return view_statements(session.record, session.view, manifest, events, sent, session.warnings)


def _not_requests(session: Session) -> set[str]:
    """Assistant messages the trace holds no request for (Claude Code's placeholders): marked so they read back so.
    A session with no trace (built in memory) leaves the reader's rule, one request per response, standing."""
    if not session.trace or PENDING_TRACE in session.caches:
        return set()
    answered = {r.response_id for r in session.trace}
    return {m.id for m in session.record if m.kind == "assistant" and m.raw is None and m.id not in answered}


def manifest_to_write(session: Session) -> dict[str, Any] | None:
    """The session's manifest over what its source reported: a fold or startup record written on an imported
    session (its manifest then holds only those) must not hide the imported usage, model and source format."""
    imported = imported_manifest(session) if session.format != "lionagi" else None
    if imported is None:
        return session.manifest or imported_manifest(session)
    return {**imported, **(session.manifest or {})}


def imported_manifest(session: Session) -> dict[str, Any] | None:
    """A run manifest for a session read from another format: its model and each request's usage.

    Without it, exporting a Claude Code, Codex or pi session would drop what the provider
    reported, and the file read back would have no reported input to calibrate against.
    """
    usage = [(r, u) for r in session.trace if (u := r.usage) is not None]
    window = session.extras.get("context_window")  # the window the file stated (Codex's model_context_window)
    # Tools the source file sent with each request: without them every request of the file read back counts the
    # tool definitions short (an Inspect AI log's 206 tokens a request).
    tools = session.extras.get("tools") or None
    if not usage and not session.model and window is None and tools is None:
        return None
    return {
        "model": session.model,
        "source_format": session.format,
        **({WINDOW_KEY: window} if window is not None else {}),
        **({TOOLS_KEY: tools} if tools is not None else {}),
        "api_usage": [
            {
                "request": r.index,
                "response_id": r.response_id,
                "at": r.at,
                "model": r.model or session.model,
                "input_tokens": u.input,
                "cache_read_input_tokens": u.cache_read,
                "cache_creation_input_tokens": u.cache_write,
                "output_tokens": u.output,
                "cache_creation": {"ephemeral_1h_input_tokens": u.cache_write_1h},
            }
            for r, u in usage
        ],
    }


def branch_dict(session: Session) -> dict[str, Any]:
    """The lionagi Branch dict (`Branch.to_dict` shape) for the session's record and active view."""
    record_ids = session.record.ids()
    branch = copy.deepcopy(session.branch)
    if not isinstance(branch.get("id"), str):
        seed = record_ids[0] if record_ids else session.source
        branch = {
            "id": str(uuid.uuid5(_NAMESPACE, f"branch:{seed}")),
            "created_at": _first_time(session),
            "metadata": {"lion_class": BRANCH_CLASS},
            "user": None,
            "name": None,
            **branch,
        }
    branch_id = branch["id"]

    pile = copy.deepcopy(session.extras.get("lionagi_pile")) or _new_pile(branch_id, _first_time(session))
    placeholders = _not_requests(session)
    pile["collections"] = [message_dict(m, branch_id, m.id in placeholders) for m in session.record]
    if isinstance(pile.get("progression"), dict):
        pile["progression"]["order"] = record_ids
        pile["progression"] = _ordered(pile["progression"], ["id", "created_at", "metadata", "order", "name"])
    # Give `collections` its usual place after the Pile's metadata (dict order is the file's order).
    pile = _ordered(pile, ["id", "created_at", "metadata", "collections", "progression", "strict_type"])

    metadata = branch.setdefault("metadata", {})
    current = metadata.get("current_progression")
    if isinstance(current, dict):
        current["order"] = list(session.view)
    elif list(session.view) != record_ids:
        # Absent means "the whole record", so a view is written only when it differs.
        metadata["current_progression"] = {
            "id": str(uuid.uuid5(_NAMESPACE, f"view:{branch_id}")),
            "created_at": pile.get("created_at"),
            "metadata": {},
            "order": list(session.view),
            "name": None,
        }
    branch["messages"] = pile
    keys = session.extras.get("branch_keys") or ["id", "created_at", "metadata", "user", "name", "messages"]
    return _ordered(branch, keys)


def message_dict(message: Message, branch_id: str | None = None, not_a_request: bool = False) -> dict[str, Any]:
    """A message as lionagi stores it: its original dict when it has one, else a new one (an assistant response
    that answered no request marked so)."""
    if message.raw is not None:
        return message.raw  # type: ignore[return-value]
    metadata = {k: v for k, v in message.metadata.items() if k != "lion_class"}
    if not_a_request:
        metadata[NOT_A_REQUEST] = True
    if message.kind == "note":
        # A note must read back as a note: the provenance key marks it even when the first
        # replaced index is unknown (null).
        metadata.setdefault(NOTE_KEY, None)
    sender, recipient = _parties(message.kind, branch_id)
    return {
        "id": message.id,
        "created_at": message.created_at,
        "metadata": {"lion_class": CLASS_OF_KIND[message.kind], **metadata},
        "content": _plain(message.content),
        "embedding": None,
        "sender": sender,
        "recipient": recipient,
        "channel": None,
        "role": ROLE_OF_KIND[message.kind],
    }


def _parties(kind: str, branch_id: str | None) -> tuple[str | None, str | None]:
    # The sender/recipient pairs lionagi 0.36.0 writes for each class.
    return {
        "system": ("system", branch_id),
        "instruction": ("user", branch_id),
        "assistant": (branch_id, "user"),
        "action_request": (branch_id, branch_id),
        "action_response": (branch_id, branch_id),
        "note": (None, None),
    }[kind]


def _plain(value: Any) -> Any:
    """Mappings and tuples as JSON's own dicts and lists (a stored Message freezes its top level)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _new_pile(branch_id: str, created_at: float | None) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid5(_NAMESPACE, f"pile:{branch_id}")),
        "created_at": created_at,
        "metadata": {"lion_class": PILE_CLASS},
        "progression": {
            "id": str(uuid.uuid5(_NAMESPACE, f"progression:{branch_id}")),
            "created_at": created_at,
            "metadata": {"lion_class": PROGRESSION_CLASS},
            "name": None,
        },
        "strict_type": False,
    }


def _first_time(session: Session) -> float | None:
    return next((m.created_at for m in session.record if m.created_at is not None), None)


def _ordered(mapping: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    ordered = {k: mapping[k] for k in keys if k in mapping}
    ordered.update((k, v) for k, v in mapping.items() if k not in ordered)
    return ordered
