"""A brief's prefixes counted from its whole count give what counting each prefix whole gives."""

import functools

from hypothesis import given, settings
from hypothesis import strategies as hs

from foldscope.core.replay.brief_counts import BriefCounts
from foldscope.core.replay.strategies import FILL, MARKER, brief, sized_brief
from foldscope.core.request.tokens import count_text
from tests.core.replay_sessions import tool_session

# Newlines before and after punctuation, "/" (which the punctuation branch takes after its newlines), spaces, tabs,
# carriage returns, digits, contractions and letters of other scripts: where o200k's pre-tokens may cross a newline.
_ALPHABET = "ab-\n\n\r ./'\t1é字)"


@settings(max_examples=400)
@given(hs.text(alphabet=_ALPHABET, max_size=120), hs.data())
def test_a_prefix_counts_what_counting_it_whole_gives(text, data):
    counts = BriefCounts(text)
    length = data.draw(hs.integers(0, len(text)))
    assert counts.prefix(length) == count_text(text[:length])
    assert counts.prefix(len(text)) == count_text(text)


def test_every_prefix_of_a_brief_counts_what_counting_it_whole_gives():
    s = _forty_rounds()
    text = brief(s, list(s.record), 6_000)
    counts = BriefCounts(text)
    assert text.count("\n-") > 30  # the brief's own lines: many pieces
    assert all(counts.prefix(n) == count_text(text[:n]) for n in range(0, len(text) + 1, 7))


@functools.cache
def _forty_rounds():
    return tool_session(40)


def _sized_counting_each_cut_whole(session, span, tokens):
    """sized_brief as written before its cuts were counted from the brief's whole count: each cut counted whole."""
    text = brief(session, span, max(64, tokens * 4))
    n = count_text(text)
    while n > tokens and len(text) > 64:
        text = text[: max(64, len(text) * tokens // n)]
        n = count_text(text)
    gap = tokens - n - count_text(MARKER)
    return text + MARKER + FILL * gap if gap > 0 else text


@given(hs.integers(0, 39), hs.integers(1, 40), hs.integers(1, 1_500))
def test_a_sized_brief_is_the_one_counting_each_cut_whole_gives(start, length, tokens):
    s = _forty_rounds()
    span = list(s.record)[start : start + length]
    assert sized_brief(s, span, tokens) == _sized_counting_each_cut_whole(s, span, tokens)
