"""Actions never build a request the spec forbids (issue 41, finding 9): a restore brings a result back with its call
(ADR-0130 D4: never a result without its call) or refuses with why, and clipping a result out of the view refuses
unless asked to clip it into the view (`--into-view`), which brings its call too; an evict takes a call and its
result out together."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.actions.commands import Clip, Evict, Restore
from foldscope.core.cli.main import main
from foldscope.core.fold.stages import view_facts
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.session import Session

RESULT, CALL = 4, 3  # in the demo, a tool result and its call that a fold took out of the view


def results_without_calls(session: Session) -> list[int]:
    view = session.view_messages()
    facts = view_facts(view, session.record, set())
    return [session.record.index_of(m.id) for m in view if m.kind == "action_response" and m.id not in facts.call_of]


def folded_pair(session: Session) -> tuple[str, str]:
    call, result = session.record[CALL], session.record[RESULT]
    assert result.content.get("action_request_id") == call.id and call.id not in session.view
    assert result.id not in session.view  # the case: both out of the view
    return call.id, result.id


def test_adr_0130_d4_restoring_a_folded_result_brings_its_call_back_before_it():
    session = load_session(demo_path())
    call, result = folded_pair(session)
    changes = Restore([RESULT]).do(session)
    assert changes.success and changes.view
    assert session.view.index(call) < session.view.index(result)
    assert results_without_calls(session) == []


def test_adr_0130_d4_a_result_whose_call_the_record_does_not_hold_is_refused_with_why(tmp_path):
    data = json.loads(demo_path().read_text())
    pile = data["branch"]["messages"]
    call = pile["progression"]["order"][CALL]
    pile["collections"] = [m for m in pile["collections"] if m["id"] != call]
    pile["progression"]["order"].remove(call)
    path = tmp_path / "orphan.json"
    path.write_text(json.dumps(data))
    session = load_session(path)
    result = next(i for i, m in enumerate(session.record) if m.content.get("action_request_id") == call)
    view = list(session.view)
    changes = Restore([result]).do(session)
    assert not changes.success and "answers no call" in changes.message and "D4" in changes.message
    assert session.view == view


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["restore", "evict"]), st.lists(st.integers(0, 59), min_size=1, max_size=4)), min_size=1, max_size=6
    )
)
def test_after_any_restore_or_evict_the_view_never_holds_a_result_without_its_call(steps):
    session = load_session(demo_path())
    assert results_without_calls(session) == []  # the start is whole, so any orphan is the actions' doing
    for action, indices in steps:
        (Restore if action == "restore" else Evict)(indices).do(session)
        assert results_without_calls(session) == [], (action, indices)


def test_clipping_a_result_out_of_the_view_is_refused_and_changes_nothing():
    session = load_session(demo_path())
    folded_pair(session)
    view, length = list(session.view), len(session.record)
    changes = Clip(RESULT, 200).do(session)
    assert not changes.success and "not in the active view" in changes.message and "larger" in changes.message
    assert session.view == view and len(session.record) == length


def test_clipping_into_the_view_brings_the_copy_with_its_call():
    session = load_session(demo_path())
    call, result = folded_pair(session)
    changes = Clip(RESULT, 200, into_view=True).do(session)
    assert changes.success
    copy = session.record.get(changes.added[0])
    assert copy.clipped_from == result and copy.id in session.view
    assert session.view.index(call) < session.view.index(copy.id)
    assert results_without_calls(session) == []


def test_cli_clip_of_a_result_out_of_the_view_needs_into_view(tmp_path, capsys):
    out = tmp_path / "out.json"
    assert main(["clip", str(demo_path()), "--index", str(RESULT), "--keep", "200", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the active view" in err and not out.exists()
    assert main(["clip", str(demo_path()), "--index", str(RESULT), "--keep", "200", "--into-view", "-o", str(out)]) == 0
    written = load_session(out)
    assert written.record[CALL].id in written.view and results_without_calls(written) == []


def test_cli_restore_of_a_folded_result_writes_it_with_its_call(tmp_path):
    out = tmp_path / "out.json"
    assert main(["restore", str(demo_path()), "--index", str(RESULT), "-o", str(out)]) == 0
    written = load_session(Path(out))
    assert {written.record[CALL].id, written.record[RESULT].id} <= set(written.view)
    assert results_without_calls(written) == [] and written.warnings == []
