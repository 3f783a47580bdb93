"""The library's file and connection: where it lives, made private, opened and migrated (connect) with its write-ahead
log, its page cache for an import, set aside when unusable, and what its errors mean in the user's words."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from foldscope.core.model.folders import PRIVATE_FILE, data_folder, fsync_folder, make_private_folder
from foldscope.core.model.session import LibraryError
from foldscope.core.store.migrations import migrate, refuse_newer

BUSY_TIMEOUT_S = 60.0


def default_path() -> Path:
    """FOLDSCOPE_DB if set, else library.db in the platform's data folder (~/.local/share/foldscope on Linux)."""
    if os.environ.get("FOLDSCOPE_DB"):
        return Path(os.environ["FOLDSCOPE_DB"])
    return data_folder() / "library.db"


def describe(exc: BaseException, waited: float | None = None) -> str:
    """What an SQLite or OS error means for the library, in the user's words; `waited`: how long the connection
    waited for another writer (its timeout), so the message says what really happened."""
    text = str(exc)
    lowered = text.lower()
    waited = BUSY_TIMEOUT_S if waited is None else waited
    known = [
        ("file is not a database", "the file is not a foldscope library (not an SQLite database)"),
        ("malformed", "the library file is damaged (database disk image is malformed)"),
        ("could not decode", "the library file is damaged (text that is not UTF-8)"),
        ("readonly", "the library is read-only (the file or its folder cannot be written)"),
        ("read-only", "the library is read-only (the file or its folder cannot be written)"),
        ("disk is full", "the disk is full"),
        ("disk i/o error", "the disk reported an I/O error"),
        ("unable to open database", "the library file cannot be opened (its folder is missing or not writable)"),
        ("locked", f"another foldscope kept the library locked for over {waited:g} s"),
        ("busy", f"another foldscope kept the library busy for over {waited:g} s"),
    ]
    for needle, meaning in known:
        if needle in lowered:
            return meaning
    if isinstance(exc, OSError):
        return f"{exc.strerror or text}" + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {text}".splitlines()[0]


def set_aside(path: str | Path) -> Path | None:
    """Move a library file that cannot be used (with its write-ahead log) out of the way, never deleting it, so
    a fresh one can be made in its place; returns where it went (None when there was nothing)."""
    path = Path(path)
    if not path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unusable-{stamp}")
    try:
        for suffix in ("-wal", "-shm", ""):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    except OSError as exc:
        raise LibraryError(str(path), f"cannot set it aside: {describe(exc)}") from exc
    return aside


def shown_path(path: Path | None) -> str | None:
    return None if path is None else str(path)


def source_key(source: str | None) -> str | None:
    """A session's source as the library keys it: the absolute path, so versions of one file share a key."""
    if not source:
        return None
    try:
        key = str(Path(source).resolve())
    except OSError:
        key = str(Path(source).absolute())
    # SQLite text is UTF-8: a name's bytes that are not (held as surrogates) are kept as their escapes.
    return key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def create_private(path: Path) -> None:
    """The library's folder (0700 when foldscope makes it) and its file, created 0600 before SQLite opens it;
    SQLite gives its write-ahead log and shared-memory files the database file's mode."""
    make_private_folder(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        with contextlib.suppress(OSError):  # an earlier foldscope made it 0644; a file not ours stays as it is
            if path.stat().st_mode & 0o077 and path.stat().st_uid == os.getuid():
                path.chmod(PRIVATE_FILE)
        return
    os.close(fd)
    fsync_folder(path.parent)


# A new library's page size, against SQLite's 4 KiB: a huge body's original and text and a snapshot are chains of
# overflow pages, and SQLite's work (the zero-filled blob made, written, then the commit's frames of the write-ahead
# log) is per page. A 20 MB message's import and snapshot took 0.34 s of CPU at 4 KiB, 0.22 at 16 KiB, 0.14 at 64
# KiB; the 50,000-message import 2.6 s, 2.1-2.3 and 2.7 (64 KiB pages rewrite more bytes for each random insert into
# the bodies' key index): 16 KiB serves both (docs/performance.md, huge20).
PAGE_BYTES = 16_384


def journal_wal(conn: sqlite3.Connection) -> None:
    """Switch to the write-ahead log (a new library first given pages of PAGE_BYTES); when another process is
    switching or migrating at that moment SQLite can answer "locked" without waiting, so try again for as long as
    the busy timeout."""
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_S
    # Takes effect only in a library not written yet (a library in the write-ahead log keeps its page size, even
    # through VACUUM), so an existing one is left as it is.
    conn.execute(f"PRAGMA page_size={PAGE_BYTES}")
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


# SQLite's page cache while a session is imported, in KiB, against its 2 MB default: the bodies' key is a B-tree
# of random keys (SHA-256 hex), each insert touching a random page, so once that index outgrows the cache every
# row reads and writes pages (an import of tiny lines took twice as long as with a cache as large as its indexes,
# when the messages' body index was keyed the same way; since migration 006 it grows at its end). Sized to the
# indexes, about 0.2 KiB a message, within these bounds: a larger cache than that only holds the bodies' own pages
# and is no faster (docs/performance.md).
IMPORT_CACHE_KIB = (2_000, 65_536)


IMPORT_CACHE_KIB_PER_MESSAGE = 0.2


# And at most this share of the source's size: the cache is the import's own memory over the session's, and on a file
# of short messages the indexes' cache would take much of the 2x-the-file allowance the reader's record nearly fills
# already. Such a file imports a little slower instead (docs/performance.md).
IMPORT_CACHE_SOURCE_SHARE = 1 / 8


def guarded(method: Callable) -> Callable:
    """Turn SQLite and OS failures inside a Library method into one LibraryError naming the library."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            raise LibraryError(shown_path(self.path), describe(exc, self.timeout)) from exc
        except (OverflowError, UnicodeEncodeError) as exc:  # a number SQLite cannot bind (sqlite3 raises it past 64 bits)
            # or a text it cannot (a lone surrogate, from a JSON escape such as "\ud800", has no UTF-8): the library's
            # problem, never one that stops the session from opening (the window opens it without the library)
            raise LibraryError(shown_path(self.path), f"cannot store a value of this session ({type(exc).__name__}: {exc})") from exc

    return wrapper


def import_cache_kib(messages: int, source_bytes: int, *, least: bool = False) -> int:
    """The page cache an import of this many messages from a source of this size uses, in KiB: the indexes' size
    (IMPORT_CACHE_KIB_PER_MESSAGE), at most IMPORT_CACHE_SOURCE_SHARE of the source, within IMPORT_CACHE_KIB; with
    `least`, SQLite's default (IMPORT_CACHE_KIB's floor) whatever the session's size."""
    low, high = IMPORT_CACHE_KIB
    if least:
        return low
    wanted = min(messages * IMPORT_CACHE_KIB_PER_MESSAGE, source_bytes * IMPORT_CACHE_SOURCE_SHARE / 1024)
    return int(min(high, max(low, wanted)))


def connect(path: Path | None, timeout: float) -> sqlite3.Connection:
    """A connection to the library at `path` (None: a private one in memory), its file made private and switched to
    the write-ahead log, migrated; a library from a newer foldscope is refused before anything writes."""
    if path is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
    else:
        create_private(path)
        # Another thread or process may be writing (an import, autosave, search indexing): wait for its
        # transaction rather than fail with "database is locked" after sqlite's 5 s default.
        conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        refuse_newer(conn)  # before anything writes: a newer library is left exactly as it is
        if path is not None:
            journal_wal(conn)
            # FULL: each commit syncs the write-ahead log, so a committed import survives a power cut.
            conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA recursive_triggers=on")  # as sqlite_utils.Database sets it
        conn.execute("PRAGMA foreign_keys=ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn
