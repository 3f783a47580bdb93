"""Past request views of native sessions, rebuilt from notes, clipped copies and fold records."""

import copy
import json

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path, generate
from foldscope.core.formats.lionagi import native_dict
from foldscope.core.formats.lionagi_views import request_views
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.count import Counter


def _write(tmp_path, data, name="session.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _demo_fold(session):
    (note,) = [m for m in session.record if m.kind == "note"]
    replaced = {session.record[i].id for i in note.metadata["context_replaced"]}
    return note, replaced


def test_requests_after_a_fold_see_the_note_instead_of_what_it_replaced():
    session = load_session(demo_path())
    note, replaced = _demo_fold(session)
    assert session.warnings == []
    made = session.record.index_of(note.id)
    for request in session.trace:
        answered = session.record.index_of(request.response_id)
        view = set(request.view)
        assert view <= set(session.record.ids()[:answered])
        if answered > made:
            assert note.id in view and not view & replaced
        else:
            assert note.id not in view
    last = session.trace[-1]
    assert list(last.view) + [last.response_id] == session.view  # the final view follows the last request


def test_the_demo_request_after_the_fold_counts_near_what_the_provider_reported():
    # Before the views were rebuilt, request 5 counted the folded messages and the note together:
    # 10,400 counted tokens against 4,475 reported. The demo models a provider scale of 1.3 on text
    # (its 100,045-character listing, later, tokenizes denser than its chars-per-token model).
    session = load_session(demo_path())
    counter = Counter()
    for request in session.trace[5:7]:
        counted = counter.count([session.record.get(i) for i in request.view], record=session.record)
        assert 1.0 <= request.usage.reported_input / counted < 1.4


def _without(session, strip_replaced=True, strip_folds=False):
    data = copy.deepcopy(native_dict(session))
    for item in data["branch"]["messages"]["collections"]:
        if strip_replaced:
            item["metadata"].pop("context_replaced", None)
    if strip_folds:
        data["manifest"]["context_folds"] = []
    return data


def test_without_replaced_indices_the_fold_record_says_how_many(tmp_path):
    session = generate()
    read = load_session(_write(tmp_path, _without(session)))
    assert read.warnings == []
    assert [r.view for r in read.trace] == [r.view for r in session.trace]


def test_without_a_fold_record_the_inference_is_said_in_the_warnings(tmp_path):
    session = generate()
    read = load_session(_write(tmp_path, _without(session, strip_folds=True)))
    assert any("does not record which messages it replaced" in w for w in read.warnings)
    assert [r.view for r in read.trace] == [r.view for r in session.trace]


def test_lionagi_fold_notes_appended_late_are_matched_to_their_fold_records(corpus_dev):
    session = load_session(corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json")
    assert session.manifest and len(session.manifest["context_folds"]) == 4
    assert session.warnings == []  # four notes, four records, the replay ends on the file's view


def test_a_compaction_note_without_provenance_is_inferred_and_said(corpus_dev):
    session = load_session(corpus_dev / "lionagi" / "branch_v0.36.0_after_context_tool_compact.synthetic.json")
    assert len(session.warnings) == 1 and "records no first index" in session.warnings[0]


def _m(mid, kind, at, **metadata):
    content = {"assistant_response": mid} if kind in ("assistant", "note") else {"function": "f", "arguments": {}, "output": mid}
    if kind == "instruction":
        content = {"instruction": mid}
    return Message(mid, kind, at, content, metadata)


def test_a_clipped_copy_stands_for_its_original_from_when_it_was_made():
    record = FullRecord(
        [
            _m("task", "instruction", 1),
            _m("a1", "assistant", 2),
            _m("r1", "action_response", 3),
            _m("a2", "assistant", 4),
            _m("a3", "assistant", 6),
            _m("c1", "action_response", 5, clipped_from="r1"),
        ]
    )
    warnings: list[str] = []
    views = request_views(record, ["task", "a1", "c1", "a2", "a3"], None, warnings)
    assert views["a2"] == ("task", "a1", "r1")
    assert views["a3"] == ("task", "a1", "c1", "a2")
    assert warnings == []


def test_a_message_gone_from_the_view_with_no_note_is_said():
    record = FullRecord([_m("task", "instruction", 1), _m("a1", "assistant", 2), _m("r1", "action_response", 3), _m("a2", "assistant", 4)])
    warnings: list[str] = []
    views = request_views(record, ["task", "a1", "a2"], None, warnings)
    assert views["a2"] == ("task", "a1", "r1")  # counted as in view: the file does not say when it left
    assert len(warnings) == 1 and "1 message(s) differ" in warnings[0]
