"""A bill under a hundredth of a cent reads "<$0.0001" on the Cost tab and in the report, as `cache` writes it."""

from __future__ import annotations

import re

from foldscope.core.readout.cost_facts import CostFacts, Part
from foldscope.core.readout.report_html import usd


def test_the_cost_tabs_sentence_writes_a_bill_under_a_hundredth_of_a_cent_as_cache_does():
    """review11: a Copilot CLI session's Cost tab said "The session cost $0.0001 as billed. Most went to output $0.0000
    (56%), fresh input $0.0000 (44%)" where `foldscope cache` gave its bill as <$0.0001."""
    parts = (Part("fresh", 95, 0.000019), Part("cache_read", 5, 0.0000001), Part("output", 15, 0.00003))
    facts = CostFacts(parts=parts, cache=None, compactions=(), priced=True, bill_usd=0.0000491, children_usd=None)  # type: ignore[arg-type]
    sentence = facts.sentence()
    assert "$0.0000" not in sentence and not re.search(r"(?<!<)\$0\.0001", sentence)
    assert sentence.startswith("The session cost <$0.0001 as billed. Most went to output <$0.0001 (61%)")


def test_the_reports_money_writes_a_sum_under_a_hundredth_of_a_cent_as_cache_does():
    assert usd(0.00004) == "<$0.0001" and usd(0.0) == "$0.0000" and usd(1.23456) == "$1.2346" and usd(None) == "—"


def test_a_session_whose_requests_reported_no_usage_says_it_has_no_bill_not_that_it_cost_nothing(capsys):
    """A real Copilot CLI events file whose two requests report no usage: the Cost tab said "The session cost $0.0000
    as billed. Most went to nothing.", read as a free session; it now says no request reported its usage."""
    from foldscope.core.formats import load_session
    from foldscope.core.readout.cost_facts import cost_facts
    from tests.paths import CORPUS

    path = CORPUS / "staged/copilot-cli/agent-sessions-aaaabbbb-1111-2222-3333-ccccddddeeee-events.jsonl"
    if not path.is_file():
        import pytest

        pytest.skip(f"corpus not present at {path}")
    session = load_session(path)
    assert session.trace and all(r.usage is None for r in session.trace)
    sentence = cost_facts(session).sentence()
    assert sentence.startswith(f"No request of this session reported its usage ({len(session.trace)} requests)")
    assert "$0.0000" not in sentence and "nothing" not in sentence
    from foldscope.core.cli.main import main

    assert main(["cache", str(path)]) == 0  # and `cache` says it before its column of zeros
    assert "no request reported its usage: the file holds no bill" in capsys.readouterr().out
