"""unicode_gap.in_gap: the coarse class searched first finds a gap code point (or a lone surrogate) exactly where the gap does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.request import unicode_gap

RANGES = [(0xD800, 0xDFFF), *unicode_gap.GAP]


def reference(text: str) -> bool:
    return any(lo <= ord(c) <= hi for c in text for lo, hi in RANGES)


# Every range's ends and their neighbours, the edges of the 256-code-point blocks about them, and text about them
# (ASCII, CJK, emoji): where a coarse class that left a range out, or a search from the wrong place, would differ.
EDGES = sorted({c for lo, hi in RANGES for c in (lo - 1, lo, hi, hi + 1, lo & ~0xFF, (hi | 0xFF) + 1) if 0 <= c <= 0x10FFFF})
CHARACTERS = st.one_of(
    st.sampled_from([chr(c) for c in EDGES]),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1F64F),
    st.characters(),
)


@given(st.lists(CHARACTERS, max_size=40).map("".join))
def test_the_gap_is_found_in_a_text_exactly_when_it_holds_a_gap_code_point_or_a_lone_surrogate(text):
    assert unicode_gap.in_gap(text) is reference(text)


def test_every_gap_code_point_is_found_after_text_the_coarse_class_also_finds():
    # A text whose first coarse hit is not in the gap (an emoji, U+0800) still finds the gap's code point after it.
    for lo, hi in RANGES:
        for c in {lo, hi}:
            assert unicode_gap.in_gap("漢字 😀 \u0800 " + chr(c) + " end"), hex(c)
    assert not unicode_gap.in_gap("漢字 😀 \u0800 \ua7ff end")
