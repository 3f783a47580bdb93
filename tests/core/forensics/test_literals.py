"""Literals of a dropped span: paths, identifiers, numbers and URLs, and which a summary keeps."""

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


def test_a_huge_span_is_bounded():
    words = " ".join(f"name_{i}" for i in range(MAX_LITERALS + 100))
    assert len(literals([words])) == MAX_LITERALS
