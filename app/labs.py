"""The Lab menu's windows: the Replay lab on the open session, and the policy sweep (tune) over a folder."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from foldscope.app.menus import add_action
from foldscope.app.qt import QMenu, QWidget
from foldscope.core.readout.document import Document

if TYPE_CHECKING:  # imported when a lab is first opened: the window's start, and so its first look at a session, waits for neither
    from foldscope.app.lab.replay import ReplayView
    from foldscope.app.lab.tune import TuneView


class Labs:
    """Makes each lab window once, on first use, and keeps the Replay lab on the session the window shows.

    The window hands in which document is shown (`current`), how to hear of each document loaded (`on_loaded(slot)`) and
    how to step the timeline to a request (`step_to(k)`, when the lab picks one); it calls `fill_menu` for its Lab menu.
    """

    def __init__(
        self,
        parent: QWidget,
        current: Callable[[], Document | None],
        on_loaded: Callable[[Callable[[Document | None], None]], object],
        step_to: Callable[[int], None],
    ) -> None:
        self.parent_widget, self.current, self.on_loaded, self.step_to = parent, current, on_loaded, step_to
        self.replay_lab: ReplayView | None = None  # made when first opened
        self.tune: TuneView | None = None  # made when first opened

    def fill_menu(self, lab_menu: QMenu) -> None:
        add_action(lab_menu, self.parent_widget, "Replay &lab…", "Ctrl+Shift+P", self.open_replay_lab)
        add_action(
            lab_menu,
            self.parent_widget,
            "&Tune a policy…",
            None,
            self.open_tune,
            "sweep policies over a folder of sessions and name the cheapest safe one",
        )

    def open_tune(self) -> TuneView:
        """Show the policy sweep's window (made once): it works on a folder, not on the open session."""
        if self.tune is None:
            from foldscope.app.lab.tune import TuneView

            self.tune = TuneView(self.parent_widget)
        self.tune.show()
        self.tune.raise_()
        self.tune.activateWindow()
        return self.tune

    def open_replay_lab(self) -> ReplayView:
        """Show the Replay lab on the open session, made once and kept in step with the window."""
        lab = self.replay_lab
        if lab is None:
            from foldscope.app.lab.replay import ReplayView

            lab = self.replay_lab = ReplayView(self.parent_widget)
            self.on_loaded(lambda doc: lab.set_session(doc.session if doc else None, getattr(doc, "policy", None)))
            lab.request_chosen.connect(self.step_to)
        doc = self.current()
        if lab.session is not (doc.session if doc else None):
            lab.set_session(doc.session if doc else None, getattr(doc, "policy", None))
        lab.show()
        lab.raise_()
        lab.activateWindow()
        return lab

    def close(self) -> None:
        """The window closes: the Replay lab with it (its runs stop)."""
        if self.replay_lab is not None:
            self.replay_lab.close()
