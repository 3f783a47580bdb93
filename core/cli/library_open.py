"""A session file opened through a library (`--db`): its snapshot when current, so nothing is read or counted
again, and after the command what was counted kept with it (docs/library.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from foldscope.core.model.session import Session
from foldscope.core.request.count import Counter

if TYPE_CHECKING:
    from foldscope.core.cli.store_child import StoreChild


@dataclass
class Opened:
    """A session to work on, its counter (seeded from the library's memo when reopened), and what keep() needs."""

    session: Session
    counter: Counter
    library_id: int | None  # None: read from the file, not in the library yet
    snapshot: Session | None  # the session as read (snapshot.as_read), before a count set its unseen head and scale: pickled by keep()
    tokenised_before: int  # the counter's tokenised characters when opened: more after means a memo to keep
    reopened: bool = False  # from the library's snapshot, not the file
    storing: StoreChild | None = None  # a child storing the session meanwhile (core.cli.store_child), keep() finishes it
    read: tuple | None = None  # what this process read, for a child that read the file itself (store_child.read_stamp)


def open_session(
    file: str,
    db: str | None,
    counter: Counter,
    *,
    input_format: str | None = None,
    sample: str | None = None,
    store_early: bool = False,
    storing: StoreChild | None = None,
) -> Opened:
    """The library's current snapshot of `file` when `db` holds one, else the file read; with `store_early` (a small
    file, core.cli.store_child), a file read for a library is stored by a forked child while the caller counts, or by
    `storing`, one forked before the read (store_before_read) for a library not there yet."""
    if db and storing is None and library_there(db):  # no library yet holds no snapshot: none is created for the look-up
        from foldscope.core.store.library import Library

        with Library(db) as library:
            reopened = library.stored_session(str(Path(file)), sample, input_format)
        if reopened is not None:
            library_id, session, memo = reopened
            if memo is not None:
                counter.seed(*memo)
            return Opened(session, counter, library_id, None, counter.tokenised_chars, reopened=True)
    from foldscope.core.formats import load_session
    from foldscope.core.request.counting.backend import hint

    hint(file)  # about to be read and counted: a counting child the count will want starts during the read
    session = load_session(file, input_format, sample)
    snapshot = None
    if storing is not None:
        from foldscope.core.cli.store_child import read_stamp

        return Opened(session, counter, None, None, counter.tokenised_chars, storing=storing, read=read_stamp(file, session))
    if db and store_early:
        from foldscope.core.cli import store_child

        storing = store_child.StoreChild.fork(session, db, str(Path(file)), sample) if store_child.wanted() else None
    if db and storing is None:
        from foldscope.core.store.snapshot import as_read

        # Copied as read, pickled by keep() into a file beside the library: pickled now, its bytes (two thirds of a
        # one-piece message of letters) were held through the count beside the text and the body sent to the helper.
        snapshot = as_read(session)
    return Opened(session, counter, None, snapshot, counter.tokenised_chars, storing=storing)


def library_there(db: str) -> bool:
    """Library.exists(db), without importing the store (sqlite3 and the library's modules: a new library's `inspect
    --db` of a small file stores from a forked child, core.cli.store_child, and this process need not load them)."""
    if db == ":memory:":
        return True
    try:
        Path(db).stat()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # there but not usable: opening it says why
    return True


def store_before_read(file: str, db: str | None, input_format: str | None, sample: str | None) -> StoreChild | None:
    """A child forked now to read `file` and store it into `db`, a library not there yet (one there may hold the
    session's snapshot, which open_session looks up first), while this process imports what it reads and counts with;
    None where none may be forked (core.cli.store_child.wanted)."""
    if not db or library_there(db):
        return None
    from foldscope.core.cli import store_child

    return store_child.StoreChild.fork(None, db, str(Path(file)), sample, input_format) if store_child.wanted() else None


def keep(opened: Opened, file: str, db: str, sample: str | None = None) -> int:
    """Import a session read from its file with its snapshot and memo, or keep what a reopened one's count added;
    its library id. Called after the command's count, so a run stopped while counting leaves nothing."""
    session, counter, path = opened.session, opened.counter, str(Path(file))
    storing, opened.storing = opened.storing, None
    if storing is not None:
        opened.library_id = storing.finish(counter.memo(), session, opened.read)
        if opened.library_id is not None:
            return opened.library_id
    from foldscope.core.store.library import Library
    from foldscope.core.store.snapshot import spilled

    as_read, opened.snapshot = opened.snapshot, None
    with Library(db) as library:
        if opened.library_id is None and storing is not None:
            # The child failed other than the library refusing: the session stored here, without the snapshot (the
            # session as read is gone: the count has set its unseen head), so a reopen reads the file again.
            opened.library_id = library.import_session(session)
        elif opened.library_id is None:
            # Imported before the snapshot is pickled: the import's write of a huge text's UTF-8 names the text (its
            # size and SHA-256), which the snapshot then neither encodes nor hashes again (0.07 s of a 50 MB message of
            # CJK sentences; docs/performance.md, huge25).
            names: dict[int, tuple[str, int, str]] = {}
            opened.library_id = library.import_session(session, names=names)
            # Pickled into a temporary file beside the library (on disk, where the temporary folder may be memory), never held.
            with spilled(as_read, None if db == ":memory:" else Path(db).parent, held=True, names=names) as data:
                library.keep_snapshot(opened.library_id, session, path, sample, memo=counter.memo(), data=data)
        elif counter.tokenised_chars > opened.tokenised_before:
            library.keep_memo(opened.library_id, path, sample, session.record, counter.memo())
    return opened.library_id


def library_facts(opened: Opened, library_id: int) -> dict[str, object]:
    """What a command's result says of the library: the session's id there and whether it was reopened from it."""
    return {"library_session_id": library_id, "library_reopened": opened.reopened}


def library_line(result: dict) -> str | None:
    """The text output's line for library_facts, None when the command used no library."""
    if "library_session_id" not in result:
        return None
    how = (
        "reopened from the library: nothing read or counted again" if result.get("library_reopened") else "read from the file and imported"
    )
    return f"library session: {result['library_session_id']} ({how})"
