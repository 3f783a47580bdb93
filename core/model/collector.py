"""How often Python's cyclic garbage collector runs while foldscope works: less often than its default.

A session of 50,000 messages keeps millions of small objects alive (messages, their parts, the counter's memo and
layouts), and each of the collector's passes over the older ones walks them all. Almost nothing foldscope makes is
cyclic (reference counting frees it), so with the default thresholds (700, 10, 10) the collector spent about a
fifth of a 50k-message replay finding no garbage (bench/bench_replay_scale.py; docs/performance.md, Scale).
Collecting the youngest generation after 50,000 new objects instead of 700 keeps cyclic garbage bounded (a few
MB at most) and cut that replay's CPU time by about 16%.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 10)  # gen0 after 50,000 new objects; gen1 after 20 of those; gen2 as Python's default


def tune() -> None:
    """Set the collector's thresholds for this process (the CLI's and the GUI's entry points call it first)."""
    gc.set_threshold(*THRESHOLDS)
