"""Compactions explained: what left the view, which literals the summary lost, what came back, the summariser's
cost, and payback."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foldscope.core.forensics.compactions import compaction_report
from foldscope.core.forensics.payback import paid_back_after, payback
from foldscope.core.formats import load_session
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session import Usage
from foldscope.core.request.tokens import count_text
from tests.core.forensics.traces import Trace, write_claude_code

T0 = 1_800_000_000.0
PATHS = [f"/repo/src/module_{i}.py" for i in range(5)]


def compacted(summary: str, kind_metadata: dict | None = None):
    """Five reads of five paths, then a note whose text is `summary`, then the agent reads module_1.py again."""
    t = Trace()
    system = t.text("system", 3000, 1)
    task = t.add("instruction", {"instruction": "Tidy the loader."})
    view = [system, task]
    for i, path in enumerate(PATHS):
        t.request(view, T0 + 10 * i, None)
        view = [*view, t.add("assistant", {"assistant_response": "Reading the next file."}),
                *t.call("Read", {"file_path": path}, "plain words only " * (150 + 40 * i))]
    t.request(view, T0 + 50, None)
    note = t.add("note", {"assistant_response": summary},
                 kind_metadata if kind_metadata is not None else {"compaction": True, "context_first_index": 1})
    after = [system, note]
    t.request(after, T0 + 60, None)
    again = [t.add("assistant", {"assistant_response": "Reading it again."}),
             *t.call("Read", {"file_path": PATHS[1]}, "plain words only " * 190)]
    t.request([*after, *again], T0 + 70, None)
    t.request([*after, *again, t.add("assistant", {"assistant_response": "Done."})], T0 + 80, None)
    return t.session(view=[*after, *again]), again


def test_a_summary_keeping_two_of_five_paths_reports_the_three_lost():
    session, _ = compacted(f"We read {PATHS[0]} and {PATHS[3]}; the loader keeps its profile.")
    report = compaction_report(session)
    [c] = report.compactions
    assert c.request == 6 and c.kind == "compaction"
    paths = c.literals.as_dict()["by_kind"]["path"]
    assert paths == {"kept": 2, "lost": 3}
    assert [x.text for x in c.literals.lost if x.kind == "path"] == [PATHS[1], PATHS[2], PATHS[4]]
    assert c.dropped["results_by_tool"]["Read"]["results"] == 5 and c.dropped["paths"] == PATHS
    assert c.dropped["by_kind"] == {"instruction": 1, "assistant": 5, "action_request": 5, "action_response": 5}


def test_a_path_read_again_after_the_compaction_is_refetched_with_its_tokens():
    session, again = compacted("Nothing kept.")
    report = compaction_report(session)
    [c] = report.compactions
    [r] = c.refetched
    assert (r.tool, r.what, r.request) == ("Read", PATHS[1], 7)
    # the result's part of the request's count: its text and the framing that carries it
    assert r.tokens == report.cache.tokens[again[2].id] >= count_text(again[2].text) > 0
    assert r.index == session.record.index_of(again[1].id)


def test_a_fold_of_our_own_costs_no_summariser_call():
    session, _ = compacted("brief", {"context_first_index": 1})
    [c] = compaction_report(session).compactions
    assert c.kind == "fold" and c.summariser_cost_usd == 0.0


def test_a_fold_whose_later_requests_save_more_than_it_cost_pays_back_at_the_right_request():
    prices = lookup_prices("claude-sonnet-4-5")
    sizes = [10_000, 11_000, 12_000, 13_000, 14_000]
    times = [T0 + 10 * i for i in range(1, 6)]
    # By hand, at $0.30 read and $3.75 write per million: with the fold the first request writes 10,000
    # ($0.0375), then each reads the one before and writes 1,000; without it each reads ~100,000 ($0.030)
    # and writes 1,000. Savings: -0.0075, then 0.027 a request; spent 0.05: -0.0575, -0.0305, -0.0035, +0.0235.
    p = payback(100_000, sizes, times, prices, summariser_usd=0.05, before_at=T0)
    assert p.with_usd[0] == pytest.approx(0.0375) and p.without_usd[0] == pytest.approx(0.030)
    assert p.requests == 4
    assert payback(100_000, sizes[:3], times[:3], prices, summariser_usd=0.05, before_at=T0).requests is None


def test_a_fold_that_saves_less_than_it_cost_never_pays_back():
    prices = lookup_prices("claude-sonnet-4-5")
    sizes = [10_000 + 500 * i for i in range(20)]
    p = payback(12_000, sizes, [T0 + 10 * i for i in range(1, 21)], prices, summariser_usd=0.05, before_at=T0)
    assert p.requests is None and p.saved_usd < 0.05


def test_paid_back_after_counts_from_the_first_request():
    assert paid_back_after([1.0], 1.0) == 1
    assert paid_back_after([0.4, 0.4, 0.4], 1.0) == 3
    assert paid_back_after([0.4, 0.4], 1.0) is None


def test_compaction_report_payback_on_a_constructed_session():
    session, _ = compacted("short")
    [c] = compaction_report(session).compactions
    assert c.payback is not None and len(c.payback.with_usd) == 3  # requests 6, 7, 8 follow it


def test_the_summarisers_cost_is_its_own_file_priced(tmp_path):
    session = load_session(write_claude_code(tmp_path))
    [c] = compaction_report(session).compactions
    assert c.before == 12606 and c.request == 2
    # claude-sonnet-4-5: $3 input, $0.30 read, $3.75 write (5m), $15 output per million
    assert c.summariser_cost_usd == pytest.approx((5 * 3 + 12000 * 0.30 + 300 * 3.75 + 900 * 15) / 1e6)
    assert "agent-acompact-7f3a" in c.summariser_why
    assert [x.text for x in c.literals.lost if x.kind == "path"] == ["/repo/b.py"]
    assert c.rewrite_cost_usd is not None


def test_the_dev_corpus_compaction_undone_by_a_rewind_is_not_reported(corpus_dev):
    # extracted-dd381a75 compacts at request 26, then rewinds to the path before it: no request carried the note.
    session = load_session(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    events = [e for e in session.events if e.get("kind") == "compaction"]
    assert events and not any(events[0]["note_id"] in r.view for r in session.trace)
    assert compaction_report(session).compactions == []


def test_a_request_with_a_recorded_usage_keeps_its_figures():
    session, _ = compacted("x")
    session.trace = [replace(r, usage=Usage(cache_write=100 * (k + 1))) for k, r in enumerate(session.trace)]
    report = compaction_report(session)
    assert report.compactions[0].after == session.trace[6].usage.reported_input
