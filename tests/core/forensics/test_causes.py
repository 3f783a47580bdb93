"""Cache causes: every written token of a recorded request has one cause, and the parts add up to the bill."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.forensics.cache_report import cache_report
from foldscope.core.forensics.trace_pass import measure_requests
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message, Session, Usage
from foldscope.core.request.prefix import compile_for_prefix
from tests.core.forensics.traces import Trace, rounds

T0 = 1_800_000_000.0


def with_usage(session: Session, usages: list[Usage]) -> Session:
    session.trace = [replace(r, usage=u) for r, u in zip(session.trace, usages)]
    return session


def counted(session: Session) -> list[int]:
    return [m.count_with_head for m in measure_requests(session)]


def two_requests(gap_s: float, one_hour: bool, at: bool = True, **second) -> tuple[Session, list[int]]:
    """Request 1 extends request 0's view after `gap_s`; the provider reads nothing and writes all of it."""
    t = Trace()
    ms = rounds(t, 3)
    t.request(ms[:5], T0 if at else None, None)
    t.request(ms[:8], T0 + gap_s if at else None, None, **second)
    s = t.session()
    c0, c1 = counted(s)
    hour = (lambda n: n) if one_hour else (lambda n: 0)
    return with_usage(s, [Usage(cache_write=c0, cache_write_1h=hour(c0)), Usage(cache_write=c1, cache_write_1h=hour(c1))]), [c0, c1]


def causes_of(session: Session) -> list[dict[str, int]]:
    return [r.causes.causes for r in cache_report(session).rows]


def test_a_seven_minute_gap_expires_a_five_minute_mark():
    s, (c0, c1) = two_requests(7 * 60, one_hour=False)
    assert causes_of(s) == [{"first": c0}, {"expired": c0, "append": c1 - c0}]


def test_a_seven_minute_gap_does_not_expire_a_one_hour_mark():
    s, (c0, c1) = two_requests(7 * 60, one_hour=True)
    assert causes_of(s) == [{"first": c0}, {"provider": c0, "append": c1 - c0}]


def test_a_gap_past_an_hour_expires_a_one_hour_mark():
    s, (c0, c1) = two_requests(61 * 60, one_hour=True)
    assert causes_of(s)[1] == {"expired": c0, "append": c1 - c0}


def test_an_unchanged_live_prefix_written_again_is_the_providers_miss_with_its_reason_quoted():
    s, (c0, c1) = two_requests(30, one_hour=False, cache_miss_reason="messages_changed")
    report = cache_report(s)
    row = report.rows[1]
    assert row.causes.causes == {"provider": c0, "append": c1 - c0}
    assert row.causes.miss_reason == "messages_changed"
    assert report.as_dict()["requests"][1]["cache_miss_reason"] == "messages_changed"


def test_without_timestamps_an_unchanged_prefix_written_again_is_unexplained():
    s, (c0, c1) = two_requests(30, one_hour=False, at=False)
    assert causes_of(s)[1] == {"unexplained": c0, "append": c1 - c0}


def test_a_read_of_the_whole_cached_prefix_leaves_only_the_append():
    s, (c0, c1) = two_requests(30, one_hour=False)
    with_usage(s, [Usage(cache_write=c0), Usage(cache_read=c0, cache_write=c1 - c0)])
    assert causes_of(s) == [{"first": c0}, {"append": c1 - c0}]


def edited_at(keep: int, read: int | None = None) -> tuple[Session, list[int]]:
    """Request 0 sends ms[:4], request 1 ms[:8], request 2 the same with ms[4]'s result edited after its first
    `keep` characters. Each writes all it does not read; request 2 reads `read` (default: request 0's prefix)."""
    t = Trace()
    ms = rounds(t, 4)
    output = ms[4].content["output"]
    edited = Message(
        "edited", "action_response", 99.0, {**dict(ms[4].content), "output": output[:keep] + "changed by hand " * 40}, dict(ms[4].metadata)
    )
    t.messages.append(edited)
    t.request(ms[:4], T0, None)
    t.request(ms[:8], T0 + 10, None)
    t.request([*ms[:4], edited, *ms[5:8]], T0 + 20, None)
    s = t.session(view=[*ms[:4], edited, *ms[5:8]])
    c = counted(s)
    r = c[0] if read is None else read
    return with_usage(
        s, [Usage(cache_write=c[0]), Usage(cache_read=c[0], cache_write=c[1] - c[0]), Usage(cache_read=r, cache_write=c[2] - r)]
    ), c


def test_an_edit_in_the_middle_is_a_rewrite_at_that_message_and_character():
    s, (c0, c1, c2) = edited_at(keep=500)
    row = cache_report(s).rows[2]
    r = row.causes.rewrite
    assert r is not None and r.cause == "rewrite" and r.index == s.record.index_of("edited")
    # The place is the request panel's: the message and the character where the bytes first part.
    from foldscope.core.request.prefix import place

    at = place(
        *(compile_for_prefix([s.record.get(i) for i in q.view], record=s.record, policy=Policy(), tools=None) for q in s.trace[1:]),
        s.record,
    )
    assert (r.message, r.index, r.char, r.byte) == (at.message, at.index, at.char, at.byte)
    assert at.block_text[at.block_char :].startswith(json.dumps("changed")[1:-1]) or "changed" in at.block_text[at.block_char :][:40]
    assert c0 < r.position < c1
    # Read up to request 0's mark; from it to the old end: the rewrite (the provider can read only to a mark).
    assert c2 < c1  # the edit shortened the result: the request ends before the old cached end
    assert row.causes.causes == {"rewrite": c2 - c0}


def test_a_later_edit_in_the_same_message_parts_later_by_the_tokens_between():
    sessions = [edited_at(keep)[0] for keep in (200, 3200)]
    early, late = (cache_report(s).rows[2].causes.rewrite for s in sessions)
    assert early.message == late.message and early.index == late.index
    output = sessions[0].record.get("m4").content["output"]
    escaped = len(json.dumps(output[200:3200])) - 2  # the characters between, as the compiled JSON carries them
    assert late.char - early.char == escaped
    assert 600 < late.position - early.position < 1200  # about 3,000 characters of text, in tokens


def test_the_unchanged_prefix_before_the_last_mark_is_still_the_providers_miss_when_it_was_not_read():
    s, (c0, c1, c2) = edited_at(keep=500, read=1000)
    causes = cache_report(s).rows[2].causes.causes
    assert causes == {"provider": c0 - 1000, "rewrite": c2 - c0}


def test_a_model_switch_is_a_rewrite_with_that_cause():
    s, (c0, c1) = two_requests(20, one_hour=False, model="claude-haiku-4-5")
    row = cache_report(s).rows[1]
    assert row.causes.causes == {"rewrite": c0, "append": c1 - c0}
    assert row.causes.rewrite is not None and row.causes.rewrite.cause == "model"
    assert row.causes.rewrite.position == 0


def test_the_parts_of_a_request_add_up_to_its_bill_and_waste_is_the_premium_over_a_read_of_what_could_be_read():
    s, (c0, c1) = two_requests(30, one_hour=False)
    report = cache_report(s)
    # claude-sonnet-4-5's published prices per million tokens (below 200,000 prompt tokens)
    prices = {"input": 3.0, "cache_read": 0.30, "cache_write_5m": 3.75, "output": 15.0}
    row = report.rows[1]
    expected_bill = (c1 * prices["cache_write_5m"] + row.causes.usage.output * prices["output"]) / 1e6
    assert sum(row.priced.cost_usd.values()) == pytest.approx(expected_bill, rel=1e-12)
    assert row.priced.bill_usd == pytest.approx(expected_bill, rel=1e-12)
    assert row.priced.waste_usd["provider"] == pytest.approx(c0 * (prices["cache_write_5m"] - prices["cache_read"]) / 1e6)
    # an append is the expected cost of growing (nothing to read instead): it wastes nothing, so has no waste figure
    assert "append" not in row.priced.waste_usd and row.causes.causes["append"] == c1 - c0


def corpus_sessions(corpus_dev):
    files = sorted(p for folder in ("claude_code", "pi", "codex") for p in (corpus_dev / folder).rglob("*.jsonl"))
    return [load_session(p) for p in files]


def test_on_real_sessions_the_causes_of_every_request_sum_to_its_reported_cache_write(corpus_dev):
    checked = written = 0
    for session in corpus_sessions(corpus_dev):
        report = cache_report(session)
        reported = 0
        for row in report.rows:
            u = row.causes.usage
            if u is None:
                continue
            assert sum(row.causes.causes.values()) == u.cache_write, (session.source, row.index)
            assert all(n > 0 for n in row.causes.causes.values())
            reported += u.cache_write
            checked += 1
        # an implicit cache (Codex's) has no write part at all: its provider bills none (core.forensics.reads)
        total = 0 if report.implicit else report.totals()["cache_write"]
        assert total == reported == sum(r.usage.cache_write for r in session.trace if r.usage)
        written += reported > 0
    assert checked > 100 and written >= 5


def test_on_every_dev_session_with_reported_usage_the_causes_fresh_reads_and_output_add_up_to_the_bill(corpus_dev):
    from foldscope.core.model.pricing import lookup_prices

    checked = 0
    for session in corpus_sessions(corpus_dev):
        if not any(r.usage for r in session.trace):
            continue
        report = cache_report(session)
        assert report.priced, session.source  # every dev session's model has a price
        bill = 0.0
        for r, row in zip(session.trace, report.rows):
            u = r.usage
            if u is None:
                continue
            # In tokens: fresh, reads and the write's causes are the reported input; in dollars, with output, the bill.
            assert u.input + u.cache_read + sum(row.causes.causes.values()) == u.reported_input
            p = lookup_prices(r.model).at(r.at)  # as in force when the request was sent
            billed = p.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
            assert sum(row.priced.cost_usd.values()) == pytest.approx(billed, rel=1e-9, abs=1e-12)
            bill += billed
        totals = report.totals()
        parts = sum(cell["cost_usd"] for cell in totals["by_cause"].values())
        near = {"rel": 1e-9, "abs": 1e-7}  # the totals are rounded to 8 places per part
        assert parts == pytest.approx(bill, **near) and totals["bill_usd"] == pytest.approx(bill, **near)
        kids = sum(c["cost_usd"] for c in totals["children"].values())
        assert totals["total_usd"] == pytest.approx(bill + kids, **near)
        checked += 1
    assert checked >= 15


def test_on_a_real_session_idle_gaps_past_five_minutes_are_expired_writes(corpus_dev):
    session = load_session(corpus_dev / "pi" / "pi-mono_large-session.jsonl")
    rows = cache_report(session).rows
    expired = [r for r in rows if "expired" in r.causes.causes]
    assert expired and all(r.causes.since_cached_s > 300 for r in expired)
    assert all(r.causes.since_cached_s <= 300 for r in rows if "provider" in r.causes.causes)


def test_the_divergence_is_the_request_panels_comparison_of_the_compiled_requests(corpus_dev):
    from foldscope.core.model.policy import Policy
    from foldscope.core.request.prefix import compile_for_prefix, divergence
    from foldscope.core.request.trace import session_tools

    parted = 0
    for name in ("claude_code/extracted-dd381a75.jsonl", "claude_code/session-196820da.jsonl"):
        session = load_session(corpus_dev / name)
        measured = measure_requests(session)
        tools, record = session_tools(session), session.record
        compiled = [compile_for_prefix([record.get(i) for i in r.view], record=record, policy=Policy(), tools=tools) for r in session.trace]
        for k in range(1, len(compiled)):
            whole = divergence(compiled[k - 1], compiled[k], record)
            if whole.cause in ("none", "append"):
                assert measured[k].divergence is None and measured[k].parted_at is None
            else:
                assert measured[k].divergence == whole
                parted += 1
    assert parted >= 1  # the rewinds of extracted-dd381a75 part before the end


def test_a_claude_code_files_cache_miss_reason_is_quoted_on_the_providers_miss(tmp_path, capsys):
    # The shape the readers' tests build (tests/core/formats/test_claude_code_fields.py): the Messages API's
    # cache-diagnosis answer on the response, `message.diagnostics.cache_miss_reason` with a `type`.
    from foldscope.core.cli.main import main
    from tests.core.forensics.traces import assistant, line, usage

    second = assistant("msg2", "more", usage(3, 0, 12600, 50))
    second["diagnostics"] = {"cache_miss_reason": {"type": "ttl_refresh_failed"}}
    path = tmp_path / "S1.jsonl"
    path.write_text(
        "\n".join(
            [
                line("user", "u1", "2026-01-01T10:00:00Z", {"role": "user", "content": "Read /repo/a.py"}),
                line("assistant", "a1", "2026-01-01T10:00:05Z", assistant("msg1", "x " * 3000, usage(3, 0, 12000, 400)), requestId="r1"),
                line("user", "u2", "2026-01-01T10:00:30Z", {"role": "user", "content": "go on"}),
                line("assistant", "a2", "2026-01-01T10:00:35Z", second, requestId="r2"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    assert main(["cache", str(path), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["requests"][1]
    # Unchanged, 35 seconds after it was written, and still written again: the provider's miss, in its words.
    assert row["causes"] == {"provider": 12000, "append": 600}
    assert row["cache_miss_reason"] == "ttl_refresh_failed"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 2 * 10**6) | st.none()), max_size=60))
def test_the_mark_a_rewrite_parts_at_is_the_last_earlier_mark_at_or_before_its_place(steps):
    # attribute leaves each request's marks as they come and asks where a rewrite parts, sorting only then; this is
    # the scan over every mark so far it stands for, asked after any number of requests (None: not asked).
    from foldscope.core.forensics.causes import Marks

    kept, marks = Marks(), {0}
    for read, write, limit in steps:
        kept.fresh += (read, read + write)
        marks.update((read, read + write))
        if limit is not None:
            assert kept.at_or_before(limit) == max(x for x in marks if x <= limit)
            assert kept.sorted == sorted(kept.sorted) and kept.fresh == sorted(kept.fresh)
            assert set(kept.sorted) | set(kept.fresh) == marks


def test_a_requests_miss_reason_is_read_only_where_its_write_names_the_providers_miss(monkeypatch):
    # Quoted only on a provider's miss (miss_reason): asked of no other request, which at 50,000 requests is each one's
    # attribute read for nothing on the window's path to its counted document.
    from foldscope.core.forensics import causes

    asked: list[int] = []
    real = causes.miss_reason_of
    monkeypatch.setattr(causes, "miss_reason_of", lambda request: asked.append(request.index) or real(request))
    missed, _ = two_requests(30, one_hour=False, cache_miss_reason="messages_changed")
    expired, _ = two_requests(7 * 60, one_hour=False, cache_miss_reason="messages_changed")
    assert cache_report(missed).rows[1].causes.miss_reason == "messages_changed" and asked == [1]
    assert cache_report(expired).rows[1].causes.miss_reason is None and asked == [1]  # an expired write: not asked


def test_a_write_of_one_span_is_that_span_and_of_several_they_are_merged_in_order():
    s, (c0, c1) = two_requests(7 * 60, one_hour=False)
    first, second = (r.causes.spans for r in cache_report(s).rows)
    assert [(x.cause, x.start, x.end) for x in first] == [("first", 0, c0)]
    assert [(x.cause, x.start, x.end) for x in second] == [("expired", 0, c0), ("append", c0, c1)]
    # An unchanged prefix written at two lifetimes (an hour's part, then five minutes'), both expired two hours on:
    # two spans of one cause, merged into one (review20: removing the merge left this test passing).
    t = Trace()
    ms = rounds(t, 3)
    t.request(ms[:5], T0, None)
    t.request(ms[:8], T0 + 2 * 3600, None)
    s = t.session()
    c0, c1 = counted(s)
    s = with_usage(s, [Usage(cache_write=c0, cache_write_1h=c0 // 2), Usage(cache_write=c1, cache_write_1h=0)])
    assert [(x.cause, x.start, x.end) for x in cache_report(s).rows[1].causes.spans] == [("expired", 0, c0), ("append", c0, c1)]
