"""What a replay's strategies mean beside the bill (core.readout.replay_facts): the no-ceiling notice and its suggested
ceiling from the agent's window, and the modelled recording set beside the bill."""

from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.agent_limits import agent_limits
from foldscope.core.readout.replay_facts import BILL_LABEL, MODELLED_LABEL, beside_bill, no_ceiling_line
from foldscope.core.request.measure import Measure

FLAT = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # gpt-5.3-codex: one flat tier


def test_the_no_ceiling_notice_suggests_the_window_the_agent_limits_resolve_a_policys_window_included(corpus_dev):
    session = load_session(corpus_dev / FLAT)
    policy = Policy(context_window=123_456)
    notice = no_ceiling_line(Measure(session, policy), ["recorded", "band"])
    assert agent_limits(session, policy).window.tokens == 123_456  # the one place the window resolves
    assert notice is not None and "band does not act" in notice and "123,456" in notice
    assert no_ceiling_line(Measure(session, policy), ["recorded"]) is None  # nothing that could act is shown
    assert no_ceiling_line(Measure(session, Policy(max_input_tokens=150_000)), ["band"]) is None


def test_the_modelled_recording_follows_the_bill_only_where_strategies_stand_beside_it():
    recorded = {
        "strategy": "recorded",
        "reported_requests": 2,
        "fresh": 10,
        "cache_read": 5,
        "cache_write": 1,
        "cost_usd": 3.0,
        "modelled_fresh": 12,
        "modelled_cache_read": 3,
        "modelled_cache_write": 1,
        "modelled_cost_usd": 2.5,
        "peak": 100,
    }
    none = {"strategy": "none", "reported_requests": 0, "cost_usd": 2.4}
    columns = beside_bill([recorded, none])
    assert [label for label, _ in columns] == [BILL_LABEL, MODELLED_LABEL, "none"]
    modelled = columns[1][1]
    assert (modelled["fresh"], modelled["cache_read"], modelled["cost_usd"], modelled["peak"]) == (12, 3, 2.5, 100)
    assert [label for label, _ in beside_bill([recorded])] == [BILL_LABEL]  # alone: nothing to compare
    assert [label for label, _ in beside_bill([{**recorded, "reported_requests": 0}, none])] == ["recorded", "none"]
