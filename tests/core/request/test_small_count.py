"""A few short texts counted without building an encoder give tiktoken's counts (core.request.small_count)."""

from __future__ import annotations

import functools
import hashlib
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from foldscope.core.request import small_count, tokens, vocabulary


@pytest.fixture
def fresh_budget(monkeypatch):
    monkeypatch.setattr(small_count, "_spent", 0)
    monkeypatch.setattr(small_count, "BUDGET_CHARS", 1 << 30)


def reference_count(text: str) -> int:
    return len(tokens.reference_encoding().encode_ordinary(text))


def test_the_sorted_table_is_built_from_the_vendored_vocabulary():
    blob = small_count.table_bytes(vocabulary.load_ranks(vocabulary.vocabulary_path()))
    assert hashlib.sha256(blob).hexdigest() == small_count.TABLE_SHA256


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200))
@example("\U00018e00/A")  # a letter to regex 2026.9.29 on (Unicode 18), none to tiktoken: 5 tokens counted, not 6
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


def test_both_hashes_are_checked_again_only_when_a_files_stamp_changed(fresh_budget, monkeypatch, tmp_path):
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path))
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2  # built
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2  # mapped, both hashes checked, the stamp written
    hashed = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda *a: hashed.append("table") or real(*a))
    checked = vocabulary.checked
    monkeypatch.setattr(vocabulary, "checked", lambda *a: hashed.append("vocabulary") or checked(*a))
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2
    assert hashed == []  # unchanged since their check: the stamp stands for it
    stamp = small_count._stamp_file(small_count.cache_file())
    stamp.write_text(stamp.read_text() + "0", encoding="ascii")  # as if the table or the vocabulary had changed
    monkeypatch.setattr(small_count, "_table", None)
    assert small_count.count("hello world") == 2
    assert sorted(hashed) == ["table", "vocabulary"]


def test_counting_a_word_builds_no_encoder():
    code = "from foldscope.core.request import tokens; print(tokens.count_text('hello world'), tokens._encoding is None)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "True"]


def test_every_dev_corpus_text_counts_here_as_tiktoken_counts_it_or_is_left_to_the_encoder(corpus_dev, fresh_budget):
    from tests.core.request.test_fast_counter import corpus_texts

    texts = [t for t in corpus_texts(corpus_dev) if len(t) <= small_count.SMALL_CHARS]
    assert len(texts) > 1000
    counted = differ = 0
    for text in texts:
        n = small_count.count(text)
        if n is not None:
            counted += 1
            differ += n != reference_count(text)
    assert differ == 0
    assert counted > 0.9 * len(texts)


def _both_splits():
    import re

    small_count._load()
    return small_count._pattern.findall, re.compile(small_count.ASCII_PATTERN).findall


def test_every_ascii_text_of_up_to_two_characters_splits_by_the_re_module_as_by_the_pattern():
    by_pattern, by_ascii = _both_splits()
    texts = [chr(a) + chr(b) for a in range(128) for b in range(128)] + [chr(a) for a in range(128)]
    assert [by_ascii(t) for t in texts] == [by_pattern(t) for t in texts]


# The characters where the pattern's branches meet: each class's edges, the suffixes' letters in either case, the
# white space the two modules' \s disagree on (U+001C to U+001F), slashes and line ends after punctuation.
EDGES = "aAzZsStTrReEvVmMlLdDkK09'\" \t\n\r\x0b\x0c\x1c\x1f/.!_@`[{~\x00\x7f"


def test_an_ascii_text_of_three_characters_where_the_branches_meet_splits_by_the_re_module_as_by_the_pattern():
    by_pattern, by_ascii = _both_splits()
    texts = [a + b + c for a in EDGES for b in EDGES for c in EDGES]
    assert [by_ascii(t) for t in texts] == [by_pattern(t) for t in texts]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(alphabet=st.characters(max_codepoint=127), max_size=120), st.text(alphabet=EDGES, max_size=120)))
def test_an_ascii_text_splits_by_the_re_module_as_by_the_pattern(text):
    by_pattern, by_ascii = _both_splits()
    assert by_ascii(text) == by_pattern(text)


def test_a_piece_longer_than_the_merge_takes_is_left_to_the_encoder(fresh_budget):
    assert small_count.count("word " + "x" * (small_count.PIECE_BYTES + 1)) is None
    just_within = "word " + "\u00e9" * (small_count.PIECE_BYTES // 2 - 1)  # " ééé…": one piece of PIECE_BYTES - 1
    assert small_count.count(just_within) == reference_count(just_within)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=300))
def test_the_merge_leaves_as_many_tokens_as_tiktokens_merge_of_any_bytes(data):
    from tiktoken._educational import bpe_encode  # tiktoken's merge written out in Python: the reference

    small_count._load()
    assert small_count._merged(data, small_count._rank) == len(bpe_encode(_ranks(), data, visualise=None))


@functools.cache
def _ranks() -> dict[bytes, int]:
    return vocabulary.load_ranks(vocabulary.vocabulary_path())


def test_a_small_file_is_counted_without_an_encoder_and_a_large_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(small_count, "BUDGET_CHARS", 1 << 16)  # as a process starts (an earlier test may have raised it)
    large = tmp_path / "large.jsonl"
    large.write_bytes(b"x" * (tokens.SMALL_INPUT_BYTES + 1))
    assert tokens.expect(large) is False and small_count.BUDGET_CHARS < tokens.SMALL_INPUT_CHARS
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"x" * 10)
    assert tokens.expect(small) is True and small_count.BUDGET_CHARS == tokens.SMALL_INPUT_CHARS
    assert tokens.expect(tmp_path / "missing.jsonl") is False


def test_inspect_of_a_small_dev_file_builds_no_encoder_and_counts_what_the_encoder_counts(corpus_dev, tmp_path):
    path = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    code = (
        "import sys, io, json, contextlib\n"
        "from foldscope.core.cli import inspect_early\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out): inspect_early.main(['inspect', '--json', sys.argv[1]])\n"
        "from foldscope.core.request import tokens\n"
        "facts = json.loads(out.getvalue())\n"
        "print(facts['record_size']['tokens'], facts['view_size']['tokens'], tokens._encoding is None, tokens._helper is None)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    record, view, no_encoder, no_helper = done.stdout.split()
    assert (no_encoder, no_helper) == ("True", "True")
    from foldscope.core.cli.basic import summarise
    from foldscope.core.formats import load_session

    session = load_session(str(path))
    tokens._local()  # counted by the encoder this time
    facts = summarise(session)
    assert (int(record), int(view)) == (facts["record_size"]["tokens"], facts["view_size"]["tokens"])


def test_the_choice_of_the_small_path_and_a_build_after_it_are_said_on_the_tokens_logger(tmp_path, monkeypatch, caplog):
    import logging

    monkeypatch.setattr(small_count, "BUDGET_CHARS", 1 << 16)
    monkeypatch.setattr(small_count, "_spent", 0)
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"x" * 10)
    with caplog.at_level(logging.INFO, logger=tokens.__name__):
        tokens.expect(small)
        assert small_count.count("hello world") == 2
        monkeypatch.setattr(tokens, "build_fast", lambda: "built")
        monkeypatch.setattr(tokens, "build_encoding", lambda: "built")
        assert tokens._build() == "built"
    said = [r.getMessage() for r in caplog.records if r.name == tokens.__name__]
    assert any("small input: counted without building an encoder" in line for line in said), said
    assert any("encoder built after 11 characters counted without one" in line for line in said), said
