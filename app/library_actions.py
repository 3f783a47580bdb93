"""The library's actions in the window: choose another library or a fresh one, import the open session, removals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.panels.library import LibraryBar, LibraryPanel
from foldscope.app.qt import QObject, QWidget, Signal
from foldscope.app.save import SaveController
from foldscope.app.worker import Task, run_task
from foldscope.core.readout.document import Document


class LibraryActions(QObject):
    """Switches the window to another library and keeps the open session's place in it.

    The window hands in the library's panel and bar (whose requests it answers), the saver, which library is in use
    (`db`) and how to use another (`use_db(path)`), which document is shown (`current`) and how to say a line on the
    status bar (`say(text, ms)`).
    """

    imported = Signal(int)  # the open session went into a library chosen after it opened

    def __init__(
        self,
        parent: QWidget,
        panel: LibraryPanel,
        bar: LibraryBar,
        saver: SaveController,
        db: Callable[[], str | None],
        use_db: Callable[[str], None],
        current: Callable[[], Document | None],
        say: Callable[[str, int], None],
    ) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.panel, self.bar, self.saver = panel, bar, saver
        self.db, self.use_db, self.current, self.say = db, use_db, current, say
        panel.sessions_removed.connect(self.sessions_removed)
        bar.choose_requested.connect(self.choose_library)
        bar.fresh_requested.connect(self.fresh_library)

    def choose_library(self) -> bool:
        """Use another library (an existing file or a new name) from now on."""
        path = dialogs.choose_library_path(self.parent_widget, self._start())
        return self.use_library(path) if path else False

    def fresh_library(self) -> bool:
        """Create a fresh library; a file already at the chosen place is set aside (renamed), never deleted."""
        path = dialogs.fresh_library_path(self.parent_widget, self._start())
        return self.use_library(path, fresh=True) if path else False

    def _start(self) -> str:
        from foldscope.core.store.library_file import default_path

        db = self.db()
        current = Path(db) if db else default_path()
        return str(current.with_name("library-new.db"))

    def use_library(self, path: str, fresh: bool = False) -> bool:
        """Switch every part of the window to the library at path; the open session is imported into it
        (so search and autosave work again). False, with the bar saying why, when that library fails too."""
        from foldscope.core.model.session import LibraryError
        from foldscope.core.store.library import Library
        from foldscope.core.store.library_file import set_aside

        try:
            aside = set_aside(path) if fresh else None
            Library(path).close()
        except LibraryError as exc:
            self.bar.show_problem(str(exc))
            return False
        self.use_db(path)
        self.bar.show_problem(None)
        moved = f"; the old file is now {aside.name}" if aside else ""
        self.say(f"Using the library {path}{moved}", 8000)
        doc = self.current()
        if doc is not None and (doc.library_id is None or fresh or doc.library_problem):
            self.import_open_session(doc, path)
        self.panel.refresh()
        return True

    def import_open_session(self, doc: Document, db: str) -> Task:
        from foldscope.core.readout.opening import import_into_library, keep_token_counts

        def work(progress) -> int:
            library_id = import_into_library(doc.session, db, progress.report)
            keep_token_counts(db, library_id, doc.tokens)
            return library_id

        def imported(library_id: int) -> None:
            doc.library_id, doc.library_problem = library_id, None
            self.imported.emit(library_id)
            self.panel.refresh()

        def failed(exc: BaseException) -> None:
            from foldscope.core.model.session import LibraryError

            if isinstance(exc, LibraryError):
                self.bar.show_problem(str(exc))
            else:  # the session's file changed since it was read, say: opening it again imports it
                self.say(f"{Path(doc.path).name} is not in the library yet: {exc}", 10000)

        return run_task(work, f"Importing {Path(doc.path).name}", self.parent_widget, succeeded=imported, failed=failed)

    def sessions_removed(self, ids: list[int]) -> None:
        doc = self.current()
        if doc is not None and doc.library_id in ids:
            doc.library_id = None  # its rows are gone: autosave stops until it is opened again
            self.say(f"{Path(doc.path).name} was removed from the library: autosave is off until it is opened again", 8000)
