"""What a snapshot stands for: the code that made it (its identities) and the files it was read from (its inputs).

A snapshot (core.store.snapshot) is used only while it is provably what reading the file again would give:
- written by the same reader code: `reader_identity()` hashes the source of core.formats, core.model and the
  modules that pickle and check a snapshot (core/store/snapshot*.py), and the Python version the pickle is made by,
  so any change to a reader, to the model it builds or to the snapshot's format makes every snapshot stale;
- for the same inputs: the same path, and the session file has the same size and SHA-256 (its content, not its
  modification time: a `touch` keeps it current, an edit that keeps the size and the second does not fool it), and
  the same files, of the same sizes and modification times, where a reader looks for more of the session (its
  subagent files, a run manifest: `neighbours`), so one changed, added or removed since is seen.
Anything else re-reads the file, and the snapshot is replaced. The counter's memo kept beside it (core.store.snapshot_memo)
is used only under the same `counter_identity()`: the tokenizer and the code that renders and counts.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import weakref
from collections.abc import Iterable, Mapping
from glob import escape as glob_escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.store.snapshot_stream import each_block

if TYPE_CHECKING:
    from foldscope.core.model.session import Session

SNAPSHOT_FORMAT = 7  # the layout of the pickled session and of `inputs`; part of the reader identity (2: the record in batches;
# 3: a mapping's non-ASCII texts as UTF-8 bytes, _Utf8; 4: a batch's huge texts before it, apart: snapshot_stream; 5: the
# trace as columns, snapshot_trace; 6: the trace apart, its ids and the view's as places in the record, snapshot_ints.Places,
# and lists of int tuples as one array, snapshot_ints.rows; 7: a message's own huge text named as its body holds it,
# snapshot_stream.HELD)
MEMO_FORMAT = 4  # 4: the bodies in batches; 3: plain texts' counts too; 2: pickled with messages as persistent ids; 1: JSON
_PACKAGE = Path(__file__).resolve().parent.parent  # foldscope/core, resolved: each file hashed is named under it


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
    files = [*(_PACKAGE / "formats").glob("*.py"), *(_PACKAGE / "model").glob("*.py")]  # not __file__: behind a link
    files += (_PACKAGE / "store").glob("snapshot*.py")  # the modules that pickle and check it, a new one among them
    return _identity(files, f"snapshot {SNAPSHOT_FORMAT} python {sys.version_info[0]}.{sys.version_info[1]}")


@functools.cache
def counter_identity() -> str | None:
    """What a memo's counts depend on besides its keys: the tokenizer and the code that renders and counts blocks."""
    from foldscope.core.request import vocabulary

    version = vocabulary.tiktoken_version()  # without importing it (40-50 ms)
    files = [*(_PACKAGE / "request").glob("*.py"), *(_PACKAGE / "model").glob("*.py"), _PACKAGE / "formats" / "images.py"]
    return _identity(files, f"memo {MEMO_FORMAT} o200k_base {vocabulary.O200K_SHA256} tiktoken {version}")


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks (a large file is never held whole); of a session's folder (a
    Cline task), of its files' names and bytes in name order."""
    digest = hashlib.sha256()
    path = Path(path)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.name.encode("utf-8", "surrogateescape") + b"\0")
        with open(file, "rb", buffering=0) as handle:
            each_block(handle, digest.update)
    return digest.hexdigest()


# The session file this process last hashed whole as it stored a session (core.store.source_bytes): that session (a
# weak reference: the entry keeps nothing alive), the file's real path, and its size and SHA-256 then. The snapshot of
# that very session kept just after (inputs_of) names the file by them rather than read and hash it again (0.03 s and
# the read of a 50 MB message's file), and so names the bytes the session was stored from even where the file changed
# or was replaced in between (an agent appending while the count ran): the next open then finds the snapshot stale,
# where a hash taken at the snapshot would have named the changed file. At most one; taken once, and only by that
# session's snapshot. Keyed by the path alone, any snapshot of the path could take it: two stores of one path (the
# window's documents on two threads) could take each other's, naming bytes the session was not read from, and one a
# store left with no snapshot after it (a session found stored already, a failed import) waited for the next snapshot
# of that path, whichever session's.
_hashed: tuple[weakref.ref[Session], str, int, str] | None = None


def file_hashed(path: str | Path, st: os.stat_result, sha256: str, session: Session) -> None:
    """The session file at path, whose stat (taken before its bytes were read) is `st`, was just hashed whole to store
    `session`."""
    global _hashed
    _hashed = (weakref.ref(session), os.path.realpath(path), st.st_size, sha256)


def _stored_size_and_sha256(path: Path, session: Session | None) -> tuple[int | None, str]:
    """The size and SHA-256 file_hashed was given for the file at path as it stored `session` (taken: a second snapshot
    hashes the file), else its size now and file_sha256(path)."""
    global _hashed
    known = _hashed
    if known is not None and session is not None and known[0]() is session and known[1] == os.path.realpath(path):
        _hashed = None
        return known[2], known[3]
    stat = _stat(path)
    return (stat[0] if stat else None), file_sha256(path)


def _stat(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def inputs_of(path: str | Path, session: Session | None = None) -> dict[str, Any]:
    """What a snapshot of `session`, read from `path`, stands for (see the module docstring)."""
    path = Path(path)
    size, sha256 = _stored_size_and_sha256(path, session)
    return {"file": str(path), "size": size, "sha256": sha256, "neighbours": neighbours(path)}


def neighbours(path: Path) -> dict[str, list[int] | None]:
    """Every file a reader would look at beside the session for more of it, with its size and modification time:
    Claude Code's subagent files (`<stem>/subagents/*.jsonl`, `agent-*.jsonl` beside it) and a lionagi run manifest
    (core.formats.lionagi.MANIFEST_GLOBS), and an SQLite database's write-ahead log (`<file>-wal`: OpenCode's
    writes wait there, the database file unchanged, until a checkpoint), and a Cline task's other files
    (core.formats.cline.COMPANIONS). One added, removed or changed since makes
    the snapshot stale."""
    from foldscope.core.formats.cline import COMPANIONS
    from foldscope.core.formats.lionagi import MANIFEST_GLOBS

    found: set[Path] = set()
    try:
        found.update(p for p in (path.parent / name for name in COMPANIONS) if p.is_file())
        for pattern in (*(glob.format(stem=path.stem) for glob in MANIFEST_GLOBS), "agent-*.jsonl"):
            found.update(path.parent.glob(pattern))
        found.update((path.with_suffix("") / "subagents").glob("*.jsonl"))
        found.update(path.parent.glob(f"{glob_escape(path.name)}-wal"))
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
