"""The literal checks of the compactions read so far, made by children forked partway through a long file's read.

Reading a long session keeps one core and leaves the other idle (docs/performance.md). A compaction's literal check
needs only the texts its step took out of the view and its note (core.forensics.literals_ahead), so the checks of the
compactions in the file's first part can be made there: the line reader (core.formats.stream_lines.split_at) forks at
each of FRACTIONS of the file, each child ends its read at its line as if the file ended, and checks the compactions
it holds whose messages were made before its fork, less those a child forked before it checks, writing each result as
core.forensics.literals_ahead's child does (a frame a job), after a first frame that names each check's request, note
and dropped messages by their places in memory. The parent, once its own read is done and its spans cut, takes a check
only where its own span of that request holds the very objects a child named (`matched`): messages made before that
child's fork, which both processes hold alive (`held`) until the checks are taken, so no object made since can sit at a
place the child names, and a message is frozen: the same objects give the same check. Any other span, and any check
not written when it is wanted, is made as before. At the first cut the parent also builds the encoder its count builds
anyway and forks the count's counting child with it (core.request.counting.read_children, the arming and forks this
shares with the replay's read), rather than spawn one as the read starts that spends the second core's first 0.7 s
building its own. The children are niced (NICE) as the checks' child forked after the read is: they take the time the
parent's read leaves, then what the count leaves; once the count is done, what they have not made is handed to the
checks' child forked again then (LiteralChecks.count_done).
"""

from __future__ import annotations

import marshal
import os
import signal
import tempfile
from collections.abc import Sequence, Set
from typing import IO, Any

from foldscope.core.forensics.literals_ahead import HEAD, NICE, Span, _serve
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.counting.read_children import ReadChildren

# Where the read forks, a child at each checking the compactions read since the one before it. The checks cost about
# 1.5 times the read's own CPU for the same part of the file (at 50k: 4.8 s for 151 compactions against a 3.2 s read,
# load 4), so one child forked at f has (1 - f) of the read for checks worth 1.5 f: f = 0.4, the second core idle
# before it. Two: the first's checks (1.5 f1) done by the second's cut f2 = 2.5 f1, the second's (1.5 (f2 - f1)) by the
# read's end: f1 = 0.21, f2 = 0.53, the checks of half the file's compactions made in the read against 0.4 of them.
FRACTIONS = (0.2, 0.5)


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


class _Early:
    """One child forked at a cut, as the parent sees it: its file of frames, the messages held for it, its process."""

    def __init__(self, file: IO[bytes], held: list[Message]) -> None:
        self.file: IO[bytes] | None = file
        self.held: list[Message] | None = held  # the record's messages at its fork, held until the checks are taken
        self.places = frozenset(map(id, held))
        self.pid: int | None = None
        self._scanned = 0
        self._where: dict[int, tuple[int, int, int]] = {}  # its job -> (file descriptor, size, offset)

    def frame(self, j: int) -> Any:
        if self.file is None:
            return None
        self._scan()
        where = self._where.get(j)
        if where is None:
            return None
        try:
            return marshal.loads(os.pread(*where))  # our own child's frame: data only
        except (EOFError, ValueError, TypeError, OSError):
            return None

    def written(self, j: int) -> bool:
        if self.file is not None:
            self._scan()
        return j in self._where

    def _scan(self) -> None:
        """Note the frames the child has written whole since the last scan (literals_ahead's frames)."""
        assert self.file is not None
        fd = self.file.fileno()
        while True:
            head = os.pread(fd, HEAD, self._scanned)
            if len(head) < HEAD:
                return
            size, j = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
            if size and len(os.pread(fd, 1, self._scanned + HEAD + size - 1)) < 1:
                return
            self._where[j] = (fd, size, self._scanned + HEAD)
            self._scanned += HEAD + size

    def kill(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Kill and reap the child if it runs, and let go of its file and of the messages held for it."""
        self.kill()
        if self.pid is not None:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None
        if self.file is not None:
            self.file.close()
            self.file = None
        self.held = None
        self._where.clear()


class ChecksDuringRead(ReadChildren):
    """One read's children checking the compactions read by each of FRACTIONS of the file: `arm` before the read,
    `read_ended` right after it (a child checks, writes and exits there, never returning), then in the parent
    `matched(spans)`, `take(i)` for span i, `stop_short()` once the count is done and `stop()` at the end."""

    def __init__(self, path: Any, fractions: Sequence[float] | None = None) -> None:
        super().__init__(path, FRACTIONS if fractions is None else fractions)
        self.children: list[_Early] = []  # the parent's, in the order forked
        self._parent = os.getpid()
        self._mine: _Early | None = None  # in a child, itself
        self._jobs: dict[int, tuple[_Early, int]] = {}  # the parent's span -> the child and its job holding its check

    @property
    def pids(self) -> list[int]:
        return [c.pid for c in self.children if c.pid is not None]

    def _fork_child(self, record: FullRecord) -> bool:
        # Forked before the measure's counting child and the encoder (ReadChildren._fork), so this child holds neither
        # the encoder's build nor that child's pipes; one forked at a later cut holds the pipes' ends until its checks
        # start, where _serve closes every other descriptor.
        try:
            child = _Early(tempfile.TemporaryFile(), list(record))
        except OSError:
            return False
        try:
            pid = os.fork()
        except OSError:
            child.stop()
            return False
        if pid == 0:
            self._mine = child
            return True
        child.pid = pid
        self.children.append(child)
        return False

    def read_ended(self, session: Session) -> None:
        """After the read: in a child, make its checks (niced, as the checks' child: it takes only the time the parent's
        read leaves, then what the count leaves) and exit; in the parent, nothing."""
        mine = self._mine
        if mine is None:
            return
        try:
            assert mine.file is not None
            earlier = [c.places for c in self.children]  # the children forked before this one, as the parent held them
            jobs = _child_jobs(session, mine.places, earlier)
            fd = mine.file.fileno()
        except BaseException:
            os._exit(1)
        _serve(jobs, fd, None, self._parent, NICE)  # exits

    def matched(self, spans: Sequence[Span]) -> list[int]:
        """The spans (their indexes) whose checks a child makes with the very messages the parent's span holds; none of
        a child that has not named them yet (it is stopped: those checks are made as before)."""
        for child in self.children:
            keys = child.frame(0)
            if not isinstance(keys, list):
                child.stop()
                continue
            named = {k: (j, note, dropped) for j, (k, note, dropped) in enumerate(keys, 1)}
            for i, span in enumerate(spans):
                got = named.get(span.request)
                if i not in self._jobs and got is not None and got[1] == id(span.note) and got[2] == tuple(map(id, span.dropped)):
                    self._jobs[i] = (child, got[0])
        if not self._jobs:
            self.stop()
        return sorted(self._jobs)

    def take(self, i: int) -> tuple[str, bytes, bytes] | None:
        """Span i's check as a child wrote it (LiteralCheck.parts), else None: it never waits."""
        got = self._jobs.get(i)
        return None if got is None else got[0].frame(got[1])

    def stop_short(self) -> list[int]:
        """Stop the children (the count is done: what they have not made goes to the checks' child at the parent's
        priority); the matched spans whose checks they had not written."""
        for child in self.children:
            child.kill()
        return [i for i, (child, j) in self._jobs.items() if not child.written(j)]

    def stop(self) -> None:
        """Kill and reap the children that run, and let go of their files and of the messages held for them."""
        for child in self.children:
            child.stop()
        self._jobs.clear()


def _child_jobs(session: Session, held: Set[int], earlier: Sequence[Set[int]] = ()) -> list[Any]:
    """In the child: the checks of the compactions its record holds whose messages were made before the fork (one its
    read's end made may sit where the parent's read made another: both heaps went on from the same state), less those
    a child forked before it checks (all their messages made before that one's fork); the first job names them
    (request, note's place, the dropped messages' places)."""
    from foldscope.core.forensics.compactions import literal_spans

    def within(span: Span, places: Set[int]) -> bool:
        return id(span.note) in places and all(id(m) in places for m in span.dropped)

    spans = [s for s in literal_spans(session) if within(s, held) and not any(within(s, e) for e in earlier)]
    keys = [(s.request, id(s.note), tuple(map(id, s.dropped))) for s in spans]
    return [lambda: keys, *(s.parts for s in spans)]
