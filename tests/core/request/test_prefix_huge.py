"""The prefix meter measures a huge text's block a slice at a time (prefix.text_body_bytes): the same lengths as rendered."""

from __future__ import annotations

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import Fields, Message
from foldscope.core.request import prefix
from foldscope.core.request.count_step import text_body
from tests.core.request.test_prefix import SETTINGS, test_prefix_meter_equals_whole_payload_divergence_over_random_views

TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | st.text(alphabet='ab"\\\n\t\x01é漢😀 ', max_size=40)


@given(TEXTS, st.integers(1, 7), st.sampled_from(["instruction", "assistant", "system"]))
def test_a_text_blocks_length_measured_in_slices_is_its_rendered_length(text, size, kind):
    field = {"instruction": "instruction", "system": "system_message", "assistant": "assistant_response"}[kind]
    m = Message("m", kind, 0, Fields({field: text}))
    with mock.patch.object(prefix, "SLICE", size):
        assert prefix.text_body_bytes(m) == len(text_body(m).encode("utf-8"))


def test_a_lone_surrogate_is_left_to_the_meters_own_rendering():
    assert prefix.text_body_bytes(Message("m", "assistant", 0, Fields({"assistant_response": "a\ud800b"}))) is None


@SETTINGS
@given(st.data())
def test_the_meter_parts_requests_as_the_whole_payloads_do_with_every_text_measured_in_slices(data):
    with mock.patch.object(prefix, "HUGE_TEXT", 0), mock.patch.object(prefix, "SLICE", 3):
        test_prefix_meter_equals_whole_payload_divergence_over_random_views.hypothesis.inner_test(data)


@given(TEXTS, st.integers(1, 7))
def test_a_bodys_utf8_length_measured_a_slice_at_a_time_is_its_whole_utf8s(text, size):
    from foldscope.core.request import count_step

    with mock.patch.object(count_step, "_HUGE", size):
        assert count_step.body_bytes(text) == len(text.encode("utf-8"))
        assert count_step.body_bytes(text + "\ud800") is None  # a lone surrogate: the meter renders it itself


def test_a_huge_non_ascii_bodys_utf8_length_is_measured_without_its_whole_utf8():
    """The meter's size of a one-piece body of ideographs (count_step.body_bytes, beside its count in the window) encoded it
    whole: 3 bytes an ideograph, 1.5 times its str, beside the text and the tokenizer's tables at the count's peak."""
    import sys
    import tracemalloc

    from foldscope.core.request import count_step

    text = "漢字" * (4 << 20)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        size = count_step.body_bytes(text)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert size == 3 * len(text)
    assert peak < 6 * count_step._HUGE < sys.getsizeof(text), peak  # a slice and its UTF-8: 5 MiB; whole, 24
