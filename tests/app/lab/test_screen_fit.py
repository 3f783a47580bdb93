"""Issue 45: the labs' windows fit the screen they open on (the Replay lab asked for 1500x1000 on any screen)."""

from __future__ import annotations

import pytest

from foldscope.app.lab.replay import ReplayView
from foldscope.app.lab.screen_fit import FRAME
from foldscope.app.lab.tune import TuneView


@pytest.mark.parametrize("view_class", [ReplayView, TuneView])
def test_a_lab_opens_no_larger_than_its_screens_free_part(qtbot, view_class):
    view = view_class()
    qtbot.addWidget(view)
    free = view.screen().availableGeometry()  # the offscreen platform's: 800x800, smaller than either asks
    assert free.height() < 1000
    assert view.width() <= free.width() - FRAME[0] and view.height() <= free.height() - FRAME[1]
