"""The window map's paint costs its width, not the number of messages, and draws the picture painting every block drew."""

from __future__ import annotations

import pytest

from foldscope.app.panels import window_map as window_map_module
from foldscope.app.panels.window_map import LEFT, PATTERNS, RIGHT, PaintPlan, WindowMap
from foldscope.app.qt import QColor, QPainter
from foldscope.app.theme import kind_colour
from foldscope.core.formats.demo import generate
from foldscope.core.readout.document import build_document, is_note

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


def every_block(doc, blocks, highlighted, styles=None, columns=None) -> PaintPlan:
    """The paint before columns: one fill per block, in order (the picture the column plan must keep)."""
    plan = PaintPlan()
    for index, rect, in_view_bar in blocks:
        message = doc.message(index)
        colour = QColor(kind_colour(message))
        if not in_view_bar and not doc.in_view(index) and index not in highlighted:
            colour.setAlpha(70)
        pattern = PATTERNS.get("clipped_copy" if message.is_clipped_copy else "note" if is_note(message) else "")
        plan.fills.append((rect, colour, pattern, rect.width() > 3))
        if index in highlighted and not in_view_bar:
            plan.taken.append((rect.left(), rect.right()))
    return plan


def test_painting_by_column_shows_the_same_picture_as_painting_every_block(qtbot, monkeypatch, large_documents):
    _, doc = large_documents
    widget = WindowMap()
    qtbot.addWidget(widget)
    widget.resize(WIDTH, 146)
    widget.set_document(doc)
    widget.set_highlighted(range(3, doc.record_size, 5))
    widget.set_selected(doc.view_index(doc.view_size // 2))
    by_column = widget.grab().toImage()
    monkeypatch.setattr(window_map_module, "plan_paint", every_block)
    widget._plan = None
    by_block = widget.grab().toImage()
    assert by_column.size() == by_block.size()
    differing = [(x, y) for y in range(by_block.height()) for x in range(by_block.width())
                 if by_column.pixel(x, y) != by_block.pixel(x, y)]
    assert differing == []
