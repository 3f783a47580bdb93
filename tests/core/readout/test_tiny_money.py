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
