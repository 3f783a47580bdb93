"""Literals of a dropped span: paths, identifiers, numbers and URLs, and which a summary keeps."""

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.forensics.literals import MAX_LITERALS, check, literals

TEXT = (
    "Read /work/core/request/prefix.py and src/app.ts, then measure_requests(x) and CacheReport, fooBar; "
    "27934 tokens (3.14 s) at https://example.com/a?b=1. And/or e.g. x.y README.md"
)


def test_each_kind_is_found_once_in_order_of_first_appearance():
    found = [(x.kind, x.text) for x in literals([TEXT, TEXT])]
    assert found == [
        ("path", "/work/core/request/prefix.py"),
        ("path", "src/app.ts"),
        ("identifier", "measure_requests"),
        ("identifier", "CacheReport"),
        ("identifier", "fooBar"),
        ("number", "27934"),
        ("number", "3.14"),
        ("url", "https://example.com/a?b=1"),
        ("path", "README.md"),
    ]


def test_line_numbers_of_a_file_read_are_layout_not_literals():
    assert literals(["     1→import os\n   212→x = 1\n"]) == []


def test_a_summary_keeps_what_it_repeats_exactly():
    result = check([TEXT], "We changed /work/core/request/prefix.py; 27934 tokens.")
    assert {x.text for x in result.kept} == {"/work/core/request/prefix.py", "27934"}
    assert len(result.lost) == 7 and result.as_dict()["lost"] == 7


def test_the_lost_listed_are_the_first_lost_in_order_with_their_kinds():
    """as_dict lists the first `listed` literals the summary lost, in order, each with its kind (as `lost` has them)."""
    result = check([TEXT], "We changed /work/core/request/prefix.py; 27934 tokens.")
    lost = [{"kind": x.kind, "text": x.text} for x in result.lost]
    assert lost[0] == {"kind": "path", "text": "src/app.ts"} and len(lost) == 7
    assert result.as_dict()["lost_list"] == lost
    assert result.as_dict(listed=3)["lost_list"] == lost[:3]
    assert check([], "").as_dict()["lost_list"] == []


def test_a_huge_span_is_bounded():
    words = " ".join(f"name_{i}" for i in range(MAX_LITERALS + 100))
    assert len(literals([words])) == MAX_LITERALS


# The reading literals() must equal: each text's distinct words, each matched alone, in order (the rule as first
# written; literals() matches the new candidate words of a text joined by newlines in one call).
def _word_by_word(texts):
    from foldscope.core.forensics import literals as lit

    seen, out = set(), []
    for text in texts:
        if "→" in text or "\t" in text:
            text = lit._LINE_NUMBERS.sub("", text)
        for word in dict.fromkeys(text.split()):
            for match in lit._LITERAL.finditer(word):
                kind, found = match.lastgroup, match.group()
                if kind == "path" and not lit._looks_like_path(found):
                    continue
                found = found.rstrip(lit._TRAILING)
                if len(found) >= 2 and found not in seen and len(out) < MAX_LITERALS:
                    seen.add(found)
                    out.append((kind, found))
    return out


_PIECES = st.sampled_from(
    ["/", ".", "_", "-", ":", "~", "@", "+", "'", '"', "(", ")", "`", "→", "\t", "\n", " ", "\u00a0", "\u2003", "\x1c", "\x85",
     "https://", "http://x", "a", "Z", "b", "Cd", "7", "42", "3.14", "é", "ß", "中", "x_y", "fooBar", ".py", "..", ",", "!",
     "²", "٣"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=40).map("".join), max_size=4))
def test_literals_are_the_ones_each_word_matched_alone_gives(texts):
    assert [(x.kind, x.text) for x in literals(texts)] == _word_by_word(texts)


def test_a_word_of_letters_digits_and_underscores_outside_ascii_is_matched_as_the_pattern_matches_it():
    """Words of word characters alone are judged whole, not scanned (core.forensics.literals._found), only where they
    are ASCII: a superscript two is a digit to str.isdigit but not to the pattern's \\d, an Arabic-Indic three to both."""
    texts = ["42² 7²7 ²²²7", "٣٣٣ 1٣3 x_٣ fooBar٣ é_x café_bar", "x_y 123 12 a1_2 _foo 123_abc fooBar FooBar Ab"]
    for text in texts:
        assert [(x.kind, x.text) for x in literals([text])] == _word_by_word([text])
    assert [(x.kind, x.text) for x in literals(texts[2:])] == [("identifier", "x_y"), ("number", "123"), ("identifier", "a1_2"),
                                                             ("identifier", "fooBar"), ("identifier", "FooBar")]  # fmt: skip


def test_literals_of_every_dev_corpus_text_are_the_ones_each_word_matched_alone_gives(corpus_dev):
    import json

    texts = []
    for path in sorted(corpus_dev.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            texts.extend(s for s in _strings(_loads(json)(line)) if len(s) > 1)
    assert texts
    for start in range(0, len(texts), 200):  # spans of 200 texts, each found in its own span as a compaction's
        span = texts[start : start + 200]
        assert [(x.kind, x.text) for x in literals(span)] == _word_by_word(span)


def _loads(json):
    def load(line):
        try:
            return json.loads(line)
        except ValueError:
            return None

    return load


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab_1 ", max_size=300), st.lists(st.text(alphabet="ab_1", min_size=1, max_size=12), max_size=30))
def test_a_literal_is_kept_exactly_when_the_summary_holds_its_text(summary, words):
    result = check([" ".join(words)], summary)
    assert sorted(result.kept + result.lost) == sorted(literals([" ".join(words)]))
    assert all(x.text in summary for x in result.kept) and not any(x.text in summary for x in result.lost)


def test_a_summary_holding_a_literals_ends_but_not_the_whole_of_it_loses_it():
    result = check(["see load_the_config and read_all_rows"], "load_the and the_config; read_all_rows")
    assert [x.text for x in result.lost] == ["load_the_config"] and [x.text for x in result.kept] == ["read_all_rows"]


def test_an_ascii_word_with_no_dot_or_slash_is_judged_a_run_at_a_time_as_the_pattern_finds_it():
    """An ASCII word with no `.` or `/` in it can hold no URL or path: each run of its word characters is judged whole,
    run by run (core.forensics.literals._found); a word with either is still scanned."""
    texts = [
        'foo_bar, len(x_y) "4242": 16)starting_dans are_erticgor(173, `get_it()` fooBar:12 123abc:abc123 12:345',
        "x_y.py a-123 ~/a_b @x_y +123 a+b_c x_y-z 3.14: -4242 path/to_x,",
    ]
    for text in texts:
        assert [(x.kind, x.text) for x in literals([text])] == _word_by_word([text])
    assert [x.text for x in literals(texts[:1])] == ["foo_bar", "x_y", "4242", "starting_dans", "are_erticgor", "173", "get_it",
                                                     "fooBar", "345"]  # fmt: skip


def test_words_scanned_whole_and_words_judged_a_run_at_a_time_keep_their_order_in_one_text():
    """A text's new words are read in one call (core.forensics.literals._READ): a run inside a word with a `.`, `/` or
    a character outside ASCII is the four-way pattern's to find, never judged alone, and the literals keep the words'
    order across both kinds of word."""
    text = "x_y ~/a_b/c.py foo_bar 12_ab.c 4242 café_bar é_x src/x_y2 fooBar,"
    assert [(x.kind, x.text) for x in literals([text])] == _word_by_word([text])
    # src/x_y2 is prose to the path rule (one slash, no extension); its x_y2, judged alone, would be an identifier
    assert [x.text for x in literals([text])] == ["x_y", "~/a_b/c.py", "foo_bar", "4242", "fooBar"]


def test_a_word_whose_dots_are_before_no_word_character_is_judged_a_run_at_a_time_as_the_pattern_finds_it():
    """A `.` before a word character is the four-way pattern's (a number after it or before a word character is none);
    a word whose every `.` is before something else is judged a run at a time (core.forensics.literals._HELD)."""
    text = "2078. x.4242 done. f(x_y). 123..a 5151.) a..b_c 777.,"
    assert [(x.kind, x.text) for x in literals([text])] == _word_by_word([text])
    assert [x.text for x in literals([text])] == ["2078", "x_y", "5151", "b_c", "777"]


# The candidate test and the held line's pattern as first written, with `\d` and classes reaching U+10FFFF: the rules
# literals.py's bitmap-friendly spellings must keep (core.forensics.literals._CANDIDATE, _HELD).
_CANDIDATE_AS_WRITTEN = r"[/._\dA-Z](?:(?<=[a-z][A-Z])|(?<![A-Z]))"
_HELD_AS_WRITTEN = r"(?:[^\n/.\x80-\U0010ffff]++|\.(?![A-Za-z0-9_]))*+(?:[/\x80-\U0010ffff]|\.)"
_WORD_PIECES = st.sampled_from(
    ["/", ".", "_", "-", ":", "a", "z", "A", "Z", "0", "9", "é", "É", "ß", "中", "²", "٣", "５", "𝟗", "\x7f", "\x80", ",", "aB", ".x"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_WORD_PIECES, max_size=12).map("".join))
def test_a_word_is_a_candidate_where_the_rule_as_written_finds_a_mark_in_it(word):
    """A candidate holds a `/`, `.`, `_`, a digit (any script's: `\\d`) or a lower-to-upper step: the class spelled as
    ASCII ranges and beyond ASCII, a digit beyond ASCII told by looking back, finds the words the rule finds."""
    import re

    from foldscope.core.forensics import literals as lit

    assert bool(lit._CANDIDATE.search(word)) == bool(re.search(_CANDIDATE_AS_WRITTEN, word))


def test_a_digit_beyond_ascii_makes_a_candidate_and_a_letter_beyond_it_does_not():
    from foldscope.core.forensics import literals as lit

    assert [w for w in ["٣", "x５", "𝟗", "é", "Éa", "aÉ", "中", "fooBar", "Foo", "FOO"] if lit._CANDIDATE.search(w)] == [
        "٣", "x５", "𝟗", "fooBar"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(_WORD_PIECES, min_size=1, max_size=8).map("".join), max_size=12))
def test_a_line_is_held_where_the_rule_as_written_holds_it(words):
    """A line (a word) is the four-way pattern's to scan where it holds a `/`, a character beyond ASCII or a `.` before a
    word character: the Latin-1 spelling of _HELD holds the lines the first spelling held, so _READ reads the same."""
    import re

    from foldscope.core.forensics import literals as lit

    joined = "\n".join(words)
    as_written = re.compile(lit._READ.pattern.replace(lit._HELD, _HELD_AS_WRITTEN), re.MULTILINE)
    assert lit._HELD != _HELD_AS_WRITTEN
    assert lit._READ.findall(joined) == as_written.findall(joined)


_SUMMARY_PIECES = st.sampled_from(["a", "b", "_", "1", "ab_1", "b_1a", " ", "\t", "\n", "\u00a0", "\x1c", "\u2003", ".", "/x"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_SUMMARY_PIECES, max_size=80).map("".join), st.lists(_SUMMARY_PIECES, max_size=80).map("".join))
def test_a_literal_is_kept_exactly_when_the_summary_holds_it_whatever_whitespace_parts_the_summarys_words(summary, text):
    """The summary's grams are taken inside its words (a literal holds no whitespace): a literal at a word's either end,
    between any of str.split's whitespace, is kept exactly when the summary holds its text."""
    result = check([text], summary)
    assert all(x.text in summary for x in result.kept) and not any(x.text in summary for x in result.lost)
    assert check(["see load_the_config"], "load_the_config\u00a0and").kept_count == 1
    assert check(["see load_the_config"], "x\x1cload_the_config").kept_count == 1


_LITERAL_AS_WRITTEN = (
    r"(?P<url>https?://[^\s\"'<>()\[\]{}`]+)"
    r"|(?P<path>(?<![\w/.:-])(?:~|\.{1,2})?(?:/?[\w@+-][\w.@+-]*)(?:/[\w.@+-]+)+|\b[\w-]+\.[A-Za-z][A-Za-z0-9]{1,4}\b)"
)
_PATH_PIECES = st.sampled_from(
    ["/", ".", "..", "~", "_", "-", "@", "+", ":", "a", "Z", "7", "py", "é", "٣", "x_y", "fooBar", "https://", "\n", " ", "(", ","]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_PATH_PIECES, max_size=30).map("".join))
def test_the_four_way_pattern_matches_what_it_matched_as_first_written(text):
    """A path's runs before a `/` or `.` are possessive in _LITERAL (no character they take is either, so nothing given
    back could let the next step match): every match, its kind and its place, as the pattern as first written gives."""
    import re

    from foldscope.core.forensics import literals as lit

    as_written = re.compile(lit._LITERAL.pattern.replace(lit._LITERAL.pattern.split("|(?P<identifier>")[0], _LITERAL_AS_WRITTEN))
    assert as_written.pattern != lit._LITERAL.pattern
    for each in (text, " a.py x_y.py:3 src/a.b/c ~/x ../a/b foo.bar.baz a-b.md 7.py,x.pyz a.b.c/d https://x/y"):
        found = [(m.lastgroup, m.span()) for m in lit._LITERAL.finditer(each)]
        assert found == [(m.lastgroup, m.span()) for m in as_written.finditer(each)]
