"""The Cost panel's facts and the cache lane come from the trace's own count: the same figures as counting again."""

from __future__ import annotations

import pytest

from foldscope.core.formats import load_session
from foldscope.core.readout.cache_lane import lane_rows, lane_rows_of
from foldscope.core.readout.cost_facts import cost_facts, document_cache
from foldscope.core.readout.opening import build_document

FILES = [
    "claude_code/session-196820da.jsonl",
    "claude_code/extracted-dd381a75.jsonl",
    "claude_code/subagent.jsonl",
    "claude_code/tool_heavy.jsonl",
    "codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl",
    "pi/pi-mono_large-session.jsonl",
    "lionagi/cookbook_002_critic.branch.json",
    "lionagi/branch_v0.36.0_after_context_fold.synthetic.json",
]


@pytest.mark.parametrize("name", FILES)
def test_the_cost_facts_riding_on_the_trace_are_the_ones_counting_again_gives(corpus_dev, name):
    """Every request's cache causes, prices and parts, each compaction's numbers and each message's part of the
    count, made from the trace's measurements, equal cost_facts counting the trace afresh with its own counter;
    the reported usage they are checked against is the file's."""
    session = load_session(corpus_dev / name)
    document = build_document(session, str(corpus_dev / name))
    cache = document_cache(document)
    assert document.cache_report() is cache is not None
    shared = cost_facts(document.session, document.policy, cache=cache)
    again = cost_facts(document.session, document.policy)
    assert shared.parts == again.parts and shared.priced == again.priced
    assert shared.bill_usd == again.bill_usd and shared.children_usd == again.children_usd and shared.notes == again.notes
    assert shared.cache.measured == again.cache.measured and shared.cache.tokens == again.cache.tokens
    assert shared.cache.rows == again.cache.rows and shared.cache.totals() == again.cache.totals()
    assert shared.compactions == again.compactions
    assert lane_rows_of(shared.cache) == lane_rows(document.session, document.policy)
    reported = [r.causes.usage for r in shared.cache.rows if r.causes.usage is not None]
    assert [u.input for u in reported] == [r.usage.input for r in session.trace if r.usage is not None]


def test_facts_made_for_another_policy_or_a_grown_session_are_not_shown(corpus_dev):
    from foldscope.core.model.policy import Policy
    from foldscope.core.readout.workspace import Workspace

    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    document = build_document(load_session(path), str(path))
    assert document.cache_report() is None  # not made yet
    document_cache(document)
    assert document.cache_report() is document.cache is not None
    workspace = Workspace(document)  # the only way the policy in force changes
    workspace.set_policy(Policy(max_input_tokens=1000))
    assert document.cache_report() is None
    workspace.undo()  # the policy it was made under, but the report is made again rather than trusted
    assert document.cache_report() is None


@pytest.mark.parametrize("n", [1, 3])
def test_a_compaction_s_sentence_agrees_its_nouns_with_the_requests_and_the_things_fetched_again(n):
    # Found by review8: "it paid back after 1 requests".
    from foldscope.core.forensics.compactions import Compaction, Refetch
    from foldscope.core.forensics.literals import LiteralCheck
    from foldscope.core.forensics.payback import Payback
    from foldscope.core.model.session import Message
    from foldscope.core.readout.cost_facts import compaction_sentence

    note = Message("n", "note", 0.0, {"assistant_response": "summary"})
    refetched = [Refetch(5, 9 + i, "Read", f"a{i}.py", 100) for i in range(n)]
    c = Compaction(4, "compaction", "claude_code", note, 1000, 100, "measured", None, "", {}, LiteralCheck(), refetched)
    c.payback = Payback(0.1, [], [], n)
    said = compaction_sentence(c)
    if n == 1:
        assert "it paid back after 1 request. The agent fetched 1 dropped thing again (100 tokens)." in said
    else:
        assert f"it paid back after {n} requests. The agent fetched {n} dropped things again ({100 * n} tokens)." in said
