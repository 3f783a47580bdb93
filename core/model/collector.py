"""How often Python's cyclic garbage collector runs while foldscope works: less often than its default.

A session of 50,000 messages keeps millions of small objects alive (messages, their parts, the counter's memo and
layouts), and each of the collector's passes over the older ones walks them all. Almost nothing foldscope makes is
cyclic (reference counting frees it), so with the default thresholds (700, 10, 10) the collector spent about a
fifth of a 50k-message replay finding no garbage (bench/bench_replay_scale.py; docs/performance.md, Scale).
Collecting the youngest generation after 50,000 new objects instead of 700 keeps cyclic garbage bounded (a few
MB at most) and cut that replay's CPU time by about 16%.

Where a session is read and measured in one go (the GUI's load, and the one-file commands `inspect`, `requests`
and `replay`), the collector is kept off altogether (spared): each object made then is walked by the youngest
generations' passes at least twice before it settles, about a fifth of reading and measuring a million tiny lines.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 10)  # gen0 after 50,000 new objects; gen1 after 20 of those; gen2 as Python's default


def tune() -> None:
    """Set the collector's thresholds for this process (the CLI's and the GUI's entry points call it first)."""
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def spared() -> Iterator[None]:
    """Python's cycle collector kept off inside, and as it was found when the block ends or fails.

    For reading and measuring a session: the reader makes millions of objects that stay, and the trace's measure
    hundreds of thousands more; each collection walks the young ones, and a full one all of them (12 times over a
    50,000-message load). Reading and measuring make few cycles: reference counting frees the rest as always, and
    what cycles there are wait for the collector's next pass after the block (a 50,000-message load ends 6 MB
    higher at its peak for it)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
