"""A text on one line: the collapsed whole's start, read only as far as it shows."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.one_line import collapsed_start, one_line

_SPACES = " \t\n\u00a0\u2003"


@given(st.text(alphabet=_SPACES + "ab…", max_size=2_000), st.integers(1, 300))
def test_one_line_is_the_collapsed_text_whole_or_cut_with_an_ellipsis(text, limit):
    flat = " ".join(text.split())
    assert one_line(text, limit) == (flat if len(flat) <= limit else flat[: limit - 1] + "…")


def test_a_preview_of_a_huge_text_reads_only_its_start():
    """`" ".join(text.split())` of a 20 MB text of words built a string per word (about ten times the text) to show
    sixty characters of it: `view` of one pasted log peaked at 771 MiB."""
    text = "word " * 4_000_000
    tracemalloc.start()
    try:
        assert collapsed_start(text, 61) == ("word " * 13)[:61]
        assert one_line(text, 60).endswith("…")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000, peak
