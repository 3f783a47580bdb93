"""Subagents and the compaction summariser in the bill: each child's reported usage priced, shown apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.forensics.cache_report import cache_report
from foldscope.core.forensics.compactions import compaction_report
from foldscope.core.formats import load_session
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session_totals import rolled_up
from foldscope.core.readout.cost_facts import cost_facts
from tests.core.formats.test_claude_code_children import _reported, _session_with_subagents

SONNET = lookup_prices("claude-sonnet-4-5-20250929")
# The fixture's summariser (agent-acompact-77): 3 fresh, 9,000 read from the parent's cache, 300 written, 800 output.
SUMMARISER_USD = SONNET.cost(3, 9000, 300, 0, 800)
SUBAGENT_USD = SONNET.cost(3, 0, 4000, 0, 10)


def test_the_compactions_summariser_cost_is_its_childs_reported_usage_priced(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    [c] = compaction_report(session).compactions
    assert c.summariser_cost_usd == pytest.approx(SUMMARISER_USD, rel=1e-12)
    assert "agent-acompact-77.jsonl" in c.summariser_why and "9,000 read from the cache" in c.summariser_why


def test_the_summariser_is_the_child_the_reader_linked_to_the_note_not_the_nearest_in_time(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    summariser = next(c for c in session.children if c.extras["child_kind"] == "summariser")
    summariser.extras["compaction_note"] = "some-other-note"  # linked elsewhere: not this compaction's cost
    [c] = compaction_report(session).compactions
    assert c.summariser_cost_usd is None and "no agent-acompact" in c.summariser_why


def test_cost_by_cause_shows_subagents_and_the_compaction_summariser_apart(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    totals = cache_report(session).totals()
    kids = totals["children"]
    assert kids["summariser"]["cost_usd"] == pytest.approx(SUMMARISER_USD, rel=1e-9)
    assert kids["subagents"]["cost_usd"] == pytest.approx(SUBAGENT_USD, rel=1e-9)
    assert (kids["summariser"]["requests"], kids["subagents"]["requests"]) == (1, 1)
    assert totals["total_usd"] == pytest.approx(totals["bill_usd"] + SUMMARISER_USD + SUBAGENT_USD, rel=1e-9)
    facts = cost_facts(session)
    assert facts.part("summariser").usd == pytest.approx(SUMMARISER_USD, rel=1e-9)
    assert facts.part("subagents").usd == pytest.approx(SUBAGENT_USD, rel=1e-9)
    assert facts.part("summariser").label == "compaction summariser"
    assert facts.total_usd == pytest.approx(totals["total_usd"], rel=1e-9)


def test_the_summarisers_reads_of_the_parents_cache_are_reads(tmp_path):
    session = load_session(_session_with_subagents(tmp_path))
    totals = cache_report(session).totals()
    summariser = totals["children"]["summariser"]
    assert (summariser["cache_read"], summariser["cache_write"]) == (9000, 300)
    # Priced at the read price: were the 9,000 priced as writes the figure would be far above this.
    assert summariser["cost_usd"] == pytest.approx(SONNET.cost(3, 9000, 300, 0, 800), rel=1e-9)
    assert summariser["cost_usd"] < SONNET.cost(3, 0, 9300, 0, 800) / 2
    # And they are none of the parent's: its own parts hold only its own requests' reads and writes.
    parent = [r.usage for r in session.trace if r.usage]
    assert totals["by_cause"]["cache_read"]["tokens"] == sum(u.cache_read for u in parent)
    assert totals["cache_write"] == sum(u.cache_write for u in parent)


def _models(path: Path) -> list[str]:
    """Each response's model as the file names it, in the order `_reported` gives their usage."""
    by_id: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("usage"):
            by_id[message.get("id")] = message["model"]
    return list(by_id.values())


def test_on_dev_sessions_with_subagents_each_childs_cost_is_its_own_file_priced(corpus_dev):
    found = 0
    for path in sorted((corpus_dev / "claude_code").rglob("*.jsonl")):
        session = load_session(path)
        if not session.children:
            continue
        totals = cache_report(session).totals()
        rolled = rolled_up(session)
        for kind in ("subagents", "summariser"):
            files = [Path(c.source) for c in session.children if (c.extras["child_kind"] == "summariser") == (kind == "summariser")]
            usages = [u for f in files for u in _reported(f)]  # read from the files without the reader
            models = [m for f in files for m in _models(f)]
            cell = totals["children"][kind]
            assert cell["requests"] == len(usages) == rolled[kind].requests
            assert (cell["fresh"], cell["cache_read"], cell["cache_write"], cell["output"]) == tuple(
                sum(u[i] for u in usages) for i in range(4)
            )
            priced = sum(lookup_prices(m).cost(u[0], u[1], u[2], 0, u[3]) for u, m in zip(usages, models))
            assert cell["cost_usd"] == pytest.approx(priced, rel=1e-6)
            assert cell["cost_usd"] == pytest.approx(rolled[kind].cost_usd, abs=1e-6)
        assert totals["total_usd"] == pytest.approx(rolled["total"].cost_usd, abs=1e-6)
        found += 1
    assert found >= 1


def test_a_folder_counts_a_subagent_file_beside_its_session_once(capsys, corpus_dev):
    folder = corpus_dev / "claude_code" / "tmp-private"
    assert main(["cache", str(folder), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sessions"] == 1 and out["children_in_parents"] == 2
    assert main(["cache", str(folder / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert out["totals"]["total_usd"] == pytest.approx(alone["totals"]["total_usd"], abs=1e-8)
    assert out["totals"]["children"]["subagents"]["requests"] == 2
