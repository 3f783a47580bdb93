"""Every modal the app shows, in one place: tests replace these functions (never click a dialog), and each
shows text from a session file as plain text, never as rich text or a link."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from foldscope.app.qt import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFontDatabase,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QSlider,
    QSpinBox,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.core.readout import clip_facts
from foldscope.core.readout.document import Document
from foldscope.core.readout.words import dollars, plural

# Every reader's file: JSON lines and JSON, an Inspect AI .eval, an OpenCode database, an Aider history (.md).
SESSION_FILTER = "Session files (*.json *.jsonl *.eval *.db *.md);;All files (*)"
NATIVE_FILTER = "foldscope native session (*.json);;All files (*)"
PROFILE_FILTER = "YAML profiles (*.yaml *.yml);;All files (*)"


def message_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.Ok,
) -> QMessageBox:
    """A message box whose text is plain: a file name or a message id holding HTML shows as the characters it is."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return box


# -- files ---------------------------------------------------------------------------------


def open_session_path(parent: QWidget, start: str) -> str:
    """The session file to open, or "" when cancelled."""
    return QFileDialog.getOpenFileName(parent, "Open session", start, SESSION_FILTER)[0]


def choose_folder(parent: QWidget, title: str, start: str) -> str:
    """A folder to read (the sessions a sweep replays), or "" when cancelled."""
    return QFileDialog.getExistingDirectory(parent, title, start)


def save_path_dialog(parent: QWidget, start: str) -> str:
    """Where to save the session, or "" when cancelled."""
    return QFileDialog.getSaveFileName(parent, "Save session as", start, NATIVE_FILTER)[0]


LIBRARY_FILTER = "foldscope library (*.db);;All files (*)"


def choose_library_path(parent: QWidget, start: str) -> str:
    """Another library to use (an existing one, or a new name), or "" when cancelled."""
    options = QFileDialog.Option.DontConfirmOverwrite
    return QFileDialog.getSaveFileName(parent, "Choose another library", start, LIBRARY_FILTER, options=options)[0]


def fresh_library_path(parent: QWidget, start: str) -> str:
    """Where to create a fresh, empty library (a file there is set aside, never deleted), or "" when cancelled."""
    return QFileDialog.getSaveFileName(parent, "Create a fresh library", start, LIBRARY_FILTER)[0]


def confirm_remove(parent: QWidget, names: list[str]) -> bool:
    """Whether to remove these sessions from the library (their files stay where they are)."""
    buttons = QMessageBox.StandardButton
    shown = "\n".join(names[:12]) + (f"\n… and {len(names) - 12} more" if len(names) > 12 else "")
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        "Remove from the library",
        f"Remove {len(names)} session(s) from the library? Their files are not touched.\n\n{shown}",
        buttons.Yes | buttons.Cancel,
    )
    box.setDefaultButton(buttons.Cancel)
    return buttons(box.exec()) == buttons.Yes


def report_path_dialog(parent: QWidget, start: str) -> str:
    """Where to write the HTML report, or "" when cancelled."""
    return QFileDialog.getSaveFileName(parent, "Export report", start, "HTML report (*.html);;All files (*)")[0]


def text_path_dialog(parent: QWidget, start: str) -> str:
    """Where to save a message's whole text (the inspector's Save whole text…); empty when cancelled."""
    return QFileDialog.getSaveFileName(parent, "Save whole text", start, "Text (*.txt);;All files (*)")[0]


def profile_dialog(parent: QWidget, saving: bool) -> str:
    """The policy profile to save to or load, or "" when cancelled."""
    if saving:
        return QFileDialog.getSaveFileName(parent, "Save policy profile", "", PROFILE_FILTER)[0]
    return QFileDialog.getOpenFileName(parent, "Load policy profile", "", PROFILE_FILTER)[0]


# -- telling and asking --------------------------------------------------------------------


def error_dialog(parent: QWidget, title: str, text: str) -> None:
    """Something failed (a file that cannot be read or written): one line saying why."""
    message_box(parent, QMessageBox.Icon.Critical, title, text).exec()


def show_message(parent: QWidget, title: str, text: str) -> None:
    """Why an action was refused or cannot start."""
    message_box(parent, QMessageBox.Icon.Information, title, text).exec()


def show_refusal(parent: QWidget, text: str) -> bool:
    """A refused restore: the reason, and whether to read the omitted part with read_result instead."""
    box = message_box(parent, QMessageBox.Icon.Warning, "Restore refused", text, QMessageBox.StandardButton.Close)
    read = box.addButton("Read with read_result", QMessageBox.ButtonRole.AcceptRole)
    box.exec()
    return box.clickedButton() is read


def ask_unsaved(parent: QWidget, name: str) -> str:
    """ "save", "discard" or "cancel" for a session with unsaved changes."""
    buttons = QMessageBox.StandardButton
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        "Unsaved changes",
        f"{name} has changes that are not saved. Save them first?",
        buttons.Save | buttons.Discard | buttons.Cancel,
    )
    box.setDefaultButton(buttons.Save)
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(buttons(box.exec()), "cancel")


def ask_recover(parent: QWidget, name: str, when: str) -> bool:
    """Whether to put back the working state autosave kept for this session."""
    buttons = QMessageBox.StandardButton
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        "Recover unsaved changes",
        f"{name} has changes from {when} that were never saved (foldscope closed before they were). Recover them?",
        buttons.Yes | buttons.No,
    )
    box.setDefaultButton(buttons.Yes)
    return buttons(box.exec()) == buttons.Yes


def ask_clip_into_view(parent: QWidget, index: int) -> bool:
    """Whether to clip a tool result that is out of the active view into it (the request grows), or leave it."""
    buttons = QMessageBox.StandardButton
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        "Clip into the view",
        f"The tool result #{index} is not in the active view. Its clipped copy would join the view (with "
        "its call, if that is out too) and make the next request larger. Clip it into the view?",
        buttons.Yes | buttons.No,
    )
    box.setDefaultButton(buttons.No)
    return buttons(box.exec()) == buttons.Yes


def ask_keep_last(parent: QWidget) -> int | None:
    """How many of the newest tool results an eviction keeps, or None when cancelled."""
    value, ok = QInputDialog.getInt(parent, "Evict old tool results", "Keep the newest results:", 5, 0, 10_000)
    return value if ok else None


def ask_span(parent: QWidget, first: int, last: int) -> tuple[int, int] | None:
    """The full-record indices of a span to compact, or None when cancelled or unreadable."""
    text, ok = QInputDialog.getText(parent, "Compact a span", "First and last index (e.g. 10-24):", text=f"{first}-{last}")
    try:
        a, b = (int(part) for part in text.replace("–", "-").split("-", 1))
    except ValueError:
        return None
    return (a, b) if ok else None


def show_peek(parent: QWidget, title: str, body: str) -> None:
    """What a note replaced, in a window of its own (not modal: peek changes nothing); `body` is HTML the
    caller escaped, shown without links."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    browser = QTextBrowser()
    browser.setOpenLinks(False)
    browser.setOpenExternalLinks(False)
    browser.setHtml(body)
    QVBoxLayout(dialog).addWidget(browser)
    dialog.resize(720, 520)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()


def show_text(parent: QWidget, title: str, text: str, markdown: bool = False) -> QDialog:
    """foldscope's own text (help, never session text) in a window of its own, not modal; `markdown` renders it."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    browser = QTextBrowser()
    browser.setOpenLinks(False)
    if markdown:
        browser.setMarkdown(text)
    else:
        browser.setPlainText(text)
        browser.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
    QVBoxLayout(dialog).addWidget(browser)
    dialog.resize(760, 560)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


# -- clipping by hand ----------------------------------------------------------------------

PREVIEW_CHARS = 20_000  # the projected body shown is cut here; its tokens are always counted whole


class ClipDialog(QDialog):
    """Choose how many characters of each body a clipped copy keeps (head three parts to the tail's one)."""

    def __init__(self, document: Document, index: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        choice = clip_facts.clip_choice(document, index)  # the original's index, its longest body, where to start
        self.index = choice.index
        longest = self.longest = choice.longest
        self.setWindowTitle(f"Clip result #{self.index}")
        # The result's tokens as the lists and the inspector show them (core.readout.clip_facts), never recounted here.
        original_tokens = clip_facts.original_tokens(document, self.index)
        intro = QLabel(
            f"Result <b>#{self.index}</b>: its longest body has {longest:,} characters; the whole result "
            f"is {original_tokens:,} tokens. A clipped copy keeps a head and a tail of each longer body, "
            f"with a marker naming the read_result call for the omitted middle."
        )
        intro.setWordWrap(True)
        top = max(longest - 1, 0)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, top)
        self.slider.setAccessibleName("Characters kept")
        self.spin = QSpinBox()
        self.spin.setRange(0, top)
        self.spin.setSuffix(" characters kept")
        self.slider.valueChanged.connect(self.spin.setValue)
        self.spin.valueChanged.connect(self.slider.setValue)
        self.spin.valueChanged.connect(self._show)
        self.tokens = QLabel()
        self.body = QPlainTextEdit()
        self.body.setReadOnly(True)
        self.body.setAccessibleName("Projected body")
        self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Clip")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(self.tokens)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.buttons)
        self.resize(760, 560)
        self.spin.setValue(choice.start)
        self._show(self.spin.value())

    def keep(self) -> int:
        return self.spin.value()

    def _show(self, keep: int) -> None:
        # The copy's tokens as the lists will show them once it is made (core.readout.clip_facts).
        p = clip_facts.clip_projection(self.document, self.index, keep)
        text = p.text
        self.tokens.setText(
            f"Projected copy: {len(text):,} characters, <b>{p.tokens:,} tokens</b> (the original: {p.original_tokens:,}; saves {p.saves:,})"
        )
        self.body.setPlainText(text[:PREVIEW_CHARS] + ("\n…" if len(text) > PREVIEW_CHARS else ""))


def ask_clip_length(parent: QWidget, document: Document, index: int) -> int | None:
    """The characters to keep, or None when cancelled."""
    dialog = ClipDialog(document, index, parent)
    return dialog.keep() if dialog.exec() == QDialog.DialogCode.Accepted else None


# -- opening an agent session found on this machine, or one sample of an Inspect AI log --------------

# The start in UTC, as `foldscope sessions` prints it ("start (UTC)"): in local time one session read two times apart.
AGENT_COLUMNS = ("Agent", "Project", "Title", "Start (UTC)", "Size", "Requests", "Model", "Cost")
TITLE_SHOWN = 60  # characters of a title in its cell; the search reads the whole title


class AgentSessionsDialog(QDialog):
    """The sessions `foldscope sessions` lists, searchable by any column or the file's path; OK opens one.

    Given `rows`, it shows them; without, it scans this machine in the worker (start_scan): each session
    appears as it is read, with a progress bar, and the list can be searched and chosen from meanwhile.
    Closing the dialog cancels the scan.
    """

    scan_finished = Signal()

    def __init__(self, rows: list[dict] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open Agent Session")
        # Wide enough for the title beside the figures; a laptop's screen less its frame where that is narrower.
        screen = self.screen() or QApplication.primaryScreen()
        free = screen.availableGeometry() if screen is not None else None
        self.resize(min(1300, free.width()) if free else 1300, min(560, free.height() - 40) if free else 560)
        self.rows: list[dict] = []
        self.task = None
        # The row the dialog chose itself (the first shown), not the user: as newer sessions arrive during the scan,
        # the newest takes its place, so Open with nothing clicked opens the newest, not the first one read.
        self.auto_chosen: str | None = None
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search agent, project, title, model or file")
        self.search.setAccessibleName("Search the agent sessions")
        self.search.textChanged.connect(self._filter)
        self.table = QTableWidget(0, len(AGENT_COLUMNS))
        self.table.setAccessibleName("Agent sessions on this machine")
        self.table.setHorizontalHeaderLabels(AGENT_COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # The title takes the width the figures leave (cut with … where long): sized to its text, it pushed the model
        # and the cost a scroll away in the dialog's 1,000 pixels.
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(AGENT_COLUMNS.index("Title"), QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _index: self.accept())
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Reading the agent sessions")
        self.progress.setFormat("%v of %m sessions read")
        self.progress.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.heading)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(buttons)
        self.finished.connect(lambda _result: self.cancel_scan())
        self.set_rows(rows or [], scanning=rows is None)

    def set_rows(self, rows: list[dict], scanning: bool = False) -> None:
        """Show these rows, newest first, keeping the one the user chose and the search."""
        chosen = self.chosen_path()
        if chosen == self.auto_chosen:
            chosen = None
        # Newest start first, as `foldscope sessions` and core.formats.discover order them (the file's time where the
        # start is not known): the Start column reads in order, and the session chosen is the one listed first there.
        self.rows = sorted(rows, key=lambda r: r["start"] if r.get("start") is not None else r.get("modified") or 0, reverse=True)
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            for c, text in enumerate(self.cells(row)):
                item = QTableWidgetItem(text)  # plain text: a project name from a file is data, never markup
                item.setToolTip(row["path"])
                self.table.setItem(r, c, item)
        if scanning:
            heading = f"Reading the sessions on this machine: {len(self.rows)} so far, newest first"
        elif self.rows:
            heading = f"{plural(len(self.rows), 'session')} found on this machine, newest first"
        else:
            from foldscope.core.formats.registry import agents

            heading = (
                "No agent sessions found in the folders each agent keeps them in ("
                + ", ".join(spec.title for spec in agents())
                + "); File > Open reads a file from anywhere"
            )
        self.heading.setText(heading)
        self._filter(self.search.text(), keep=chosen)

    def start_scan(self, run, find=None) -> None:
        """Read this machine's sessions in the worker: `run` is app.worker.run_task (the window hands it in; a
        dialog does not import the worker), `find` core.formats.discover.find_sessions by default."""
        if find is None:
            from foldscope.core.formats.discover import find_sessions as find
        read: list[dict] = []  # appended in the worker, read here on each progress signal (list.append is atomic)

        def work(progress) -> list[dict]:
            def each(done: int, total: int, found) -> None:
                read.append(found.as_dict())
                progress.report(done, total, "Reading sessions")

            return [f.as_dict() for f in find(each=each)]

        def progressed(done: int, total: int, _label: str) -> None:
            self.progress.setVisible(True)
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
            self.set_rows(list(read), scanning=True)

        def ended() -> None:
            self.progress.setVisible(False)
            self.task = None
            self.scan_finished.emit()

        self.progress.setRange(0, 0)  # busy until the files are listed
        self.progress.setVisible(True)
        self.task = run(
            work,
            "Finding agent sessions",
            self,
            progressed=progressed,
            succeeded=lambda rows: self.set_rows(rows),
            failed=lambda exc: self.heading.setText(f"Could not read the sessions: {exc}"),
            ended=ended,
        )

    def cancel_scan(self) -> None:
        if self.task is not None:
            self.task.cancel()

    @staticmethod
    def cells(row: dict) -> list[str]:
        """The row's cells, as plain text."""
        start = datetime.fromtimestamp(row["start"], UTC).strftime("%Y-%m-%d %H:%M") if row["start"] else "-"
        # As `sessions` prints it: a small bill's digits ($0.0016 read as $0.00, free), ~ for an agent's rounded usage.
        near = "~" if row.get("usage_precision") == "approximate" else ""
        cost = "-" if row["cost_usd"] is None else near + dollars(row["cost_usd"])
        requests = "-" if row["requests"] is None else f"{row['requests']:,}"
        project = row["project"] + (f" ({row['problem']})" if row["problem"] else "")
        title = AgentSessionsDialog.title(row)
        title = title if len(title) <= TITLE_SHOWN else title[: TITLE_SHOWN - 1] + "…"
        from foldscope.core.formats.registry import format_title

        # The agent by its name, as the status bar and the library tab give it; the search reads its --agent name too.
        agent = format_title(row["agent"])
        return [agent, project, title, start, f"{row['size'] / 1000:,.0f} kB", requests, row["model"] or "-", cost]

    @staticmethod
    def title(row: dict) -> str:
        """The session's title as `sessions` gives it (the agent's own, else its first prompt in quotes), on one
        line and without control characters: the text of a session file, shown as data."""
        text = " ".join(str(row.get("title") or "").split())
        text = "".join(ch for ch in text if ch.isprintable())
        return f'"{text}"' if text and row.get("title_source") == "first prompt" else text

    def _filter(self, text: str, keep: str | None = None) -> None:
        words = text.lower().split()
        first_shown = kept = None
        for r, row in enumerate(self.rows):
            haystack = " ".join(self.cells(row) + [self.title(row), row["agent"], row["path"]]).lower()
            hidden = not all(w in haystack for w in words)
            self.table.setRowHidden(r, hidden)
            if not hidden and first_shown is None:
                first_shown = r
            if not hidden and keep is not None and row["path"] == keep:
                kept = r
        chosen = kept if kept is not None else first_shown
        if chosen is not None:
            self.table.selectRow(chosen)
            self.auto_chosen = None if kept is not None else self.rows[chosen]["path"]

    def visible_rows(self) -> list[dict]:
        return [row for r, row in enumerate(self.rows) if not self.table.isRowHidden(r)]

    def chosen_path(self) -> str | None:
        if not self.rows:
            return None
        selected = [i.row() for i in self.table.selectionModel().selectedRows() if not self.table.isRowHidden(i.row())]
        return self.rows[selected[0]]["path"] if selected else None


def ask_agent_session(parent: QWidget, rows: list[dict] | None = None, run=None) -> str | None:
    """The path of the session the user picks, or None (tests replace this function). Without `rows` the
    dialog opens at once and reads this machine's sessions in the worker (`run`: app.worker.run_task)."""
    dialog = AgentSessionsDialog(rows, parent)
    if rows is None:
        dialog.start_scan(run)
    return dialog.chosen_path() if dialog.exec() == QDialog.DialogCode.Accepted else None


def choose_sample(parent: QWidget, path: str, samples: list[dict]) -> str | None:
    """Which session of a file holding several to open (an Inspect AI log's sample, ID:EPOCH; an OpenCode
    database's session, ID), or None (tests replace this function)."""
    # A title is the session's own text (OpenCode names its sessions): shown as data in a plain list item.
    labels = [
        f"{s['name']}  ({plural(s['requests'], 'request')}, {plural(s['messages'], 'message')})"
        + (f"  {' '.join(str(s['title']).split())[:80]}" if s.get("title") else "")
        for s in samples
    ]
    label, ok = QInputDialog.getItem(
        parent, "Open one session", f"{Path(path).name} holds {len(samples)} sessions; open:", labels, 0, False
    )
    return samples[labels.index(label)]["name"] if ok and label in labels else None
