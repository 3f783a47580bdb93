"""Placing cache marks changes nothing but the marks (issue 41, finding 1): the same blocks, order and count, on every format."""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.request.compile import canonical, compile_request, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.first_round import decide_first_round, request_options
from foldscope.core.request.marks import cache_control, payload_marks, strip_marks
from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import build_trace
from foldscope.core.request.trace_measure import measure_trace
from tests.conftest import CORPUS_DEV

OFF = Policy(prompt_caching=False, max_input_tokens=200_000)
ON = Policy(prompt_caching=True, max_input_tokens=200_000)
READABLE = ("*.jsonl", "*.branch.json", "branch_*.json")


def dev_files() -> list[str]:
    """Every session file of the dev corpus, relative to it (a run manifest is not a session: it is left out)."""
    if not CORPUS_DEV.is_dir():
        return []
    found = {p for pattern in READABLE for p in CORPUS_DEV.rglob(pattern)}
    return sorted(str(p.relative_to(CORPUS_DEV)) for p in found)


@functools.cache
def loaded(name: str) -> tuple[Session, tuple[tuple[str, ...], ...]]:
    """A dev file's session (its first round decided under ON, as a caching request's compile decides it) and its
    recorded requests' views. Cached: the hypothesis examples below draw views of the same files."""
    session = load_session(str(CORPUS_DEV / name))
    views = tuple(tuple(r.view) for r in build_trace(session))
    decide_first_round(session, ON)
    return session, views


def marks_tokens(payload: dict) -> int:
    """What the marks add to the counted text: each `cache_control` key with its value, alone."""
    total = 0
    for mark in payload_marks(payload):
        total += count_text('cache_control":' + canonical(cache_control(mark["lifetime"])) + ',"')
    return total


def block_types(payload: dict) -> list[str]:
    return [b["type"] for m in payload["messages"] for b in m["content"]]


def test_caching_on_a_claude_code_session_compiles_its_native_tool_use_and_tool_result_blocks(corpus_dev):
    """The issue's case: with caching on, calls and results stayed `ToolCalls:`/`ToolResults:` YAML text."""
    session = load_session(corpus_dev / "claude_code" / "tool_heavy.jsonl")
    on, off = Measure(session, ON), Measure(session, OFF)
    requests = len(build_trace(session))
    assert requests > 1
    for k in range(requests):
        with_marks, without = on.request_payload(k), off.request_payload(k)
        assert payload_marks(with_marks), f"request {k} carries no mark with caching on"
        assert strip_marks(with_marks) == without, f"request {k}: caching changed more than the marks"
        assert "ToolResults:" not in counted_text(with_marks) and "ToolCalls:" not in counted_text(with_marks)
    last = on.request_payload(requests - 1)
    assert block_types(last).count("tool_use") == block_types(last).count("tool_result") == 4


@pytest.mark.parametrize(
    "name",
    [
        "claude_code/session-196820da.jsonl",
        "claude_code/extracted-dd381a75.jsonl",
        "claude_code/subagent.jsonl",
        "pi/pi-mono_large-session.jsonl",
    ],
)
def test_caching_moves_no_figure_of_the_trace_but_by_the_marks_own_tokens(corpus_dev, name):
    """Counted, the unseen head, the scale and the over-ceiling flags are caching off's, the marks' tokens aside;
    and each message's part of the composition is the same but for the marks its block carries."""
    off = measure_trace(load_session(corpus_dev / name), OFF)
    on = measure_trace(load_session(corpus_dev / name), ON)
    session = load_session(corpus_dev / name)
    measure_on = Measure(session, ON)
    assert len(on.rows) == len(off.rows) > 1
    for k, (a, b) in enumerate(zip(on.rows, off.rows)):
        marks = marks_tokens(measure_on.request_payload(k))
        assert 0 <= a.own_count - b.own_count <= marks, f"request {k}"
        assert a.over_ceiling == b.over_ceiling, f"request {k}: {a.estimate} with caching, {b.estimate} without"
    assert abs(on.unseen_head - off.unseen_head) <= 4 * count_text('cache_control":{"ttl":"1h","type":"ephemeral"},"')
    assert on.scale == pytest.approx(off.scale, rel=0.01)


def test_a_messages_part_is_the_same_with_caching_on(corpus_dev):
    """Under the envelope a round's results were one block charged to its first result (a 75-character Write
    result shown as thousands of tokens). Each message's part is its own block's, the same with caching on or off,
    and the marks' own tokens are framing (parameters of the request, not anyone's content)."""
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    on, off = Measure(session, ON), Measure(session, OFF)
    last = len(build_trace(session)) - 1
    parts_on, parts_off = on.request_parts(last), off.request_parts(last)
    assert [(m.id, n) for m, n in parts_on.messages] == [(m.id, n) for m, n in parts_off.messages]
    assert (parts_on.system, parts_on.tools) == (parts_off.system, parts_off.tools)
    assert parts_on.framing - parts_off.framing == marks_tokens(on.request_payload(last)) > 0


@pytest.mark.parametrize("name", dev_files() or ["(no dev corpus)"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_marks_change_nothing_but_the_marks_on_random_views_of_every_dev_file(corpus_dev, name, data):
    """For each dev file and random views (a recorded request's view with messages dropped), the request compiled
    with marks is the one without once `cache_control` is removed, and their counts differ by the marks' own tokens."""
    session, recorded = loaded(name)
    if not recorded:
        pytest.skip(f"{name} records no request")
    view_ids = data.draw(st.sampled_from(recorded), label="request's view")
    keep = data.draw(st.lists(st.integers(0, 5), min_size=len(view_ids), max_size=len(view_ids)), label="kept")
    view = [session.record.get(i) for i, k in zip(view_ids, keep) if k > 0 and i in session.record]
    options = request_options(session, ON)
    with_marks = compile_request(view, **options)
    without = compile_request(view, **request_options(session, OFF))
    assert strip_marks(with_marks) == without
    assert len(payload_marks(with_marks)) <= 4
    counted_on = counters(name, True).count(view, **options)
    counted_off = counters(name, False).count(view, **request_options(session, OFF))
    assert 0 <= counted_on - counted_off <= marks_tokens(with_marks)


@functools.cache
def counters(name: str, caching: bool) -> Counter:
    """One counter per file and policy, kept across examples: its memo makes the next view's count cheap."""
    return Counter()


def test_the_dev_files_are_all_in_the_property_test(corpus_dev):
    names = dev_files()
    assert any(n.startswith("lionagi/") for n in names) and any(n.startswith("claude_code/") for n in names)
    assert any(n.startswith("codex/") for n in names) and any(n.startswith("pi/") for n in names)
    assert not any("run_manifest" in n for n in names)
