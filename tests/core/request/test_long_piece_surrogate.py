"""A text holding a long piece and half a surrogate pair counts as tiktoken counts it, when tiktoken counts."""

from __future__ import annotations

import pytest

from foldscope.core.request import long_pieces, tokens


@pytest.mark.parametrize("where", ["after", "before", "inside"])
def test_a_long_piece_beside_a_lone_surrogate_counts_as_tiktoken_counts_it(where):
    # Found by review7: with tiktoken counting (FOLDSCOPE_TOKENIZER=tiktoken, or no quicktok wheel), a long piece is
    # merged in windows (long_pieces), whose split encoded each piece strictly: one huge message holding half an emoji
    # ended `inspect` in a UnicodeEncodeError traceback. tiktoken makes each lone surrogate U+FFFD first; so do the windows.
    run = "a" * (long_pieces.LONG_PIECE + 10)
    text = {"after": run + "\ud800 b", "before": "x \udc00" + run, "inside": run + "\ud83d" + run + " \ud83d\ude00"}[where]
    enc = tokens.build_encoding()
    want = len(enc.encode_ordinary(text))  # tiktoken's own, its repair made on the whole text
    assert long_pieces.count_ordinary(enc, text) == want
    assert long_pieces.encode_ordinary(enc, text) == enc.encode_ordinary(text)
