"""The record's start counted by a forked child while the parent reads the rest of the file, for a one-shot replay.

Reading a long session file keeps one core and leaves the other idle (the measure's counting child is forked at the
first cut, with the encoder the parent builds there: backend.fork_spare). A line reader (core.formats.stream_lines)
forks at each of FRACTIONS of the file: the parent reads on, and each child ends its read there, as if the file ended, and counts
the block bodies of the record it holds from where the child before it stopped reading (the blocks counting ahead
guesses, ahead.window_blocks, keyed as the counter keys them), then answers each count by its key. The parent seeds
its Counter with them before the measure (Counter.seed), so neither the measure nor its counting child renders or
counts them again: the counts are exact whichever process made them, and the memo only saves time. A key's messages
come back by id and are taken only where the parent's record holds the very object the child held (the same place in
memory, made before the fork: a message is frozen), so a count a child made of a message the parent's read made again
differently is never taken. The parent builds its encoder at the first fork (it builds one for the replay anyway), so
each child counts with it from its first body.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.model.unseen_text import UNSEEN_TEXT
from foldscope.core.request import tokens
from foldscope.core.request.counting import children_allowed, one_thread
from foldscope.core.request.counting.read_children import ReadChildren

# Where the read forks, a child at each, each counting on from where the child before it stopped reading. A hundredth
# of the file costs a child about 0.055 s of CPU to count and the parent about 0.025-0.034 s to read, so two children
# may count at once for a while; the last is stopped short where it holds more than the second core can count by the
# read's end. At 50k, children at a quarter and a half counted 16,462-20,766 bodies, where one at a quarter counted
# 10,368. Cuts at a tenth, 0.3 and 0.55 counted no more while the measure's counting child was spawned as the read
# began, its start (about 0.7 s) on that core; forked at the first cut instead (backend.fork_spare), the core is free
# from the read's start, and they counted 18,189-19,061 against the two cuts' 14,086-18,189 (nine alternated runs each,
# load 3-5). The last cut went back to half the file while the measure started no counting child for a record whose
# bodies were half counted (backend.Backend.start); that rule now leaves the bodies seeded here out (Backend.read_bodies),
# so a file whose start holds most of its messages, counted past half here, still has the rest counted ahead. What a
# child has not counted by the read's end the measure counts, as before.
FRACTIONS = (0.1, 0.3, 0.5)
MIN_BYTES = 32 << 20  # a smaller file is read and measured soon enough: the fork and the second encoder would not repay
WAIT_SECONDS = 0.1  # the parent waits this long at most for all the children to end; then takes what each has written
CHUNK_WINDOWS = 4  # windows (ahead.WINDOW record messages each) counted between two writes of the child's counts
_GONE = object()  # a message of the child's that the parent's record does not hold as the same object
# In the child, the places in memory of the messages its record held at the fork; None elsewhere (no restriction). Only
# those are named by their place: a message the child made after the fork (its read's end closing an open response)
# may sit where the parent made another of the same id, since both heaps went on from the same state.
_held_places: frozenset[int] | None = None


def wanted(path: Any) -> bool:
    """Whether a read of `path` is worth a child counting its start: a large file, and a fork that is safe (one thread)
    and allowed (the switch; never in a pool's worker or a forked child, which already keep the cores busy)."""
    from foldscope.core.request.counting.backend import allowed

    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return size >= MIN_BYTES and hasattr(os, "fork") and children_allowed() and one_thread() and allowed()


class _Child:
    """One forked child as both processes see it: its pid (the parent's), where its counts are written, whether it is
    done, and the record's messages at its fork."""

    __slots__ = ("pid", "file", "done", "held", "start")

    def __init__(self, held: list[Message], start: int) -> None:
        self.pid: int | None = None
        self.file: Any = tempfile.TemporaryFile()  # the counts written so far, each chunk its length then its pickle
        self.done = mmap.mmap(-1, 1)  # one byte: 1 once the child has written all it counts
        # Held in both processes until the counts are taken: while they live, no object made since can sit at their
        # places, so a place the child names is the very message, made before the fork.
        self.held: list[Message] | None = held
        self.start = start  # the record position the child counts from

    def counts_by(self, record: FullRecord, deadline: float) -> dict[Any, int]:
        """In the parent: the counts it has written by `deadline` (all, once it is done or dead), whose messages
        `record` holds as the child held them; the child is stopped first, so what is read is whole."""
        if self.pid is None:
            return {}
        while not self.done[0] and time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:  # it died: what it wrote is all there is
                self.pid = None
                break
            time.sleep(0.005)
        if self.pid is not None:
            try:  # stopped, so it writes nothing more; reaped once it is gone (close), not waited for here
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        counts: dict[Any, int] = {}
        try:
            data = os.pread(self.file.fileno(), os.fstat(self.file.fileno()).st_size, 0)
        except OSError:
            data = b""
        at = 0
        while at + 8 <= len(data):
            size = int.from_bytes(data[at : at + 8], "little")
            if at + 8 + size > len(data):
                break  # a chunk the child was writing when it was stopped
            try:
                counts.update(counts_taken(data[at + 8 : at + 8 + size], record))
            except Exception:  # a chunk not whole after all: the rest is counted as before
                break
            at += 8 + size
        return counts

    def let_go(self) -> None:
        self.held = None
        self.file.close()
        self.done.close()

    def reap(self, wait: bool) -> None:
        """Stop it if `wait` (it may still run), and reap it: at once if it is gone, else only when `wait`."""
        if self.pid is None:
            return
        if wait:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        if os.waitpid(self.pid, 0 if wait else os.WNOHANG)[0]:
            self.pid = None


class DuringRead(ReadChildren):
    """One read's children counting the record's start: `arm` before the read, `read_ended(session)` right after it (in
    a child it counts, writes its counts and exits, never returning), `seed(counter, record)` before the measure.

    Each child writes its counts a few windows at a time (CHUNK_WINDOWS) to a file it shares with the parent, and says
    when it is done in a byte of shared memory: where one is still counting when the measure starts (a busy machine),
    the parent waits at most WAIT_SECONDS in all, then stops it and takes what it had written, its part's start first."""

    def __init__(self, path: Any, policy_of: Callable[[Session], Any]) -> None:
        super().__init__(path, FRACTIONS)
        self._policy_of = policy_of  # the policy the measure will count under, made from a session as the command does
        self._children: list[_Child] = []  # the parent's, in the order forked
        self._next_start = 0  # the record position the next child counts from: where the one before's record ended
        self._mine: _Child | None = None  # in a child, itself
        self.seeded = 0  # counts taken into the parent's counter (for tests and benchmarks)

    def _fork_child(self, record: FullRecord) -> bool:
        global _held_places
        from foldscope.core.request.counting.ahead import WINDOW

        # The parent's encoder, built here rather than after the read: this replay builds one in the parent anyway (for
        # the measure's in-line counts, or before the strategies' fork), and built before this fork the child counts
        # with it from its first body instead of building its own first on the core it has beside the read. The
        # measure's counting child is forked with it after this one (ReadChildren._fork), where the read's start did
        # not spawn one to build its own (backend.hint with `forked`): that start's 0.7 s of CPU was this child's core.
        tokens.local_encoding()
        try:
            child = _Child(list(record), self._next_start)
        except OSError:
            return False
        try:
            pid = os.fork()
        except OSError:
            child.let_go()
            return False
        if pid == 0:
            self._mine = child
            _held_places = frozenset(map(id, child.held or ()))
            return True
        child.pid = pid
        self._children.append(child)
        # The next child counts on from this one's last whole window (the last, cut short by the record's end here,
        # is counted again whole: the same keys give the same counts).
        self._next_start = len(record) // WINDOW * WINDOW
        return False

    def read_ended(self, session: Session) -> None:
        """After the read: in the child, count the record's start, writing the counts as it goes, and exit (os._exit:
        never the parent's exit handlers, never its output); in the parent, nothing."""
        mine = self._mine
        if mine is None:
            return
        code = 1
        try:
            fd = mine.file.fileno()
            for counts in answer(session, self._policy_of(session), mine.start):
                data = _dumps(counts)
                os.write(fd, len(data).to_bytes(8, "little") + data)
            mine.done[0] = 1
            code = 0
        finally:
            os._exit(code)

    def seed(self, counter: Any, record: FullRecord) -> int:
        """Take the children's counts into `counter` (those whose messages the record holds as the child held them): a
        child's all once it is done, the children waited for WAIT_SECONDS in all at most, else those it has written by
        then (or before it died); each is stopped first, so what is read is whole. 0 where none was forked."""
        counts: dict[Any, int] = {}
        deadline = time.monotonic() + WAIT_SECONDS
        for child in self._children:
            counts.update(child.counts_by(record, deadline))
            child.let_go()
        before = counter.bodies_counted()
        counter.seed(counts, {}, {})
        counter.backend.read_bodies = counter.bodies_counted() - before  # the record's start, not a memo (Backend.start)
        self.seeded = len(counts)
        for child in self._children:
            child.reap(wait=False)
        return self.seeded

    def close(self) -> None:
        """Stop each child still running, and reap it (a killed child's exit frees a copy of the parent's pages: under
        load that took half a second, so the command reaps them once its replay is done)."""
        for child in self._children:
            child.reap(wait=True)


def answer(session: Session, policy: Any, start: int = 0) -> Iterator[list[tuple[Any, int]]]:
    """In the child: each block body's count of the record it read from position `start` (a multiple of ahead.WINDOW),
    by the counter's key (block_key, policy key), a few windows at a time, the keys' messages written as (id, place in
    memory) pairs (counts_taken).
    Under caching the measure keys its blocks by the first round it decides, so nothing is counted here; nor a block
    whose message has unseen parts, counted at the session's unseen rate, which a part of the file may not give."""
    from foldscope.core.request.compile import block_key
    from foldscope.core.request.count import policy_key
    from foldscope.core.request.count_step import body_of, images_of
    from foldscope.core.request.counting.ahead import WINDOW, window_blocks
    from foldscope.core.request.long_pieces import has_long_piece
    from foldscope.core.request.plan import CompileError

    if policy.caching:
        return
    record, pk = session.record, policy_key(policy)
    count, windowed = tokens.counter(), tokens.windowed()
    seen: set[Any] = set()
    counts: list[tuple[Any, int]] = []
    for lo in range(start, len(record), WINDOW):
        if counts and lo % (CHUNK_WINDOWS * WINDOW) == 0:
            yield counts
            counts = []
        for spec in window_blocks(record, lo, min(len(record), lo + WINDOW)):
            if UNSEEN_TEXT in spec.message.metadata:
                continue
            key = (block_key(spec, record, policy, None), pk)
            if key in seen:
                continue
            seen.add(key)
            try:
                text = body_of(spec, record, policy, None)
            except CompileError:
                continue  # a guess no view holds: the measure renders the views' own blocks
            if windowed and has_long_piece(text):
                continue  # merged in windows by the counter itself (core.request.long_pieces)
            counts.append((key, count(text) + images_of(spec)))
    if counts:
        yield counts


def _dumps(counts: list[tuple[Any, int]]) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = _message_place  # type: ignore[method-assign]
    pickler.dump(counts)
    return buffer.getvalue()


def _message_place(obj: Any) -> Any:
    if type(obj) is not Message:
        return None
    where = id(obj)
    return (obj.id, where if _held_places is None or where in _held_places else -1)  # -1: no place the parent holds


def counts_taken(data: bytes, record: FullRecord) -> dict[Any, int]:
    """The answer's counts whose every message is the record's own object at the place the child named (else left
    out: the parent's read made that message again, or another since), as Counter.seed takes them."""

    gone = False

    def place(pid: Any) -> Any:
        nonlocal gone
        message_id, where = pid
        mine = record.get(message_id) if message_id in record else None
        if mine is not None and id(mine) == where:
            return mine
        gone = True
        return _GONE

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = place  # type: ignore[method-assign]
    counts = unpickler.load()
    if not gone:  # the commonest chunk: every message the parent's own, no key to search for one that is not
        return dict(counts)
    return {key: n for key, n in counts if not _holds(key, _GONE)}


def _holds(value: Any, gone: object) -> bool:
    """Whether `gone` is anywhere inside the nested tuples of `value`."""
    if value is gone:
        return True
    return type(value) is tuple and any(_holds(item, gone) for item in value)
