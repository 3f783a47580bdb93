"""Issue 17: a Branch's trace can be left for after its record is shown (load_session's trace_later, then
finish_trace): once finished, the session is the one a plain read gives; every other reader reads as before."""

from __future__ import annotations

import pytest

from foldscope.core.formats import finish_trace, load_session
from foldscope.core.model.session import PENDING_TRACE


def requests_of(session) -> list[tuple]:
    return [(r.index, list(r.view), r.response_id, r.usage, r.at, r.model) for r in session.trace]


def branch_files(corpus_dev):
    return sorted(p for p in (corpus_dev / "lionagi").glob("*.json") if "manifest" not in p.name)


def test_a_branch_read_with_its_trace_later_has_no_requests_until_finished_then_a_plain_reads(corpus_dev):
    files = branch_files(corpus_dev)
    assert files
    for path in files:
        plain = load_session(path)
        later = load_session(path, trace_later=True)
        assert later.trace == [] and PENDING_TRACE in later.caches, path.name
        assert [m.id for m in later.record] == [m.id for m in plain.record] and later.view == plain.view
        assert finish_trace(later) is True
        assert requests_of(later) == requests_of(plain) and requests_of(plain), path.name
        assert later.warnings == plain.warnings
        assert PENDING_TRACE not in later.caches and finish_trace(later) is False  # built once


@pytest.mark.parametrize("folder", ["claude_code", "codex"])
def test_a_reader_that_builds_its_trace_as_it_reads_gives_it_at_once_with_trace_later(corpus_dev, folder):
    path = min((corpus_dev / folder).glob("*.jsonl"), key=lambda p: p.stat().st_size)
    session = load_session(path, trace_later=True)
    assert requests_of(session) == requests_of(load_session(path))
    assert finish_trace(session) is False


def test_a_trace_that_fails_to_build_is_one_read_error_naming_the_file(corpus_dev, tmp_path):
    path = branch_files(corpus_dev)[0]
    session = load_session(path, trace_later=True)

    def broken():
        raise KeyError("response_id")

    session.caches[PENDING_TRACE] = broken
    from foldscope.core.model.session import ReadError

    with pytest.raises(ReadError) as caught:
        finish_trace(session)
    assert str(path) in str(caught.value) and "unexpected content" in str(caught.value)
    assert session.trace == []
