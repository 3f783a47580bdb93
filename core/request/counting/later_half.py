"""A small input's later half counted on the other core: a child forked when the trace's measure starts counts the block
bodies of the record's later half (by core.request.small_count, no encoder built), while the measure counts the
earlier half's in-line; the measure takes the child's counts when its requests come to that half.

The counting child of core.request.counting.ahead starts a fresh interpreter and builds an encoder (about half a
second), which a small input never repays; a fork starts in about a millisecond with everything the measure has
loaded (the session, small_count's table and pieces). The blocks are the ones counting ahead guesses
(ahead.window_blocks, keyed as the counter keys them), so a count made here is the count the counter would make;
one the guess missed is counted in-line, as is everything when the child fails, and each body the measure needs
before the child has answered (the measure never waits for it: on a busy machine it waited up to 145 ms).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import select
import sys
from typing import Any

from foldscope.core.model.session import FullRecord, sole_text
from foldscope.core.request import small_count, tokens
from foldscope.core.request.compile import block_key
from foldscope.core.request.count_step import body_of, text_key
from foldscope.core.request.counting import children_allowed, one_thread
from foldscope.core.request.counting.ahead import WINDOW, string_chars, window_blocks
from foldscope.core.request.plan import CompileError, IncludedRound
from foldscope.core.request.provider_text import thinking_text

MIN_CHARS = 64 << 10  # a record with less text is counted in-line: the fork and the guess would cost what they save
# The child's share of the record's text: the measure also lays every request out, so it takes the smaller share.
CHILD_SHARE = 0.55
# The measure takes the child's answer only once it has come; tests that must see the child's counts turn this on, so
# that the measure waits for them where its requests come to the later half.
WAIT_FOR_ANSWER = False
WAIT_SECONDS = 10.0  # a child that began its answer and did not end it by then is stopped, the later half counted in-line


def wanted(counter: Any, record: FullRecord) -> bool:
    """Whether the later half of `record` is worth a forked child: the small path counts it (no encoder built, none
    helping), no prefix meter wants each body's length, a fork is safe (one thread) and allowed (the switch, not a
    pool's worker; core.request.counting.backend asks whether this is a forked child), and the record holds
    MIN_CHARS of text the counter has not counted, and no more than the small path may still count (a large record's
    later half is counting ahead's: a fork counting it here built an encoder in the child, beside the measure's own,
    and made `replay` of 171 MB 1.5 s slower)."""
    if tokens._encoding is not None or tokens.helping() or counter.lengths is not None or counter.ahead is not None:
        return False
    if not hasattr(os, "fork") or not children_allowed() or not one_thread():
        return False
    pool = sys.modules.get("multiprocessing")  # a pool's worker has imported it; a process that has not is none
    if pool is not None and pool.parent_process() is not None:
        return False
    return 2 * counter.bodies_counted() <= len(record) and small_count.open_for(MIN_CHARS) and _small_path_counts(record)


def _small_path_counts(record: FullRecord) -> bool:
    """Whether all of the record's text is within what core.request.small_count may still count in this process,
    summed only until it is not (a large record is not walked whole to say no)."""
    room = small_count.BUDGET_CHARS - small_count.spent()
    total = 0
    for message in record:
        sole = sole_text(message)
        total += len(sole) if sole is not None else string_chars(message.content, room - total + 1)
        if total > room:
            return False
    return True


def text_chars(record: FullRecord) -> list[int]:
    """Each record message's characters of string content (its text, a result's output, a call's arguments)."""
    sizes = []
    for message in record:
        sole = sole_text(message)
        sizes.append(len(sole) if sole is not None else string_chars(message.content, 1 << 62))
    return sizes


class LaterHalf:
    """The counts a forked child made of the record's later half (from `start`), for the counter to take (its Ahead)."""

    def __init__(self, record: FullRecord, policy: Any, policy_key: tuple, thinking: bool) -> None:
        self._record, self._policy, self._pk, self._thinking = record, policy, policy_key, thinking
        self._pid: int | None = None
        self._up: int | None = None
        self._counts: dict[Any, int] = {}
        self._keys: set[Any] = set()
        self._from = len(record)  # the child's half starts here (set when it is forked)
        self._at = 0  # the record position the measure has come to
        self._done = False  # the child's answer taken (or given up on)
        self._key_order: list[Any] = []  # the keys of the child's counts, in its order
        self.counted_ahead = 0

    def reach(self, position: int, first_round: IncludedRound | None) -> None:
        """The measure has come to `position`: at its first request the child is forked (the first round is known
        then); from the later half on, the child's answer is taken once it has come (take)."""
        self._at = position
        if self._pid is None and not self._done:
            self._fork(first_round)

    def take(self, key: Any) -> int | None:
        """The key's count made by the child, or None (the counter counts it in-line). The measure never waits for the
        child: where its answer is not there yet (the other core busy with other work), the key is counted here, and
        the answer is taken once it has come (a key counted both ways counts alike)."""
        n = self._counts.get(key)
        if n is None and not self._done and (key in self._keys or self._at >= self._from) and (WAIT_FOR_ANSWER or self._answered()):
            self._answer()
            n = self._counts.get(key)
        return n

    def _answered(self) -> bool:
        """Whether the child has begun its answer (it writes it whole once its counts are made), without waiting."""
        if self._up is None:
            return True  # nothing to wait for: _answer gives up at once
        try:
            ready, _, _ = select.select([self._up], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(ready)

    def body(self, key: Any) -> str | None:
        return None  # the child renders its own: nothing rendered here for the counter

    def digest(self, text: str) -> bytes | None:
        return None  # nothing hashed here: the counter hashes each text itself

    def close(self) -> None:
        """Stop the child if it has not answered, and reap it."""
        self._done = True
        pid, self._pid = self._pid, None
        if self._up is not None:
            os.close(self._up)
            self._up = None
        if pid is not None and pid > 0:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)

    def _fork(self, first_round: IncludedRound | None) -> None:
        record = self._record
        sizes = text_chars(record)
        total, later = sum(sizes), 0
        start = len(record)
        while start > 0 and later + sizes[start - 1] <= CHILD_SHARE * total:
            start -= 1
            later += sizes[start]
        if total < MIN_CHARS or later == 0:
            self._done = True
            return
        specs, keys = [], []
        for lo in range(start, len(record), WINDOW):
            for spec in window_blocks(record, lo, min(len(record), lo + WINDOW)):
                key = (block_key(spec, record, self._policy, first_round), self._pk)
                if key not in self._keys:
                    self._keys.add(key)
                    specs.append(spec)
                    keys.append(key)
        up, down = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(up)
            os.close(down)
            self._done = True
            return
        if pid == 0:  # the child: count, answer, and end without running anything of the parent's exit
            code = 1
            try:
                os.close(up)
                self._serve(down, specs, first_round, start)
                code = 0
            finally:
                os._exit(code)
        os.close(down)
        self._pid, self._up, self._from = pid, up, start
        self._key_order = keys

    def _serve(self, down: int, specs: list, first_round: IncludedRound | None, start: int) -> None:
        """In the child: each spec's count (None where the small path leaves it to the encoder), then each later
        response's thinking by its text_key, written down the pipe in one marshal message."""
        record, policy = self._record, self._policy
        counts: list[int | None] = []
        for spec in specs:
            try:
                counts.append(small_count.count(body_of(spec, record, policy, first_round)))
            except CompileError:
                counts.append(None)  # a guess no view holds: the counter renders the views' own blocks
        thoughts: dict[tuple, int] = {}
        if self._thinking:
            for i in range(start, len(record)):
                thought = thinking_text(record[i]) if record[i].kind == "assistant" else None
                if thought:
                    n = small_count.count(thought)
                    if n is not None:
                        thoughts[text_key(hashlib.sha256(thought.encode("utf-8", "surrogatepass")).digest())] = n
        data = marshal.dumps((counts, thoughts))
        with os.fdopen(down, "wb") as pipe:
            pipe.write(data)

    def _answer(self) -> None:
        """Take the child's counts (it has begun to write them: waiting for their end up to WAIT_SECONDS), then reap it;
        on any failure none are taken."""
        self._done = True
        up = self._up
        if up is None:
            return
        chunks = []
        try:
            while True:
                ready, _, _ = select.select([up], [], [], WAIT_SECONDS)
                if not ready:
                    raise TimeoutError
                chunk = os.read(up, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            counts, thoughts = marshal.loads(b"".join(chunks))
            if len(counts) != len(self._key_order):
                raise ValueError("the counting child answered out of step")
        except (OSError, EOFError, ValueError, TypeError, TimeoutError):
            self.close()
            return
        for key, n in zip(self._key_order, counts):
            if n is not None:
                self._counts[key] = n
        self._counts.update(thoughts)
        self.counted_ahead = len(self._counts)
        self.close()
