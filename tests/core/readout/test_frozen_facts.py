"""The facts the panels and the CLI read are frozen once built: no field can be set and none holds a list."""

from __future__ import annotations

import dataclasses

import pytest

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout.composition import request_composition
from foldscope.core.readout.cost_facts import cost_facts
from foldscope.core.readout.head_split import head_sources
from foldscope.core.readout.opening import build_document
from foldscope.core.readout.trace_facts import measure_requests

NAMES = ("Composition", "CostFacts", "HeadSources", "TraceFacts", "TraceReport")


@pytest.fixture(scope="module")
def facts() -> dict[str, object]:
    session = load_session(demo_path())
    document = build_document(session, str(demo_path()))
    assert document.measure is not None and document.requests, "the demo session has requests to measure"
    facts = measure_requests(load_session(demo_path()), document.counter, lambda *a: None)
    return {
        "TraceReport": document.measure.trace,
        "TraceFacts": facts,
        "Composition": request_composition(document.measure, 0),
        "CostFacts": cost_facts(session),
        "HeadSources": head_sources(session),
    }


@pytest.mark.parametrize("name", NAMES)
def test_a_fact_built_for_the_panels_cannot_be_set_and_holds_no_list(facts, name):
    fact = facts[name]
    assert dataclasses.is_dataclass(fact) and type(fact).__name__ == name
    first = dataclasses.fields(fact)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fact, first, getattr(fact, first))
    lists = [f.name for f in dataclasses.fields(fact) if isinstance(getattr(fact, f.name), list)]
    assert lists == [], f"{name} holds lists a reader could change: {lists}"


def test_the_documents_requests_and_fold_rows_are_tuples():
    session = load_session(demo_path())
    document = build_document(session, str(demo_path()))
    assert isinstance(document.requests, tuple) and len(document.requests) == len(session.trace) > 0
    assert isinstance(document.folds, tuple) and document.folds, "the demo session has fold records"
