"""Each panel follows the workspace's changes itself (app.follows_changes): a hidden one is redrawn when shown, not at
every change, and every panel shows the session as it stands after an action, undo, redo, a policy edit and a step."""

from __future__ import annotations

from dataclasses import replace

from foldscope.app.follows_changes import FollowsChanges
from foldscope.app.headings import view_heading
from foldscope.app.panels.status import SEPARATOR, status_parts
from foldscope.app.qt import QLabel, QTabWidget, QWidget, Signal
from foldscope.core.actions.commands import Evict
from foldscope.core.model.commands import Changes
from foldscope.core.readout.marks_facts import cache_marks


class Source(QWidget):
    changed = Signal(object)


def test_a_panel_in_a_hidden_tab_is_marked_stale_on_a_change_and_redrawn_once_shown(qtbot):
    source, tabs = Source(), QTabWidget()
    qtbot.addWidget(source)
    qtbot.addWidget(tabs)
    front, behind = QLabel("front"), QLabel("behind")
    tabs.addTab(front, "front")
    tabs.addTab(behind, "behind")
    seen: list[Changes | None] = []
    follower = FollowsChanges(behind, lambda changes: changes is None or changes.view, seen.append)
    follower.follow(source.changed)
    tabs.show()
    qtbot.waitExposed(tabs)
    source.changed.emit(Changes(view=True))
    assert seen == [] and follower.stale  # not in front: nothing drawn yet
    source.changed.emit(Changes(metadata=True))  # not a change it shows
    tabs.setCurrentWidget(behind)
    assert seen == [None] and not follower.stale  # drawn once, as a whole, when shown
    tabs.setCurrentWidget(front)
    tabs.setCurrentWidget(behind)
    assert seen == [None]  # shown again with nothing new: not drawn again
    source.changed.emit(Changes(view=True))
    assert seen == [None, Changes(view=True)]  # in front: drawn at once, with what changed
    source.changed.emit(Changes(policy=True))
    assert len(seen) == 2  # a change it does not want


def state(window) -> dict:
    """What each panel shows, beside what the document says it should (each pair must be equal)."""
    doc = window.document
    slot = doc.shown if doc.shown is not None else len(doc.requests)
    index = window.inspector.index
    in_view = "in the active view" in window.inspector.header.text()
    branch = window.what_if.branch
    sides = (("request panel", window.request_panel), ("composition panel", window.composition_panel), ("cost panel", window.cost_panel))
    return {
        "view rows": (window.view_model.rowCount(), doc.view_size),
        "record rows": (window.record_model.rowCount(), doc.record_size),
        "timeline": (window.timeline.current, slot),
        "map marks": (window.window_map.marks, cache_marks(doc, doc.view)[0]),
        "heading": (
            window.view_list.heading.text().split("&nbsp; ")[-1],
            view_heading(doc, slot, branch.request if branch is not None else None),
        ),
        "status": (window.status_label.full_text(), SEPARATOR.join(status_parts(doc))),
        "inspector": (in_view, index is not None and doc.in_view(index)),
        **{name: side(panel, doc.shown) for name, panel in sides},
        "fold rows": (window.fold_panel.model.rowCount(), len(doc.folds)),
    }


def side(panel, shown: int | None) -> tuple:
    """A side tab's request: the one shown when it is in front; behind, either that one or stale (drawn when shown)."""
    if panel.isVisible():
        return (panel.slot, shown)
    return (panel.slot == shown or panel.follower.stale, True)


def assert_panels_follow(window, when: str) -> None:
    wrong = {name: pair for name, pair in state(window).items() if pair[0] != pair[1]}
    assert wrong == {}, when


def test_every_panel_shows_the_session_after_an_action_undo_redo_a_policy_edit_and_a_step(demo_window, qtbot):
    window = demo_window
    doc = window.document
    last = doc.view_index(doc.view_size - 1)
    window.select_message(last)  # the inspector in front, on the message the action takes out
    assert_panels_follow(window, "opened")
    window.session_actions.run(Evict([last]), "evict", "Evict")
    assert not doc.in_view(last)
    assert_panels_follow(window, "after an action")
    window.session_actions.undo_action.trigger()
    assert doc.in_view(last)
    assert_panels_follow(window, "after undo")
    window.session_actions.redo_action.trigger()
    assert_panels_follow(window, "after redo")
    ceiling = doc.policy.max_input_tokens
    window.editor.set_policy(replace(doc.policy, max_input_tokens=(ceiling or 200_000) // 2))
    assert_panels_follow(window, "after a policy edit")
    window.timeline.step_to(2)
    assert doc.shown == 2
    assert_panels_follow(window, "after a step")
    window.editor.set_policy(replace(doc.policy, max_input_tokens=(ceiling or 200_000) // 3))
    assert doc.shown == 2  # a policy edit keeps the request shown
    assert_panels_follow(window, "after a policy edit at a step")
    window.session_actions.undo_action.trigger()  # the policy edit undone: still at the request
    assert doc.shown == 2
    assert_panels_follow(window, "after a policy edit undone at a step")
    window.session_actions.undo_action.trigger()  # the eviction undone: an action shows now
    assert doc.shown is None and doc.in_view(last)
    assert_panels_follow(window, "after an action made at a step")


def test_a_hidden_side_tab_is_not_redrawn_at_a_change_and_is_right_when_shown(demo_window):
    window = demo_window
    doc = window.document
    last = doc.view_index(doc.view_size - 1)
    window.select_message(last, reveal=False)
    window.show_side(window.composition_panel)  # the inspector behind another side tab
    inspector = window.inspector.follower
    drawn, header = inspector.redraws, window.inspector.header.text()
    window.session_actions.run(Evict([last]), "evict", "Evict")
    window.timeline.step_to(1)
    window.timeline.step_to(2)
    assert inspector.redraws == drawn and inspector.stale  # three changes, not one drawn
    assert window.inspector.header.text() == header  # still as it was: nobody looks at it
    window.show_side(window.inspector)
    assert inspector.redraws == drawn + 1 and not inspector.stale
    assert_panels_follow(window, "the inspector shown again")


def test_the_fold_table_in_a_closed_dock_is_redrawn_when_the_dock_opens(demo_window):
    from foldscope.core.model.commands import Command

    class TakeBack(Command):
        """Takes the newest fold record back (as undoing a fold does)."""

        def apply(self, session):
            session.manifest["context_folds"].pop()
            return Changes(folds=-1)

    window = demo_window
    doc = window.document
    rows = window.fold_panel.model.rowCount()
    assert rows and doc.session.manifest.get("context_folds")
    window.panes.folds_dock.close()
    follower = window.fold_panel.follower
    drawn = follower.redraws
    window.editor.do(TakeBack(), "take back")
    assert len(doc.folds) < rows
    assert window.fold_panel.model.rowCount() == rows and follower.stale and follower.redraws == drawn
    window.panes.folds_dock.show()
    assert window.fold_panel.model.rowCount() == len(doc.folds) and follower.redraws == drawn + 1


def test_a_step_reads_the_unseen_heads_sources_once_per_state_of_the_record_not_at_every_step(demo_window, monkeypatch):
    from foldscope.app.panels import composition as composition_module

    window = demo_window
    window.show_side(window.composition_panel)  # in front: it composes every request stepped to
    read: list[int] = []
    real = composition_module.sources_for
    monkeypatch.setattr(composition_module, "sources_for", lambda session: read.append(1) or real(session))
    for slot in (1, 2, 3, 2, window.timeline.slots() - 1):
        window.timeline.step_to(slot)
        assert window.composition_panel.composition.request == (slot if slot < window.timeline.slots() - 1 else None)
    assert len(read) <= 1  # the record as it was: what names the head is the same at every request
    doc, before = window.document, len(read)
    changes = window.session_actions.run(Evict([doc.view_index(doc.view_size - 1)]), "evict", "Evict")
    assert changes.success and len(read) == before + 1  # read again for the record as the action left it
