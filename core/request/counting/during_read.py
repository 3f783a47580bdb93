"""The record's start counted by a forked child while the parent reads the rest of the file, for a one-shot replay.

Reading a long session file keeps one core and leaves the other idle (the counting child of core.request.counting
.ahead, spawned as the read starts, only builds its encoder then). A line reader (core.formats.stream_lines) forks at
FRACTION of the file: the parent reads on, and the child ends its read there, as if the file ended, and counts the
block bodies of the record it holds (the blocks counting ahead guesses, ahead.window_blocks, keyed as the counter keys
them), then answers each count by its key. The parent seeds its Counter with them before the measure (Counter.seed),
so neither the measure nor its counting child renders or counts them again: the counts are exact whichever process
made them, and the memo only saves time. A key's messages come back by id and are taken only where the parent's record
holds the very object the child held (the same place in memory, made before the fork: a message is frozen), so a count
the child made of a message the parent's read made again differently is never taken.
"""

from __future__ import annotations

import os
import pickle
import select
from collections.abc import Callable
from typing import Any

from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.model.unseen_text import UNSEEN_TEXT
from foldscope.core.request.counting import children_allowed, one_thread

FRACTION = 0.25  # where the read forks: the child's counting should end about when the parent's read does
MIN_BYTES = 32 << 20  # a smaller file is read and measured soon enough: the fork and the second encoder would not repay
WAIT_SECONDS = 1.0  # the parent waits this long at most for an answer the child has not begun; then it stops the child
_GONE = object()  # a message of the child's that the parent's record does not hold as the same object


def wanted(path: Any) -> bool:
    """Whether a read of `path` is worth a child counting its start: a large file, and a fork that is safe (one thread)
    and allowed (the switch; never in a pool's worker or a forked child, which already keep the cores busy)."""
    from foldscope.core.request.counting.backend import allowed

    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return size >= MIN_BYTES and hasattr(os, "fork") and children_allowed() and one_thread() and allowed()


class DuringRead:
    """One read's child counting the record's start: `arm` before the read, `read_ended(session)` right after it (in
    the child it counts, answers and exits, never returning), `seed(counter, record)` before the measure, `close`."""

    def __init__(self, path: Any, policy_of: Callable[[Session], Any]) -> None:
        self._policy_of = policy_of  # the policy the measure will count under, made from a session as the command does
        self._cut = int(os.path.getsize(path) * FRACTION)
        self._child = False
        self._pid: int | None = None
        self._up: int | None = None
        self._down: int | None = None
        self.seeded = 0  # counts taken into the parent's counter (for tests and benchmarks)

    def arm(self) -> None:
        """Have the next line read fork at the cut (core.formats.stream_lines.split_at)."""
        from foldscope.core.formats import stream_lines

        stream_lines.split_at = (self._cut, self._fork)

    def disarm(self) -> None:
        """A read that never reached a line reader (another format) leaves no fork waiting for the next one."""
        from foldscope.core.formats import stream_lines

        if stream_lines.split_at is not None and stream_lines.split_at[1] == self._fork:
            stream_lines.split_at = None

    def _fork(self) -> bool:
        """At the cut: True in the child (its read ends there), False in the parent (it reads on)."""
        if not one_thread():
            return False
        up, down = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(up)
            os.close(down)
            return False
        if pid == 0:
            os.close(up)
            self._child, self._down = True, down
            return True
        os.close(down)
        self._pid, self._up = pid, up
        return False

    def failed(self) -> None:
        """The read failed after the fork: in the child, exit with no answer (the parent reads and says it); here, nothing."""
        if self._child:
            os._exit(1)

    def read_ended(self, session: Session) -> None:
        """After the read: in the child, count the record's start, write the counts down the pipe and exit (os._exit:
        never the parent's exit handlers, never its output); in the parent, nothing."""
        if not self._child:
            return
        code = 1
        try:
            assert self._down is not None
            data = answer(session, self._policy_of(session))
            with os.fdopen(self._down, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)

    def seed(self, counter: Any, record: FullRecord) -> int:
        """Take the child's counts into `counter` (those whose messages the record holds as the child held them) and
        reap the child; none where it has not begun its answer within WAIT_SECONDS, failed or is not there."""
        up = self._up
        if up is None:
            return 0
        data = b""
        try:
            ready, _, _ = select.select([up], [], [], WAIT_SECONDS)
            if ready:
                chunks = []
                while chunk := os.read(up, 1 << 20):
                    chunks.append(chunk)
                data = b"".join(chunks)
        except OSError:
            data = b""
        self.close()
        if not data:
            return 0
        try:
            counts = taken(data, record)
        except Exception:  # an answer cut short (the child died writing it): nothing taken, all counted as before
            return 0
        counter.seed(counts, {}, {})
        self.seeded = len(counts)
        return self.seeded

    def close(self) -> None:
        """Stop the child if it still runs, and reap it."""
        if self._up is not None:
            os.close(self._up)
            self._up = None
        pid, self._pid = self._pid, None
        if pid is not None:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)


def answer(session: Session, policy: Any) -> bytes:
    """In the child: each block body's count of the record it read, by the counter's key (block_key, policy key), the
    keys' messages written as (id, place in memory) pairs (taken). Under caching the measure keys its blocks by the
    first round it decides, so nothing is counted here; nor a block whose message has unseen parts, counted at the
    session's unseen rate, which a part of the file may not give."""
    from foldscope.core.request import tokens
    from foldscope.core.request.compile import block_key
    from foldscope.core.request.count import policy_key
    from foldscope.core.request.count_step import body_of, images_of
    from foldscope.core.request.counting.ahead import WINDOW, window_blocks
    from foldscope.core.request.long_pieces import has_long_piece
    from foldscope.core.request.plan import CompileError

    if policy.caching:
        return _dumps([])
    record, pk = session.record, policy_key(policy)
    count, windowed = tokens.counter(), tokens.windowed()
    seen: set[Any] = set()
    counts: list[tuple[Any, int]] = []
    for lo in range(0, len(record), WINDOW):
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
    return _dumps(counts)


def _dumps(counts: list[tuple[Any, int]]) -> bytes:
    buffer = _Buffer()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = _message_place  # type: ignore[method-assign]
    pickler.dump(counts)
    return b"".join(buffer.parts)


class _Buffer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)


def _message_place(obj: Any) -> Any:
    return (obj.id, id(obj)) if type(obj) is Message else None


def taken(data: bytes, record: FullRecord) -> dict[Any, int]:
    """The answer's counts whose every message is the record's own object at the place the child named (else left
    out: the parent's read made that message again, or another since), as Counter.seed takes them."""
    import io

    def place(pid: Any) -> Any:
        message_id, where = pid
        mine = record.get(message_id) if message_id in record else None
        return mine if mine is not None and id(mine) == where else _GONE

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = place  # type: ignore[method-assign]
    counts = unpickler.load()
    return {key: n for key, n in counts if not _holds(key, _GONE)}


def _holds(value: Any, gone: object) -> bool:
    """Whether `gone` is anywhere inside the nested tuples of `value`."""
    if value is gone:
        return True
    return type(value) is tuple and any(_holds(item, gone) for item in value)
