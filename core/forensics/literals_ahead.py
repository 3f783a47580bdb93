"""Work made ahead in a forked child on the other core (JobsAhead), else in-line: the compactions' literal checks first.

A compaction's literal check (core.forensics.literals.check) needs only the session: the texts its step took out of
the view and its note's summary, not the count. So a one-shot command (`compactions`, `report`) starts the checks
right after the read, in a forked child that shares the session copy-on-write, and collects them when it builds the
compaction reports (LiteralChecks). The child writes each job's result, in order, to an unnamed file as one marshal
frame (a check is one string and two byte strings: core.forensics.literals.LiteralCheck). Collecting never waits for
it: the parent checks from the last compaction back, in-line, until it meets one the child has written, so a child
that is slow, hangs or dies costs at most the time the in-line checks would have cost, and the checks are the same
either way. The report gives the same child its conversation and its every-request table's rows to make after the
checks (forked again at the count's end where a child counted beside it; else a second child, forked after the count,
makes the rows: core.readout.report.write_report); the page takes what a child has written and makes the rest itself.
The child is told what the parent made (a byte a job in memory they share), and passes
over it: the checks the parent made from the back, and, where the page caught the child up, the jobs just ahead of
the page, which the parent would make as soon (the child goes on from halfway to the end instead, so the two never
make the same jobs in step). A child is killed and reaped when its work is collected or its caller ends (`with`),
whatever ended it.

A fork is made only where it is safe and wanted: fork exists, no other thread runs (a lock another thread holds at
the fork stays held in the child), no Qt application runs (the GUI's thread and worker pool are threads Python's
threading never sees: the GUI makes this work in-line), children are allowed (core.request.counting.children_allowed; not
FOLDSCOPE_COUNTING=local), this is no process pool's worker or forked child (which keep the cores busy already;
core.request.counting.backend.allowed) and the process may run on two cores.
"""

from __future__ import annotations

import gc
import marshal
import mmap
import os
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from foldscope.core.forensics.literals import LiteralCheck, check
from foldscope.core.model.session import Message

HEAD = 12  # a frame's head: its data's size (8 bytes, little-endian) and its job's index (4), then the marshal data
# The shared marks' head: the last job the parent, taking in order, made itself (8 bytes, little-endian, -1: none);
# then a byte a job, 1 where the parent made it itself.
MARKS_HEAD = 8
# The child's priority below its parent's (os.nice): the parent is the command's critical path (the count, then the
# page), and makes itself any job the child has not made when it is wanted, so the child's work is worth only the
# time it does not take from the parent and the counting child. Beside them at the same priority, three processes on
# two cores left the parent a third of its core's time short: `report` at 50k 7.5-8.1 s wall, 7.0-7.4 at 8 (idle,
# five alternated pairs, docs/performance.md). Once the count is done, the child is forked again at the parent's own
# priority (JobsAhead.count_done).
NICE = 8


class Span:
    """One compaction's check to make: the request it preceded, its note (the summary), the messages it took and how
    a message's literal text is read (core.forensics.compactions.literal_text)."""

    __slots__ = ("request", "note", "dropped", "text_of")

    def __init__(self, request: int, note: Message, dropped: Sequence[Message], text_of: Callable[[Message], str]) -> None:
        self.request, self.note, self.dropped, self.text_of = request, note, dropped, text_of

    def check(self) -> LiteralCheck:
        return check((self.text_of(m) for m in self.dropped), self.note.text)

    def parts(self) -> tuple[str, bytes, bytes]:
        """The check as a forked child sends it (LiteralCheck.parts)."""
        return self.check().parts()


def may_fork() -> bool:
    """Whether this process may fork the checks (the module's docstring says when)."""
    from foldscope.core.request.counting import one_thread
    from foldscope.core.request.counting.backend import allowed

    if not hasattr(os, "fork") or not one_thread() or not allowed():
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except AttributeError:  # not on Linux
        return (os.cpu_count() or 1) >= 2


class JobsAhead:
    """Jobs run in order in one forked child (where may_fork), each a function whose result marshal can write (data
    only): the literal checks (LiteralChecks), and what else a caller adds that needs only what is built before the
    fork (the report's conversation, core.readout.report_transcript). `take(i)` gives job i's result once the child
    has written it whole, else None: it never waits, and a caller makes what it did not get itself. Results are read
    from the child's file when taken, not held here. A job may be None: a slot for work that needs what is built
    after the fork (the report's every-request table needs the count), which the child passes over until count_done
    fills it. A context manager: leaving it kills and reaps the child."""

    def __init__(
        self, jobs: Sequence[Callable[[], Any] | None], fork: bool | None = None, counted_after: Any = None, elsewhere: Sequence[int] = ()
    ) -> None:
        self.jobs = list(jobs)
        self.counted_after = counted_after  # the session file whose trace is counted after the fork (_start), if any
        self.elsewhere = elsewhere  # jobs another process makes (core.forensics.literals_during_read): the child passes over them
        self.pid: int | None = None
        self._file: IO[bytes] | None = None  # the child's: where it writes its results
        self._older: list[IO[bytes]] = []  # a child's forked before it (count_done), read for what they hold
        self._dying: list[int] = []  # children killed at count_done, reaped by stop
        self._scanned = 0  # the file's bytes read for frames so far
        self._where: dict[int, tuple[int, int, int]] = {}  # job -> (file descriptor, offset, size) of its result
        # Shared with the child (an anonymous shared mapping made before the fork): what the parent made itself, so the
        # child never makes it too (MARKS_HEAD).
        self._marks: mmap.mmap | None = None
        self.nice = NICE  # the child's priority below this process's (count_done: none once the count is done)
        self.restarted = 0  # jobs the child had not made when it was forked again at count_done (tests and benches)
        if self.jobs and (may_fork() if fork is None else fork):
            self._start()

    def __enter__(self) -> JobsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start(self) -> None:
        try:
            self._file = tempfile.TemporaryFile()
        except OSError:
            return  # no file to write to: every job is made in-line
        try:
            self._marks = mmap.mmap(-1, MARKS_HEAD + len(self.jobs))
            self._marks[:MARKS_HEAD] = (-1).to_bytes(MARKS_HEAD, "little", signed=True)
            for i in self.elsewhere:
                self._marks[MARKS_HEAD + i] = 1
        except OSError:
            self._marks = None  # the child makes every job in turn, as it did before the marks
        if self.counted_after is not None:
            counting_child_first(self.counted_after)
        if not self._fork():
            self._close_file()

    def _fork(self) -> bool:
        """Fork the child that makes the jobs into the file (_serve); False where no process was had."""
        assert self._file is not None
        fd = self._file.fileno()
        # Frozen, the objects built so far are never walked by the child's collector (a walk writes to each one's
        # header, so copies every page it lies on); the parent takes them back as soon as the child is forked.
        gc.freeze()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:  # no process to be had (EAGAIN, ENOMEM): in-line
            pid = -1
        if pid == 0:  # the child: never returns into the caller's code
            _serve(self.jobs, fd, self._marks, parent, self.nice)
        gc.unfreeze()
        if pid > 0:
            self.pid = pid
        return pid > 0

    def count_done(self, given: Sequence[int] = (), filled: Mapping[int, Callable[[], Any]] | None = None) -> bool:
        """The count this child was niced below (NICE) is done: the child is forked again at this process's own
        priority, to make the jobs it has not made. Niced, it had the second core only where the counting child left
        it; after the count it shared that core's time with the every-request table's child, niced alike, while the
        parent, once at its collect, made the checks still missing itself (47-63 of the 151 at 50k). A process cannot
        lower its own nice without privilege, so the child is killed (reaped by stop: never waited for here), each
        job it wrote whole marked as made and kept, and a new child forked to write into a file of its own. Where the
        child has made every job, or never ran, nothing is done. `given`: jobs made elsewhere (`elsewhere`) that were
        not, which the new child makes first. `filled`: jobs for slots left None, made by the new child in their
        place (so in the jobs' order). True where a new child was forked (to make `filled` too)."""
        if self.pid is None or self._file is None or self._marks is None or self.nice == 0:
            return False
        self._kill()
        self._scan()  # its whole frames so far; its file is never read again (what it writes as it dies is not read)
        for i in self._where:
            self._marks[MARKS_HEAD + i] = 1
        for i in given:
            self._marks[MARKS_HEAD + i] = 0
        for i, job in (filled or {}).items():
            self.jobs[i] = job
        left = sum(1 for i, job in enumerate(self.jobs) if job is not None and i not in self._where)
        if not left:
            return False
        try:
            fresh = tempfile.TemporaryFile()
        except OSError:
            return False  # the jobs it made are taken; every other is made in-line
        self._older.append(self._file)
        self._file, self._scanned = fresh, 0
        self.nice, self.restarted = 0, left
        if not self._fork():
            fresh.close()
            self._file = self._older.pop()
            return False
        return True

    def take(self, i: int, in_order: bool = False) -> Any:
        """Job i's result if the child has written it whole, else None, and the caller makes it: the child is told, so
        it never makes that job too. `in_order`: the caller takes these jobs in order (a page written as it is made),
        so where it makes one itself it has caught the child up, and the child goes on from halfway between it and
        the last job, not from the next (which the caller, as fast, would make too)."""
        if self._file is None:
            return None
        self._scan()
        where = self._where.get(i)
        if where is None:
            self._made_here(i, in_order)
            return None
        data = os.pread(*where)
        try:
            return marshal.loads(data)  # our own child's frame: data only
        except (EOFError, ValueError, TypeError):
            return None

    def _made_here(self, i: int, in_order: bool) -> None:
        marks = self._marks
        if marks is None or not 0 <= i < len(self.jobs):
            return
        marks[MARKS_HEAD + i] = 1
        if in_order and i > int.from_bytes(marks[:MARKS_HEAD], "little", signed=True):
            marks[:MARKS_HEAD] = i.to_bytes(MARKS_HEAD, "little", signed=True)

    def _scan(self) -> None:
        """Note the frames the child has written whole since the last scan (a frame still being written waits)."""
        assert self._file is not None
        fd = self._file.fileno()
        while True:
            head = os.pread(fd, HEAD, self._scanned)
            if len(head) < HEAD:
                return
            size, i = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
            if len(os.pread(fd, 1, self._scanned + HEAD + size - 1)) < 1 and size:
                return
            self._where[i] = (fd, size, self._scanned + HEAD)
            self._scanned += HEAD + size

    def _kill(self) -> None:
        """Kill the child if it runs; it is reaped by stop, never waited for here (a niced child on a busy machine may
        wait its turn to die)."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._dying.append(self.pid)
            self.pid = None

    def stop(self) -> None:
        """Kill and reap the child if it runs, and let go of its file."""
        self._kill()
        for pid in self._dying:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self._dying.clear()
        self._close_file()

    def _close_file(self) -> None:
        for older in self._older:
            older.close()
        self._older.clear()
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._marks is not None:
            self._marks.close()
            self._marks = None
        self._where.clear()


def counting_child_first(path: Any) -> None:
    """Before a child is forked ahead of a count: where the read started no counting child (its question found no
    free core then), the count's own question is asked now, while the other core is as the read left it. Asked after
    the fork, it would find that core taken by this module's child (niced time is not idle time,
    core.request.counting.backend.core_idle), so the count would count on one core where `requests` counts on two,
    and the child, niced beside the count, would get little done either: a `compactions` or `report` at 50k on a
    loaded machine started no counting child in runs where `requests` did."""
    from foldscope.core.request.counting import backend

    if not backend.has_spare():
        backend.hint(path)


class LiteralChecks:
    """Every compaction's literal check of a session, started in a forked child (JobsAhead: its own, or jobs `first`
    on of a shared one) and collected in the compactions' order (`collect`). A context manager: leaving it stops and
    reaps its own child."""

    def __init__(
        self,
        spans: Sequence[Span],
        fork: bool | None = None,
        ahead: JobsAhead | None = None,
        first: int = 0,
        counted_after: Any = None,
        early: Any = None,
    ) -> None:
        self.spans = list(spans)
        self.keys = [(s.request, s.note.id) for s in self.spans]
        self.made_here = 0  # checks the parent made itself at collect (tests and benches read it)
        self._own = ahead is None
        self.ahead = JobsAhead([s.parts for s in self.spans], fork, counted_after) if ahead is None else ahead
        self.first = 0 if ahead is None else first
        # The checks a child forked during the read makes (core.forensics.literals_during_read.ChecksDuringRead, whose
        # `matched` the caller gave `ahead` as made elsewhere), else None.
        self.early = early

    @property
    def pid(self) -> int | None:
        return self.ahead.pid

    def __enter__(self) -> LiteralChecks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def of(self, keys: Sequence[tuple[int, str]]) -> LiteralChecks | None:
        """These checks, to collect later, where they are of the compactions `keys` names ((request, note id) each);
        else None, and they are stopped (the caller makes its own)."""
        if list(keys) == self.keys:
            return self
        self.stop()
        return None

    def collect(self, keys: Sequence[tuple[int, str]] | None = None) -> list[LiteralCheck] | None:
        """Each compaction's check, in order: the child's where it has written it, else made here, from the last back
        until the child's are met, so this never waits for the child. `keys`: (request, note id) of the compactions
        the caller explains; None when these checks were started for others (the caller makes its own)."""
        if keys is not None and list(keys) != self.keys:
            self.stop()
            return None
        got: list[LiteralCheck] = [LiteralCheck()] * len(self.spans)
        early = self.early
        for i in range(len(got) - 1, -1, -1):
            parts = early.take(i) if early is not None else None
            if parts is None:
                parts = self.ahead.take(self.first + i)  # the child may have gone on meanwhile
            if parts is not None:
                got[i] = LiteralCheck(*parts)
            else:
                got[i] = self.spans[i].check()
                self.made_here += 1
        self.stop()
        return got

    def count_done(self, filled: Mapping[int, Callable[[], Any]] | None = None) -> bool:
        """The count is done: the child goes on at this process's priority (JobsAhead.count_done), with the checks the
        child forked during the read had not made, which is stopped, and `filled` (slots of its shared JobsAhead).
        True where a child was forked again."""
        given = self.early.stop_short() if self.early is not None else []
        return self.ahead.count_done([self.first + i for i in given], filled)

    def stop(self) -> None:
        """Kill and reap the child if it is these checks' own (a shared one is its owner's to stop), and the child
        forked during the read."""
        if self.early is not None:
            self.early.stop()
        if self._own:
            self.ahead.stop()


def _serve(
    jobs: Sequence[Callable[[], Any] | None], fd: int, marks: mmap.mmap | None = None, parent: int | None = None, nice: int = NICE
) -> None:
    """The child: each job's result written as a frame (its size and index, then its marshal data), in order, then
    exit at once (os._exit: never the parent's exit handlers, never its buffered output written twice). A job the
    parent has made itself is passed over, and where the parent, taking in order, has made one at or past the next,
    the child goes on from halfway between it and the end (`marks`, JobsAhead.take). Any failure ends the child; the
    parent makes the rest. A parent gone (killed: no `with` reaped this child) ends it before its next job."""
    status = 1
    try:
        gc.disable()  # a short life: no collection walks (and copies) what the parent built
        if nice:
            os.nice(nice)
        # The parent's other files (a counting child's pipes) are not this child's to hold open: one stopped by the
        # closing of its pipe would otherwise wait for this child's end.
        os.closerange(3, fd)
        os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))
        i, n = 0, len(jobs)
        while i < n:
            if parent is not None and os.getppid() != parent:  # its parent killed: no one will read what it makes
                break
            if marks is not None:
                at = int.from_bytes(marks[:MARKS_HEAD], "little", signed=True)
                if at >= i:  # the parent, in order, has caught up: what lies just ahead of it, it would make too
                    i = (at + 1 + n) // 2
                    continue
                if marks[MARKS_HEAD + i]:
                    i += 1
                    continue
            job = jobs[i]
            if job is None:  # a slot filled after this child's fork (JobsAhead.count_done): not this child's
                i += 1
                continue
            data = marshal.dumps(job())
            _write_all(fd, len(data).to_bytes(8, "little") + i.to_bytes(4, "little") + data)
            i += 1
        status = 0
    finally:
        os._exit(status)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
