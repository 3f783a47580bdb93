"""A session as the library keeps it to be rebuilt without its file: the snapshot, pickled and loaded.

A snapshot is the reader's whole output (core.model.session.Session: the full record, the active view, the trace with
its usage, models and times, events, warnings, manifest, subagent sessions and every extra a reader set), pickled and
compressed. It is used only while it is provably what reading the file again would give (core.store.snapshot_inputs);
the counter's memo is kept beside it (core.store.snapshot_memo).

Pickle runs code named by the data it loads; the loader here only builds the classes a Session is made of
(SNAPSHOT_CLASSES) and refuses anything else, so a damaged or crafted library cannot run code through a snapshot.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import io
import os
import pickle
import tempfile
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from foldscope.core.model.session import Fields, FullRecord, Message, Provenance, Request, Session, Usage
from foldscope.core.store.snapshot_ints import extras_of, places_of
from foldscope.core.store.snapshot_stream import (
    BLOCK,
    MARK,
    Deflating,
    Inflating,
    each_block,
    held_places,
    huge_texts,
    is_held,
    is_mark,
    read_text,
    write_held,
    write_text,
)
from foldscope.core.store.snapshot_trace import Trace

RECORD_BATCH = 1_000  # messages pickled with one memo (dump_session_to)

# What a snapshot may build: the classes a reader's Session is made of, and the containers the pickle protocol names.
SNAPSHOT_CLASSES = {
    ("foldscope.core.model.session", "Session"),
    ("foldscope.core.model.session", "FullRecord"),
    ("foldscope.core.model.session", "Message"),
    ("foldscope.core.model.session", "Provenance"),
    ("foldscope.core.model.session", "Usage"),
    ("foldscope.core.model.session", "Request"),
    ("foldscope.core.model.session", "Fields"),
    ("foldscope.core.model.views", "SharedView"),
    ("foldscope.core.formats.stream_lines", "SourceLines"),
    ("foldscope.core.store.snapshot", "_frozen"),
    ("foldscope.core.store.snapshot", "_session"),
    ("foldscope.core.store.snapshot", "_message"),
    ("foldscope.core.store.snapshot", "_text"),
    ("foldscope.core.store.snapshot_trace", "requests"),
    ("foldscope.core.store.snapshot_ints", "ids_at"),
    ("foldscope.core.store.snapshot_ints", "rows"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "bytearray"),
    ("builtins", "complex"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
    ("copyreg", "_reconstructor"),
    ("builtins", "object"),
}


class SnapshotError(Exception):
    """A stored snapshot that cannot be loaded (damaged, or naming what a session is not made of)."""


# The session, pickled -----------------------------------------------------------------------------------------


def _frozen(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


_MESSAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Message))
# The session's small frozen dataclasses (one a message or a request), pickled as their constructors' arguments.
_BY_FIELDS = {cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in (Provenance, Usage, Request)}


def _message(*values: Any) -> Message:
    """A Message from its fields in _MESSAGE_FIELDS order, as stored (its content and metadata already frozen)."""
    message = object.__new__(Message)
    for name, value in zip(_MESSAGE_FIELDS, values):
        object.__setattr__(message, name, value)
    return message


def _session(state: dict[str, Any]) -> Session:
    """A Session from its fields, without __post_init__'s view check (it held when the snapshot was made)."""
    session = Session.__new__(Session)
    session.__dict__.update(state, caches={})
    return session


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


class _Utf8:
    """A non-ASCII text pickled as its UTF-8 bytes, made here. The pickler's own way with a str asks CPython for its
    UTF-8, which CPython then keeps inside the str for the str's life: the open session's texts, held twice from the
    snapshot on (16 MB at 50,000 messages repeating nothing, docs/performance.md)."""

    __slots__ = ("data",)

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogatepass")

    def __reduce__(self) -> tuple[Any, ...]:
        return _text, (self.data,)


def _texts_apart(items: Iterable[tuple[str, Any]], huge: Mapping[int, int]) -> dict[str, Any]:
    """A mapping's items as a dict to pickle, each non-ASCII text among its values as _Utf8 (a message's content and
    metadata hold its texts as values), but a huge one written apart (`huge`: by id, named by a persistent id)."""
    return {k: _Utf8(v) if type(v) is str and not v.isascii() and id(v) not in huge else v for k, v in items}


class _Pickler(pickle.Pickler):
    huge: Mapping[int, int] = {}  # the huge texts written before the batch (snapshot_stream), by id: their place
    apart: Any = None  # the session's trace, pickled before it (dump_session_to): named, not pickled again

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Fields:
            return Fields, (_texts_apart(obj.pairs(), self.huge),)
        if type(obj) is types.MappingProxyType:
            return _frozen, (_texts_apart(obj.items(), self.huge),)
        if type(obj) is Message:  # one call a message: the dataclass's own __setstate__ looks its fields up each time
            return _message, tuple(getattr(obj, name) for name in _MESSAGE_FIELDS)
        fields = _BY_FIELDS.get(type(obj))
        if fields is not None:  # built by their constructors: a frozen dataclass's own getstate asks fields() each time
            return type(obj), tuple(map(obj.__getattribute__, fields))
        if type(obj) is Session:  # its caches are derived bookkeeping, rebuilt on use
            state = {k: v for k, v in vars(obj).items() if k != "caches"}
            if type(obj.view) is list:
                state["view"] = places_of(obj.view, obj.record)
            if type(obj.extras) is dict:
                state["extras"] = extras_of(obj.extras)
            if (self.apart is None or obj.trace is not self.apart) and all(type(r) is Request for r in obj.trace):
                state["trace"] = Trace(obj.trace, obj.record)
            return _session, (state,)
        return NotImplemented


class _HugePickler(_Pickler):
    """A batch of messages holding huge texts, written before it (snapshot_stream.write_text): each named by its place."""

    def __init__(self, out: Any, texts: list[str]) -> None:
        super().__init__(out, protocol=5)
        self.huge = {id(text): n for n, text in enumerate(texts)}

    def persistent_id(self, obj: Any) -> Any:
        return (MARK, self.huge[id(obj)]) if type(obj) is str and id(obj) in self.huge else None


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in SNAPSHOT_CLASSES:
            raise SnapshotError(f"a snapshot names {module}.{name}, which a session is not made of")
        return super().find_class(module, name)


class _BatchUnpickler(_Unpickler):
    """A batch of messages, its huge texts those read before it."""

    def __init__(self, data: Any, texts: list[str]) -> None:
        super().__init__(data)
        self.texts = texts

    def persistent_load(self, pid: Any) -> Any:
        if not is_mark(pid) or pid[1] >= len(self.texts):
            raise SnapshotError(f"a snapshot names a huge text {pid!r} it does not hold")
        return self.texts[pid[1]]


class _SessionUnpickler(_Unpickler):
    """The session's pickle, its record and the record's messages those loaded before it, and its trace (`apart`)."""

    def __init__(self, data: Any, record: FullRecord, apart: list[Request] | None = None) -> None:
        super().__init__(data)
        self.record, self.apart = record, apart

    def persistent_load(self, pid: Any) -> Any:
        if pid == "record":
            return self.record
        if pid == "trace":
            if self.apart is None:
                raise SnapshotError("a snapshot names a trace it does not hold")
            return self.apart
        if type(pid) is not int or not 0 <= pid < len(self.record):
            raise SnapshotError(f"a snapshot names message {pid!r}, which is not in its record")
        return self.record[pid]


def as_read(session: Session, extras: dict[str, Any] | None = None) -> Session:
    """The session as it stands now, to be pickled later (dump_session) after a count has run on the original: its
    own fields copied (the reader's small dicts and lists whole, in one deep copy so what they share stays shared),
    its record, trace and subagent sessions shared, which a count never changes. What a measure sets on the original
    afterwards (the unseen head, the branch's metadata) is not in the copy. Cheap: no message is copied, so a long
    session's snapshot is pickled off the path to its counted document. `extras`: another as_read's, shared."""
    state = {name: value for name, value in vars(session).items() if name != "caches"}
    small = ("branch", "manifest", "events", "warnings") + (("extras",) if extras is None else ())
    memo = _unsent_copied(state["extras"]) if extras is None else {}
    state.update(zip(small, copy.deepcopy(tuple(state[name] for name in small), memo)))
    if extras is not None:
        state["extras"] = extras
    state["view"], state["trace"], state["children"] = list(session.view), list(session.trace), list(session.children)
    return _session(state)


def _unsent_copied(extras: Any) -> dict[int, Any]:
    """A deepcopy memo holding the reader's unsent lines (extras["unsent"]: {kind: [(line, offset), ...]}) copied as
    deepcopy would copy them, a new dict of new lists of the same tuples, so the deepcopy that follows takes the copy
    rather than walk each pair (docs/performance.md, timeline26). Empty where they hold anything else: deepcopy walks
    them then."""
    unsent = extras.get("unsent") if type(extras) is dict else None
    if type(unsent) is not dict or not all(_tuples_of_ints(lines) for lines in unsent.values()):
        return {}
    memo: dict[int, Any] = {id(lines): list(lines) for lines in unsent.values()}
    memo[id(unsent)] = {kind: memo[id(lines)] for kind, lines in unsent.items()}
    memo[id(memo)] = [unsent, *unsent.values()]  # deepcopy's keep-alive: what the memo's ids name stays alive
    return memo


def _tuples_of_ints(lines: Any) -> bool:
    """Whether `lines` is a list of tuples of ints: each tuple is its own deep copy, so a new list of them is one."""
    return type(lines) is list and all(type(place) is tuple and all(type(n) is int for n in place) for place in lines)


def dump_session(session: Session, held: bool = False, names: Mapping[int, tuple[str, int, str]] | None = None) -> bytes:
    """The session, pickled and compressed (dump_session_to's bytes), held in memory."""
    out = io.BytesIO()
    dump_session_to(session, out, held, names)
    return out.getvalue()


def dump_session_to(session: Session, out: BinaryIO, held: bool = False, names: Mapping[int, tuple[str, int, str]] | None = None) -> None:
    """The session pickled into `out` and compressed (zlib level 1: a tenth of the time of level 6, a third of the
    size) as the pickle is written, so the whole pickle (80 MB for 50,000 messages) is never held, let alone twice.

    Pickles one after the other (RECORD_BATCH): the record's length, its messages a batch at a time with the
    pickler's memo cleared between batches, the trace (Trace, or None), then the rest of the session with the record,
    each of its messages and the trace named by a persistent id. Pickled whole, the memo (an entry for every string
    and container pickled) was the dump's largest part: 70 MB at 50,000 messages, held beside the session and its
    count; the trace apart, its memo and its columns are let go before the rest is pickled.

    `held`: for a library that stores the session's bodies, a message's own huge text is named, not written
    (snapshot_stream.HELD); loading it then takes the library's reader of such texts (load_session's `held`). `names`:
    texts the import just wrote, named by its own pass over their UTF-8 (Imports.import_session's), each used where it
    is the same str; any other held text is hashed here (snapshot_stream.held_name)."""
    deflating = Deflating(out)
    record = session.record
    messages = _Pickler(deflating, protocol=5)
    messages.dump(len(record))
    for start in range(0, len(record), RECORD_BATCH):
        batch = [record[i] for i in range(start, min(start + RECORD_BATCH, len(record)))]
        texts = huge_texts(batch)
        places = held_places(batch, start) if held and texts else {}
        for text in texts:
            if id(text) in places:
                named = (names or {}).get(id(text))
                write_held(deflating, text, *places[id(text)][:2], named[1:] if named is not None and named[0] is text else None)
            else:
                write_text(deflating, text)
        messages.clear_memo()
        (_HugePickler(deflating, texts) if texts else messages).dump(batch)
    del messages
    apart = session.trace if all(type(r) is Request for r in session.trace) else None
    _SessionPickler(deflating, record).dump(None if apart is None else Trace(apart, record))
    _SessionPickler(deflating, record, apart).dump(session)
    deflating.finish()


@contextlib.contextmanager
def spilled(
    session: Session | None,
    folder: str | Path | None = None,
    held: bool = False,
    names: Mapping[int, tuple[str, int, str]] | None = None,
) -> Iterator[BinaryIO | bytes | None]:
    """The session's snapshot (dump_session_to) in a temporary file, from its start, while the block runs: its
    compressed bytes (a quarter of a JSONL file's size) are never in memory beside the counted session. The file is
    made in `folder` (the library's: on disk, where a temporary folder may be memory, tmpfs), else in the temporary
    folder; in memory (dump_session) where neither can be written. `held` and `names`: as dump_session_to's."""
    if session is None:
        yield None
        return
    spill = None
    for where in (folder, None) if folder is not None else (None,):
        spill = _spill(session, where, held, names)
        if spill is not None:
            break
    try:
        yield spill if spill is not None else dump_session(session, held, names)
    finally:
        if spill is not None:
            spill.close()


def _spill(session: Session, folder: str | Path | None, held: bool, names: Mapping | None = None) -> BinaryIO | None:
    try:
        spill = tempfile.TemporaryFile(dir=folder)
    except OSError:
        return None
    try:
        dump_session_to(session, spill, held, names)
        spill.seek(0)
    except OSError:  # the folder is full or gone
        spill.close()
        return None
    return spill


def size_of(data: bytes | BinaryIO) -> int:
    """A snapshot's bytes: held, or in a file (spilled)."""
    return len(data) if isinstance(data, bytes) else os.fstat(data.fileno()).st_size


def fill(blob: Any, data: bytes | BinaryIO) -> None:
    """Write a snapshot (held, or in a file from its start) into an SQLite blob of its size, a block at a time."""
    if isinstance(data, bytes):
        with memoryview(data) as view:
            for start in range(0, len(data), BLOCK):
                blob.write(view[start : start + BLOCK])
    else:
        each_block(data, blob.write)


class _SessionPickler(_Pickler):
    """The session without its record's messages (pickled before it): the record and each message named by id, and
    its trace by "trace" where it was pickled apart before it (`apart`)."""

    def __init__(self, out: Any, record: FullRecord, apart: list[Request] | None = None) -> None:
        super().__init__(out, protocol=5)
        self.record, self.apart = record, apart

    def persistent_id(self, obj: Any) -> Any:
        if obj is self.record:
            return "record"
        if obj is self.apart and obj is not None:
            return "trace"
        return place_of(obj, self.record) if type(obj) is Message else None


def place_of(message: Message, record: FullRecord) -> int | None:
    """The message's index in the record, None when the record does not hold this very message; looked up by the
    record's own index of ids, not a table of the record's messages by identity (5 MB at 50,000 messages)."""
    try:
        index = record.index_of(message.id)
    except KeyError:
        return None
    return index if record[index] is message else None


def load_session(data: bytes | Any, held: Callable[[int, str, int, str], str] | None = None) -> Session:
    """The session a snapshot holds (its bytes, or an SQLite blob of them, sliced a block at a time); SnapshotError
    when it cannot be loaded. `held`: the text a library holds as a message's body (its place, its id, the text's
    UTF-8 size and SHA-256, as dump_session_to(held=True) named it), for a snapshot kept in that library."""
    collecting = gc.isenabled()
    gc.disable()  # a pickle of many small objects loads three times faster without the collector walking them
    try:
        session = _load_pickles(Inflating(data), held)
    except SnapshotError:
        raise
    except Exception as exc:  # a damaged blob: zlib.error, UnpicklingError, EOFError, ...
        raise SnapshotError(f"a damaged snapshot ({type(exc).__name__})") from exc
    finally:
        if collecting:
            gc.enable()
    if not isinstance(session, Session) or not isinstance(session.record, FullRecord):
        raise SnapshotError("a snapshot that does not hold a session")
    return session


def _load_pickles(stream: Any, held: Callable[[int, str, int, str], str] | None = None) -> Any:
    """The session from dump_session_to's pickles: the record's length, its messages' batches, the trace, the rest."""
    size = _Unpickler(stream).load()
    if type(size) is not int or size < 0:
        raise SnapshotError("a snapshot that does not start with its record's length")
    messages: list[Message] = []
    texts: list[str] = []  # the huge texts written before the next batch
    while len(messages) < size:
        batch = _BatchUnpickler(stream, texts).load()
        if is_mark(batch):
            texts.append(read_text(stream, batch[1]))
            continue
        if is_held(batch):
            if held is None:
                raise SnapshotError("a snapshot names a text its library holds, loaded without the library")
            texts.append(held(*batch[1:]))
            continue
        texts = []
        if type(batch) is not list or not batch or not all(type(m) is Message for m in batch):
            raise SnapshotError("a snapshot whose record is not a list of messages")
        messages.extend(batch)
    if len(messages) != size:
        raise SnapshotError("a snapshot whose record is not as long as it says")
    record = FullRecord(messages)
    apart = _SessionUnpickler(stream, record).load()
    if apart is not None and (type(apart) is not list or not all(type(r) is Request for r in apart)):
        raise SnapshotError("a snapshot whose trace is not a list of requests")
    return _SessionUnpickler(stream, record, apart).load()
