"""The window map's paint costs its width, not the number of messages, and draws the picture painting every block drew."""

from __future__ import annotations

import pytest

from foldscope.app.panels import window_map_paint as window_map_module
from foldscope.app.panels.window_map import WindowMap
from foldscope.app.panels.window_map_blocks import BAR_HEIGHT, LEFT, PATTERNS, RIGHT, PaintPlan
from foldscope.app.qt import QColor, QPainter, QPointF, QRectF
from foldscope.app.theme import kind_colour
from foldscope.core.formats.demo import generate
from foldscope.core.readout.document import is_note
from foldscope.core.readout.opening import build_document
from foldscope.core.readout.workspace import Workspace

WIDTH = 800


class CountingPainter(QPainter):
    """QPainter that counts the shapes a paint asks for (fills and lines), the cost the issue measured."""

    calls = 0

    def fillRect(self, *args):  # noqa: N802 (Qt name)
        CountingPainter.calls += 1
        return super().fillRect(*args)

    def drawLine(self, *args):  # noqa: N802 (Qt name)
        CountingPainter.calls += 1
        return super().drawLine(*args)


def paint_calls(qtbot, monkeypatch, document) -> tuple[int, WindowMap]:
    widget = WindowMap()
    qtbot.addWidget(widget)
    widget.resize(WIDTH, 146)
    widget.set_document(document)
    widget.set_highlighted(range(0, document.record_size, 2))  # every other message taken: the worst case for lines
    monkeypatch.setattr(window_map_module, "QPainter", CountingPainter)
    CountingPainter.calls = 0
    widget.grab()
    return CountingPainter.calls, widget


@pytest.fixture(scope="module")
def large_documents():
    """Demo-shaped sessions of about 940 and 3,750 messages (most blocks far under a pixel at this width)."""
    small = build_document(generate(rounds=250, listing_chars=200), "small.json")
    large = build_document(generate(rounds=1000, listing_chars=200), "large.json")
    return small, large


def test_a_paint_costs_the_maps_width_not_the_number_of_messages(qtbot, monkeypatch, large_documents):
    small, large = large_documents
    assert large.record_size > 3 * small.record_size > 2_700
    small_calls, _ = paint_calls(qtbot, monkeypatch, small)
    large_calls, widget = paint_calls(qtbot, monkeypatch, large)
    bar = WIDTH - LEFT - RIGHT
    # Two bars, a fill and maybe a pattern per column, the taken line: bounded by the width, not 2 x 3,750 blocks.
    assert large_calls <= 5 * bar, (large_calls, large.record_size)
    assert small_calls <= 5 * bar
    assert large_calls < (large.view_size + large.record_size) / 4  # painting every block asked for 8,404 here
    assert len(widget.paint_plan().fills) <= 2 * 2 * bar


def laid_block_by_block(widget: WindowMap) -> list[tuple[int, QRectF, bool]]:
    """The blocks as the map laid them out before its bars were numbers: one rectangle per block, end to end."""
    doc = widget.document
    scale = widget._scale()
    view_y, record_y = widget._rows()
    lead, widths = widget.view_widths()
    out = []
    x = float(LEFT) + lead * scale
    for index in doc.view_position:
        width = widths.get(index, 0.0) * scale
        out.append((index, QRectF(x, view_y, width, BAR_HEIGHT), True))
        x += width
    x = float(LEFT)
    for index in range(doc.record_size):
        width = doc.sizes[index] * scale
        out.append((index, QRectF(x, record_y, width, BAR_HEIGHT), False))
        x += width
    return out


def every_block(widget: WindowMap):
    """The paint before columns: one fill per block, in order (the picture the column plan must keep)."""

    def plan(doc, columns, record, highlighted, styles=None) -> PaintPlan:
        out = PaintPlan()
        for index, rect, in_view_bar in laid_block_by_block(widget):
            message = doc.message(index)
            colour = QColor(kind_colour(message))
            if not in_view_bar and not doc.in_view(index) and index not in highlighted:
                colour.setAlpha(70)
            pattern = PATTERNS.get("clipped_copy" if message.is_clipped_copy else "note" if is_note(message) else "")
            out.fills.append((rect, colour, pattern, rect.width() > 3))
            if index in highlighted and not in_view_bar:
                out.taken.append((rect.left(), rect.right()))
        return out

    return plan


def same_picture(widget: WindowMap, monkeypatch) -> list[tuple[int, int]]:
    """The pixels where the map's paint differs from painting every block laid out one by one."""
    widget._plan = None
    by_column = widget.grab().toImage()
    with monkeypatch.context() as patch:
        patch.setattr(window_map_module, "plan_paint", every_block(widget))
        widget._plan = None
        by_block = widget.grab().toImage()
    widget._plan = None
    assert by_column.size() == by_block.size()
    return [(x, y) for y in range(by_block.height()) for x in range(by_block.width()) if by_column.pixel(x, y) != by_block.pixel(x, y)]


def test_painting_by_column_shows_the_same_picture_as_painting_every_block(qtbot, monkeypatch, large_documents):
    _, doc = large_documents
    widget = WindowMap()
    qtbot.addWidget(widget)
    widget.resize(WIDTH, 146)
    widget.set_document(doc)
    widget.set_highlighted(range(3, doc.record_size, 5))
    widget.set_selected(doc.view_index(doc.view_size // 2))
    assert same_picture(widget, monkeypatch) == []


def test_a_step_lays_the_bars_out_in_numbers_and_draws_what_laying_out_every_block_drew(qtbot, monkeypatch, large_documents):
    """A step lays the view bar out as numbers (no rectangle per block); at every request, highlighted or not,
    the picture, every block's rectangle and the block under each point are the ones laying out block by block gave."""
    _, doc = large_documents
    widget = WindowMap()
    qtbot.addWidget(widget)
    widget.resize(WIDTH, 146)
    widget.set_document(doc)
    workspace = Workspace(doc)  # a step goes through the workspace, which moves the revision the map keys on
    try:
        for slot in (0, len(doc.requests) // 3, len(doc.requests) - 1, None):
            workspace.show_request(slot)
            widget.set_highlighted(range(slot or 0, doc.record_size, 7))
            widget.set_selected(doc.view_index(doc.view_size - 1))
            expected = laid_block_by_block(widget)
            assert [(i, r.getRect(), bar) for i, r, bar in widget.blocks()] == [(i, r.getRect(), bar) for i, r, bar in expected]
            assert same_picture(widget, monkeypatch) == []
            if slot not in (0, None):
                continue
            # The block under a point, as a scan of every rectangle finds it (the float bounds only skip blocks far off).
            bounds = [(i, rect, rect.left() - 1, rect.right() + 1) for i, rect, _ in expected]
            view_y, record_y = widget._rows()
            for y in (view_y + 13, record_y + 13, record_y + BAR_HEIGHT, view_y - 1):
                for x in [LEFT - 1 + 0.5 * n for n in range(2 * (WIDTH - LEFT - RIGHT) + 6)]:
                    point = QPointF(x, y)
                    scanned = next(
                        (i for i, rect, left, right in bounds if left <= x <= right and rect.adjusted(-0.5, 0, 0.5, 0).contains(point)),
                        None,
                    )
                    assert widget.block_at(point) == scanned, (slot, x, y)
    finally:
        workspace.show_request(None)


def test_the_styles_kept_for_a_record_are_its_messages_styles_as_it_grows_and_shared_by_its_documents(qtbot):
    from foldscope.app.panels.window_map_blocks import message_styles
    from foldscope.core.model.session import Message
    from foldscope.core.readout.opening import first_document

    session = generate(rounds=30, listing_chars=20)
    widget = WindowMap()
    qtbot.addWidget(widget)
    widget.resize(WIDTH, 146)
    first = first_document(session, "s.json")
    widget.set_document(first)
    widget.grab()
    kept = widget._styles[1]
    counted = build_document(session, "s.json")  # a load's counted document: the same record
    widget.set_document(counted)
    widget.grab()
    assert widget._styles[1] is kept  # not made again
    session.record.append(Message(id="late-note", kind="note", content={"assistant_response": "a note"}, created_at=0.0))
    widget.set_document(first_document(session, "s.json"))
    widget.grab()
    assert widget._styles[1] == message_styles(first) and widget._styles[1][-1] == ("note", PATTERNS["note"])
    other = generate(rounds=5, listing_chars=20, seed=3)
    widget.set_document(first_document(other, "o.json"))
    widget.grab()
    assert widget._styles[1] == message_styles(first_document(other, "o.json"))


def test_a_records_styles_are_each_messages_kind_and_pattern_one_tuple_a_style():
    # The map keeps a style a message for the record's life (48,842 at 50k): each the kind key and the pattern the
    # message's kind draws with (a copy's, a note's, none), one tuple shared by every message of that style, not one
    # made a message; and only a message keyed "note" is asked whether it is a note.
    from foldscope.app.panels.window_map_blocks import message_styles
    from foldscope.app.theme import kind_key
    from foldscope.core.model.session import Message
    from foldscope.core.readout.opening import first_document

    session = generate(rounds=30, listing_chars=20)
    record = session.record
    original = next(m for m in record if m.kind == "action_response")
    record.append(
        Message(id="copy", kind="action_response", content={"output": "cut"}, created_at=0.0, metadata={"clipped_from": original.id})
    )
    record.append(Message(id="note", kind="note", content={"assistant_response": "a note"}, created_at=0.0))
    record.append(
        Message(id="fold", kind="assistant", content={"assistant_response": "x"}, created_at=0.0, metadata={"context_first_index": 2})
    )
    record.append(
        Message(id="odd", kind="assistant", content={"assistant_response": "y"}, created_at=0.0, metadata={"context_first_index": "2"})
    )
    styles = message_styles(first_document(session, "s.json"))
    for message, style in zip(record, styles, strict=True):
        pattern = "clipped_copy" if message.is_clipped_copy else "note" if is_note(message) else ""
        assert style == (kind_key(message), PATTERNS.get(pattern))
    assert styles[-4:] == [
        ("clipped_copy", PATTERNS["clipped_copy"]),
        ("note", PATTERNS["note"]),
        ("note", PATTERNS["note"]),
        ("note", None),
    ]
    assert len({id(style) for style in styles}) == len(set(styles))
