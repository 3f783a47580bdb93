"""The cache report counted by the trace measure (a child may count ahead, as for `requests`) is the cache report's
own pass: `cache` and `compactions` read it."""

from __future__ import annotations

from foldscope.core.forensics.cache_report import cache_report, counted_cache_report
from foldscope.core.formats import load_session
from foldscope.core.model.launch import session_policy


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
