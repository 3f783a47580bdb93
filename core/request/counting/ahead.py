"""Counting ahead: while a trace is measured, the record's block bodies are tokenised by a child process on the
other core, in record order and ahead of need, so the measure's own thread spends its time laying requests out.

Tokenising is about half of a long trace's measure (core.request.trace_measure.measure_trace) and tiktoken holds no
Python state, so it is the part that can move. A thread cannot take it: tiktoken gives the GIL back while it
encodes, but takes it again after each text, and the measure's thread keeps it for the whole switch interval, so
an encoding thread waits about as long as it works. A child process never waits on our GIL.

What is sent ahead is a guess of the blocks the trace's views will hold: the record planned in windows
(core.request.plan.plan_runs), each block keyed as the counter keys it (core.request.compile.block_key). A view's
block with the same key has the same body (the counter's memo rests on that), so a count made ahead is the
count the counter would make. A block the guess missed (a cache mark, a round cut by a window, a clipped copy
made later) is counted in-line as before: a miss costs the child's time, never a wrong count.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

from foldscope.core.model.session import FullRecord, Message, sole_text
from foldscope.core.request import tokens
from foldscope.core.request.compile import block_key, short_key
from foldscope.core.request.count_step import body_bytes, body_of, text_digest, text_key
from foldscope.core.request.counting import child
from foldscope.core.request.counting.child import receive, send
from foldscope.core.request.long_pieces import has_long_piece
from foldscope.core.request.passages import Passages
from foldscope.core.request.plan import TEXT, CompileError, IncludedRound, plan_runs, text_block
from foldscope.core.request.provider_text import thinking_text
from foldscope.core.request.tokens import encoder_built  # a name here, so a test can say what this process has built

# A record with less text than this is counted in-line. The child costs about half a second of CPU to start and its
# pipes cost a little more: on a machine whose second core is free it saves about half of a long trace's measure,
# but on one whose second core gives nothing (this project's 2-vCPU machines, at times) that cost is a loss, which
# a session this long repays anyway (docs/performance.md, "Counting ahead").
START_CHARS = 16 << 20
# Bodies are rendered at most this far ahead of where the measure is (about half a second of the child's work).
LEAD_CHARS = 4 << 20
# The child counts a batch of about this much text per message through its pipe.
BATCH_CHARS = 256 << 10
# A text this long is not sent before the child's first answer: the measure, which does not wait for a starting child,
# would count it in-line too, and its count alone takes longer than the child's start (about 0.03-0.2 s a MB).
HUGE_CHARS = 1 << 20
WINDOW = 256  # record messages planned at a time
_TEXT_KINDS = frozenset({"assistant", "instruction"})  # messages whose text, when it is their content alone, is one block
OVERLAP = 32  # messages planned on either side of a window, so a call and its result on its edge still pair
# Until the child has answered once, a count it has not made is made in-line (its start takes about half a second of
# the other core); tests set this to wait for it from the first batch, so that small sessions use it too.
WAIT_FOR_START = False
WAIT_SECONDS = 10.0  # a batch (about 30 ms of work) the child has not answered by then: the child is stopped, the rest counted in-line
START_SECONDS = WAIT_SECONDS  # the same, for the child's first answer (it is still starting: tests on a loaded machine lengthen it)
# While the child has not answered a batch the measure needs, the measure counts a waiting batch itself rather than
# idle; tests that must see the child's counts turn this off, so the measure waits for the child instead.
COUNT_WHILE_WAITING = True
# A measure that leaves its counts to the child (CountsAhead.counts_here False: the window's, so that its process builds
# no encoder) waits for a child yet to answer at most this long in all, and for one that has answered at most this long
# a wait (it answers a batch in about 30 ms; longer for a batch of over LEAVE_CHARS); past that it counts in-line what
# it needs and the child has not answered, a batch the child holds too (it was waited for START_SECONDS or WAIT_SECONDS
# more). Not this long in all once the child answers: at 50k the measure, ahead of the child, waits for it a few
# milliseconds at a time, 1 s in all by the record's middle, and the window then built its own encoder (0.8 s of CPU,
# the GIL held) to count beside a child that was keeping up: 2.27x the file at its peak and the timeline later, in 6 of
# 6 idle launches on one machine.
LEAVE_SECONDS = 1.0
# A wait for a batch of a child that has answered is LEAVE_SECONDS for each LEAVE_CHARS of the batch's text, one at
# least (_patience): a batch of one long text is that much of the child's work (12 MB of one piece, 2.7 s of its CPU;
# JSON text, 0.04 s a MB), and a measure that gave such a child up after LEAVE_SECONDS built its encoder and counted the
# same text again beside it.
LEAVE_CHARS = 1 << 20


class _Batch:
    __slots__ = ("keys", "texts", "done", "chars")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.texts: list[str] = []
        self.done = threading.Event()
        self.chars = 0  # the record's text it carries (its texts' lengths), as _chars counts it


class CountsAhead:
    """Block bodies of one record under one policy, counted ahead by a child process (see the module's docstring).

    The measure calls `reach` with the record position its request has come to, and the counter asks `take`
    for a key it has not counted: the count when it was counted ahead (waiting for the child when its batch is
    on the way), else None, and `body` for the text rendered ahead, so a miss is not rendered twice. `close`
    stops the child. The measure's thread (the one that made this) calls these; `take` from any other thread
    sharing the counter gives only counts already made; the courier threads only carry batches.

    With `counts_here` False, while this process has no encoder of its own, it leaves every count it sent to the child:
    `take` waits for the child from its first batch (WAIT_FOR_START) and never counts a waiting batch itself
    (COUNT_WHILE_WAITING), so the measure builds no encoder here (the window: quicktok's encoder is 64 MiB of its peak)."""

    def __init__(
        self,
        record: FullRecord,
        policy: Any,
        policy_key: tuple,
        known: Callable[[Any], bool] = lambda key: False,
        thinking: bool = False,
        lengths: dict[Any, int] | None = None,
        spawn: Callable[[], child.Child | None] | None = None,
        counts_here: bool = True,
    ) -> None:
        self._record = record
        self.counts_here = counts_here  # False: nothing sent to the child is counted in this process (see the class)
        self._spawn = spawn  # how its child is had (core.request.counting.backend: the one started during the read); else child.spawn
        self._lengths = lengths  # each rendered body's UTF-8 length by memo key, for the prefix meter (Counter.lengths)
        self._policy = policy
        self._pk = policy_key
        self._known = known  # keys the counter has counted already
        self._thinking = thinking  # send each response's thinking too (Counter.count_text's, by text_key)
        self._next = 0  # the next record position to render
        self._ends: list[int] = []  # record position after each rendered window
        self._through: list[int] = []  # characters rendered through each window
        self._chars = 0
        self._counted_chars = 0  # of those, counted (by the child, or here): the lead's other end (reach)
        # Only where no block's key waits on the first round the measure decides (caching off): rendered past where the
        # measure is, a body keyed under a round not yet decided may be one no view holds, a count the child made for none.
        self._past_counts = policy is None or not policy.caching
        self._bodies: dict[Any, str] = {}  # rendered and not yet counted
        # Each thinking text's SHA-256 as hashed here for its key, until the counter asks for it (digest): each
        # response's thinking is counted once by the predictions (Counter.count_text), which would hash it again.
        self._digests: dict[str, bytes] = {}
        self._counts: dict[Any, int] = {}
        self._batch_of: dict[Any, _Batch] = {}
        self._open = _Batch()
        self._open_chars = 0
        # Batches handed over and not yet taken by the sending courier: the measure may still count one itself.
        self._queue: deque[_Batch] = deque()
        self._lock = threading.Condition()
        self._closing = False
        self._child: child.Process | None = None
        self._couriers: list[threading.Thread] = []
        self._sent: deque[_Batch] = deque()  # sent and not yet answered, in order
        self._ready = threading.Event()  # the child has answered once: from then on a pending batch is waited for
        self._failed = False
        self._owner = threading.get_ident()  # the measure's thread, the only one that waits for the child
        self.counted_ahead = 0  # keys whose count came from the child (for tests and benchmarks)
        self.waited = 0.0  # seconds the measure has waited for the child's counts (LEAVE_SECONDS)
        self._stalled = False  # a wait (_patience) for a child that has answered passed with no answer (_gave_up)
        self._passages = Passages(tokens.by_passages())  # long texts' passages counted here, of batches the child never took
        self._windowed = tokens.windowed()  # with tiktoken a text holding a very long piece is the counter's to window

    @staticmethod
    def worth(record: FullRecord) -> bool:
        """Whether the record holds text enough to repay a child (START_CHARS of its messages' string content), a
        string of HUGE_CHARS or more left out: the measure counts such a text in-line unless the child has answered
        by the time it comes, so a session of one huge message, whatever its size, gave its child nothing to count
        (inspect of one 50 MB message: the child's 0.7-0.9 s of CPU, its start, for nothing)."""
        chars = 0
        for message in record:
            sole = sole_text(message)  # the commonest content, read without a values view
            if sole is not None:
                chars += len(sole) if len(sole) < HUGE_CHARS else 0
                if chars >= START_CHARS:
                    return True
                continue
            for value in message.content.values():
                if isinstance(value, str):
                    chars += len(value) if len(value) < HUGE_CHARS else 0
                elif isinstance(value, (Mapping, list, tuple)):
                    # A result's output or a call's arguments: a lionagi Branch keeps nearly all its text there.
                    chars += string_chars(value, START_CHARS - chars)
            if chars >= START_CHARS:
                return True
        return False

    def reach(self, position: int, first_round: IncludedRound | None) -> None:
        """The measure has come to record position `position`: render (and send) bodies up to LEAD_CHARS past it, or
        past what the child has counted where that is further (caching off): while the measure walks a stretch counted
        already (the record's start, counted during the read), the child is kept at work, where it had counted
        LEAD_CHARS and waited for the measure to come."""
        if self._failed:
            return
        done = self._through[bisect_right(self._ends, position) - 1] if self._ends and self._ends[0] <= position else 0
        if self._past_counts:
            done = max(done, self._counted_chars)
        while self._next < len(self._record) and self._chars - done < LEAD_CHARS and not self._failed:
            self._render_window(first_round)
        if self._next >= len(self._record):
            self._flush()

    def take(self, key: Any) -> int | None:
        """The key's count made ahead, or None: not sent ahead, or the child is not answering (count it in-line)."""
        n = self._counts.get(key)
        if n is not None or self._failed or threading.get_ident() != self._owner:
            return n  # another thread sharing the counter counts in-line: it never waits for, flushes or steals a batch
        batch = self._batch_of.get(key)
        if batch is None:
            return None
        if batch is self._open:
            self._flush()  # needed now: send it rather than wait for it to fill
        if not self._waits_from_start() and not self._ready.is_set():
            return None  # the child is still starting: the measure does not wait for it
        while not batch.done.is_set():
            # Rather than wait: count in-line the batch needed, if the child has not taken it, else the one
            # furthest ahead, so both cores work until the child answers.
            mine: _Batch | None = None
            with self._lock:
                if not COUNT_WHILE_WAITING or self._leaves_to_child():
                    pass
                elif batch in self._queue:
                    self._queue.remove(batch)
                    mine = batch
                else:
                    mine = self._queue.pop() if self._queue else None
            if mine is not None:
                self._count_here(mine)
                continue
            if not self.counts_here and self._gave_up():
                break  # the window waited LEAVE_SECONDS for its child (_gave_up): what the child holds is counted in-line
            answered = self._ready.is_set()
            limit = WAIT_SECONDS if answered else START_SECONDS
            leaving = self._leaves_to_child()
            if leaving:
                limit = min(limit, _patience(batch) if answered else max(0.0, LEAVE_SECONDS - self.waited))
            started = time.monotonic()
            done = batch.done.wait(limit)
            self.waited += time.monotonic() - started
            if not done and leaving and answered:
                self._stalled = True
            if not done and not (leaving and not self._leaves_to_child()):  # past LEAVE_SECONDS: counted here, as inspect
                self._fail()
                break
        return self._counts.get(key)

    def counts_of(self, texts: list[str]) -> list[int | None]:
        """Each text's count as Counter.count_text makes it, made by the child (sent after what is queued, waited for,
        never counted here, so this process builds no encoder for them): None for a text holding a long piece (the
        counter's to count, as a response's thinking is), and for every text when the child has not answered yet or
        does not answer now. For what a caller will count after the measure (the report's summaries)."""
        if self._child is None or self._failed or not (self._ready.is_set() or self._waits_from_start()):
            return [None] * len(texts)
        sent = [i for i, text in enumerate(texts) if not has_long_piece(text)]
        if not sent:
            return [None] * len(texts)
        batch = _Batch()
        batch.keys = [("asked", id(batch), i) for i in sent]  # keys of no body: the counts are taken off below
        batch.texts = [texts[i] for i in sent]
        for key in batch.keys:
            self._batch_of[key] = batch  # so a child that fails lets this batch go too (_receive_all)
        self._send(batch)
        batch.done.wait(WAIT_SECONDS)
        got: list[int | None] = [None] * len(texts)
        for i, key in zip(sent, batch.keys):
            got[i] = self._counts.pop(key, None)
            self._batch_of.pop(key, None)
        return got

    def _waits_from_start(self) -> bool:
        """Whether the measure waits for the child's first answer rather than count in-line meanwhile."""
        return WAIT_FOR_START or self._leaves_to_child()

    def _leaves_to_child(self) -> bool:
        """Whether this process leaves to the child what it sent it: `counts_here` False, no encoder built here yet (one
        built already costs nothing more to use: the measure then counts a waiting batch with it, as inspect's), and the
        measure has not given the child up (_gave_up: a child the machine's other work starves would make the window's
        timeline late; past that, the encoder's memory is given for the time)."""
        return not self.counts_here and not encoder_built() and not self._gave_up()

    def _gave_up(self) -> bool:
        """Whether the measure has waited for its child LEAVE_SECONDS in all before its first answer, or one batch's
        _patience at once since (a child answering batch by batch, however far behind the measure, is not given up)."""
        return self._stalled if self._ready.is_set() else self.waited >= LEAVE_SECONDS

    def _count_here(self, batch: _Batch) -> None:
        """Count a batch the child never took, in this process."""
        count = tokens.counter()
        self._store(batch, self._passages.counts(batch.texts, lambda texts: [count(text) for text in texts]))

    def _store(self, batch: _Batch, counts: list[int]) -> None:
        for key, n in zip(batch.keys, counts):
            self._counts[key] = n
            self._bodies.pop(key, None)
        batch.texts = []
        with self._lock:  # the receiving courier and the measure's thread both store
            self._counted_chars += batch.chars
        batch.done.set()

    def body(self, key: Any) -> str | None:
        """The body rendered ahead for a key not counted ahead, so the counter need not render it again."""
        return self._bodies.get(key)

    def digest(self, text: str) -> bytes | None:
        """The SHA-256 (text_digest) of a thinking text this rendered ahead, once, so the counter need not hash it again."""
        return self._digests.pop(text, None)

    def close(self) -> None:
        """Stop the child and the couriers, and reap the child: nothing is left running, and no zombie. The flags
        first, so a courier that wakes sees them; the child's death closes its pipes, which ends the receiving one."""
        self._failed = True
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        process, self._child = self._child, None
        if process is not None:
            process.kill()
            try:
                process.wait()
            except KeyboardInterrupt:
                process.wait()  # killed already, so this is short: reap it, then let the interrupt go on
                raise
        for thread in self._couriers:
            thread.join()
        self._couriers = []

    # The measure's side.

    def _render_window(self, first_round: IncludedRound | None) -> None:
        record, lo = self._record, self._next
        hi = min(len(record), lo + WINDOW)
        if not self._counted_already(lo, hi, first_round):
            self._send_blocks(lo, hi, first_round)
        if self._thinking:
            for i in range(lo, hi):
                thought = thinking_text(record[i]) if record[i].kind == "assistant" else None
                if thought and not has_long_piece(thought):
                    digest = self._digests[thought] = text_digest(thought)
                    key = text_key(digest)
                    if key not in self._batch_of and not self._known(key):
                        self._add(key, thought)
        self._next = hi
        self._ends.append(hi)
        self._through.append(self._chars)

    def _send_blocks(self, lo: int, hi: int, first_round: IncludedRound | None) -> None:
        """Render and send the bodies of window lo..hi's blocks that nothing has counted or sent yet."""
        record = self._record
        for spec in window_blocks(record, lo, hi):
            key = (block_key(spec, record, self._policy, first_round), self._pk)
            if key in self._batch_of or self._known(key):  # every key rendered or counted here went into a batch
                continue
            waits = not (self._waits_from_start() or self._ready.is_set())
            if waits and spec.tag == TEXT and spec.mark is None and len(spec.message.text) >= HUGE_CHARS:
                continue  # left below once rendered, so not rendered: a huge text's body whole is its text twice more
            try:
                text = body_of(spec, record, self._policy, first_round)
            except CompileError:
                # A guess the views may never hold (rendered under the first round known so far, or cut by a
                # window): the counter renders the views' own blocks, and raises there if it must.
                continue
            if self._windowed and has_long_piece(text):
                continue  # merged in windows by the counter itself (core.request.long_pieces)
            if waits and (len(text) >= HUGE_CHARS or has_long_piece(text)):
                # Before this child has answered once the measure does not wait for it (take) and counts in-line
                # (through inspect's helper where it has one): sent here too, a huge text was counted by both, seconds
                # each (a 50 MB piece of letters, 8 s each; 50 MB of base64, 4.5 s each), in the GUI as in inspect.
                continue
            self._bodies[key] = text
            self._add(key, text)
            if self._lengths is not None and (n := body_bytes(text)) is not None:
                self._lengths[short_key(key[0])] = n

    def _counted_already(self, lo: int, hi: int, first_round: IncludedRound | None) -> bool:
        """Whether window lo..hi's text messages (answers and prompts: some, and each) are counted already: the record's
        start, which the read's children counted a window at a time, every block of a window together. Such a window
        is not planned again only to find each of its blocks counted (about a millisecond a window, on the measure's
        thread: half the 50k record's windows). A block of it the children left out (one they could not render) is
        counted by the measure in-line, as any block this did not send: the same count either way. Never where this
        process leaves its counts to the child (`counts_here` False, the window's): an in-line count there would build
        the encoder the window's process does without (a grown file's call paired anew, its texts counted before)."""
        if not self.counts_here:
            return False
        record, policy, known = self._record, self._policy, self._known
        texts = False
        for i in range(lo, hi):
            m = record[i]
            if m.kind in _TEXT_KINDS and sole_text(m):
                if not known((block_key(text_block(m), record, policy, first_round), self._pk)):
                    return False  # the first window past the counted start, nearly always at its first text
                texts = True
        return texts

    def _add(self, key: Any, text: str) -> None:
        if self._child is None and not self._failed:
            # At the first body to send, so the child starts while the rest are rendered; a measure whose bodies
            # are all counted already (a second measure, a session reopened from the library) starts none.
            self._start()
        self._open.keys.append(key)
        self._open.texts.append(text)
        self._batch_of[key] = self._open
        self._chars += len(text)
        self._open_chars += len(text)
        if self._open_chars >= BATCH_CHARS:
            self._flush()

    def _flush(self) -> None:
        if not self._open.keys:
            return
        batch = self._open
        batch.chars, self._open, self._open_chars = self._open_chars, _Batch(), 0
        self._send(batch)

    def _send(self, batch: _Batch) -> None:
        with self._lock:
            self._queue.append(batch)
            self._lock.notify()

    def _start(self) -> None:
        """Start the child (or have the one started while the file was read: the backend's spawn)."""
        started = self._spawn() if self._spawn is not None else child.spawn()
        if started is None:
            self._failed = True
            return
        self._child = started.process
        couriers = [
            threading.Thread(target=self._send_all, args=(os.fdopen(started.down, "wb"),), name="foldscope counts ahead: out", daemon=True),
            threading.Thread(target=self._receive_all, args=(os.fdopen(started.up, "rb"),), name="foldscope counts ahead: in", daemon=True),
        ]
        for thread in couriers:
            try:
                thread.start()
            except RuntimeError:  # no thread to be had (a process at its limit): the rest is counted in-line
                self._fail()
                return
            self._couriers.append(thread)  # only a started thread, so that close() can join each

    def _fail(self) -> None:
        self._failed = True
        process = self._child
        if process is not None:
            process.kill()  # the courier then sees the pipe close and lets every waiting batch go

    # The couriers' side: one thread sends batches, another takes their counts back, in order. Two, so the child
    # always finds its next batch waiting: a courier that waited for each answer before sending the next would
    # leave the child idle while it waits for the GIL, which the measure's thread keeps for a switch interval.

    def _send_all(self, down: BinaryIO) -> None:
        try:
            while True:
                with self._lock:
                    while not self._queue and not self._closing:
                        self._lock.wait()
                    if self._closing or self._failed:
                        return
                    batch = self._queue.popleft()
                    self._sent.append(batch)
                send(down, ("counts", batch.texts))
        except (OSError, ValueError):
            self._failed = True
        finally:
            try:
                down.close()  # the child reads to the end, answers, and exits
            except OSError:
                pass

    def _receive_all(self, up: BinaryIO) -> None:
        try:
            while True:
                counts = receive(up)
                batch = self._sent.popleft()
                if not isinstance(counts, list) or len(counts) != len(batch.keys):
                    raise ValueError("the counting child answered out of step")
                if not all(type(n) is int and n >= 0 for n in counts):  # a count the counter would add up
                    raise ValueError("the counting child answered something other than counts")
                self._store(batch, counts)
                self.counted_ahead += len(counts)
                self._ready.set()
        except (OSError, EOFError, ValueError, IndexError):
            pass  # the child is gone (closed, killed or failed): the measure counts the rest in-line
        finally:
            self._failed = True
            self._ready.set()
            # Each batch let go once: the dict holds every key sent ahead (49,852 keys in 290 batches at 50k), and each
            # set takes the batch's lock; a key at a time was 0.04 s of CPU that close() waited for, on the measure's thread.
            for batch in set(list(self._batch_of.values())):
                batch.done.set()
            try:
                up.close()
            except OSError:
                pass


def _patience(batch: _Batch) -> float:
    """How long the window's measure waits at once for a batch of a child that has answered before it gives the child
    up: LEAVE_SECONDS for each LEAVE_CHARS of the batch's text, one at least."""
    return LEAVE_SECONDS * max(1.0, batch.chars / LEAVE_CHARS)


def window_blocks(record: FullRecord, lo: int, hi: int) -> Iterator[Any]:
    """The blocks of record positions lo to hi as the record planned around them (OVERLAP messages on either side, so
    a call and its result on an edge still pair) lays them out: what a view holding them is likely to carry."""
    window = [record[i] for i in range(max(0, lo - OVERLAP), min(len(record), hi + OVERLAP))]
    mine = {id(record[i]) for i in range(lo, hi)}
    seq = [m for m in window if m.kind != "system"]
    planned, _ = plan_runs(seq, {m.id: m for m in window}, record)
    for _, blocks, _ in planned:
        for spec in blocks:
            if id(spec.message) in mine:
                yield spec


def string_chars(value: Any, enough: int) -> int:
    """The characters of the strings (keys too) inside nested mappings and lists, counted until `enough`."""
    chars, stack = 0, [value]
    while stack and chars < enough:
        item = stack.pop()
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return chars


def position_of(record: FullRecord, messages: list[Message] | Any) -> int:
    """The record position of a view's last message (0 for an empty view or one not in the record)."""
    if not messages:
        return 0
    last = messages[-1]
    return record.index_of(last.id) if last.id in record else 0
