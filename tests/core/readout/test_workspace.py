"""The workspace is the only way the open session changes: commands, undo, redo, the policy, the shown request, growth."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as hs
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from foldscope.core.actions.commands import Evict, Restore
from foldscope.core.actions.recovery import Peek
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.readout.opening import build_document, first_document
from foldscope.core.readout.trace_facts import measure_requests
from foldscope.core.readout.workspace import Workspace
from foldscope.core.request.count import Counter

EDITED = "the policy editor"


def opened() -> Workspace:
    return Workspace(build_document(load_session(demo_path()), str(demo_path())))


def evictable(ws: Workspace) -> int:
    """A tool result in the view (evicting it changes the view)."""
    record = ws.session.record
    return next(record.index_of(mid) for mid in ws.session.view if record.get(mid).kind == "action_response")


def edited(ws: Workspace, **keys) -> Policy:
    """The policy in force with `keys` changed, as the policy editor makes it."""
    assert ws.document.policy is not None
    return replace(ws.document.policy, source=EDITED, **keys)


def test_a_policy_set_is_undone_and_redone_like_any_command():
    ws = opened()
    doc = ws.document
    before = (doc.policy, doc.rules, doc.now_size)
    changes = ws.set_policy(edited(ws, max_input_tokens=5_000, tool_result_max_chars=1024))
    assert changes.policy and changes.success
    assert doc.policy.max_input_tokens == 5_000 and doc.rules.ceiling == 5_000
    assert f"max_input_tokens is 5,000 in {EDITED}" in doc.rules.source
    assert doc.now_size < before[2]  # the result bound shrinks the next request
    after = (doc.policy, doc.rules, doc.now_size)
    assert ws.stack.can_undo and ws.stack.undo_label == "policy edit of max_input_tokens, tool_result_max_chars"
    assert ws.undo().policy
    assert (doc.policy, doc.rules, doc.now_size) == before
    assert ws.redo().policy
    assert (doc.policy, doc.rules, doc.now_size) == after


def test_rules_at_opening_equal_the_rules_after_the_same_policy_is_set_again():
    ws = opened()
    doc = ws.document
    opening_policy, opening_rules = doc.policy, doc.rules
    ws.set_policy(edited(ws, max_input_tokens="auto"))
    assert doc.rules != opening_rules and doc.rules.source.endswith(f"({EDITED})")  # auto's why names where it came from
    ws.set_policy(replace(opening_policy, source=EDITED))
    assert doc.rules == opening_rules


def test_an_edited_policy_has_the_rules_measuring_under_it_makes():
    """One place makes rules: a policy put in force has the ceiling, line, target and tier a trace measured under it has."""
    ws = opened()
    policy = edited(ws, max_input_tokens=7_000, context_fold_at=0.7, context_fold_target=0.5)
    ws.set_policy(policy)
    measured = measure_requests(load_session(demo_path()), Counter(threads=1), lambda *a: None, policy).rules
    assert replace(ws.document.rules, source="") == replace(measured, source="")


def test_typing_a_value_is_one_undo_step_and_typing_it_back_is_none():
    ws = opened()
    for digits in ("1", "12", "120", "1200"):
        ws.set_policy(edited(ws, max_input_tokens=int(digits)))
    assert ws.stack.index == 1 and ws.document.policy.max_input_tokens == 1200
    ws.set_policy(edited(ws, context_fold_at=0.7))  # another key: a step of its own
    assert ws.stack.index == 2
    ws.undo()
    ws.undo()
    assert ws.document.policy.max_input_tokens == 100_000 and not ws.stack.can_undo
    ws.set_policy(edited(ws, max_input_tokens=5))
    ws.set_policy(edited(ws, max_input_tokens=100_000))  # back where it began: the step is dropped
    assert ws.stack.index == 0 and ws.stack.is_clean


def test_revision_moves_at_every_change_and_never_at_a_no_op():
    ws = opened()
    doc = ws.document
    seen = [ws.revision]

    def step(changes, moved: bool) -> None:
        assert changes.changed == moved
        assert (ws.revision > seen[-1]) if moved else (ws.revision == seen[-1])
        seen.append(ws.revision)

    step(ws.undo(), False)  # nothing to undo
    step(ws.apply(Restore([10_000])), False)  # refused
    step(ws.apply(Peek(0)), False)  # read-only
    step(ws.set_policy(replace(doc.policy, source=EDITED)), False)  # the policy in force, from elsewhere
    step(ws.show_request(None), False)  # now is shown already
    step(ws.apply(Evict([evictable(ws)])), True)
    step(ws.show_request(3), True)
    step(ws.show_request(3), False)
    step(ws.set_policy(edited(ws, max_input_tokens=9_000)), True)
    step(ws.undo(), True)
    step(ws.redo(), True)
    step(ws.redo(), False)


def test_a_step_moves_the_revision_but_not_the_facts():
    ws = opened()
    doc = ws.document
    facts, trace = doc.facts_revision, doc.trace_revision
    ws.show_request(2)
    assert doc.shown == 2 and doc.view == list(doc.requests[2].view)
    assert (doc.facts_revision, doc.trace_revision) == (facts, trace)
    ws.apply(Evict([evictable(ws)]))
    assert doc.facts_revision > facts and doc.trace_revision == trace and doc.shown is None  # an action shows now
    ws.set_policy(edited(ws, max_input_tokens=9_000))
    assert doc.trace_revision > trace


def test_the_clean_state_follows_undo_and_redo_to_the_saved_point():
    ws = opened()
    assert ws.stack.is_clean and not ws.is_modified
    ws.apply(Evict([evictable(ws)]))
    assert ws.is_modified
    ws.set_clean()
    assert not ws.is_modified
    ws.set_policy(edited(ws, max_input_tokens=9_000))
    assert ws.is_modified
    ws.undo()
    assert ws.stack.is_clean and not ws.is_modified  # back at the saved point
    ws.undo()
    assert not ws.stack.is_clean
    ws.redo()
    assert ws.stack.is_clean
    ws.undo()
    ws.set_policy(edited(ws, max_input_tokens=8_000))  # a new step where redo led to the saved point
    ws.undo()
    ws.redo()
    assert not ws.stack.is_clean  # no undo or redo reaches the saved state any more
    ws.reset_clean()
    assert ws.is_modified


def test_a_saved_point_is_not_merged_into():
    ws = opened()
    ws.set_policy(edited(ws, max_input_tokens=1))
    ws.set_clean()
    ws.set_policy(edited(ws, max_input_tokens=12))
    assert ws.stack.index == 2
    ws.undo()
    assert ws.stack.is_clean and ws.document.policy.max_input_tokens == 1


def test_fold_rows_follow_a_fold_and_its_undo():
    from foldscope.core.actions.commands import ApplyFold
    from foldscope.core.fold.fold import Fold

    ws = opened()
    doc = ws.document
    rows = doc.folds
    ws.set_policy(edited(ws, max_input_tokens=3_000))
    changes = ws.apply(ApplyFold(Fold(doc.session, doc.measure_for())))
    assert changes.folds > 0 and len(doc.folds) == len(rows) + changes.folds
    ws.undo()
    assert doc.folds == rows


def test_growth_moves_the_revision_and_starts_the_history_again():
    from foldscope.core.model.session import FullRecord

    whole, part = load_session(demo_path()), load_session(demo_path())  # the file read whole, and its first part
    n = len(part.record) - 10
    part.record = FullRecord(list(whole.record)[:n])
    part.set_view([mid for mid in whole.view if mid in part.record])
    part.trace = [r for r in whole.trace if all(mid in part.record for mid in r.view)]
    ws = Workspace(build_document(part, str(demo_path())))
    ws.apply(Evict([evictable(ws)]))
    revision, trace = ws.revision, ws.document.trace_revision
    changes = ws.load_more(whole)
    assert len(changes.added) == 10 and ws.revision > revision and ws.document.trace_revision > trace
    assert ws.session is whole and ws.stack.session is whole and not ws.stack.can_undo and not ws.is_modified
    assert len(ws.document.tokens) == len(whole.record)


class WorkspaceSteps(RuleBasedStateMachine):
    """Any sequence of actions, policy edits, steps, undo, redo and saves: the revision moves exactly when something
    changed, and a clean history is the state last saved."""

    @initialize()
    def open(self) -> None:
        self.ws = opened()
        self.last = self.ws.revision
        self.saved = self.state()

    def state(self) -> tuple:
        session, doc = self.ws.session, self.ws.document
        return (list(session.view), repr(session.branch_metadata), doc.policy.as_profile() if doc.policy else None)

    def moved(self, changes) -> None:
        assert (self.ws.revision > self.last) == changes.changed
        assert self.ws.revision >= self.last
        self.last = self.ws.revision

    @rule(data=hs.data())
    def evict(self, data) -> None:
        view = self.ws.session.view
        mid = data.draw(hs.sampled_from(view))
        self.moved(self.ws.apply(Evict([self.ws.session.record.index_of(mid)])))

    @rule(index=hs.integers(0, 80))
    def restore(self, index: int) -> None:
        self.moved(self.ws.apply(Restore([index])))

    @rule(ceiling=hs.sampled_from([3_000, 30_000, 100_000, "auto", "none"]), bound=hs.sampled_from([None, 1024]))
    def policy(self, ceiling, bound) -> None:
        self.moved(self.ws.set_policy(edited(self.ws, max_input_tokens=ceiling, tool_result_max_chars=bound)))

    @rule(slot=hs.integers(0, 14))
    def step(self, slot: int) -> None:
        self.moved(self.ws.show_request(slot))

    @rule()
    def undo(self) -> None:
        self.moved(self.ws.undo())

    @rule()
    def redo(self) -> None:
        self.moved(self.ws.redo())

    @precondition(lambda self: hasattr(self, "ws"))
    @rule()
    def save(self) -> None:
        self.ws.set_clean()
        self.saved = self.state()

    @precondition(lambda self: hasattr(self, "ws"))
    @invariant()
    def clean_is_saved(self) -> None:
        if self.ws.stack.is_clean:
            assert self.state() == self.saved


TestWorkspaceSteps = WorkspaceSteps.TestCase
TestWorkspaceSteps.settings = settings(
    max_examples=8, stateful_step_count=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def test_a_document_not_yet_counted_takes_a_revision_of_its_own():
    session = load_session(demo_path())
    first, counted = first_document(session, "a"), build_document(session, "a")
    assert len({first.revision, counted.revision, first.facts_revision, counted.trace_revision}) == 4


@pytest.mark.parametrize("slot", [None, 100])
def test_showing_now_twice_is_no_change(slot):
    ws = opened()
    assert not ws.show_request(slot).changed


def test_restore_is_admitted_under_the_ceiling_of_the_policy_given_and_always_without_one():
    ws = opened()
    view = list(ws.session.view)
    assert ws.admission(edited(ws, max_input_tokens="none")) is None
    tight, roomy = ws.admission(edited(ws, max_input_tokens=1_000)), ws.admission(edited(ws, max_input_tokens=10**9))
    assert tight is not None and roomy is not None
    assert not tight(view) and roomy(view)


def test_a_policy_edit_alone_leaves_the_session_as_saved():
    """A what-if and following start from the session as saved, under the policy in force: a policy edit is an
    unsaved change (Save writes the policy) but not a change of the session."""
    ws = opened()
    ws.set_policy(edited(ws, max_input_tokens=9_000))
    assert ws.is_modified and not ws.session_modified
    ws.apply(Evict([evictable(ws)]))
    assert ws.session_modified
    ws.undo()
    assert not ws.session_modified
    ws.set_clean()  # saved under the edited policy
    ws.undo()  # the policy as opened: not the saved one, and the session as saved
    assert ws.is_modified and not ws.session_modified
    ws.apply(Evict([evictable(ws)]))  # a step where redo led to the saved state: it is out of reach now
    ws.undo()
    assert ws.session_modified and ws.stack.since_clean() is None


def test_the_cache_report_stands_through_actions_and_is_dropped_when_the_policy_moves():
    from foldscope.core.readout.cost_facts import document_cache

    ws = opened()
    doc = ws.document
    made = document_cache(doc)
    assert doc.cache_report() is made
    ws.apply(Evict([evictable(ws)]))
    ws.show_request(2)
    assert doc.cache_report() is made  # neither an action nor a step changes the trace or the policy
    ws.set_policy(edited(ws, max_input_tokens=9_000))
    assert doc.cache_report() is None  # made under another policy
