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
        view = [
            *view,
            t.add("assistant", {"assistant_response": "Reading the next file."}),
            *t.call("Read", {"file_path": path}, "plain words only " * (150 + 40 * i)),
        ]
    t.request(view, T0 + 50, None)
    note = t.add(
        "note",
        {"assistant_response": summary},
        kind_metadata if kind_metadata is not None else {"compaction": True, "context_first_index": 1},
    )
    after = [system, note]
    t.request(after, T0 + 60, None)
    again = [
        t.add("assistant", {"assistant_response": "Reading it again."}),
        *t.call("Read", {"file_path": PATHS[1]}, "plain words only " * 190),
    ]
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


def test_a_compaction_no_request_carried_is_named_with_its_fate_the_rewind_that_left_it(corpus_dev):
    # The same file: the compaction is not one of the requests' compactions, but it is said, with why.
    session = load_session(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    [u] = compaction_report(session).unsent
    assert (u.kind, u.source, u.fate) == ("compaction", "claude_code", "abandoned")
    assert "request 26" in u.why and "line 150 continued from line 144" in u.why
    assert u.before == 46_742 and u.sizes_from.startswith("before: the file's figure")  # compactMetadata.preTokens


def test_the_folds_panel_calls_that_compaction_abandoned_not_landed(corpus_dev):
    from foldscope.core.readout.fold_facts import fold_rows
    from foldscope.core.request.trace import build_trace

    session = load_session(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    views = [r.view for r in build_trace(session)] + [tuple(session.view)]
    [row] = [r for r in fold_rows(session, views, [r.at for r in session.trace]) if r.kind == "compaction"]
    assert row.outcome.startswith("abandoned")


def test_folds_made_after_the_last_request_are_pending_at_the_next_requests_predicted_input(corpus_dev, capsys):
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    report = compaction_report(load_session(path))
    fates = [(report.session.record.index_of(u.note.id), u.fate) for u in report.unsent]
    assert fates == [(20, "superseded"), (21, "superseded"), (22, "superseded"), (23, "pending")]
    assert main(["inspect", str(path), "--json"]) == 0
    # The pending fold's size after is the next request's predicted input, as inspect (and the status bar) say.
    assert report.unsent[-1].after == json.loads(capsys.readouterr().out)["next_predicted"]


def test_every_note_of_every_dev_session_is_a_carried_compaction_or_an_unsent_one_never_both(corpus_dev):
    checked = 0
    for path in sorted(p for p in corpus_dev.rglob("*") if p.is_file() and "subagents" not in p.parts):
        try:
            session = load_session(path)
        except Exception:  # noqa: BLE001 - a file no reader takes is the readers' tests' business
            continue
        notes = [m.id for m in session.record if m.kind == "note"]
        if not notes:
            continue
        report = compaction_report(session)
        carried = [c.note.id for c in report.compactions]
        unsent = [u.note.id for u in report.unsent]
        first = set(session.trace[0].view) if session.trace else set()  # there before the file's first request
        assert not set(carried) & set(unsent), path.name
        assert set(unsent) == set(notes) - set(carried) - first, path.name
        checked += 1
    assert checked >= 2  # the Claude Code compaction and the lionagi folds at least


def test_a_note_the_first_request_already_carried_is_not_unsent():
    t = Trace()
    system = t.text("system", 300, 1)
    note = t.add("note", {"assistant_response": "What came before, in brief."}, {"compaction": True})
    task = t.add("instruction", {"instruction": "Go on."})
    t.request([system, note, task], T0, None)
    t.request([system, note, task, t.add("assistant", {"assistant_response": "Done."})], T0 + 10, None)
    report = compaction_report(t.session())
    assert report.compactions == [] and report.unsent == []
