"""Where a Counter's counts are made (Backend): in-line, or with a child counting ahead on the other core while a trace
is measured; the Measure starts and stops it, and a caller about to read a file for a measure gives a hint (its path)."""

from __future__ import annotations

import atexit
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any

from foldscope.core.request.counting import child, children_allowed

if TYPE_CHECKING:
    from foldscope.core.model.session import FullRecord
    from foldscope.core.request.counting.ahead import CountsAhead
    from foldscope.core.request.counting.later_half import LaterHalf

# Every Counter owns a Backend, so this module is imported wherever one is made: counting ahead (core.request.counting
# .ahead, with the compile and plan modules it renders with) and multiprocessing are imported only when first asked for.


class Backend:
    """A Counter's way of counting (the Counter owns one): every body in-line, or, while a trace is measured, with a
    child counting the record's bodies ahead of need (core.request.counting.ahead). The Measure asks `start` when its
    counting pass begins and `stop` when the measure ends, whatever ended it; between them the Counter takes the
    counts the child made (Counter.ahead). Whether a child runs is decided here, at `start`: the switch
    (core.request.counting.children_allowed), the record's text, the counter's memo and a free core.

    `counts_here` False (the window's load): where a child counts, this process counts nothing it could send it, so it
    never builds quicktok's encoder (64 MiB) for the measure: the child is waited for from its first batch, and a batch
    it has not answered is never counted here (CountsAhead.counts_here). Where no child runs, all is counted in-line."""

    # Block bodies the read's children counted into the counter before its first measure (core.request.counting
    # .during_read's seed): the record's start, not a reopened session's memo, so `start` leaves them out of what the
    # counter has counted. A file whose first half of bytes holds most of its messages had its read count past half its
    # bodies, and the measure then counted all the rest itself (review23: 0.615 of such a file's bodies).
    read_bodies = 0

    def __init__(self, counts_here: bool = True) -> None:
        self.counts_here = counts_here

    def start(self, counter: Any, record: FullRecord, policy: Any, key: tuple, thinking: bool = False) -> CountsAhead | LaterHalf | None:
        """A child counting the record's block bodies under `policy` (its policy key `key`; with `thinking` the
        responses' thinking too) ahead of the measure, attached to `counter` (its Counter.ahead); None where one may
        not run, or the counter already has one. Cheapest question first: a counter that has counted most of the
        record (a followed session's poll, a reopened session) has nothing worth sending, and a short record does not
        repay a child; only then is the machine asked. The bodies the read's children counted (read_bodies) are the
        record's start, not such a memo: they are left out, for this first measure after the read only."""
        from foldscope.core.request.counting import later_half

        read, self.read_bodies = self.read_bodies, 0
        if not _forked and later_half.wanted(counter, record):  # a small input: its later half counted by a forked child
            counter.ahead = later_half.LaterHalf(record, policy, key, thinking)
            return counter.ahead
        from foldscope.core.request.counting.ahead import CountsAhead

        if counter.ahead is not None or 2 * (counter.bodies_counted() - read) > len(record) or not CountsAhead.worth(record):
            return None  # a child started while the file was read (hint) is stopped when the measure ends
        # A child started while the file was read found the core free then: asked again now, the idle sample would
        # see that child's own start on it.
        if not allowed() or not (has_spare() or wanted()):
            return None
        lengths = counter.lengths.setdefault(key, {}) if counter.lengths is not None else None
        counter.ahead = CountsAhead(
            record,
            policy,
            key,
            known=counter.is_counted,
            thinking=thinking,
            lengths=lengths,
            spawn=_child_for_ahead,
            counts_here=self.counts_here,
        )
        return counter.ahead

    def stop(self, counter: Any, started: CountsAhead | LaterHalf | None) -> None:
        """The measure has ended: a child started while the file was read that no measure took is stopped, and the
        one `start` gave this measure (`started`) is stopped and reaped, and taken off the counter."""
        discard_spare()
        if started is not None:
            if counter.ahead is started:
                counter.ahead = None
            started.close()


def _child_for_ahead() -> child.Child | None:
    """The child a CountsAhead counts with: the one started while the file was read (hint), else a new one."""
    return take_spare() or child.spawn()


# Set in a child forked from this process (core.replay.parallel's strategy children): its parent and siblings already
# keep every core busy, as a process pool's workers do, and multiprocessing.parent_process() knows nothing of a bare fork.
_forked = False


def _in_forked_child() -> None:
    global _forked, _spare, _spare_due
    _forked = True
    _spare, _spare_due = None, False  # the parent's, never this process's to adopt or stop


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)


def allowed() -> bool:
    """Whether counting ahead may run in this process: the switch allows children (children_allowed), and this is
    neither a worker of a process pool (a folder's replay, a fleet's sweep) nor a forked child (one file's strategies
    at once), which already keep every core busy, so a child would only compete."""
    import multiprocessing  # imported once asked: a Counter is made where no child is ever wanted (`count`)

    return children_allowed() and multiprocessing.parent_process() is None and not _forked


def wanted() -> bool:
    """Whether counting ahead may run here (allowed) and a second core looks free (free_core)."""
    return allowed() and free_core()


# A child started while a session file is read (hint), for the measure after the read to take (take_spare): spawned
# as the read starts, its start (an interpreter and its own encoding, 0.7-1.1 s of CPU) runs beside the read, which
# keeps one core, rather than beside the measure's first requests, which the measure's thread counts itself until the
# child answers; forked at the read's cut where a child runs during the read (hint's `forked`, fork_spare), it holds the
# encoding the parent built there and starts nothing.
_spare: child.Child | None = None
_spare_lock = threading.Lock()
_spare_due = False  # hint(forked=True) found one worth starting: the read's fork makes it (fork_spare)


def hint(path: str | os.PathLike, forked: bool = False) -> bool:
    """The session file at `path` is about to be read and its trace measured: start a counting child now, while it is
    read, when its measure is likely to want one. That is when the file looks to hold START_CHARS of text
    (estimated_text; a file of short lines, whatever its size, is mostly the envelope they repeat, and there a child
    that is never used costs the read a core) and counting ahead may run (allowed, then free_core, asked now, while
    the other core is still as the read finds it). The measure's Backend takes it (take_spare) or stops it
    (discard_spare); one left at exit is stopped then. True when one was started, or with `forked` is due: the read's
    own fork (core.request.counting.during_read) forks it once this process has built its encoding (fork_spare),
    where a spawned one would start an interpreter and build its own."""
    global _spare_due
    from foldscope.core.request import tokens

    _spare_due = False  # one a failed read left due is not this file's
    tokens.expect(path)  # a small file is counted without building an encoder (far below START_CHARS: no child)
    from foldscope.core.request.counting.ahead import START_CHARS

    try:
        if os.path.getsize(path) < START_CHARS:  # one stat, before allowed() imports multiprocessing (5-10 ms)
            return False
    except OSError:
        return False  # the read says what is wrong with the file
    if not allowed():  # before the file is sampled, so a process pool's workers never sample their files for nothing
        return False
    try:
        if estimated_text(path) < START_CHARS:
            return False
    except OSError:
        return False
    with _spare_lock:
        if _spare is not None:
            return False
    if not free_core():
        return False
    if forked:
        _spare_due = True
        return True
    return _keep_spare(child.spawn())


def _keep_spare(started: child.Child | None) -> bool:
    """A counting child just started kept as the spare for the measure to take; stopped where another thread kept one
    meanwhile. True when it is kept."""
    global _spare
    if started is None:
        return False
    with _spare_lock:
        if _spare is None:
            _spare, started = started, None
    if started is not None:
        child.stop(started)
        return False
    return True


def fork_spare() -> bool:
    """The counting child hint(forked=True) made due, forked now (child.fork): the caller has built its encoding and
    runs no other thread. True when one was forked."""
    global _spare_due
    if not _spare_due:
        return False
    _spare_due = False
    return _keep_spare(child.fork())


def spawn_due() -> bool:
    """The counting child hint(forked=True) made due that no cut of the read forked (a format read without the line
    reader's cuts, a fork found unsafe there), spawned now the read is done, so the measure still finds one waiting
    rather than start one itself. True when one was started."""
    global _spare_due
    if not _spare_due:
        return False
    _spare_due = False
    return _keep_spare(child.spawn())


def has_spare() -> bool:
    """Whether a child started by hint is waiting to be taken."""
    return _spare is not None


def take_spare() -> child.Child | None:
    """The child hint started, now the caller's (None when there is none)."""
    global _spare
    with _spare_lock:
        taken, _spare = _spare, None
    return taken


def discard_spare() -> None:
    """Stop and reap a child hint started that no measure took (a record with too little text, a failed read)."""
    global _spare_due
    _spare_due = False
    taken = take_spare()
    if taken is not None:
        child.stop(taken)


atexit.register(discard_spare)


# A JSON string literal, escapes included (possessive: a long one is matched in one pass, never backtracked into), or
# one not closed before the window's end or a line's (its group empty): taken whole, so the search goes on after it.
# A match from each quote inside it would fail as it fails (each aligns with its escapes): one string of 50 MB of
# JSON logs cut by a window was read again from each of its quotes, 20 s of CPU.
_STRING = re.compile(rb'"(?:[^"\\\n]++|\\.)*+("?)')
LONG_STRING = 64  # a string at least this long is text a block carries, not the envelope a line repeats (ids, times)
SAMPLES = 4  # windows read across the file (a Branch opens with its list of ids, a Claude Code file with short lines)
SAMPLE_BYTES = 256 << 10


def estimated_text(path: str | os.PathLike) -> int:
    """About how many characters of long strings the file holds: the share of long string literals in SAMPLES windows
    read across it, times its size. Each window starts at a line's start, so a string is never read from its middle
    (a compact one-line document is then read as mostly between strings: too little, never too much)."""
    size = os.path.getsize(path)
    inside = seen = 0
    with open(path, "rb") as f:
        for k in range(SAMPLES):
            f.seek(size * k // SAMPLES)
            window = f.read(SAMPLE_BYTES)
            if k:
                window = window[window.find(b"\n") + 1 :] if b"\n" in window else b""
            seen += len(window)
            inside += string_bytes(window)
    return size * inside // seen if seen else 0


def string_bytes(window: bytes) -> int:
    """The bytes of the long JSON string literals closed within `window`, their quotes included."""
    return sum(m.end() - m.start() for m in _STRING.finditer(window) if m.end() - m.start() >= LONG_STRING + 2 and m[1])


FREE_CORE = 0.5  # this much of a core idle counts as one free (free_core)
SAMPLE_SECONDS = 0.05  # how long core_idle watches the machine's idle time
# A second, longer look when the first finds no core free: another process's blip (a shell's prompt, a file watcher)
# can fill a look of 50 ms on an idle machine, and the window then counts in its own process with its encoder built:
# one of six idle launches at 50k at the twentieth session's end, complete 12.8 s where the others took 8.4-8.9, at
# 1.16x the others' memory. A machine that is truly busy is busy over both looks: only there is this wait paid.
SECOND_LOOK_SECONDS = 0.15


def free_core() -> bool:
    """Whether a second core looks free: this process may run on two or more, and the machine's idle time over the
    last moment (core_idle, looked at again for longer when the first look finds none; else the last minute's load,
    this process's own work included) leaves one of them idle. A child on a core other work keeps busy only competes
    with this process for the same time: measured here, the measure then took 1.45 times as long."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    if cores < 2:
        return False
    idle = _idle_beside_own_work(SAMPLE_SECONDS)
    if idle is not None:
        return idle >= FREE_CORE or (_idle_beside_own_work(SECOND_LOOK_SECONDS) or 0.0) >= FREE_CORE
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average: assume the core is free
        return True
    return load < cores - FREE_CORE


def _idle_beside_own_work(seconds: float) -> float | None:
    """The cores' worth of idle time over `seconds` (core_idle) with this process's own work meanwhile added back, or
    None where the machine's idle time cannot be read."""
    cpu, start = time.process_time(), time.monotonic()
    idle = core_idle(seconds=seconds)
    if idle is None:
        return None
    # This process's own threads at work during the sample are not other work: the window's thread painting the first
    # part while its worker asks took a whole core of the idle time, so another process's blip of half a core left the
    # window counting in its own process (its encoder built: 2.27x the file at 50k, complete 1.5 s later) in two of six
    # idle launches. Added back, the window asks what `requests` asks: a core no other process holds.
    return idle + (time.process_time() - cpu) / max(time.monotonic() - start, seconds)


def core_idle(stat: str = "/proc/stat", seconds: float = SAMPLE_SECONDS) -> float | None:
    """How many cores' worth of the machine sat idle over `seconds` (Linux's /proc/stat read twice), or None
    where there is no such file. The last minute's load is too slow for this: the previous command's child is in it."""

    def read() -> list[int] | None:
        try:
            with open(stat, encoding="ascii") as f:
                fields = f.readline().split()
        except OSError:
            return None
        return [int(x) for x in fields[1:]] if fields and fields[0] == "cpu" else None

    first = read()
    time.sleep(seconds)
    second = read()
    if first is None or second is None or len(first) < 5 or len(second) != len(first):
        return None
    delta = [b - a for a, b in zip(first, second)]
    total = sum(delta[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    if total <= 0:
        return None
    cores = os.cpu_count() or 1
    return cores * (delta[3] + delta[4]) / total
