"""`recorded` is the recording as billed: each request's fresh input, cache read, cache write and output as the
file reported them, its cost the reported usage priced per request; the cache model's figures stay beside."""

from __future__ import annotations

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.replay.lab import replay_runs
from tests.core.replay_sessions import under

FILES = [
    "claude_code/extracted-dd381a75.jsonl",
    "claude_code/session-9eda1058.jsonl",
    "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    "pi/pi-mono_large-session.jsonl",  # switches from gpt-5.1-codex to claude-sonnet-4-5: priced per request
]


@pytest.mark.parametrize("name", FILES)
def test_recorded_replay_totals_equal_the_sums_of_the_reported_usage_and_its_cost_the_per_request_bill(corpus_dev, name):
    session = load_session(str(corpus_dev / name))
    run = replay_runs(session, ["recorded"], under(session)).runs[0]
    totals = run.totals()
    reported = [r.usage for r in session.trace if r.usage is not None]
    assert len(reported) == len(session.trace) and totals["reported_requests"] == len(reported)
    assert totals["fresh"] == sum(u.input for u in reported)
    assert totals["cache_read"] == sum(u.cache_read for u in reported)
    assert totals["cache_write"] == sum(u.cache_write for u in reported)
    assert totals["cache_write_1h"] == sum(u.cache_write_1h for u in reported)
    assert totals["output"] == sum(u.output for u in reported)
    bill = 0.0
    for request in session.trace:
        u = request.usage
        prices = lookup_prices(request.model or session.model)
        assert prices is not None, request.model
        bill += prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    assert totals["cost_usd"] == pytest.approx(bill, rel=1e-6, abs=1e-5)
    # the cache model's figures are kept beside, and are not the reported ones
    assert totals["modelled_cache_read"] == sum(r.modelled_cache_read for r in run.rows)
    assert totals["modelled_cost_usd"] is not None


def test_a_session_that_switches_models_is_billed_at_each_requests_own_model(corpus_dev):
    from dataclasses import replace

    # The dev corpus's sessions keep one model for every billed request: switch the middle third to haiku.
    session = load_session(str(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl"))
    n = len(session.trace)
    session.trace = [replace(r, model="claude-haiku-4-5-20251001") if n // 3 <= r.index < 2 * n // 3 else r for r in session.trace]
    run = replay_runs(session, ["recorded"], under(session)).runs[0]
    opus, haiku = lookup_prices("claude-opus-4-5"), lookup_prices("claude-haiku-4-5")
    assert opus is not None and haiku is not None
    bill = sum(
        (haiku if r.model.startswith("claude-haiku") else opus).cost(
            r.usage.input, r.usage.cache_read, r.usage.cache_write - r.usage.cache_write_1h, r.usage.cache_write_1h, r.usage.output
        )
        for r in session.trace
    )
    at_one_price = sum(opus.cost(r.fresh, r.cache_read, r.cache_write_5m, r.cache_write_1h, r.output) for r in run.rows)
    assert run.totals()["cost_usd"] == pytest.approx(bill, rel=1e-6)
    assert run.totals()["cost_usd"] < at_one_price * 0.9


def test_a_request_without_reported_usage_keeps_the_modelled_figures(corpus_dev):
    from dataclasses import replace

    session = load_session(str(corpus_dev / "claude_code" / "session-9eda1058.jsonl"))
    session.trace = [replace(r, usage=None) if r.index == 1 else r for r in session.trace]
    run = replay_runs(session, ["recorded"], under(session)).runs[0]
    row = run.rows[1]
    assert not row.reported and row.cache_read == row.modelled_cache_read and row.fresh == row.modelled_fresh
    assert run.totals()["reported_requests"] == len(session.trace) - 1


def test_reported_over_ceiling_says_whether_the_providers_own_count_was_past_the_ceiling(corpus_dev):
    session = load_session(str(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl"))
    peak = max(r.usage.reported_input for r in session.trace)
    run = replay_runs(session, ["recorded"], under(session, ceiling=peak)).runs[0]
    assert sum(r.reported_over_ceiling for r in run.rows) == sum(r.usage.reported_input >= peak for r in session.trace) >= 1
    assert run.totals()["reported_over_ceiling"] >= 1


def _file_bill_sonnet_4_5(path) -> float:
    """The file's own reported usage, read apart from foldscope's reader (the last entry of each request, by requestId or
    message id, holds its usage), priced at Claude Sonnet 4.5's list prices (shared/pricing-facts.md: input 3.00, 5-minute write 1.25x,
    read 0.1x, output 15.00 per million tokens; every request of this file is under the 200,000 tier)."""
    import json

    usage = {}
    for line in open(path, encoding="utf-8"):
        entry = json.loads(line)
        if isinstance(entry, dict) and entry.get("type") == "assistant" and (entry.get("message") or {}).get("usage"):
            usage[entry.get("requestId") or entry["message"].get("id")] = entry["message"]["usage"]
    return sum(
        (u["input_tokens"] * 3.0 + u["cache_read_input_tokens"] * 0.3 + u["cache_creation_input_tokens"] * 3.75 + u["output_tokens"] * 15.0)
        / 1e6
        for u in usage.values()
    )


def test_a_replay_priced_at_another_model_says_its_recorded_column_is_not_the_bill_and_gives_the_bill(corpus_dev):
    """--model claude-haiku-5-5 on a Sonnet 4.5 session prices every column at haiku, `recorded, as billed` too: the
    replay says so in one line with the bill at the file's own model, which is the file's reported usage priced."""
    from foldscope.core.model.policy import Policy
    from foldscope.core.replay.billed import billed_summary
    from foldscope.core.replay.lab import replay
    from foldscope.core.request.measure import Measure

    path = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    bill = _file_bill_sonnet_4_5(path)
    assert f"{bill:.4f}" == "0.6269"
    named = Policy(model="claude-haiku-5-5")
    result = replay(load_session(str(path)), ["recorded"], Measure(load_session(str(path)), named), rows=False)
    at_haiku = result["totals"][0]["cost_usd"]
    assert f"{at_haiku:.4f}" != f"{bill:.4f}"  # the column is priced at haiku: not the bill
    [line] = [w for w in result["warnings"] if "not the bill" in w]
    assert f"(${at_haiku:.4f})" in line and f"(${bill:.4f} at the file's own models)" in line and "claude-haiku-5-5" in line
    assert billed_summary(load_session(str(path)), named)["warnings"] == [line]  # a folder's untokenised rows say it too
    for same in (Policy(), Policy(model="claude-sonnet-4-5"), Policy(model="claude-sonnet-4-5-20250929[1m]")):
        assert replay(load_session(str(path)), ["recorded"], Measure(load_session(str(path)), same), rows=False)["warnings"] == []
