"""A few short texts counted without building an encoder give tiktoken's counts (core.request.small_count)."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.request import small_count, tokens


@pytest.fixture
def fresh_budget(monkeypatch):
    monkeypatch.setattr(small_count, "_spent", 0)
    monkeypatch.setattr(small_count, "BUDGET_CHARS", 1 << 30)


def reference_count(text: str) -> int:
    return len(tokens.reference_encoding().encode_ordinary(text))


def test_the_sorted_table_is_built_from_the_vendored_vocabulary():
    blob = small_count.table_bytes(tokens.load_ranks(tokens.vocabulary_path()))
    assert hashlib.sha256(blob).hexdigest() == small_count.TABLE_SHA256


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200))
def test_a_short_text_counts_as_tiktoken_counts_it(text):
    small_count._spent = 0
    n = small_count.count(text)
    assert n is None or n == reference_count(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab xyzXYZ'sé東京\n\t  1234!?/.{}\"\u0301\U0001f99c"), max_size=300))
def test_prose_code_and_whitespace_count_as_tiktoken_counts_them(text):
    small_count._spent = 0
    assert small_count.count(text) == reference_count(text)


def test_a_long_text_a_gap_code_point_or_a_surrogate_is_left_to_the_encoder(fresh_budget):
    assert small_count.count("x" * (small_count.SMALL_CHARS + 1)) is None
    assert small_count.count("a\u1acfb") is None  # new in Unicode 17 (core.request.unicode_gap)
    assert small_count.count("x\ud800y") is None
    assert small_count.count("hello world") == 2


def test_past_the_budget_texts_are_left_to_the_encoder(monkeypatch):
    monkeypatch.setattr(small_count, "_spent", small_count.BUDGET_CHARS - 5)
    assert small_count.count("hello") == 1
    assert small_count.count("hello") is None


def test_a_damaged_cached_table_is_built_again(fresh_budget, monkeypatch, tmp_path):
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path))
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2
    path = small_count.cache_file()
    data = bytearray(path.read_bytes())
    data[-3] ^= 1  # one token's bytes changed: it would count otherwise
    path.write_bytes(bytes(data))
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2
    assert hashlib.sha256(path.read_bytes()).hexdigest() == small_count.TABLE_SHA256


def test_counting_a_word_builds_no_encoder():
    code = "from foldscope.core.request import tokens; print(tokens.count_text('hello world'), tokens._encoding is None)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "True"]
