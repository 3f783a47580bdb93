"""Each request's facts as the timeline reads them: the view it was compiled from and whether a fold came before it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.session import Request
from foldscope.core.readout.fold_facts import is_note
from foldscope.core.readout.trace_facts import measure_requests
from foldscope.core.request.count import Counter
from tests.core.fold_sessions import Build


def session_with(views):
    """Twelve messages, every third a note (one of them a compaction's), and a trace with the given views."""
    b = Build()
    b.system()
    for n in range(11):
        if n % 3 == 2:
            b.add("note", {"assistant_response": f"summary {n}"}, {"context_first_index": 1})
        else:
            b.task(f"step {n}")
    session = b.session()
    session.events.append({"kind": "compaction", "note_id": "m3"})
    session.trace = [Request(k, tuple(view)) for k, view in enumerate(views)]
    return session


def facts_view_by_view(session):
    """Each request's view (the ids the record holds) and its fold and compaction flags, from its whole view."""
    record_ids, notes_of = set(session.record.ids()), {m.id for m in session.record if is_note(m)}
    out, before = [], set()
    for k, request in enumerate(session.trace):
        view = tuple(mid for mid in request.view if mid in record_ids)
        notes = notes_of.intersection(view)
        new = notes - before
        out.append((view, bool(new) and k > 0, bool(new) and k > 0 and new <= {"m3"}))
        before = notes
    return out


IDS = [f"m{i}" for i in range(12)] + ["gone"]  # "gone": an id the record does not hold
steps = st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(IDS), max_size=3)), min_size=1, max_size=8)


@given(steps=steps)
@settings(max_examples=60, deadline=None)
def test_a_request_that_adds_to_the_one_before_is_read_from_what_it_adds(steps):
    """Reading only what a view adds to the one before gives each request the view and the fold and compaction
    flags reading its whole view gives, for views that grow, start again, or name ids the record lacks."""
    views: list[tuple[str, ...]] = []
    for adds, ids in steps:
        views.append((views[-1] if views and adds else ("m0",)) + tuple(ids))
    session = session_with(views)
    facts = measure_requests(session, Counter(), lambda *a: None)
    got = [(r.view, r.folded_before, r.compacted_before) for r in facts.requests]
    assert got == facts_view_by_view(session)


def test_a_requests_facts_keep_no_attribute_dict():
    """The window holds a request's facts for each request of the trace for the session's life (11,384 at 50k):
    slotted, they keep their fifteen fields without a dict of them (0.5 MiB at 50k), the values the same."""
    import sys

    session = session_with([("m0", "m1"), ("m0", "m1", "m2", "m4")])
    facts = measure_requests(session, Counter(), lambda *a: None).requests
    assert [f.view for f in facts] == [("m0", "m1"), ("m0", "m1", "m2", "m4")]
    assert not any(hasattr(f, "__dict__") for f in facts)
    assert sys.getsizeof(facts[0]) <= 16 + 8 * 15 + 16  # the object and its fields' slots, nothing beside


def test_past_the_ceiling_is_the_size_less_the_ceiling_and_nothing_without_one():
    from foldscope.core.readout.trace_facts import Rules

    assert [Rules(1000).past_ceiling(size) for size in (1200, 1000, 800)] == [200, 0, -200]
    assert Rules(None).past_ceiling(1200) is None


def test_the_price_tier_drawn_is_the_named_models_as_the_auto_ceiling_is(corpus_dev):
    """--model claude-haiku-5-5 on a Sonnet 4.5 session: the auto ceiling is haiku's first tier (100,000), and the tier
    rule drawn beside it is that same boundary (the ceiling '= price tier'), never Sonnet's 200,000."""
    from foldscope.core.formats import load_session
    from foldscope.core.model.policy import Policy, resolve_ceiling
    from foldscope.core.readout.trace_facts import rules_for

    session = load_session(corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    assert session.model == "claude-sonnet-4-5-20250929"
    as_recorded = rules_for(session, Policy(), resolve_ceiling(Policy(), session.model))
    assert as_recorded.ceiling == as_recorded.tier == 200_000  # the file's own model: Sonnet 4.5's tier
    named = Policy(model="claude-haiku-5-5")
    rules = rules_for(session, named, resolve_ceiling(named, named.model))
    assert rules.ceiling == rules.tier == 100_000  # pricing-facts.md: claude-haiku-5-5's first tier ends at 100,000


def test_the_requests_notes_are_the_record_indexs_read_once_a_record():
    """The requests' facts take the record's notes from its index (one pass a record, which the window's first step
    has made by then), not from each message asked again: an index that held no notes would flag no fold."""
    from dataclasses import replace

    from foldscope.core.readout import record_index as index_module

    views = [("m0", "m1"), ("m0", "m1", "m2"), ("m0", "m1", "m2", "m3", "m4")]
    session = session_with(views)
    assert [r.folded_before for r in measure_requests(session, Counter(), lambda *a: None).requests] == [False, False, True]
    index = index_module.record_index(session.record)
    index_module._INDEXES[session.record] = replace(index, any_notes=())
    assert not any(r.folded_before for r in measure_requests(session, Counter(), lambda *a: None).requests)


def test_the_record_indexs_notes_are_every_message_is_note_names():
    """A note by its kind, or by the first index a fold writes on it, whatever its kind: as is_note says."""
    from foldscope.core.readout.record_index import record_index

    b = Build()
    b.system()
    b.task("step")
    b.add("note", {"assistant_response": "no first index"}, {})
    b.add("assistant", {"assistant_response": "a clip's copy"}, {"context_first_index": 1})
    b.task("step")
    session = b.session()
    assert list(record_index(session.record).any_notes) == [i for i, m in enumerate(session.record) if is_note(m)] == [2, 3]
