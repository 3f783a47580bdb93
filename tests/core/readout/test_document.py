"""Why a message is out of the view, as the record panel says it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.formats import claude_code
from foldscope.core.readout.document import out_reasons


def test_messages_of_an_abandoned_branch_are_shown_as_such(corpus_dev):
    session = claude_code.read(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    in_view = {session.record.index_of(m) for m in session.view}
    reasons = out_reasons(session, in_view)
    (rewind,) = [e for e in session.events if e["kind"] == "branch" and e["line"] == 20]
    for mid in rewind["abandoned"]:
        assert reasons[session.record.index_of(mid)].startswith("on an abandoned branch: line 20 went back to line 4")


def test_the_library_keeps_each_messages_size_with_its_meaning_and_a_reopened_session_shows_the_same(tmp_path):
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout import opening as opening_module
    from foldscope.core.readout.message_sizes import SIZES_ID
    from foldscope.core.store.library import Library

    db = str(tmp_path / "library.db")
    first = opening_module.open_document(demo_path(), db)
    with Library(db) as library:
        assert library.token_counts(first.library_id, SIZES_ID) == first.tokens  # kept under what they mean
        library.store_token_counts(first.library_id, "another tokenizer", [1] * len(first.tokens))
    again = opening_module.open_document(demo_path(), db)
    assert again.library_id == first.library_id and again.tokens == first.tokens
    assert again.record_count is not None and again.record_tokens() == again.record_count == first.record_count


def test_the_first_document_holds_the_record_and_view_with_characters_and_no_count():
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout.opening import build_document, first_document

    session = load_session(demo_path())
    first = first_document(session, str(demo_path()))
    assert not first.is_counted and first.tokens == [] and first.requests == ()
    assert first.sizes == first.chars == [len(m.text) for m in session.record]
    assert first.size_label(0) == f"{first.chars[0]:,} characters (tokens not counted yet)"
    counted = build_document(session, str(demo_path()))
    assert counted.view_position == first.view_position and counted.out_reason == first.out_reason
    assert counted.sizes == counted.tokens and counted.size_label(0) == f"{counted.tokens[0]:,} tokens"


def every_reason(session, in_view: set[int], at_request: bool = False) -> dict[int, str]:
    """The rule as it was written before reasons were made when asked: every out message's, in one pass."""
    from foldscope.core.readout.document import NOT_YET, is_note, note_first_index

    record = session.record
    shown = [(i, record[i]) for i in in_view if 0 <= i < len(record)]
    copies = {m.clipped_from: i for i, m in shown if m.clipped_from}
    notes = sorted((note_first_index(m), i) for i, m in shown if note_first_index(m) is not None)
    last_in_view = max(in_view, default=-1) if at_request else len(record)
    rewound = {
        mid: event
        for event in session.events
        if event.get("kind") == "branch"
        for mid in event.get("abandoned") or ()
        if isinstance(mid, str)
    }
    reasons: dict[int, str] = {}
    for index, message in enumerate(record):
        if index in in_view:
            continue
        if index > last_in_view:
            reasons[index] = NOT_YET
        elif message.id in rewound:
            event = rewound[message.id]
            reasons[index] = (
                f"on an abandoned branch: line {event.get('line')} went back to line "
                f"{event.get('parent_line')} (a rewind or an edited prompt)"
            )
        elif message.id in copies:
            reasons[index] = f"clipped: copy #{copies[message.id]} stands in the active view"
        elif covering := [n for first, n in notes if first is not None and first <= index < n]:
            reasons[index] = f"folded into note #{covering[0]}"
        elif is_note(message):
            reasons[index] = "a note since folded or replaced"
        else:
            reasons[index] = "out of the active view"
    return reasons


def stand_in_session():
    """Results with clipped copies, notes over earlier stretches (one inside another's span) and a rewind."""
    from tests.core.fold_sessions import Build

    b = Build()
    b.system()
    b.task()
    pairs = b.round([f"output {i} " * 20 for i in range(6)])
    b.add(
        "action_response",
        {"function": "reader", "output": "clipped", "action_request_id": pairs[1][0].id},
        {"clipped_from": pairs[1][1].id},
    )
    b.add("note", {"assistant_response": "summary of 2 to 6"}, {"context_first_index": 2})
    b.answer()
    b.add("note", {"assistant_response": "summary of 4 on"}, {"context_first_index": 4})
    b.task("Next?")
    b.add("assistant", {"assistant_response": "a lone answer"}, {"context_first_index": "not an index"})
    session = b.session()
    session.events.append({"kind": "branch", "line": 9, "parent_line": 3, "abandoned": ["m7", "m8", 42]})
    return session


@given(data=st.data())
@settings(max_examples=150, deadline=None)
def test_a_reason_made_when_asked_is_the_reason_the_whole_pass_gave(data):
    """Stepping makes each out message's reason only when a panel asks; every view, now or at a request, reads
    the same reasons (and the same count of messages not yet written) as working out all of them did."""
    from foldscope.core.readout.document import NOT_YET, Document

    session = stand_in_session()
    size = len(session.record)
    in_view = data.draw(st.sets(st.integers(0, size - 1)))
    at_request = data.draw(st.booleans())
    reasons = out_reasons(session, in_view, at_request)
    expected = every_reason(session, in_view, at_request)
    assert dict(reasons.items()) == expected and reasons == expected and len(reasons) == len(expected)
    for index in range(-1, size + 1):
        assert reasons.get(index) == expected.get(index) and (index in reasons) == (index in expected)
    document = Document(session=session, path="stand-ins", tokens=[], chars=[])
    document.out_reason = reasons
    assert document.not_yet_recorded() == sum(1 for why in expected.values() if why == NOT_YET)


def test_a_load_keeps_the_cycle_collector_off_until_it_ends_and_leaves_it_as_it_found_it(tmp_path):
    import gc

    import pytest

    from foldscope.core.formats.demo import demo_path
    from foldscope.core.model.session import ReadError
    from foldscope.core.readout.opening import open_document

    seen: dict[str, object] = {}

    def counted(document) -> None:  # while the load runs, after the measure: the collector still off
        seen["enabled"], seen["collections"] = gc.isenabled(), sum(g["collections"] for g in gc.get_stats())

    gc.unfreeze()  # an app test run before in this process may have frozen its heap (app.loading.settle_heap)
    assert gc.isenabled()
    before = sum(g["collections"] for g in gc.get_stats())
    open_document(demo_path(), str(tmp_path / "a.db"), on_counted=counted, shown=lambda document: None)
    assert seen["enabled"] is False and seen["collections"] == before  # nothing walked what the load made
    assert gc.isenabled() and gc.get_freeze_count() == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "message": \n', encoding="utf-8")
    with pytest.raises(ReadError):
        open_document(bad, str(tmp_path / "b.db"))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()  # a caller that keeps it off finds it off
    try:
        open_document(demo_path(), str(tmp_path / "c.db"), on_counted=counted)
        assert not gc.isenabled() and not seen["enabled"] and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_a_copy_or_note_appended_to_the_record_stands_in_at_the_next_step():
    """The record's copies and notes are kept per record and read on from where they were: one appended after a
    step (a clip, a fold) stands in at the next step as the whole pass says."""
    from dataclasses import replace

    session = stand_in_session()
    size = len(session.record)
    in_view = set(range(0, size, 2))
    assert dict(out_reasons(session, in_view).items()) == every_reason(session, in_view)
    copy_of = session.record[3]
    result = next(m for m in session.record if m.kind == "action_response")
    copy = replace(result, id="a-late-copy", metadata={"clipped_from": copy_of.id})
    note = replace(session.record[size - 1], id="a-late-note", metadata={"context_first_index": 1})
    later = {session.record.append(copy), session.record.append(note)}
    assert dict(out_reasons(session, in_view | later).items()) == every_reason(session, in_view | later)
    assert out_reasons(session, in_view | later)[3] == f"clipped: copy #{size} stands in the active view"


def test_the_counted_document_takes_each_messages_characters_from_the_first_not_making_its_text_again(tmp_path, monkeypatch):
    """The load's two steps size each message once: the counted document is built with the first document's
    characters (a Branch's outputs are JSON encoded to make a message's text), and building with them makes one
    text a message fewer than building without."""
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.model.session import Message
    from foldscope.core.readout import opening as opening_module

    firsts, given = [], []
    build = opening_module.build_document
    monkeypatch.setattr(opening_module, "build_document", lambda *args, **how: given.append(how.get("chars")) or build(*args, **how))
    counted = opening_module.open_document(demo_path(), str(tmp_path / "library.db"), shown=firsts.append)
    assert given == [firsts[-1].chars] and given[0] is not firsts[-1].chars  # a copy: the window's until then
    text = Message.text
    assert counted.chars == [len(text.fget(m)) for m in counted.session.record]

    made: list[int] = []
    monkeypatch.setattr(Message, "text", property(lambda m: made.append(1) or text.fget(m)))
    session = load_session(demo_path())
    build(session, "demo")
    without = len(made)
    made.clear()
    again = load_session(demo_path())
    build(again, "demo", chars=[len(text.fget(m)) for m in again.record])
    assert without - len(made) == len(again.record)


def test_the_records_kinds_are_counted_once_a_record_in_its_index():
    # A load's first step and its counted document are two documents of one record: the status line's messages by
    # kind come from the record's index (one pass, with its systems, copies and notes), read once a record.
    from dataclasses import replace

    from foldscope.core.formats.demo import generate
    from foldscope.core.readout import record_index as index_module
    from foldscope.core.readout.opening import first_document

    session = generate(rounds=12, listing_chars=20)
    first = first_document(session, "s.json")
    counts: dict[str, int] = {}
    for message in session.record:
        counts[message.kind] = counts.get(message.kind, 0) + 1
    assert first.kind_counts() == counts and list(first.kind_counts()) == list(counts)
    index = index_module.record_index(session.record)
    index_module._INDEXES[session.record] = replace(index, kinds={"kept": 1})  # what the index holds is what is said
    assert first_document(session, "s.json").kind_counts() == {"kept": 1}
