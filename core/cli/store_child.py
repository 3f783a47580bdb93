"""`inspect --db` of a small file: the session stored by a forked child while this process counts.

Storing a 0.7 MB Claude Code file (the store's imports, the snapshot's dump, opening the library, the import) costs
about 35 ms of CPU before its memo is known, a sixth of the command: the child does it on the other core, in one
transaction it holds open (BEGIN IMMEDIATE: the library's write lock) until this process sends the counter's memo,
then keeps the snapshot with it and commits. So a run stopped while counting (this process ends, the pipe closes
short, or the child is killed) commits nothing, as before. Into a new library the child is forked before the read and
reads the file itself, while this process imports what it counts with (the other core is idle then; forked after the
read, it ran beside the measure and its counting child, core.request.counting.later_half, three processes on two
cores); the memo then comes with what this process read (the file's size and modified time after its read, and its
messages), and a child that read otherwise keeps nothing, so the command stores the session itself. The child runs
at this process's priority: at a lower one it waited behind the machine's other work (at load 4.8 this process
waited 75-220 ms for its commit).
"""

from __future__ import annotations

import io
import marshal
import os
import pickle
from collections.abc import Mapping
from typing import Any

from foldscope.core.model.errors import LibraryError
from foldscope.core.model.session import Message, Session


def wanted() -> bool:
    """Whether the store may go to a forked child: a fork is safe (one thread) and allowed (the counting switch)."""
    from foldscope.core.request.counting import children_allowed, one_thread

    return hasattr(os, "fork") and children_allowed() and one_thread()


class StoreChild:
    """A forked child storing the session read from `path` into the library at `db` (see the module's docstring)."""

    def __init__(self, pid: int, down: int, up: int) -> None:
        self.pid, self._down, self._up = pid, down, up

    @classmethod
    def fork(cls, session: Session | None, db: str, path: str, sample: str | None, input_format: str | None = None) -> StoreChild | None:
        """The child started (None when it could not be: the caller stores the session itself); with no `session`, the
        child reads `path` itself (as `input_format`, `sample`)."""
        from foldscope.core.request.counting import forked_on_pipes

        # The child leaves by os._exit: none of this process's exit handlers, output or objects are its to finish.
        got = forked_on_pipes(lambda down, up: _store(session, db, path, sample, input_format, down, up))
        return None if got is None else cls(*got)

    def finish(self, memo: tuple[Mapping, ...], session: Session, read: tuple | None = None) -> int | None:
        """Send the counter's memo (with `read`, what this process read: read_stamp's), wait for the commit, and reap
        the child: the session's library id, or None when the child failed other than the library refusing, or read
        otherwise (the caller then stores it itself). LibraryError as the library said it."""
        try:
            data = _by_place(memo, session.record)
            with os.fdopen(self._down, "wb") as pipe:
                self._down = -1
                for part in (marshal.dumps(read), data):  # each after its length: a message cut short (this process killed) is told
                    pipe.write(len(part).to_bytes(8, "little"))
                    pipe.write(part)
            with os.fdopen(self._up, "rb") as pipe:
                self._up = -1
                answer = pickle.loads(pipe.read())  # data from our own child: its id or what went wrong
        except (OSError, EOFError, pickle.PicklingError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
            answer = None
        finally:
            self.abandon()
        if isinstance(answer, tuple) and answer[:1] == ("library",):
            raise LibraryError(answer[1], answer[2])
        return answer[1] if isinstance(answer, tuple) and answer[:1] == ("stored",) else None

    def abandon(self) -> None:
        """Stop the child if it still runs (its transaction is never committed) and reap it."""
        for fd in (self._down, self._up):
            if fd >= 0:
                os.close(fd)
        self._down = self._up = -1
        if self.pid:
            pid, self.pid = self.pid, 0
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)


# The memo goes down the pipe pickled with each message as its record index, and the child names its own record's
# message there (its record is this one, forked, or one read alike: read_stamp); the child then dumps it as the library
# keeps it (core.store.snapshot_memo.dump_memo). So this process need not import the snapshot's module nor compress the memo
# while the command waits for the commit. A key naming a message outside the record is named ELSEWHERE, which no
# dump keeps, as dump_memo leaves such keys out.
ELSEWHERE = "elsewhere"


class _ByPlace(pickle.Pickler):
    def __init__(self, out: Any, record: Any) -> None:
        super().__init__(out, protocol=5)
        self.record = record

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not Message:
            return None
        try:
            index = self.record.index_of(obj.id)
        except KeyError:
            return ELSEWHERE
        return index if self.record[index] is obj else ELSEWHERE


class _FromPlace(pickle.Unpickler):
    def __init__(self, data: Any, record: Any) -> None:
        super().__init__(data)
        self.record = record

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, int) and 0 <= pid < len(self.record):
            return self.record[pid]
        return object()  # no message of the record: dump_memo leaves the key out


def _by_place(memo: tuple[Mapping, ...], record: Any) -> bytes:
    out = io.BytesIO()
    _ByPlace(out, record).dump(memo)
    return out.getvalue()


def read_stamp(path: str, session: Session) -> tuple:
    """What a read of `path` read, as far as the store needs to know it was the same: the file's size and modified
    time after the read, and the record's messages."""
    try:
        stat = os.stat(path)
    except OSError:
        return (None, None, len(session.record))
    return (stat.st_size, stat.st_mtime_ns, len(session.record))


def _message(pipe: Any) -> bytes | None:
    """One length-prefixed message from the parent; None when it stopped before its end."""
    head = pipe.read(8)
    if len(head) != 8:
        return None
    body = pipe.read(int.from_bytes(head, "little"))
    return body if len(body) == int.from_bytes(head, "little") else None


def _store(session: Session | None, db: str, path: str, sample: str | None, input_format: str | None, down: int, up: int) -> None:
    """In the child: read the file when not given its session, import the session in a transaction, wait for the memo
    (a pipe closed short: roll back), keep the snapshot with it, commit, and answer ("stored", id), ("library", path,
    problem) or ("failed", what)."""
    answer: tuple[Any, ...]
    try:
        read = None
        if session is None:
            from foldscope.core.formats import load_session

            session = load_session(path, input_format, sample)
            read = read_stamp(path, session)
        from foldscope.core.store import snapshot, snapshot_inputs
        from foldscope.core.store.library import Library

        data = snapshot.dump_session(session, held=True)  # the session as read: the count has not set its unseen head and scale here
        # What keep_snapshot asks that the memo does not change (each hashes foldscope's sources, kept once made): made
        # now, so that what is left once the memo comes, while the parent waits, is the write.
        snapshot_inputs.reader_identity()
        snapshot_inputs.counter_identity()
        with Library(db) as library:
            library.conn.execute("BEGIN IMMEDIATE")
            session_id = library.import_session(session)
            with os.fdopen(down, "rb") as pipe:  # read to its length, not its end: a later fork may hold the pipe too
                theirs, memo = _message(pipe), _message(pipe)
            if theirs is None or memo is None:  # the parent stopped before the end
                library.conn.execute("ROLLBACK")
                return
            if read is not None and marshal.loads(theirs) != read:  # the file changed between the two reads
                library.conn.execute("ROLLBACK")
                raise ValueError("the file read here is not the one the parent counted")
            counts = _FromPlace(io.BytesIO(memo), session.record).load()  # our own parent's, as _by_place made it
            library.keep_snapshot(session_id, session, path, sample, memo=counts, data=data)
            library.conn.execute("COMMIT")
        answer = ("stored", session_id)
    except LibraryError as exc:
        answer = ("library", exc.path, exc.problem)
    except Exception as exc:  # anything else: the parent stores the session itself
        answer = ("failed", f"{type(exc).__name__}: {exc}")
    with os.fdopen(up, "wb") as pipe:
        pipe.write(pickle.dumps(answer))
