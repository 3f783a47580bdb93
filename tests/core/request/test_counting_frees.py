"""A session read, measured and replayed is freed by reference counting: none of it waits for the cycle collector.

A reference cycle among the counters (a counter holding running sums whose value functions held the counter) kept
every message counted alive until Python's cycle collector walked them all: 1.3 s when `inspect` of a million tiny
lines ended (docs/performance.md, Scale). The collector is kept off while a session is read and measured
(core.model.collector), so such a cycle is found only here."""

from __future__ import annotations

import gc
from argparse import Namespace
from pathlib import Path

import pytest

from foldscope.core.cli.basic import summarise
from foldscope.core.cli.options import measure_from_args, read_session
from foldscope.core.replay.lab import cache_rules, run_strategy
from foldscope.core.replay.layouts import Layouts

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo_session.json"
ONE_OF_EACH = [
    "claude_code/session-196820da.jsonl",
    "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "pi/pi-mono_large-session.jsonl",
    "lionagi/branch_v0.36.0_after_context_fold.synthetic.json",
]


def read_measure_and_replay(path: Path) -> None:
    session = read_session(str(path))
    summarise(session)
    measure = measure_from_args(Namespace(), session)
    layouts = Layouts(measure)
    rules = cache_rules(measure)[0]
    for strategy in ("adr", "band", "compaction", "recorded"):
        run_strategy(session, strategy, layouts, None, rules)


def cyclic_garbage_of_foldscope(path: Path) -> list[str]:
    """The foldscope objects the cycle collector finds unreachable once the work on `path` is done and dropped."""
    read_measure_and_replay(path)  # once first: imports and module-level caches made, so only the work's own remain
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        read_measure_and_replay(path)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return sorted({type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("foldscope.")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def test_the_demo_session_is_freed_without_the_cycle_collector():
    assert cyclic_garbage_of_foldscope(DEMO) == []


@pytest.mark.parametrize("name", ONE_OF_EACH)
def test_a_real_session_of_each_format_is_freed_without_the_cycle_collector(corpus_dev, name):
    assert cyclic_garbage_of_foldscope(corpus_dev / name) == []
