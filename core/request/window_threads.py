"""The windows of one very long piece, merged by quicktok ahead of their stitch on threads, one a core, each window
with only what its stitch needs (core.request.long_pieces.merge_text stitches them in order)."""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

# Threads merging a long piece's windows: one a core this process may run on, two at most (the machine the targets are
# set on has two; each thread more is a window more in flight when a cancel comes).
THREADS = min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class Merged(NamedTuple):
    """One window merged: its number of tokens, its first ids (head) and its last (tail, from index tail_from), every id where
    kept (else None), and where it ends and the next window starts, in bytes from the piece's start."""

    tokens: int
    head: Any
    tail: Any
    tail_from: int
    ids: list[int] | None
    end: int
    next_start: int


def places(start: int, end: int, window: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """The windows of the piece text[start:end] as (first character, past the last, the next window's first, the
    previous window's end): each `window` characters (the last as long, ending at the piece's end), each sharing at least
    `overlap` characters (so at least as many bytes) with the one before."""
    spans = []
    at = start
    while at + window < end:
        spans.append((at, at + window))
        at += window - overlap
    spans.append((max(start, end - window), end))
    return [(a, b, spans[k + 1][0] if k + 1 < len(spans) else b, spans[k - 1][1] if k else a) for k, (a, b) in enumerate(spans)]


@contextlib.contextmanager
def merged(
    window_ids: Callable[..., Any],
    enc: Any,
    text: str,
    spans: list[tuple[int, int, int, int]],
    keep: bool,
    ends: tuple[list[int], int, int],
) -> Iterator[Iterator[Merged | None]]:
    """Each window of `spans` merged (window_ids(enc, chars) gives its ids, or None where it is not one piece), in
    order, on THREADS threads at most THREADS windows ahead of the one taken (so a cancel stops within a few windows).
    `ends`: (each id's length in bytes, the bytes the first window's head covers at least, the longest token's). Leaving
    the block stops the threads (after the windows they are merging)."""
    lengths, first_head, longest = ends

    def merge(span: tuple[int, int, int, int]) -> Merged | None:
        first, stop, following, before = span
        chars = text[first:stop]
        ids = window_ids(enc, chars)
        if ids is None:
            return None
        ascii = chars.isascii()
        size = len(chars) if ascii else len(chars.encode())
        step = following - first if ascii else len(chars[: following - first].encode())
        if keep:
            return Merged(len(ids), ids, ids, 0, ids, size, step)
        # Only the ids about the window's two stitches are kept (the list freed here, on the merging thread): its head
        # up to the first token ending at or past what the previous window holds (or first_head, the first window's),
        # its tail from the first token ending past step - 2 * longest.
        shared = before - first if ascii else len(chars[: before - first].encode())  # bytes the previous window holds
        reach = max(shared, first_head if first == spans[0][0] else 0)
        head, at = 0, 0
        while head < len(ids) and at < reach:
            at += lengths[ids[head]]
            head += 1
        tail, at = len(ids), size
        while tail > 0 and at > step - 2 * longest:
            tail -= 1
            at -= lengths[ids[tail]]
        return Merged(len(ids), ids[: max(head, 1)], ids[tail:], tail, None, size, step)

    def placed(results: Iterator[Merged | None]) -> Iterator[Merged | None]:
        y = 0  # the byte (from the piece's start) where the window starts
        for result in results:
            if result is None:
                yield None
                return
            yield result._replace(end=y + result.end, next_start=y + result.next_start)
            y += result.next_start

    with ahead(merge, spans) as results:
        yield placed(results)


@contextlib.contextmanager
def ahead(work: Callable[[Any], Any], items: list[Any]) -> Iterator[Iterator[Any]]:
    """work(item) for each item, in order, on THREADS threads at most THREADS items ahead of the one taken (so a cancel
    stops within a few); leaving the block stops the threads (after the items they are at)."""
    if THREADS < 2 or len(items) < 3:
        yield map(work, items)
        return
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="foldscope-window")

    def taken() -> Iterator[Any]:
        pending = deque(pool.submit(work, item) for item in items[:THREADS])
        for item in items[THREADS:]:
            pending.append(pool.submit(work, item))  # before the wait: every thread works while this one takes
            yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    try:
        yield taken()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
