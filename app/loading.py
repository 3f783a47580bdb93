"""Opening a session in two steps: the record from the reader's output first, then the trace and the counts."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

from foldscope.app.save import work_to_recover
from foldscope.app.worker import Progress
from foldscope.core.readout.cost_facts import document_cache
from foldscope.core.readout.document import Document
from foldscope.core.readout.opening import open_document, release_freed

# How often the timeline hears the counts so far: often enough to watch, rarely enough to be cheap. Each hearing is a
# paint of the loading timeline and the busy bar on the GUI thread, which the measure waits on for the interpreter:
# at 0.1 s a 50,000-message load painted 97 times (0.40 s of the GUI thread's CPU before complete), and a load on a
# busy machine, its measure slower by the clock, over a thousand times (1.9 s).
FILL_EVERY_S = 0.2
# How long the library's import waits for the window to paint the counted document. The two share one interpreter
# lock: run together, each takes about half of it, and the timeline's first paint of 50,000 messages doubles.
# The import waits instead (the window needs nothing from it to show and edit the session); never longer than this.
SHOWN_WAIT_S = 10.0
# How long the trace's measure waits for the window to paint the first step (the lists and the map). Started at
# once, the measure held the lock while the window painted: each of the paint's calls into Qt gave the lock up and
# waited a switch interval to have it back, so a first step took many times its own work.
FIRST_SHOWN_WAIT_S = 5.0


@dataclass(frozen=True)
class CountedDocument:
    """The counted Document, handed to the window while the library stores it (from a copy: the session may be
    edited meanwhile), and whether the session's actions wait for the store all the same: only when the library
    keeps unsaved work for this file, offered once it is stored (app.save.work_to_recover)."""

    document: Document
    actions_wait: bool


def settle_heap() -> None:
    """Once a load has landed: collect what the last session left (its cycles), then freeze what survives, so that
    no later collection walks the session again. The load runs with the collector off (core.readout.opening), so
    the first allocations after it set off a full collection over the whole session: at the 50k Branch, the first
    step to a request took 0.56 s where the next took 0.12. Unfrozen first, so the session before this one is
    collected here, not kept frozen for ever."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class TraceCounts:
    """The trace's requests counted so far, in order, out of `requests`: progress, not sizes (no head, no scale)."""

    requests: int
    counts: tuple[int, ...]


class TraceFill:
    """Hears each request's count as the worker measures the trace, and hands the counts so far to the GUI
    (Progress.interim) at most every FILL_EVERY_S, and once more at the last request."""

    def __init__(self, progress: Progress, every: float | None = None) -> None:
        self.progress = progress
        self.every = FILL_EVERY_S if every is None else every
        self.counts: list[int] = []
        self._last = 0.0

    def __call__(self, k: int, requests: int, count: int) -> None:
        self.counts.append(count)
        now = time.monotonic()
        if now - self._last >= self.every or k == requests - 1:
            self._last = now
            self.progress.report(k + 1, requests, "Measuring requests")
            self.progress.interim(TraceCounts(requests, tuple(self.counts)))


def load_work(path: str, db: str | None, policy=None, sample: str | None = None) -> Callable[[Progress], Document]:
    """The loading worker's function: the first Document (nothing counted) goes to the GUI as an interim
    result as soon as the file is read, the trace's counts as they come, the counted Document as soon as it is
    counted (CountedDocument: shown, and edited, while the library stores it), and the stored Document last."""

    def work(progress: Progress) -> Document:
        waits = work_to_recover(db, path)  # asked before reading: off the path to the counted document

        def shown(document: Document) -> None:
            progress.interim(document)
            progress.wait_shown(FIRST_SHOWN_WAIT_S)  # the window paints the first step before the count takes the lock

        def on_counted(document: Document) -> None:
            progress.report(0, 0, "Attributing the cache writes")
            document_cache(document)  # from the trace's own count: the cache lane and the Cost panel count nothing again
            progress.interim(CountedDocument(document, waits))
            release_freed()  # the count's and the cache's temporaries given back while the window paints, beside its needs
            progress.wait_shown(SHOWN_WAIT_S)  # the window paints it before the library's import takes the lock

        return open_document(path, db, progress.report, policy, sample, shown=shown, on_count=TraceFill(progress), on_counted=on_counted)

    return work
