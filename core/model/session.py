"""The session model: messages, the append-only full record, the active view, the trace."""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from foldscope.core.model.canonical import HUGE_STRING, canonical_bytes, canonical_json, huge_sha256  # noqa: F401 (re-exported: its home for every layer)
from foldscope.core.model.errors import LibraryError, NotASession, ReadError  # noqa: F401 (re-exported: their old home)
from foldscope.core.model.running_sum import common_start

# Message kinds, in the vocabulary of DESIGN.md. A clipped copy is an action_response whose
# metadata carries `clipped_from`; a note is the message a fold or compaction put in the view.
KINDS = ("system", "instruction", "assistant", "action_request", "action_response", "note")
# Where a message of each plain kind keeps its text (Message.text); see sole_text.
TEXT_KEY = {"system": "system_message", "instruction": "instruction", "assistant": "assistant_response", "note": "assistant_response"}


def sha256_of(value: Any) -> str:
    """The SHA-256 of canonical_json(value)'s UTF-8: msgspec's bytes of it where they are the same (canonical_bytes),
    hashed as written; made a str and encoded again, one huge message was held three times (the inspector's id line)."""
    data = canonical_bytes(value)  # a lone surrogate (half an emoji cut in a result) goes json's way, hashed as passed
    return hashlib.sha256(data if data is not None else canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


# Every key tuple a Fields was made with, so that mappings of the same keys share one tuple; bounded, so that
# a source with a new key set on every line (a lionagi metadata of free keys) cannot grow it without end.
_SHARED_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}
_MAX_SHARED_KEYS = 4096


def _shared(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The one keys tuple kept for these keys (made the kept one while fewer than _MAX_SHARED_KEYS are), else `keys`."""
    return _SHARED_KEYS.get(keys) or (_SHARED_KEYS.setdefault(keys, keys) if len(_SHARED_KEYS) < _MAX_SHARED_KEYS else keys)


class Fields(Mapping[str, Any]):
    """A read-only mapping kept as its values, its keys a tuple shared by every mapping of the same keys.

    A message's content and metadata are two of these: a million-line file holds two a message, and a dict
    copy behind a MappingProxyType costs 224 bytes where this costs 48 for one key (docs/performance.md).
    It reads, compares and copies (`dict(fields)`, `{**fields}`) as the dict it was made from, in its order.
    """

    __slots__ = ("_keys", "_values")

    def __init__(self, mapping: Mapping[str, Any] | None = None) -> None:
        if mapping is None:
            mapping = {}
        keys = _shared(tuple(mapping))
        self._keys: tuple[str, ...] = keys
        # The values in the keys' order; a mapping of one key (most contents, a Claude Code line's metadata)
        # holds its value itself, not a tuple of it: 48 bytes less.
        if len(keys) == 1:
            self._values: Any = mapping[keys[0]]
        else:
            self._values = tuple(mapping.values()) if isinstance(mapping, dict) else tuple(mapping[k] for k in keys)

    @classmethod
    def one(cls, key: str, value: Any) -> Fields:
        """Fields({key: value}) without making the dict: a reader's commonest content and metadata."""
        fields = object.__new__(cls)
        keys = (key,)
        fields._keys = _shared(keys)
        fields._values = value
        return fields

    @classmethod
    def zipped(cls, keys: tuple[str, ...], values: tuple[Any, ...]) -> Fields:
        """Fields(dict(zip(keys, values))) of distinct keys, without the dict: a reader's content of fixed keys (a
        response's calls and results, tests/core/formats/test_claude_code_fast.py)."""
        fields = object.__new__(cls)
        fields._keys = _shared(keys)
        fields._values = values[0] if len(keys) == 1 else values
        return fields

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> Fields:
        """`mapping` itself when it is a Fields already (nothing can change one), else a Fields of it."""
        return mapping if type(mapping) is Fields else cls(mapping)

    def __getitem__(self, key: str) -> Any:
        keys = self._keys
        if len(keys) == 1:
            if key == keys[0]:
                return self._values
        elif key in keys:
            return self._values[keys.index(key)]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        keys = self._keys
        if len(keys) == 1:
            return self._values if key == keys[0] else default
        return self._values[keys.index(key)] if key in keys else default

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def sole(self, key: str, default: Any = None) -> Any:
        """The value of `key` when it is the only key, else `default`: a typed prompt's content is its instruction
        alone, which the counter asks of every message (one call, where `len` and `in` are two)."""
        return self._values if len(self._keys) == 1 and self._keys[0] == key else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def values(self) -> ValuesView[Any]:
        return _FieldsValues(self)

    def pairs(self) -> Iterator[tuple[str, Any]]:
        """(key, value) in order, as items() without its view."""
        return iter(((self._keys[0], self._values),)) if len(self._keys) == 1 else zip(self._keys, self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.pairs()) == (dict(other.pairs()) if isinstance(other, Fields) else dict(other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping of possibly unhashable values, as a dict

    def __repr__(self) -> str:
        return f"Fields({dict(self.pairs())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Fields, (dict(self.pairs()),)


class _FieldsValues(ValuesView[Any]):
    """A Fields' values read from its own values (Mapping's view looks each key up again, in Python): counting
    ahead asks whether a record holds text enough by reading every message's (core.request.counting.ahead.CountsAhead.worth)."""

    __slots__ = ()
    _mapping: Fields

    def __iter__(self) -> Iterator[Any]:
        fields = self._mapping
        return iter((fields._values,)) if len(fields._keys) == 1 else iter(fields._values)


@dataclass(frozen=True, slots=True)  # slots: one of these per message; without them each carries a dict
class Provenance:
    """Where a message came from: the source file and its 1-based line (0 when not line-based)."""

    file: str
    line: int = 0
    path: str = ""  # a JSON path inside the line or file, when useful


@dataclass(frozen=True, eq=False, slots=True)  # slots: a million-line file holds a million of these
class Message:
    """One message of the full record.

    `content` uses the lionagi content shapes whatever the source format:
      system          {"system_message": str}
      instruction     {"instruction": str, ...optional "guidance", "context", "prompt_context"}
      assistant       {"assistant_response": str}
      action_request  {"function": str, "arguments": mapping, "action_response_id": id|None}
      action_response {"function": str, "arguments": mapping, "output": any, "action_request_id": id|None}
      note            {"assistant_response": str}
    `metadata` keeps lionagi's metadata (lion_class, clipped_from, context_first_index, ...) plus
    any reader facts (call ids, is_error, usage). `raw` is the message exactly as the source held
    it, kept for a lossless write-back of native files; it is never interpreted after reading.
    """

    id: str
    kind: str
    created_at: float | None
    content: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance | None = None
    raw: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown message kind {self.kind!r}")
        # Freeze the top level so nothing edits a stored message by accident (Fields: compact, read-only; one
        # given already is kept, as nothing can change it).
        if type(self.content) is not Fields:
            object.__setattr__(self, "content", Fields(self.content))
        if type(self.metadata) is not Fields:
            object.__setattr__(self, "metadata", Fields(self.metadata))

    @property
    def is_clipped_copy(self) -> bool:
        return self.kind == "action_response" and "clipped_from" in self.metadata

    @property
    def clipped_from(self) -> str | None:
        return self.metadata.get("clipped_from") if self.kind == "action_response" else None

    @property
    def text(self) -> str:
        """The message's main text, for previews, search and summaries."""
        c = self.content
        if self.kind == "system":
            return _as_text(c.get("system_message", ""))
        if self.kind == "instruction":
            return _as_text(c.get("instruction", ""))
        if self.kind in ("assistant", "note"):
            return _as_text(c.get("assistant_response", ""))
        if self.kind == "action_request":
            return f"{c.get('function', '')}({canonical_json(c.get('arguments', {}))})"
        return _as_text(c.get("output", ""))

    def sha256(self) -> str:
        """SHA-256 of the message's identity-bearing parts (id, kind, content, metadata)."""
        content, metadata = dict(self.content), dict(self.metadata)
        value = {"id": self.id, "kind": self.kind, "content": content, "metadata": metadata}
        huge = [v for part in (content, metadata) for v in part.values() if type(v) is str and len(v) >= HUGE_STRING]
        digest = huge_sha256(value, huge) if huge else None
        return digest if digest is not None else sha256_of(value)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return canonical_json(value)


def sole_text(message: Message) -> str | None:
    """A plain message's text when its content is that string alone under its kind's key (TEXT_KEY), else None: the
    commonest message (a typed prompt, an answer), which a walk over a million messages reads without Message.text's
    look-ups before anything slower."""
    content = message.content
    value = content.sole(TEXT_KEY.get(message.kind, "")) if type(content) is Fields else None
    return value if type(value) is str else None


_set_message = tuple(Message.__dict__[name].__set__ for name in ("id", "kind", "created_at", "content", "metadata", "provenance", "raw"))
_set_provenance = tuple(Provenance.__dict__[name].__set__ for name in ("file", "line", "path"))
_new = object.__new__
_ID = operator.attrgetter("id")


def new_message(
    id: str,
    kind: str,
    created_at: float | None,
    content: Mapping[str, Any],
    metadata: Mapping[str, Any],
    file: str,
    line: int,
    *,
    path: str = "",
    raw: Mapping[str, Any] | None = None,
) -> Message:
    """Message(id, kind, created_at, content, metadata, Provenance(file, line, path), raw), set through the slots rather
    than the frozen dataclasses' __init__ (an object.__setattr__ call a field) and __post_init__: a reader's every line
    makes one, a million on a file of tiny prompts. The same checks: a known kind, content and metadata as Fields."""
    if kind not in KINDS:
        raise ValueError(f"unknown message kind {kind!r}")
    provenance = _new(Provenance)
    set_file, set_line, set_path = _set_provenance
    set_file(provenance, file)
    set_line(provenance, line)
    set_path(provenance, path)
    message = _new(Message)
    set_id, set_kind, set_at, set_content, set_metadata, set_provenance, set_raw = _set_message
    set_id(message, id)
    set_kind(message, kind)
    set_at(message, created_at)
    set_content(message, content if type(content) is Fields else Fields(content))
    set_metadata(message, metadata if type(metadata) is Fields else Fields(metadata))
    set_provenance(message, provenance)
    set_raw(message, raw)
    return message


class FullRecord:
    """Every message of a session, in order. Append-only: there is no way to remove or replace one.

    `ints`, when given, is a list whose item v is the int v (a reader's line numbers, core.formats.stream): each
    message's index is taken from it, so the record's index, the provenance lines and the requests share one int
    object a value, where each kept its own, 32 bytes apiece. Never pickled."""

    _ints: list[int] | None = None

    def __init__(self, messages: Iterable[Message] = (), ints: list[int] | None = None) -> None:
        self._messages: list[Message] = []
        self._index: dict[str, int] = {}
        if ints is not None:
            self._ints = ints
        for m in messages:
            self.append(m)

    def append(self, message: Message) -> int:
        if message.id in self._index:
            raise ValueError(f"duplicate message id {message.id!r}")
        n = len(self._messages)
        ints = self._ints
        self._index[message.id] = ints[n] if ints is not None and n < len(ints) else n
        self._messages.append(message)
        return n

    def let_go_of_ints(self) -> None:
        """Stop taking indexes from the shared ints (the reader is done with them); the ones taken stay shared."""
        self.__dict__.pop("_ints", None)

    def __getstate__(self) -> dict[str, Any]:
        # As the default pickle wrote it (the snapshot's), without the shared ints.
        return {k: v for k, v in self.__dict__.items() if k != "_ints"}

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._index

    def get(self, message_id: str) -> Message:
        return self._messages[self._index[message_id]]

    def places(self, message_ids: Iterable[str]) -> list[int] | None:
        """Each id's index, in the ids' order; None when one is not a message of the record."""
        try:
            return list(map(self._index.__getitem__, message_ids))
        except KeyError:
            return None

    def all_of(self, message_ids: Iterable[str]) -> list[Message]:
        """The messages of these ids, in order (a KeyError for an id the record lacks): get over many, in C."""
        if isinstance(message_ids, Sequence):
            run = self._run(message_ids)
            if run is not None:
                return run
        return list(map(self._messages.__getitem__, map(self._index.__getitem__, message_ids)))

    def found(self, message_ids: Sequence[str]) -> list[Message]:
        """The messages of these ids the record holds, in order (the rest left out), looked up in C."""
        try:
            return self.all_of(message_ids)  # the record holds every one, nearly always: no Python step an id
        except KeyError:
            messages = self._messages
            return [messages[i] for i in map(self._index.get, message_ids) if i is not None]

    def _run(self, message_ids: Sequence[str]) -> list[Message] | None:
        """The messages of these ids when they are consecutive messages of the record, in its order (a view's new
        ids, or a whole view of a record never rewound, nearly always), else None: the first id looked up and the
        rest compared along a slice. A look-up an id in a dict of a million ids misses the processor's caches
        several times (about 0.4 us), where the slice's messages lie in the order they were made."""
        if not message_ids:
            return []
        start = self._index.get(message_ids[0])
        end = None if start is None else start + len(message_ids)
        if end is None or end > len(self._messages) or self._messages[end - 1].id != message_ids[-1]:
            return None  # not a run: told by its two ends, before a slice the length of the ids is made
        run = self._messages[start:end]
        return run if all(map(operator.eq, map(_ID, run), message_ids)) else None

    def holds(self, message_ids: set[str]) -> bool:
        """Whether every one of these ids is a message of the record."""
        return self._index.keys() >= message_ids

    def index_of(self, message_id: str) -> int:
        """A message's index: its position in the full record, counting from 0."""
        return self._index[message_id]

    def indexes_of(self, message_ids: Iterable[str]) -> list[int]:
        """Each id's index, in the ids' order, looked up in C (a KeyError names an id the record lacks, as index_of's)."""
        return list(map(self._index.__getitem__, message_ids))

    def ids(self) -> list[str]:
        return [m.id for m in self._messages]


@dataclass(frozen=True, slots=True)  # slots: one a request, without a dict each
class Usage:
    """What the provider reported for one request. `input` is fresh input only."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cache_write_1h: int = 0  # the part of cache_write with a one-hour lifetime, when known

    @property
    def reported_input(self) -> int:
        """The request's whole input size: fresh, cache read and cache write together."""
        return self.input + self.cache_read + self.cache_write


# A reader whose file holds no usage per request, only totals, may share them out: extras[ESTIMATED_USAGE] then holds
# {"why": the sentence every screen shows, "totals": what the file said}, and the requests' usage is foldscope's
# estimate, not the provider's report (never calibrated on, never pooled as accuracy).
ESTIMATED_USAGE = "usage_estimated"


def estimated_usage(session: Session) -> str | None:
    """Why the session's per-request usage is foldscope's estimate, or None when it is the provider's report."""
    said = session.extras.get(ESTIMATED_USAGE)
    return said.get("why") if isinstance(said, dict) and isinstance(said.get("why"), str) else None


USAGE_LIMIT = 2**63  # a figure at or past this cannot be a count, and would overflow the library's INTEGER


def usage_figures(raw: Mapping[str, Any], keys: Iterable[str]) -> tuple[dict[str, int], list[str]]:
    """Each named usage figure of a provider's usage object as a count (an absent key reads 0), and the
    figures of the wrong type (a string, null, a bool, a negative, a float, one past 2^63) as `key=value`:
    a reader reads a usage with any such figure as unknown and names them in a warning."""
    good: dict[str, int] = {}
    bad: list[str] = []
    for key in keys:
        if key not in raw:
            good[key] = 0
            continue
        value = raw[key]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < USAGE_LIMIT:
            good[key] = value
        else:
            shown = json.dumps(value)[:40] if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
            bad.append(f"{key}={shown}")
    return good, bad


def bad_usage_warning(bad: list[str]) -> str:
    return f"usage figure{'s' if len(bad) > 1 else ''} of the wrong type ({', '.join(bad)}): the request's usage is read as unknown"


def usage_object_warning(raw: Any) -> str:
    """A usage that is there but is no object (a string, a number, a list): read as unknown, and said."""
    kind = "a string" if isinstance(raw, str) else "a list" if isinstance(raw, list) else type(raw).__name__
    return f"usage is {kind}, not an object of figures: the request's usage is read as unknown"


@dataclass(frozen=True, slots=True)  # slots: one a request, without a dict each
class Request:
    """One call to the model: request k is compiled from the view before the k-th assistant response."""

    index: int
    # The ids in order, a tuple or a SharedView (core.model.views: the readers' views share one list); reads as a tuple.
    view: Sequence[str]
    response_id: str | None = None  # the assistant message that answered it
    usage: Usage | None = None
    at: float | None = None
    model: str | None = None
    cache_miss_reason: str | None = None  # the provider's own word on a cache miss (Claude Code diagnostics.cache_miss_reason)
    # Input the request carried that the file does not hold, named (a Codex web search's results, which
    # the provider fetched and fed to the model within the response); its reported usage includes it.
    unseen_input: tuple[str, ...] = ()


PENDING_TRACE = "pending_trace"  # Session.caches' key for a trace left for later (core.formats.load_session)


@dataclass
class Session:
    """A recorded session: the full record, the active view, branch metadata, manifest and events.

    `branch` holds the native Branch dict without its messages (for lossless write-back);
    `branch_metadata` is the part foldscope interprets (delivered ids, prompt_cache.protected,
    launch policy) and lives inside branch["metadata"] on write.
    """

    record: FullRecord
    view: list[str]
    format: str = "lionagi"
    source: str = ""
    branch: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    trace: list[Request] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    model: str | None = None
    scale: float = 1.0
    # Tokens every request carried that the file does not hold (a Claude Code, Codex or pi file
    # keeps no system prompt or tool definitions); estimated from reported input by core.request.trace.
    unseen_head: int = 0
    extras: dict[str, Any] = field(default_factory=dict)  # reader facts kept out of requests
    # Sessions read with this one (Claude Code's subagent files, the compaction summariser's among them),
    # each a whole Session. A child's extras: "agent_id"; "child_kind", "subagent" or "summariser"
    # (agent-acompact-*); "parent_call", the id of the action_request that started it (None for a warmup
    # call or a summariser); "compaction_note", the note a summariser's call wrote. Their requests are not
    # in this session's trace: core.model.session_totals rolls them up beside it, shown apart.
    children: list[Session] = field(default_factory=list)
    # Bookkeeping kept live between calls so each costs what changed (the view's messages, the delivered ids):
    # derived from the fields above, checked against them on every use, never written to a file. Under
    # PENDING_TRACE, the trace a reader left for later (core.formats.finish_trace builds it).
    caches: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.check_view(self.view)

    def children_files(self) -> list[str]:
        """Its children's files that are files of their own (a subagent's beside the session): a folder's walk meets
        them too, and a folder command counts them in this session, not again. A child kept in the session's own file
        (a subagent's session in an OpenCode database) is none."""
        return [c.source for c in self.children if c.source and c.source != self.source]

    def check_view(self, view: Iterable[str]) -> None:
        if isinstance(view, Sequence):  # in C, the loop below only to name a bad id
            # Each id's place in the record, sorted (a view runs nearly in record order, which sorting reads in one
            # pass), none missing and no two alike: a pointer an id, where the set of them held 40 bytes an id, the
            # peak of a reader's last step (docs/performance.md, import memory).
            places = self.record.places(view)
            if places is not None:
                places.sort()
                if not any(map(operator.eq, places, islice(places, 1, None))):
                    return
        seen: set[str] = set()
        for mid in view:
            if mid not in self.record:
                raise ValueError(f"view names {mid!r}, which is not in the full record")
            if mid in seen:
                raise ValueError(f"view names {mid!r} twice")
            seen.add(mid)

    def set_view(self, view: Iterable[str]) -> None:
        view = list(view)
        self.check_view(view)
        self.view = view

    def view_messages(self) -> list[Message]:
        """The view's messages, a new list each call. The last answer is kept with the ids it was made from:
        a view that shares its start with it looks up only the ids after that start."""
        record, ids, messages = self.caches.get("view_messages", (None, (), []))
        view = self.view
        k = common_start(ids, view) if record is self.record else 0
        if k < len(view) or k < len(ids) or record is not self.record:
            messages = messages[:k] + self.record.all_of(view[k:])
            self.caches["view_messages"] = (self.record, tuple(view), messages)
        return list(messages)

    @property
    def branch_metadata(self) -> dict[str, Any]:
        return self.branch.setdefault("metadata", {})

    def add_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def storable_time(value: Any) -> float | int | None:
    """A created_at as a store can hold it (SQLite's 64-bit integer or a finite double), or None: unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else None
    return value if math.isfinite(value) else None
