"""The result bound's projection (Amendment 3): every body fits N with one complete marker, or is refused."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.actions.recovery import ReadResult
from foldscope.core.fold.clip import PREVIEW_LABEL, Body, bodies_of, recovery_text
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.compile import CompileError, compile_request, counted_text, payload_bytes
from foldscope.core.request.count import Counter
from foldscope.core.request.projection import (
    ProjectionRefused,
    _length,
    applied_limit,
    effective_count,
    interval,
    project_output,
    retained_max,
    shortened,
)
from foldscope.core.request.tokens import count_text

MARKER = re.compile(
    r"\n\[\.\.\. ([\d,]+) characters omitted here \(offsets (\d+) to (\d+) of the original, full-record "
    r"index (\d+)\); read them with context\(action=\"read_result\", index=\4, offset=\2, limit=(\d+)\)"
    r"(, then continue from next_offset until offset \3)? \.\.\.\]\n"
)
UNICODE_LINE = "é中😀 naïve – ünïcödé line {n}\n"


def listing(chars: int = 100_045) -> str:
    """A directory listing of exactly `chars` characters with Unicode in every line."""
    text, n = "", 0
    while len(text) < chars:
        text += UNICODE_LINE.format(n=n)
        n += 1
    return text[:chars]


def result(output, mid: str = "r") -> Message:
    return Message(
        mid, "action_response", 1.0, {"function": "bash", "arguments": {"cmd": "ls -R"}, "output": output, "action_request_id": "c"}
    )


def check_body(shown: str, body: Body, index: int, bound: int) -> None:
    """One complete marker; head and tail are the original's, split 3:1, around the interval the marker names."""
    assert len(shown) <= bound
    text = shown[len(PREVIEW_LABEL) :] if body.preview else shown
    if body.preview:
        assert shown.startswith(PREVIEW_LABEL)
    markers = list(MARKER.finditer(text))
    assert len(markers) == 1, "exactly one complete marker"
    m = markers[0]
    omitted, start, end, at, limit = int(m[1].replace(",", "")), int(m[2]), int(m[3]), int(m[4]), int(m[5])
    assert at == index and omitted == end - start and limit == min(omitted, bound, 16_000)
    assert bool(m[6]) == (omitted > limit)
    head, tail = text[: m.start()], text[m.end() :]
    kept = len(head) + len(tail)
    assert len(head) == 3 * kept // 4 and head and tail
    assert (start, end) == interval(body, kept)
    assert head == body.text[: len(head)] and tail == body.text[len(body.text) - len(tail) :]


@pytest.mark.parametrize("bound", [1_024, 4_000, 20_000])
def test_a_100045_character_result_fits_n_including_its_marker(bound):
    original = result(listing())
    output, kept = project_output(original, 7, bound)
    assert isinstance(output, str) and len(output) <= bound
    check_body(output, bodies_of(original)[0], 7, bound)
    assert kept[None] == retained_max(bodies_of(original)[0], 7, bound)


@pytest.mark.parametrize("bound", [1_024, 4_000, 20_000])
def test_mapping_values_strings_long_lists_and_nested_mappings_fit_n_including_label(bound):
    output = {
        "stdout": listing(),
        "files": [f"src/ünï/{i}.py" for i in range(9_000)],
        "tree": {"a": {"b": [listing(3_000)] * 12}},
        "success": True,
        "error": None,
        "small": "ok",
    }
    original = result(output)
    projected, kept = project_output(original, 3, bound)
    assert list(projected) == list(output), "keys and their order are kept"
    assert projected["success"] is True and projected["error"] is None and projected["small"] == "ok"
    bodies = {b.key: b for b in bodies_of(original)}
    for key in ("stdout", "files", "tree"):
        check_body(projected[key], bodies[key], 3, bound)
        assert projected[key].startswith(PREVIEW_LABEL) == (key != "stdout")


def test_an_uncut_value_at_the_boundary_keeps_its_type_and_one_more_character_is_cut():
    bound = 4_000
    at = result({"text": listing(bound), "items": json.loads(json.dumps(list(range(10))))})
    projected, kept = project_output(at, 0, bound)
    assert projected == dict(at.content["output"]) and kept == {}
    over = result(listing(bound + 1))
    projected, kept = project_output(over, 0, bound)
    assert len(projected) <= bound and kept[None] < bound
    assert compile_request([over], record=FullRecord([over]), policy=Policy(tool_result_max_chars=bound))


def test_k_n_is_the_greatest_count_whose_complete_body_fits_measured_not_assumed_monotone():
    body = bodies_of(result(listing()))[0]
    for bound in (1_024, 1_500, 4_000, 9_999):
        k = retained_max(body, 12, bound)
        assert len(shortened(body, 12, k, bound)) <= bound
        assert all(_length(len(body.text), 0, False, 12, j, bound) > bound for j in range(k + 1, bound + 1))
        assert all(len(shortened(body, 12, j, bound)) == _length(len(body.text), 0, False, 12, j, bound) for j in (k, k - 7))


def test_a_copys_allowance_is_applied_to_the_original_and_never_marks_a_marker():
    original = result(listing())
    record = FullRecord([original])
    copy = Message(
        "copy",
        "action_response",
        2.0,
        {"function": "bash", "arguments": {}, "output": "stale"},
        {"clipped_from": "r", "context_clip_kept": 30_000},
    )
    for bound, allowance_wins in ((1_024, False), (40_000, True)):
        content = compile_request([copy], record=record, policy=Policy(tool_result_max_chars=bound))["messages"][0]["content"]
        text = content[0]["text"].split(":\n", 1)[1]  # the orphan copy's body after its call line
        check_body(text, bodies_of(original)[0], 0, bound)
        kept = len(text) - len(MARKER.search(text)[0])
        assert (kept <= 30_000) and (kept == effective_count(bodies_of(original)[0], 0, bound, 30_000))
        assert allowance_wins == (kept > retained_max(bodies_of(original)[0], 0, 1_024))


def test_the_same_original_index_allowance_and_policy_give_the_same_bytes_every_request():
    original = result({"out": listing(), "n": [1, 2]})
    record = FullRecord([original])
    policy = Policy(tool_result_max_chars=4_000)
    first = payload_bytes(compile_request([original], record=record, policy=policy))
    assert all(payload_bytes(compile_request([original], record=record, policy=policy)) == first for _ in range(3))


def test_a_body_that_cannot_fit_head_tail_and_marker_refuses_compilation_naming_the_index():
    body = bodies_of(result(listing(5_000)))[0]
    with pytest.raises(ProjectionRefused):
        effective_count(body, 0, 150)
    original = result(listing(5_000))
    padding = [Message(f"p{i}", "assistant", 0.0, {"assistant_response": "x"}) for i in range(41)]
    record = FullRecord(padding + [original])
    bad = Policy.__new__(Policy)  # a bound under the profile minimum reaches the compiler only by hand
    object.__setattr__(bad, "tool_result_max_chars", 150)
    object.__setattr__(bad, "prompt_caching", None)
    with pytest.raises(CompileError, match="message at index 41"):
        compile_request([original], record=record, policy=bad)


def test_paging_an_omitted_interval_longer_than_16000_under_n_4000_covers_it_exactly():
    from foldscope.core.model.session import Session

    original = result(listing())
    session = Session(FullRecord([original]), ["r"])
    shown, _ = project_output(original, 0, 4_000)
    m = MARKER.search(shown)
    start, end, limit = int(m[2]), int(m[3]), int(m[5])
    assert end - start > 16_000 and limit == 4_000
    pages, offset = [], start
    while offset < end:
        read = ReadResult(0, offset, min(limit, end - offset), max_chars=4_000)
        read.do(session)
        assert read.result["limit"] == applied_limit(min(limit, end - offset), 4_000) <= 4_000
        pages.append(read.result["text"])
        offset = read.result["next_offset"]
    assert "".join(pages) == recovery_text(original)[start:end]
    assert applied_limit(20_000, 4_000) == 4_000 and applied_limit(20_000, None) == 16_000


def test_the_counter_keys_its_memo_by_the_bound_and_counts_exactly_under_it():
    original = result({"out": listing(30_000), "rows": list(range(3_000))})
    msgs = [
        Message("i", "instruction", 0.0, {"instruction": "list"}),
        Message("c", "action_request", 0.5, {"function": "bash", "arguments": {}, "action_response_id": "r"}),
        original,
    ]
    record, counter = FullRecord(msgs), Counter()
    for bound in (None, 20_000, 1_024, 20_000):
        for caching in (False, True):
            policy = Policy(tool_result_max_chars=bound, prompt_caching=caching)
            whole = count_text(counted_text(compile_request(msgs, record=record, policy=policy)))
            assert counter.count(msgs, record=record, policy=policy) == whole


BODY_TEXT = st.text(alphabet=st.sampled_from(list('ab \n"\\é中😀,')), min_size=0, max_size=3_000)


@settings(max_examples=120, deadline=None)
@given(BODY_TEXT, st.integers(1, 3_500), st.integers(0, 10**7), st.integers(0, 10**6), st.booleans())
def test_property_any_body_under_any_n_fits_exactly_with_a_complete_marker_or_is_refused(text, bound, offset, index, preview):
    body = Body(None, text, offset, preview)
    try:
        kept = effective_count(body, index, bound)
    except ProjectionRefused:
        assert len(text) > bound
        assert all(_length(len(text), offset, preview, index, j, bound) > bound for j in range(2, len(text)))
        return
    if kept == len(text):
        assert len(text) <= bound
        return
    shown = shortened(body, index, kept, bound)
    assert len(shown) <= bound
    check_body(shown, body, index, bound)
    assert all(_length(len(text), offset, preview, index, j, bound) > bound for j in range(kept + 1, len(text)))


# -- issue 47: the bound's edges, each named after the statement it proves


@pytest.mark.parametrize("bound", [1_024, 4_000])
def test_amendment_3_a_result_of_exactly_the_bound_stays_whole(bound):
    original = result(listing(bound))
    body = bodies_of(original)[0]
    assert len(body.text) == bound
    assert retained_max(body, 3, bound) == bound  # k_N is the whole body: it fits
    assert effective_count(body, 3, bound) == bound
    assert project_output(original, 3, bound) == (original.content["output"], {})
    copy = Message(
        "copy", "action_response", 2.0, {"function": "bash", "arguments": {}, "output": listing(bound)}, {"clipped_from": "gone"}
    )  # a copy whose original is not at hand: its own body, at the bound
    sent = compile_request([copy], policy=Policy(tool_result_max_chars=bound))["messages"][0]["content"][0]["text"]
    assert sent.endswith(listing(bound))
    assert retained_max(bodies_of(result(listing(bound + 1)))[0], 3, bound) < bound  # one more is shortened


def test_amendment_3_a_shortened_body_keeps_both_its_head_and_its_tail():
    # Under 225 characters a 5,000-character body has room for its marker and one kept character, not two:
    # one character would be a tail with no head, so the body is refused rather than shown without its start.
    body = bodies_of(result(listing(5_000)))[0]
    assert _length(5_000, 0, False, 0, 1, 225) <= 225 < _length(5_000, 0, False, 0, 2, 225)
    with pytest.raises(ProjectionRefused):
        effective_count(body, 0, 225)
    kept = effective_count(body, 0, 226)  # one more character of bound: a head and a tail
    check_body(shortened(body, 0, kept, 226), body, 0, 226)


def test_amendment_2_a_clipped_copy_whose_allowance_equals_its_length_is_whole():
    original = result(listing(3_000))
    record = FullRecord([original])
    body = bodies_of(original)[0]
    assert effective_count(body, 0, 4_000, allowance=3_000) == 3_000
    assert project_output(original, 0, 4_000, {None: 3_000}) == (original.content["output"], {})
    copy = Message(
        "copy",
        "action_response",
        2.0,
        {"function": "bash", "arguments": {}, "output": "stale"},
        {"clipped_from": "r", "context_clip_kept": 3_000},
    )
    text = compile_request([copy], record=record, policy=Policy(tool_result_max_chars=4_000))["messages"][0]["content"][0]["text"]
    assert text.endswith(":\n" + listing(3_000)) and not MARKER.search(text)
    assert effective_count(body, 0, 4_000, allowance=2_999) < 3_000  # one under its length is a cut
