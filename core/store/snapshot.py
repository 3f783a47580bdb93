"""A session as the library keeps it to be rebuilt without its file: the snapshot, the inputs it stands for, the counter's memo.

A snapshot is the reader's whole output (core.model.session.Session: the full record, the active view, the trace with
its usage, models and times, events, warnings, manifest, subagent sessions and every extra a reader set), pickled and
compressed. It is used only while it is provably what reading the file again would give:
- written by the same reader code: `reader_identity()` hashes the source of core.formats and core.model (and the
  Python version the pickle is made by), so any change to a reader, or to the model it builds, makes every snapshot
  stale;
- for the same inputs: the same path, and the session file has the same size and SHA-256 (its content, not its
  modification time: a `touch` keeps it current, an edit that keeps the size and the second does not fool it), and
  the same files, of the same sizes and modification times, where a reader looks for more of the session (its
  subagent files, a run manifest: `neighbours`), so one changed, added or removed since is seen.
Anything else re-reads the file, and the snapshot is replaced.

Pickle runs code named by the data it loads; the loader here only builds the classes a Session is made of
(SNAPSHOT_CLASSES) and refuses anything else, so a damaged or crafted library cannot run code through a snapshot.

The counter's memo (core.request.count.Counter.memo: each block's tokens, keyed by the messages it renders and how)
is kept beside the snapshot with messages named by their record index, under `counter_identity()`: the tokenizer and
the code that renders and counts (core.request, core.model, core.formats.images). A reopened session's counter is
seeded with it, so nothing counted once is counted again; a key naming a message that is not in the record is not kept.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import io
import json
import os
import pickle
import sys
import types
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from foldscope.core.model.session import FullRecord, Message, Session

SNAPSHOT_FORMAT = 1  # the layout of the pickled session and of `inputs`; part of the reader identity
MEMO_FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent.parent  # foldscope/core

# What a snapshot may build: the classes a reader's Session is made of, and the containers the pickle protocol names.
SNAPSHOT_CLASSES = {
    ("foldscope.core.model.session", "Session"), ("foldscope.core.model.session", "FullRecord"),
    ("foldscope.core.model.session", "Message"), ("foldscope.core.model.session", "Provenance"),
    ("foldscope.core.model.session", "Usage"), ("foldscope.core.model.session", "Request"),
    ("foldscope.core.model.views", "SharedView"), ("foldscope.core.formats.stream", "SourceLines"),
    ("foldscope.core.store.snapshot", "_frozen"), ("foldscope.core.store.snapshot", "_session"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray"), ("builtins", "complex"),
    ("array", "array"), ("array", "_array_reconstructor"), ("copyreg", "_reconstructor"), ("builtins", "object"),
}


class SnapshotError(Exception):
    """A stored snapshot that cannot be loaded (damaged, or naming what a session is not made of)."""


def _identity(parts: Iterable[Path], salt: str) -> str | None:
    digest = hashlib.sha256(salt.encode())
    try:
        for path in sorted(parts):
            digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return None  # the code cannot be read (a frozen install): no snapshot is ever trusted
    return digest.hexdigest()


@functools.cache
def reader_identity() -> str | None:
    """What a snapshot was made by: the readers' and the model's source, the snapshot format, the Python version."""
    files = [*(_PACKAGE / "formats").glob("*.py"), *(_PACKAGE / "model").glob("*.py"), Path(__file__)]
    return _identity(files, f"snapshot {SNAPSHOT_FORMAT} python {sys.version_info[0]}.{sys.version_info[1]}")


@functools.cache
def counter_identity() -> str | None:
    """What a memo's counts depend on besides its keys: the tokenizer and the code that renders and counts blocks."""
    from foldscope.core.request import tokens

    try:
        import tiktoken

        version = getattr(tiktoken, "__version__", "?")
    except ImportError:
        version = "none"
    files = [*(_PACKAGE / "request").glob("*.py"), *(_PACKAGE / "model").glob("*.py"), _PACKAGE / "formats" / "images.py"]
    return _identity(files, f"memo {MEMO_FORMAT} o200k_base {tokens.O200K_SHA256} tiktoken {version}")


# Inputs -------------------------------------------------------------------------------------------------------


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks (a large file is never held whole)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _stat(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def inputs_of(path: str | Path) -> dict[str, Any]:
    """What a snapshot of the session read from `path` stands for (see the module docstring)."""
    path = Path(path)
    stat = _stat(path)
    return {"file": str(path), "size": stat[0] if stat else None, "sha256": file_sha256(path),
            "neighbours": neighbours(path)}


def neighbours(path: Path) -> dict[str, list[int] | None]:
    """Every file a reader would look at beside the session for more of it, with its size and modification time:
    Claude Code's subagent files (`<stem>/subagents/*.jsonl`, `agent-*.jsonl` beside it) and a lionagi run manifest
    (core.formats.lionagi.MANIFEST_GLOBS). One added, removed or changed since makes the snapshot stale."""
    from foldscope.core.formats.lionagi import MANIFEST_GLOBS

    found: set[Path] = set()
    try:
        for pattern in (*(glob.format(stem=path.stem) for glob in MANIFEST_GLOBS), "agent-*.jsonl"):
            found.update(path.parent.glob(pattern))
        found.update((path.with_suffix("") / "subagents").glob("*.jsonl"))
    except OSError:
        pass
    found.discard(path)
    return {str(p): _stat(p) for p in sorted(found)}


def still_current(inputs: Mapping[str, Any], path: str | Path) -> bool:
    """Whether the files a snapshot stands for are as they were (the session file hashed last: the costly check)."""
    path = Path(path)
    stat = _stat(path)
    if stat is None or inputs.get("file") != str(path) or inputs.get("size") != stat[0]:
        return False
    if neighbours(path) != inputs.get("neighbours"):
        return False
    try:
        return file_sha256(path) == inputs.get("sha256")
    except OSError:
        return False


# The session, pickled -----------------------------------------------------------------------------------------


def _frozen(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


def _session(state: dict[str, Any]) -> Session:
    """A Session from its fields, without __post_init__'s view check (it held when the snapshot was made)."""
    session = Session.__new__(Session)
    session.__dict__.update(state, caches={})
    return session


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is types.MappingProxyType:
            return _frozen, (dict(obj),)
        if type(obj) is Session:  # its caches are derived bookkeeping, rebuilt on use
            return _session, ({k: v for k, v in vars(obj).items() if k != "caches"},)
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in SNAPSHOT_CLASSES:
            raise SnapshotError(f"a snapshot names {module}.{name}, which a session is not made of")
        return super().find_class(module, name)


def dump_session(session: Session) -> bytes:
    """The session, pickled and compressed (zlib level 1: a tenth of the time of level 6, a third of the size)."""
    out = io.BytesIO()
    _Pickler(out, protocol=5).dump(session)
    return zlib.compress(out.getvalue(), 1)


def load_session(data: bytes) -> Session:
    """The session a snapshot holds; SnapshotError when it cannot be loaded."""
    collecting = gc.isenabled()
    gc.disable()  # a pickle of many small objects loads three times faster without the collector walking them
    try:
        session = _Unpickler(io.BytesIO(zlib.decompress(data))).load()
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


# The counter's memo ---------------------------------------------------------------------------------------------


class _NotInRecord(Exception):
    pass


def _encode(value: Any, index: Mapping[int, int]) -> Any:
    if isinstance(value, Message):
        position = index.get(id(value))
        if position is None:
            raise _NotInRecord
        return {"m": position}
    if isinstance(value, tuple):
        return [_encode(v, index) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise _NotInRecord  # a key part a memo cannot name again: left out, counted when met


def _decode(value: Any, record: FullRecord) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v, record) for v in value)
    if isinstance(value, dict):
        position = value["m"]
        if not isinstance(position, int) or not 0 <= position < len(record):
            raise IndexError(position)
        return record[position]
    return value


def dump_memo(memo: tuple[dict, dict, dict], record: FullRecord) -> bytes:
    """A counter's memo (bodies, glue, heads) with each message named by its index in `record`, compressed JSON."""
    bodies, glue, heads = memo
    index = {id(m): i for i, m in enumerate(record)}
    kept = []
    for key, tokens in bodies.items():
        try:
            kept.append([_encode(key, index), tokens])
        except _NotInRecord:
            continue
    data = {"bodies": kept, "glue": sorted(glue.items()), "heads": sorted(heads.items())}
    return zlib.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"), 1)


def load_memo(data: bytes, record: FullRecord) -> tuple[dict, dict, dict]:
    """The memo dump_memo kept, its messages those of `record` (the rebuilt session's); SnapshotError when damaged."""
    try:
        raw = json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
        bodies = {_decode(key, record): int(tokens) for key, tokens in raw["bodies"]}
        return bodies, {k: int(v) for k, v in raw["glue"]}, {k: int(v) for k, v in raw["heads"]}
    except (zlib.error, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SnapshotError(f"a damaged counter memo ({type(exc).__name__})") from exc
