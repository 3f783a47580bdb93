"""Small readings of the main window shared by GUI tests."""

from __future__ import annotations

from foldscope.app.models.messages import IndexRole


def view_rows(window) -> list[int]:
    """The record indices the active view list shows, in order."""
    model = window.view_model
    return [model.index(row, 0).data(IndexRole) for row in range(model.rowCount())]
