"""The fold panel, a note's members, the next request's divergence and the window map's marks."""

from __future__ import annotations

from foldscope.app.panels.folds import FoldModel, RowRole
from foldscope.app.panels.window_map import Mark
from foldscope.app.qt import Qt
from foldscope.core.readout.divergence import CAUSE_WORDS
from foldscope.core.readout.note_members import note_members
from foldscope.core.readout.opening import build_document
from foldscope.core.request.trace_measure import measure_trace
from tests.app.window_helpers import view_rows


def test_the_fold_model_passes_the_model_tester_and_shows_each_record(qtmodeltester, demo_window):
    model = demo_window.fold_panel.model
    assert isinstance(model, FoldModel)
    qtmodeltester.check(model)
    qtmodeltester.check(demo_window.fold_panel.proxy)
    folds = demo_window.document.session.manifest["context_folds"]
    assert model.rowCount() == len(folds) + len(demo_window.document.session.events)
    assert model.index(0, 3).data() == folds[0]["stage"]
    assert model.index(0, 5).data() == str(folds[0]["messages_folded"])


def test_the_fold_table_gives_every_role_it_draws_with_and_none_it_does_not(demo_window):
    # FoldModel.data answers the roles it never gives first (the view asks each cell a dozen at every resize):
    # each role it does give must still reach it.
    from foldscope.app.panels.folds import COLUMNS, NUMBER, NUMERIC, SortRole

    model, role = demo_window.fold_panel.model, Qt.ItemDataRole
    right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    for r, row in enumerate(model.rows):
        assert model.index(r, NUMBER).data(RowRole) is row
        assert model.index(r, NUMBER).data(SortRole) == row.number
        assert model.index(r, 1).data(SortRole) == row.kind
        assert "took" in model.index(r, 1).data(role.ToolTipRole)
        for c in range(len(COLUMNS)):
            index = model.index(r, c)
            assert isinstance(index.data(role.DisplayRole), str)
            assert index.data(role.TextAlignmentRole) == (right if c in NUMERIC else None)
            assert all(
                index.data(other) is None
                for other in (
                    role.FontRole,
                    role.DecorationRole,
                    role.ForegroundRole,
                    role.BackgroundRole,
                    role.CheckStateRole,
                    role.SizeHintRole,
                )
            )


def test_the_fold_table_fits_its_columns_to_their_cells_once_per_set_rows(demo_window, qapp, monkeypatch):
    # A long session's compactions are hundreds of rows: the header kept fitted (ResizeToContents) measured every
    # cell at each layout pass, three times as the counted document's rows were first shown (0.23 s at 50k, on the
    # GUI thread before the timeline paints), and resizeColumnToContents once asked the view's delegate each cell's
    # size (a dozen roles a cell). Fitted once per set_rows, to the same widths, the delegate asked only the cells
    # whose text is about the widest of its column (one cell a text).
    from dataclasses import replace

    from foldscope.app.panels.folds import COLUMNS, FoldModel

    panel, document = demo_window.fold_panel, demo_window.document
    rows = [replace(row, number=n, slot=n) for n, row in enumerate(list(document.folds) * 60)]
    asked = []
    real = FoldModel._value

    def value(self, row, column):
        asked.append(column)
        return real(self, row, column)

    monkeypatch.setattr(FoldModel, "_value", value)
    sized = []

    class Counting(type(panel.table.itemDelegate())):  # the view's own delegate, counting the cells it is asked to size
        def sizeHint(self, option, index):  # noqa: N802 (Qt override)
            sized.append((index.row(), index.column()))
            return super().sizeHint(option, index)

    panel.table.setItemDelegate(Counting(panel.table))
    panel.set_waiting()
    qapp.processEvents()
    asked.clear()
    panel.set_rows(rows, len(rows))
    fitted_cells = len(rows) * (len(COLUMNS) - 1)
    # 106 cells sized here (the numbers' columns: every two-digit number is about as wide), each cell before.
    assert len(sized) < fitted_cells / 3
    qapp.processEvents()
    panel.table.grab()
    cells = len(rows) * len(COLUMNS)
    # The fit reads each cell's text once and the sized cells' text and alignment, the paint the rows shown: 2.2 a
    # cell here; 2.7 with each cell sized; kept fitted, 6.3.
    assert 2 * cells <= len(asked) <= 4 * cells
    header = panel.table.horizontalHeader()
    for column in range(len(COLUMNS) - 1):  # the last takes the rest of the width
        fitted = max(panel.table.sizeHintForColumn(column), header.sectionSizeHint(column))
        assert panel.table.columnWidth(column) == fitted


def test_selecting_a_fold_record_steps_the_timeline_and_highlights_what_it_folded(demo_window):
    window = demo_window
    session = window.document.session
    row = window.fold_panel.model.rows[0]
    window.fold_panel.select_number(0)
    # The demo's fold ran before request 5: its note first shows in request 5's view.
    assert row.slot == window.timeline.fold_slots()[0] == 5
    assert window.timeline.current == 5
    assert view_rows(window) == [session.record.index_of(mid) for mid in session.trace[5].view]
    note_id = session.record[row.note].id
    assert note_id in session.trace[5].view and note_id not in session.trace[4].view
    # What it took: in request 4's view, gone from request 5's.
    assert row.affected and all(session.record[i].id in session.trace[4].view for i in row.affected)
    assert not any(session.record[i].id in session.trace[5].view for i in row.affected)
    assert window.record_model.highlighted == frozenset(row.affected) == window.window_map.highlighted
    assert window.inspector.index == row.note
    assert (
        window.record_model.index(row.affected[0], 2).data(__import__("foldscope.app.qt", fromlist=["Qt"]).Qt.ItemDataRole.BackgroundRole)
        is not None
    )


def test_a_clip_record_steps_to_its_copy_and_highlights_the_original(qtbot, window, tmp_path):
    from foldscope.core.cli import main as cli
    from foldscope.core.formats.demo import demo_path

    folded = tmp_path / "folded.json"
    assert cli.main(["fold", str(demo_path()), "--ceiling", "8000", "--apply", "-o", str(folded)]) == 0
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(folded)
    qtbot.waitUntil(lambda: window.task is None)
    clip = next(r for r in window.fold_panel.model.rows if r.kind == "clip")
    record = window.document.session.record
    originals = {record[i].id for i in clip.affected}
    copies = [i for i, m in enumerate(record) if m.clipped_from in originals]
    assert copies and clip.affected == tuple(c["index"] for c in clip.raw["clipped"])
    window.fold_panel.select_number(clip.number)
    assert window.timeline.current == clip.slot
    assert all(window.document.in_view(i) for i in copies)
    assert window.view_model.highlighted == frozenset(clip.affected)


def test_sorting_the_fold_panel_keeps_each_row_whole(demo_window):
    panel = demo_window.fold_panel
    panel.table.sortByColumn(5, __import__("foldscope.app.qt", fromlist=["Qt"]).Qt.SortOrder.DescendingOrder)
    rows = [panel.proxy.index(r, 0).data(RowRole) for r in range(panel.proxy.rowCount())]
    values = [r.messages if r.messages is not None else -1 for r in rows]
    assert values == sorted(values, reverse=True)


def test_a_notes_members_are_peeked_verified_and_listed(window, tmp_path):
    from foldscope.core.cli import main as cli
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path

    folded = tmp_path / "folded.json"
    assert cli.main(["fold", str(demo_path()), "--ceiling", "20000", "--apply", "-o", str(folded)]) == 0
    document = build_document(load_session(folded), str(folded))
    window.set_document(document)
    note = max(i for i, m in enumerate(document.session.record) if m.kind == "note")
    members = note_members(document, note)
    assert members.recorded and members.verified is True
    assert list(members.indexes) == document.message(note).metadata["context_replaced"]
    view_before = list(document.session.view)
    window.select_message(note)
    inspector = window.inspector
    assert inspector.tabs.isTabEnabled(inspector.members_tab)
    text = inspector.members.toPlainText()
    assert "SHA-256 verified" in text and f"#{members.indexes[0]}" in text
    assert document.session.view == view_before  # peek never changes the view
    window.select_message(2)  # not a note: no members
    assert not inspector.tabs.isTabEnabled(inspector.members_tab)


def test_the_request_panel_says_where_the_next_request_diverges(demo_window):
    """The panel reports foldscope.core.request.prefix's divergence (the same one foldscope.core.request.trace measures), cause included."""
    window = demo_window
    window.side_tabs.setCurrentWidget(window.request_panel)
    session, doc = window.document.session, window.document
    rows = measure_trace(session, doc.policy).rows
    causes = set()
    for k in range(len(rows) - 1):
        window.timeline.step_to(k)
        found = window.request_panel.divergence
        assert found.as_dict() == rows[k].diverges and found.share == rows[k].prefix_share
        assert CAUSE_WORDS[found.cause] in window.request_panel.header.text()
        causes.add(found.cause)
    assert {"append", "fold"} <= causes


def test_cache_marks_sit_at_the_end_of_their_block_and_draw(qtbot, demo_window):
    window_map = demo_window.window_map
    index = demo_window.document.view_index(5)
    window_map.set_marks((Mark(index, "5m", "tail"), Mark(None, "1h", "stable")))
    block = next(r for i, r, in_view_bar in window_map.blocks() if in_view_bar and i == index)
    assert window_map.mark_x(Mark(index, "5m", "tail")) == block.right()
    assert not window_map.grab().isNull()


def test_the_first_round_bracket_spans_the_protected_messages(qtbot, window, document):
    record = document.session.record
    document.session.branch_metadata["prompt_cache"] = {"protected": [record[0].id, record[1].id]}
    window.set_document(document)
    window.show()
    qtbot.waitExposed(window)
    span = window.window_map._view_span({0, 1})
    first = [r for i, r, bar in window.window_map.blocks() if bar and i in (0, 1)]
    assert span == (first[0].left(), first[-1].right())
    assert not window.window_map.grab().isNull()


def test_a_pi_compaction_shows_its_tokens_before_and_is_a_compaction_on_the_timeline(window, tmp_path):
    """Issue 19: pi's tokensBefore was not in the Folds table; source compactions were labelled "fold"."""
    from foldscope.core.formats import load_session
    from tests.core.formats.test_pi import HEADER, _assistant, _msg
    from tests.core.reader_checks import write_lines

    # The shape of pi's compaction entry, as the pi reader's own tests write it (tests/core/formats/test_pi.py).
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            HEADER,
            _msg("u1", None, "user", "one"),
            _assistant("a1", "u1", "reading", calls=["t1"]),
            _msg("r1", "a1", "toolResult", [{"type": "text", "text": "data"}], toolCallId="t1"),
            _msg("u2", "r1", "user", "two"),
            _assistant("a2", "u2", "ok", tokens=50),
            {"type": "compaction", "id": "k1", "parentId": "a2", "summary": "earlier work", "firstKeptEntryId": "u2", "tokensBefore": 999},
            _msg("u3", "k1", "user", "three"),
            _assistant("a3", "u3", "done"),
        ],
    )
    window.set_document(build_document(load_session(path), str(path)))
    model = window.fold_panel.model
    row = next(r for r in range(model.rowCount()) if model.index(r, 1).data() == "compaction")
    before = next(c for c in range(model.columnCount()) if model.headerData(c, Qt.Orientation.Horizontal) == "Estimate before")
    assert model.index(row, before).data() == "999"
    facts = window.document.requests
    assert [r.index for r in facts if r.folded_before] == [2]
    assert facts[2].compacted_before


def test_the_inspector_shows_created_at_as_a_date_and_counts_say_one_message(window, document):
    """Issue 19: created_at showed as a raw epoch float; "1 messages"."""
    from foldscope.core.readout.words import plural

    window.set_document(document)
    window.select_message(1)  # created_at 2.0 in the session made for tests
    window.inspector.tabs.setCurrentWidget(window.inspector.metadata)  # written once its tab is in front
    assert "1970-01-01 00:00:02 UTC" in window.inspector.metadata.toPlainText()
    assert '"created_at": 2.0' not in window.inspector.metadata.toPlainText()
    assert plural(1, "message") == "1 message" and plural(2, "message") == "2 messages"
    assert plural(1_200, "token") == "1,200 tokens"


def test_a_fold_record_without_estimates_says_not_recorded_and_why(demo_window):
    """New user 23: the demo's fold showed empty estimate columns with no word why."""
    from foldscope.app.panels.folds import AFTER, BEFORE, NOT_RECORDED

    panel = demo_window.fold_panel
    row = panel.model.rows[0]
    assert row.kind == "fold" and row.before is None and row.after is None
    assert panel.model.index(0, BEFORE).data() == panel.model.index(0, AFTER).data() == NOT_RECORDED
    assert "not recorded" in panel.explained.text() and not panel.explained.isHidden()
    assert "not recorded" in panel.model.headerData(BEFORE, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_a_rewind_row_counts_the_messages_it_left_and_is_explained_in_one_sentence(qtbot, window, corpus_dev):
    """New user 23: rows read "branch / rewind / claude_code" with nothing saying what a rewind is."""
    from foldscope.app.panels.folds import MESSAGES, REASON

    path = corpus_dev / "claude_code" / "extracted-dd381a75.jsonl"
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(path)
    panel = window.fold_panel
    events = [e for e in window.document.session.events if e.get("kind") == "branch"]
    rows = [(r, row) for r, row in enumerate(panel.model.rows) if row.kind == "branch"]
    assert events and len(rows) == len(events)
    for (r, row), event in zip(rows, events):
        assert row.messages == len(event["abandoned"])
        assert panel.model.index(r, MESSAGES).data() == f"{len(event['abandoned']):,}"
        assert panel.model.index(r, REASON).data() == f"line {event['line']} went back to line {event['parent_line']}"
    assert "A branch row is a rewind" in panel.explained.text()


def test_the_folds_dock_says_folds_once_its_heading_being_its_title_bar(demo_window):
    """Polish 6: the dock's title bar and a bold heading under it both said "Folds" (17 pixels lost at 1366x768)."""
    from foldscope.app.qt import QLabel, QTextDocument

    dock = demo_window.panes.folds_dock
    titles = [] if dock.titleBarWidget() is not None else [dock.windowTitle()]  # a native title bar draws the title
    for label in dock.findChildren(QLabel):
        if label.isVisibleTo(dock):
            text = QTextDocument()
            text.setHtml(label.text())
            titles.append(text.toPlainText())
    assert sum(title.strip().startswith("Folds") for title in titles) == 1, titles
    assert "1 fold or compaction" in demo_window.fold_panel.heading.text()
    assert "choose one to step to the request" in demo_window.fold_panel.heading.toolTip()  # whole where a narrow dock cuts it
    assert dock.windowTitle() == "Folds"  # what the tab reads when the fold preview is tabbed beside it


def test_the_folds_title_bar_floats_and_closes_the_dock_and_view_folds_brings_it_back(qtbot, demo_window, monkeypatch):
    from foldscope.app.qt import QAction

    dock, title = demo_window.panes.folds_dock, demo_window.panes.folds_dock.titleBarWidget()
    floated = []  # a floating window warns on the offscreen platform (a Qt warning fails the test): the call is enough
    monkeypatch.setattr(dock, "setFloating", floated.append)
    title.float_button.click()
    assert floated == [True]
    title.close_button.click()
    qtbot.waitUntil(lambda: not dock.isVisible())
    folds = next(a for a in demo_window.findChildren(QAction) if a.text() == "&Folds")
    folds.trigger()
    qtbot.waitUntil(dock.isVisible)
    assert demo_window.fold_panel.table.isVisible()
