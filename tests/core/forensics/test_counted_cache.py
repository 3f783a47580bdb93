"""The cache report counted by the trace measure (a child may count ahead, as for `requests`) is the cache report's
own pass: `cache` and `compactions` read it."""

from __future__ import annotations

from foldscope.core.forensics.cache_report import cache_report, counted_cache_report
from foldscope.core.formats import load_session
from foldscope.core.model.launch import session_policy
from tests.core.counting_child import counted_here_with_a_child


def _sessions(corpus_dev):
    for p in sorted(corpus_dev.rglob("*.json*")):
        if "subagents" in p.parts or "manifest" in p.name or p.suffix not in (".jsonl", ".json"):
            continue
        yield p, load_session(p)


def test_the_cache_report_from_the_trace_measure_is_the_cache_reports_own(corpus_dev):
    """Every dev file's cache report, by the trace measure and by the cache report's own pass: equal, field by field."""
    seen = 0
    for path, session in _sessions(corpus_dev):
        policy = session_policy(session)
        assert counted_cache_report(session, policy).as_dict() == cache_report(session, policy).as_dict(), path.name
        seen += bool(session.trace)
    assert seen >= 10  # the dev corpus's files with requests were read, not skipped


def test_the_cache_command_counts_through_the_trace_measure(corpus_dev, monkeypatch):
    """`cache`'s one-session path asks the trace measure for its count (where a child may count ahead)."""
    from foldscope.core.forensics import cache_report as cache_report_module
    from foldscope.core.forensics import many_sessions

    asked = []
    real = cache_report_module.counted_cache_report
    monkeypatch.setattr(cache_report_module, "counted_cache_report", lambda *a, **k: asked.append(1) or real(*a, **k))
    path = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    many_sessions.cache_of(load_session(path))
    assert asked == [1]


def test_compactions_have_their_summaries_counted_by_the_counts_child_never_here(tmp_path, monkeypatch):
    """`compactions` hands its compactions' summaries (the summariser modelled counts them after the count) to the
    count's own child as the last request is heard (Counter.count_ahead), as the report does, so its process builds
    no encoder for them alone; the report is the one counted in-line."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from fresh_session import generate

    from foldscope.core.forensics import literals_ahead
    from foldscope.core.forensics.compactions import compaction_report, find_compactions

    path = tmp_path / "s.jsonl"
    generate(path, 1500)
    monkeypatch.setattr(literals_ahead, "may_fork", lambda: False)  # the checks in-line: the counts child alone forked
    summaries = {note.text for _, note in find_compactions(load_session(path))}
    assert summaries
    expected = compaction_report(load_session(path)).as_dict()  # the tests' FOLDSCOPE_COUNTING: counted here
    counted_here = counted_here_with_a_child(monkeypatch)
    assert compaction_report(load_session(path)).as_dict() == expected
    assert not summaries & set(counted_here)
