"""File > Export Report: the open session written as one self-contained HTML file, off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.menus import add_action
from foldscope.app.panels.busy import BusyBar
from foldscope.app.qt import QAction, QMenu, QObject, QWidget
from foldscope.app.worker import Task
from foldscope.core.readout.document import Document


class ReportExport(QObject):
    """Asks where to write the report, writes it on the worker with the busy bar, says where it went.

    The window hands in the busy bar, which document is shown (`current`) and how to say a line on the status bar
    (`say(text, ms)`); it calls `add_action` when it builds its File menu.
    """

    def __init__(self, parent: QWidget, busy: BusyBar, current: Callable[[], Document | None], say: Callable[[str, int], None]) -> None:
        super().__init__(parent)
        self.parent_widget, self.busy, self.current, self.say = parent, busy, current, say
        self.task: Task | None = None  # the last report written
        self.action: QAction | None = None  # File > Export Report, once the menu is built

    def add_action(self, menu: QMenu) -> QAction:
        self.action = add_action(
            menu, self.parent_widget, "Export &Report…", None, self.export, "Write the session as one self-contained HTML file to share"
        )
        return self.action

    def export(self) -> Task | None:
        """File > Export Report: the session as one self-contained HTML file, written off the GUI thread."""
        doc = self.current()
        if doc is None:
            return None
        out = dialogs.report_path_dialog(self.parent_widget, str(Path(doc.path).with_suffix(".html")))
        if not out:
            return None
        return self.write(out)

    def write(self, out: str) -> Task | None:
        from foldscope.core.model.policy import Policy
        from foldscope.core.readout.report import write_report

        doc = self.current()
        if doc is None:
            return None
        session, policy = doc.session, doc.policy if isinstance(doc.policy, Policy) else None
        task = Task(lambda progress: write_report(session, out, policy), f"Writing {Path(out).name}", self.parent_widget)
        task.succeeded.connect(lambda data: self.say(f"Report written to {out}", 10_000))
        task.failed.connect(lambda exc: dialogs.error_dialog(self.parent_widget, "Cannot write the report", f"{out}: {exc}"))
        task.ended.connect(self.busy.end)
        self.task = task.start()
        self.busy.begin(f"Writing {Path(out).name}", task.cancel)
        return task
