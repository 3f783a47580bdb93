"""The counter's new texts made counts: each distinct text tokenised once, a head's count kept apart from the bodies'."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from itertools import compress
from typing import Any, cast

from foldscope.core.request import long_parts, tokens
from foldscope.core.request.counting import backend
from foldscope.core.request.long_pieces import LONG_PIECE, has_long_piece
from foldscope.core.request.passages import Passages
from foldscope.core.request.window_threads import THREADS

# Below this many characters of new text, threads cost more than they save.
PARALLEL_CHARS = 256 * 1024
# New texts shorter than this are tokenised once however often they come in one batch (Tokenising._tokenise).
SHARED_TEXT = 1024
# New texts of at least this many characters in all, counted in-line by quicktok, are counted on two threads: this one
# and one started for them (quicktok lets the GIL go while it counts). Two threads start to pay at about 64 k characters;
# from here they save about 40% of the wall for 0.2 ms more CPU (docs/performance.md, "The cold count on two threads").
SPLIT_CHARS = 256 * 1024
# A huge body's parts counted at once (Tokenising._parts_count): enough for the two threads, a few MB held.
GROUP_CHARS = 4 << 20
SPLIT_PARTS = 32  # runs of texts the two threads take turns at, so neither waits long for the other at the end
_SHORT = SHARED_TEXT.__gt__  # a text's length -> whether it is short enough to be tokenised once however often it comes


def _twice(texts: list[str]) -> bool:
    """Whether some text of `texts` comes more than once."""
    return len(set(texts)) < len(texts)


def is_head(key: Any) -> bool:
    """Whether a key of a layout is its head's (("head", text)), not a block's memo key (a message or a block_key)."""
    return type(key) is tuple and key[0] == "head"


class Tokenising:
    """core.request.count.Counter's tokenising of the texts its layouts bring: its memo of heads and images, by key."""

    _heads: dict[str, int]
    _images: dict[Any, int]
    _passages: Passages
    ahead: Any
    threads: int
    tokenised_chars: int
    # When a list: each two-thread count's seconds (this thread's CPU, the worker's, the wall from the worker's start to
    # its join) appended, for benchmarks.
    split_cpu: list[tuple[float, float, float]] | None = None

    def count_new(self, segments: dict[Any, str], bodies: dict[Any, int]) -> None:
        """Count each of `segments` (a head's key ("head", text), first where there is one, or a block body's memo key,
        to its text) not counted yet: a head's into the heads, a body's into `bodies` (the memo of its policy key). For
        core.request.count_reference, whose whole layouts are the counter's reference."""
        new = {k: text for k, text in segments.items() if (k[1] not in self._heads if is_head(k) else k not in bodies)}
        self._tokenise(list(new), list(new.values()), bodies)

    def _tokenise(self, keys: list, given: list[str], bodies: dict[Any, int]) -> None:
        """Count every new segment, `given[i]` the text of `keys[i]` (_count_all, by passages when long): a head's into
        the heads (its key first in `keys`, where there is one), a block body's into `bodies` (the memo of its policy
        key). Lists, not a dict of them: a cold count's thousand bodies went through three dicts on their way to the memo
        (docs/performance.md, counter7)."""
        if not given:
            return
        # Equal short texts count alike, so each is tokenised once: a file of tiny prompts repeats a few words. A long
        # one is keyed by its place instead: hashing it cost as much as a tenth of counting it (0.7 ms of bench_count's
        # 3 MB), and a long body seldom repeats (a call's and a result's carry their call id).
        texts = given
        at: list[int] = []  # each text's place among those tokenised, when some came twice
        # Whether a short text comes twice is asked of them all at once, in C (a cold count's thousand bodies, none twice,
        # went through a Python step each: docs/performance.md, counter15).
        if len(given) > 1 and _twice(list(compress(given, map(_SHORT, map(len, given))))):
            where: dict[Any, int] = {}
            add = where.setdefault
            at = [add(t if len(t) < SHARED_TEXT else i, len(where)) for i, t in enumerate(given)]
            if len(where) < len(given):
                texts = [given[k] if type(k) is int else k for k in where]
        self.tokenised_chars += sum(map(len, texts))
        counts = self._windowed_counts(texts) if tokens.windowed() else self._passages.counts(texts, self._count_all)
        if texts is not given:
            counts = [counts[k] for k in at]
        head = keys[0]
        if type(head) is tuple and head[0] == "head":  # a head comes first, where there is one (asked of it alone)
            self._heads[head[1]] = counts[0]
            keys, counts = keys[1:], counts[1:]
        images = self._images
        if not images:
            bodies.update(zip(keys, counts))
            return
        # A block's images count as the provider counts them, beside its text (where "[image]" stands); a key given
        # twice has them once.
        counted = dict(zip(keys, counts))
        for key in counted:
            if key in images:
                counted[key] += images.pop(key)
        bodies.update(counted)

    def _parts_count(self, parts: Iterable[str], size_of: Callable[[str], int | None] | None = None) -> tuple[int, int | None]:
        """The count of a text given as parts cut between two pieces (core.request.count_step.BodyParts): the sum of the
        parts' counts, each part counted as _tokenise counts a text, a few at a time (GROUP_CHARS), each group dropped
        once counted (the parts are made as they are read: the whole body is never held); and the sum of size_of's
        answers for the parts, None without size_of or where it answers None for one."""
        unjoined = self._unjoined_count(parts)
        if unjoined is not None:  # counted from its chunks: only their sizes are left to have
            return unjoined, _size(cast(Any, parts).unjoined(), size_of)
        total, group, held = 0, [], 0
        size: int | None = 0 if size_of is not None else None
        for part in parts:
            if size is not None:
                one = size_of(part)  # type: ignore[misc]  # size is None without size_of
                size = None if one is None else size + one
            group.append(part)
            held += len(part)
            if held >= GROUP_CHARS:
                total += self._group_count(group)
                group, held = [], 0
        return total + (self._group_count(group) if group else 0), size

    def _unjoined_count(self, parts: Iterable[str]) -> int | None:
        """The count of a body of one part (count_step.BodyParts.unjoined: one piece) by quicktok's windows read from its
        text and the body's two ends (long_parts.count), where this process counts with quicktok, or by inspect's helper
        sent the three chunks as one text (core.request.counting.helper.Helper.count_parts): joined, the one part was a
        copy of the whole message (a 50 MB run of letters pasted). None where it is not so counted."""
        unjoined = getattr(parts, "unjoined", None)
        chunks = unjoined() if unjoined is not None else None
        if chunks is None or tokens.windowed():
            return None
        enc = tokens.encoding()
        if tokens.helping():
            counted = enc.count_parts(chunks)
        elif type(enc) is not tokens.FastEncoding:
            return None
        else:
            counted = long_parts.count(enc, long_parts.Parts(chunks))
        if counted is not None:
            self.tokenised_chars += sum(map(len, chunks))
        return counted

    def _group_count(self, texts: list[str]) -> int:
        self.tokenised_chars += sum(map(len, texts))
        counts = self._windowed_counts(texts) if tokens.windowed() else self._passages.counts(texts, self._count_all)
        return sum(counts)

    def _windowed_counts(self, texts: list[str]) -> list[int]:
        """Each text's count where tiktoken counts: a text holding a very long piece merged in windows
        (core.request.long_pieces), never whole; the rest by passages (core.request.passages)."""
        counts: list[int] = [0] * len(texts)
        rest = []
        for i, t in enumerate(texts):
            if has_long_piece(t):
                counts[i] = tokens.count_text(t)
            else:
                rest.append(i)
        for i, n in zip(rest, self._passages.counts([texts[i] for i in rest], self._count_all)):
            counts[i] = n
        return counts

    def _count_all(self, texts: list[str]) -> list[int]:
        """Each plain text's count (tokens.counter): in one batch through inspect's helper (core.request.counting.helper), one
        round trip where encoding each text apart is one a text (a trace's requests each bring a few new bodies,
        docs/performance.md), or in threads when there is enough text; else one after another."""
        if len(texts) > 1 and (tokens.helping() or self.threads > 1 and sum(map(len, texts)) >= PARALLEL_CHARS):
            return tokens.count_ordinary_batch(texts, num_threads=self.threads)
        count = tokens.counter()
        if len(texts) == 1:  # a trace's next request brings one, nearly always
            return [count(texts[0])]
        fast = getattr(count, "__self__", None)  # quicktok's tests made once for them all (FastEncoding.count_batch)
        if type(fast) is not tokens.FastEncoding:
            return [count(text) for text in texts]
        if self.ahead is None and THREADS > 1 and not sharing_cores():  # a child counting ahead has the other core
            sizes = list(map(len, texts))
            if sum(sizes) >= SPLIT_CHARS:
                if max(sizes) < LONG_PIECE:
                    return on_two_threads(fast.count_batch, texts, sizes, self.split_cpu)
                return self._split_around_long(fast, texts, sizes)
        return fast.count_batch(texts)

    def _split_around_long(self, fast: tokens.FastEncoding, texts: list[str], sizes: list[int]) -> list[int]:
        """Each text's count: those long enough to hold a long piece on this thread (their windows have threads of their
        own, and report to this thread's progress), the rest on two threads when they are enough."""
        short = [i for i, size in enumerate(sizes) if size < LONG_PIECE]
        short_sizes = [sizes[i] for i in short]
        if sum(short_sizes) < SPLIT_CHARS:
            return fast.count_batch(texts)
        counts = [0] * len(texts)
        for i, n in zip(short, on_two_threads(fast.count_batch, [texts[i] for i in short], short_sizes, self.split_cpu)):
            counts[i] = n
        for i, size in enumerate(sizes):
            if size >= LONG_PIECE:
                counts[i] = fast.count(texts[i])
        return counts


def sharing_cores() -> bool:
    """Whether this process is one of several that keep the cores busy already: a process pool's worker (a folder's
    replay, a fleet's sweep) or a forked child (one file's strategies at once), where a second thread only competes
    (core.request.counting.backend.allowed's test for a child, without its switch). A process that has not imported
    multiprocessing is no pool's worker: it is not imported for the question (5-10 ms)."""
    pool = sys.modules.get("multiprocessing")
    return backend._forked or (pool is not None and pool.parent_process() is not None)


def on_two_threads(
    count_batch: Callable[[list[str]], list[int]],
    texts: list[str],
    sizes: list[int],
    cpu: list[tuple[float, float, float]] | None = None,
) -> list[int]:
    """count_batch's counts of `texts` (each of `sizes` characters), in order, made on this thread and one worker started
    here, taking runs of about equal characters in turn. The worker is joined before this returns or raises (a process
    that forks needs one thread: core.request.counting.one_thread); an error on either thread is raised here."""
    share = sum(sizes) / SPLIT_PARTS
    bounds = [0]
    run = 0
    for i, size in enumerate(sizes, 1):
        run += size
        if run >= share and i < len(sizes):
            bounds.append(i)
            run = 0
    bounds.append(len(sizes))
    counts: list[list[int] | None] = [None] * (len(bounds) - 1)
    turns = iter(range(len(counts)))  # taken by both threads: next() on it is one step under the GIL
    failed: list[BaseException] = []
    worker_cpu = [0.0]

    def take_turns() -> None:
        for k in turns:
            counts[k] = count_batch(texts[bounds[k] : bounds[k + 1]])

    def work() -> None:
        start = time.thread_time()
        try:
            take_turns()
        except BaseException as exc:  # raised again on the counting thread, after the join
            failed.append(exc)
            for _ in turns:  # the runs left: the counting thread takes none of them after this
                pass
        worker_cpu[0] = time.thread_time() - start

    start, wall = time.thread_time(), time.perf_counter()
    worker = threading.Thread(target=work, name="foldscope-count", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # no thread to be had (a process at its limit): all on this one, as below the split size
        return count_batch(texts)
    try:
        take_turns()
    finally:
        for _ in turns:  # on an error here (Ctrl+C), the worker takes no run after its own
            pass
        worker.join()
    if cpu is not None:
        cpu.append((time.thread_time() - start, worker_cpu[0], time.perf_counter() - wall))
    if failed:
        raise failed[0]
    return [n for part in counts for n in part]  # type: ignore[union-attr]


def _size(texts: Iterable[str], size_of: Callable[[str], int | None] | None) -> int | None:
    """The sum of size_of's answers for the texts; None without size_of or where it answers None for one."""
    if size_of is None:
        return None
    total = 0
    for text in texts:
        one = size_of(text)
        if one is None:
            return None
        total += one
    return total
