"""The library's search finds a word of a script written without spaces inside a sentence (the index alone cannot)."""

import pytest

from foldscope.core.formats import load_session
from foldscope.core.store.library import Library
from foldscope.core.store.library_search import SCAN_CONTEXT, fts_query, query_terms
from tests.core.store.test_huge_bodies import claude_file

SENTENCES = [
    "这是一个函数的测试，它读取配置文件。",  # Chinese
    "設定ファイルを読み込む関数のテストです。",  # Japanese: kanji and kana
    "설정파일을읽는함수를시험합니다",  # Korean: a word with its particle attached
    "ฟังก์ชันนี้อ่านไฟล์การตั้งค่า",  # Thai
    "the config loader reads FOLDSCOPE_HOME",
    "API函数 and the config 函数 again",
]


@pytest.fixture
def library(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        library.import_session(load_session(claude_file(tmp_path / "s.jsonl", SENTENCES)))
        yield library


def _messages(hits):
    return sorted(SENTENCES.index(text) for text in _texts(hits))


def _texts(hits):
    # A user message at index 2n (each answered by "ok"): its sentence is SENTENCES[n]
    return [SENTENCES[idx // 2] for _, idx, _ in hits]


@pytest.mark.parametrize(("word", "sentence"), [("函数", 0), ("関数", 1), ("함수", 2), ("อ่านไฟล์", 3)])
def test_a_word_of_a_script_without_spaces_is_found_inside_its_sentence(library, word, sentence):
    # The index takes the sentence's run of letters as one word: by the index alone, nothing.
    assert library.conn.execute("SELECT COUNT(*) FROM bodies_fts WHERE bodies_fts MATCH ?", [fts_query(word)]).fetchone()[0] == 0
    assert sentence in _messages(library.search(word))


def test_a_scanned_word_and_an_indexed_word_must_both_be_in_a_hit(library):
    assert _messages(library.search("函数")) == [0, 5]
    assert _messages(library.search("config 函数")) == [5]  # "config" is in 4 and 5, 函数 in 0 and 5
    assert library.search("elephant 函数") == []


def test_a_word_of_punctuation_alone_adds_nothing_to_a_scanned_word(library):
    assert library.search("函数 (") == library.search("函数") != []
    assert library.search("( _ …") == []


def test_a_scanned_word_is_cut_at_its_punctuation_as_the_index_cuts_a_word(library):
    """A sentence's word copied with its punctuation finds what the word alone finds, as an indexed word does."""
    for quoted in ("「函数」", "函数。", "(函数)", "“函数”,"):
        assert library.search(quoted) == library.search("函数") != [], quoted
    assert library.search("(อ่านไฟล์)") == library.search("อ่านไฟล์") != []
    assert query_terms("(อ่านไฟล์)") == ([], ["อ่านไฟล์"])  # Thai's vowel marks kept in the word, not cut at
    assert query_terms("resolve_profile 「API函数」") == (["resolve_profile"], ["api函数"])  # the index's word whole
    assert _messages(library.search("(API函数)")) == [5]
    assert _messages(library.search("config,函数")) == [5]  # a word of the index beside it, cut from it


def test_a_scanned_word_matches_in_any_ascii_case_as_an_indexed_word_does(library):
    assert _messages(library.search("api函数")) == _messages(library.search("API函数")) == [5]
    assert _messages(library.search("foldscope_home")) == [4]


def test_a_scanned_hit_shows_its_word_marked_with_the_text_around_it(library):
    (hit,) = library.search("配置")
    assert hit[2] == "这是一个函数的测试，它读取[配置]文件。"
    long = "前" * (SCAN_CONTEXT + 5) + "函数" + "后" * (SCAN_CONTEXT + 5)
    from foldscope.core.store.library_search import scanned_snippet

    assert scanned_snippet(long, "函数") == "…" + "前" * SCAN_CONTEXT + "[函数]" + "后" * SCAN_CONTEXT + "…"
    assert scanned_snippet("API函数 x", "api函数") == "[API函数] x"  # the text's own case shown
