"""The literal checks of the compactions read so far, made by a child forked partway through a long file's read.

Reading a long session keeps one core and leaves the other idle once the counting child has built its encoder (about
1.1 s at 50k, docs/performance.md). A compaction's literal check needs only the texts its step took out of the view and
its note (core.forensics.literals_ahead), so the checks of the compactions in the file's first part can be made there:
the line reader (core.formats.stream_lines.split_at) forks at FRACTION of the file, the child ends its read at that
line as if the file ended, and checks the compactions it holds whose messages were made before the fork, writing each
result as core.forensics.literals_ahead's child does (a frame a job), after a first frame that names each check's
request, note and dropped messages by their places in memory. The parent, once its own read is done and its spans cut, takes a check
only where its own span of that request holds the very objects the child named (`matched`): messages made before the
fork, which both processes hold alive (`held`) until the checks are taken, so no object made since can sit at a place
the child names, and a message is frozen: the same objects give the same check. Any other span, and any check the child
has not written when it is wanted, is made as before. The child is niced (NICE) as the checks' child forked after the
read is: it takes the time the parent's read and the counting child's start leave (at the same priority, three
processes on two cores took the parent's read a third of its core while they overlapped), then what the count leaves;
once the count is done, what it has not made is handed to the checks' child forked again then (LiteralChecks.count_done).
"""

from __future__ import annotations

import marshal
import os
import signal
import tempfile
from collections.abc import Sequence
from typing import IO, Any

from foldscope.core.forensics.literals_ahead import HEAD, NICE, Span, _serve
from foldscope.core.model.session import FullRecord, Message, Session

# Where the read forks. The checks cost about 1.5 times the read's own CPU for the same part of the file (at 50k: 4.8 s
# for 151 compactions against a 3.2 s read, load 4), so a child forked at f of the file has (1 - f) of the read to
# make checks worth 1.5 f: even at f = 0.4.
FRACTION = 0.4


def wanted(path: Any) -> bool:
    """Whether a read of `path` is worth a child checking its start: a long file (the record's start counted, for a
    replay, by core.request.counting.during_read from the same size) and a fork that is safe and allowed."""
    from foldscope.core.forensics.literals_ahead import may_fork
    from foldscope.core.request.counting.during_read import MIN_BYTES

    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return size >= MIN_BYTES and may_fork()


class ChecksDuringRead:
    """One read's child checking the compactions read by FRACTION of the file: `arm` before the read, `read_ended` right
    after it (the child checks, writes and exits there, never returning), then in the parent `matched(spans)`, `take(i)`
    for span i, `stop_short()` once the count is done and `stop()` at the end."""

    def __init__(self, path: Any, fraction: float | None = None) -> None:
        self._cut = int(os.path.getsize(path) * (FRACTION if fraction is None else fraction))
        self.pid: int | None = None
        self._file: IO[bytes] | None = None
        self._held: list[Message] | None = None  # the record's messages at the fork, held until the checks are taken
        self._parent = os.getpid()
        self._mine = False  # True in the child
        self._scanned = 0
        self._where: dict[int, tuple[int, int, int]] = {}  # the child's job -> (file descriptor, size, offset)
        self._jobs: dict[int, int] = {}  # the parent's span -> the child's job holding its check (matched)

    def arm(self) -> None:
        """Have the read fork at the cut (core.formats.stream_lines.split_at)."""
        from foldscope.core.formats import stream_lines

        stream_lines.split_at = (self._cut, self._fork)

    def disarm(self) -> None:
        """A read that never reached a line reader (another format) leaves no fork waiting for the next one."""
        from foldscope.core.formats import stream_lines

        if stream_lines.split_at is not None and stream_lines.split_at[1] == self._fork:
            stream_lines.split_at = None

    def failed(self) -> None:
        """The read failed after the fork: in the child, exit with no answer (the parent reads and says it)."""
        if self._mine:
            os._exit(1)

    def _fork(self, builder: Any) -> bool:
        """At the cut: True in the child (its read ends there), False in the parent (it reads on)."""
        from foldscope.core.request.counting import one_thread

        record = getattr(builder, "record", None)
        if not one_thread() or not isinstance(record, FullRecord):
            return False
        if self._fork_checks(record):
            return True
        _counting_child()
        return False

    def _fork_checks(self, record: FullRecord) -> bool:
        try:
            file = tempfile.TemporaryFile()
        except OSError:
            return False
        held = list(record)
        try:
            pid = os.fork()
        except OSError:
            file.close()
            return False
        self._file, self._held = file, held
        if pid == 0:
            self._mine = True
            return True
        self.pid = pid
        return False

    def read_ended(self, session: Session) -> None:
        """After the read: in the child, make the checks (niced, as the checks' child: it takes only the time the
        parent's read and the counting child's start leave, then what the count leaves) and exit; in the parent,
        nothing."""
        if not self._mine:
            return
        try:
            assert self._file is not None and self._held is not None
            jobs = _child_jobs(session, {id(m) for m in self._held})
            fd = self._file.fileno()
        except BaseException:
            os._exit(1)
        _serve(jobs, fd, None, self._parent, NICE)  # exits

    def matched(self, spans: Sequence[Span]) -> list[int]:
        """The spans (their indexes) whose checks the child makes with the very messages the parent's span holds; [] where
        it has not named them yet (it is stopped: every check is made as before)."""
        keys = self._frame(0)
        if not isinstance(keys, list):
            self.stop()
            return []
        named = {k: (j, note, dropped) for j, (k, note, dropped) in enumerate(keys, 1)}
        for i, span in enumerate(spans):
            got = named.get(span.request)
            if got is not None and got[1] == id(span.note) and got[2] == tuple(map(id, span.dropped)):
                self._jobs[i] = got[0]
        if not self._jobs:
            self.stop()
        return sorted(self._jobs)

    def take(self, i: int) -> tuple[str, bytes, bytes] | None:
        """Span i's check as the child wrote it (LiteralCheck.parts), else None: it never waits."""
        j = self._jobs.get(i)
        return None if j is None else self._frame(j)

    def stop_short(self) -> list[int]:
        """Stop the child (the count is done: what it has not made goes to the checks' child at the parent's priority);
        the matched spans whose checks it had not written."""
        if self.pid is None:
            return []
        self._kill()
        if self._file is not None:
            self._scan()
        return [i for i, j in self._jobs.items() if j not in self._where]

    def _frame(self, j: int) -> Any:
        if self._file is None:
            return None
        self._scan()
        where = self._where.get(j)
        if where is None:
            return None
        try:
            return marshal.loads(os.pread(*where))  # our own child's frame: data only
        except (EOFError, ValueError, TypeError, OSError):
            return None

    def _scan(self) -> None:
        """Note the frames the child has written whole since the last scan (literals_ahead's frames)."""
        assert self._file is not None
        fd = self._file.fileno()
        while True:
            head = os.pread(fd, HEAD, self._scanned)
            if len(head) < HEAD:
                return
            size, j = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
            if size and len(os.pread(fd, 1, self._scanned + HEAD + size - 1)) < 1:
                return
            self._where[j] = (fd, size, self._scanned + HEAD)
            self._scanned += HEAD + size

    def _kill(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Kill and reap the child if it runs, and let go of its file and of the messages held for it."""
        self._kill()
        if self.pid is not None:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None
        if self._file is not None:
            self._file.close()
            self._file = None
        self._held = None
        self._where.clear()
        self._jobs.clear()


def _counting_child() -> None:
    """In the parent at the cut, after the checks' fork (so that child holds neither it nor its pipes): the encoder the
    count builds anyway built now, and the measure's counting child forked with it if read_session's hint made one due
    (core.request.counting.backend.fork_spare), as the replay's read does: a child spawned at the read's start spends
    about 0.7 s of the second core starting an interpreter and building its own, the core the checks run on. It reads
    its pipe, so it ends when this process does."""
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import backend

    tokens.local_encoding()
    backend.fork_spare()


def _child_jobs(session: Session, held: set[int]) -> list[Any]:
    """In the child: the checks of the compactions its record holds whose messages were made before the fork (one its
    read's end made may sit where the parent's read made another: both heaps went on from the same state); the first
    job names them (request, note's place, the dropped messages' places)."""
    from foldscope.core.forensics.compactions import literal_spans

    spans = [s for s in literal_spans(session) if id(s.note) in held and all(id(m) in held for m in s.dropped)]
    keys = [(s.request, id(s.note), tuple(map(id, s.dropped))) for s in spans]
    return [lambda: keys, *(s.parts for s in spans)]
