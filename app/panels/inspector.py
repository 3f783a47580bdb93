"""The inspector: one message's content highlighted, its metadata, provenance and links."""

from __future__ import annotations

import html

from foldscope.app.follows_changes import FollowsChanges, session_changed
from foldscope.app.highlight import content_html, json_html
from foldscope.app.panels.long_text import is_long, note, save_text, shown_part
from foldscope.app.qt import (
    QGuiApplication,
    QHBoxLayout,
    QLabel,
    QPushButton,
    Qt,
    QTabWidget,
    QTextBrowser,
    QUrl,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.theme import kind_colour, pygments_style
from foldscope.core.model.session import Message
from foldscope.core.readout.document import Document, kind_label
from foldscope.core.readout.note_members import Members, members_html, note_members
from foldscope.core.readout.words import when


class Inspector(QWidget):
    """Shows the message selected in either list; `message_requested` asks to select a linked one."""

    message_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.index: int | None = None
        self.header = QLabel()
        self.header.setObjectName("inspectorHeader")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
            | Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.header.linkActivated.connect(self._follow)
        self.content = self._browser("Content")
        self.metadata = self._browser("Metadata")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.content, "&Content")
        self.tabs.addTab(self.metadata, "&Metadata")
        self.tabs.currentChanged.connect(self._show_metadata)
        self.members = self._browser("Members")
        self.members_tab = self.tabs.addTab(self.members, "Mem&bers")
        # A text too long to lay out is shown cut (app.panels.long_text); this line says so and these get all of it.
        self.whole_text = ""
        self.long_note = QLabel()
        self.long_note.setObjectName("inspectorLongNote")
        self.long_note.setWordWrap(True)
        self.long_note.setTextFormat(Qt.TextFormat.PlainText)
        self.copy_button = QPushButton("Copy whole text")
        self.copy_button.clicked.connect(self.copy_whole_text)
        self.save_button = QPushButton("Save whole text…")
        self.save_button.clicked.connect(self._ask_save)
        self.long_bar = QWidget()
        bar = QHBoxLayout(self.long_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.long_note, 1)
        bar.addWidget(self.copy_button)
        bar.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.long_bar)
        layout.addWidget(self.tabs, 1)
        self._members: Members | None = None  # what the Members tab lists, so a step that leaves it the same does not set it again
        self._digest: tuple[int, Message, str] | None = None  # the shown message's place, itself and its SHA-256 (_sha256)
        self.clear()
        # Any change may move what the shown message says (in or out of the view, its size, its links): redrawn
        # at once in front, else when its tab is chosen.
        self.follower = FollowsChanges(self, lambda changes: True, self._redraw)

    def follow(self, changed) -> None:
        """Redraw the shown message after the workspace's changes (app.undo.SessionEditor.display_changed)."""
        self.follower.follow(changed)

    def _browser(self, name: str) -> QTextBrowser:
        browser = QTextBrowser()
        browser.setAccessibleName(name)
        browser.setOpenLinks(False)
        browser.anchorClicked.connect(lambda url: self._follow(url.toString()))
        return browser

    def clear(self) -> None:
        self.index = None
        self.header.setText("<i>Select a message in the full record or the active view.</i>")
        self.content.clear()
        self._show_long(None)
        self.metadata.clear()
        self.members.clear()
        self._members = None
        self.tabs.setTabEnabled(self.members_tab, False)

    def set_document(self, document: Document | None) -> None:
        self.document = document
        kept = self._digest
        if kept is not None and (document is None or kept[0] >= document.record_size or document.message(kept[0]) is not kept[1]):
            self._digest = None  # its message is not the new document's there: never held past the document that holds it
        self.clear()

    def show_message(self, index: int) -> None:
        if self.document is None or not (0 <= index < self.document.record_size):
            self.clear()
            return
        if index == self.index:
            return
        self.index = index
        doc = self.document
        message = doc.message(index)
        style = pygments_style()
        self.header.setText(self._header_html(doc, index))
        text = message.text
        if is_long(text):
            shown = shown_part(text)
            self.content.setPlainText(shown.text)
            self._show_long(text, note(shown, doc.chars[index]))
        else:
            self._show_long(None)
            self.content.setHtml(content_html(message.kind, message.content, style))
        self.metadata.clear()
        self._show_metadata()
        self._show_members(doc, index)

    def _show_metadata(self) -> None:
        """The shown message's metadata, written once its tab is in front (at once when it is, else when it is chosen):
        its SHA-256 hashes the message's whole content (0.14-0.21 s of the GUI thread for a 50 MB message), for a tab
        a load seldom shows."""
        doc, index = self.document, self.index
        if self.tabs.currentWidget() is not self.metadata or doc is None or index is None or not self.metadata.document().isEmpty():
            return
        message = doc.message(index)
        self.metadata.setHtml(
            json_html(
                {
                    "id": message.id,
                    "kind": message.kind,
                    "created_at": when(message.created_at),
                    "sha256": self._sha256(index, message),
                    "metadata": dict(message.metadata),
                },
                pygments_style(),
            )
        )

    def _sha256(self, index: int, message: Message) -> str:
        """The message's SHA-256, worked out once while the same Message stands at `index` (a Message is frozen: the
        same object has the same hash). A load shows the file's first message twice, in its first part's document and
        in the whole record's, the same Message: a 50 MB message's hash took 0.14 s of the GUI thread each time."""
        kept = self._digest
        if kept is None or kept[0] != index or kept[1] is not message:
            kept = self._digest = (index, message, message.sha256())
        return kept[2]

    def _show_members(self, doc: Document, index: int, again: bool = False) -> None:
        """The Members tab of a note (disabled for any other message); `again` (the same message redrawn) leaves the
        tab as it is when its list reads the same, its scroll and selection kept."""
        members = note_members(doc, index)
        self.tabs.setTabEnabled(self.members_tab, members is not None)
        self.tabs.setTabText(self.members_tab, f"Mem&bers ({len(members.indexes):,})" if members else "Mem&bers")
        if members is not None:
            if not (again and members == self._members):  # the list says each member's kind and size, not moved by a step
                self.members.setHtml(members_html(doc, index, members))
        else:
            self.members.clear()
            if self.tabs.currentWidget() is self.members:
                self.tabs.setCurrentWidget(self.content)
        self._members = members

    def _show_long(self, text: str | None, line: str = "") -> None:
        """Show the note and the whole-text buttons for a cut text, or hide them."""
        self.whole_text = text or ""
        self.long_note.setText(line)
        self.long_bar.setVisible(text is not None)

    def copy_whole_text(self) -> None:
        """The whole text of the cut message on the clipboard."""
        QGuiApplication.clipboard().setText(self.whole_text)

    def save_whole_text(self, path: str) -> bool:
        """The whole text of the cut message written to `path`; a failure is said on the note line."""
        try:
            save_text(self.whole_text, path)
        except OSError as exc:
            self.long_note.setText(f"Could not save the whole text to {path}: {exc.strerror or exc}")
            return False
        return True

    def _ask_save(self) -> None:
        from foldscope.app.dialogs import text_path_dialog

        path = text_path_dialog(self, f"message-{self.index}.txt")
        if path:
            self.save_whole_text(path)

    def _redraw(self, changes) -> None:
        """Follow a change of the workspace (core.model.commands.Changes; None: anything may have changed). A step to
        another request moves only the view shown (core.readout.workspace.Workspace.show_request): what the header says
        (in or out of the view, why) and a note's members read from the view; the message's content and metadata
        stay, not laid out again at every step (nor scrolled back to their top)."""
        if changes is not None and changes.shown and not session_changed(changes):
            self._show_step()
        else:
            self.refresh()

    def _show_step(self) -> None:
        doc, index = self.document, self.index
        if doc is None or index is None or not (0 <= index < doc.record_size):
            self.refresh()
            return
        self.header.setText(self._header_html(doc, index))
        self._show_members(doc, index, again=True)

    def refresh(self) -> None:
        """Redraw the shown message (the shown view or the theme changed)."""
        index, self.index = self.index, None
        if index is not None:
            self.show_message(index)

    def _header_html(self, doc: Document, index: int) -> str:
        message = doc.message(index)
        colour = kind_colour(message).name()
        state = (
            f"in the active view at position {doc.view_position[index]}"
            if doc.in_view(index)
            else f"<span style='color:#b03a2e'>out of the active view: {html.escape(doc.out_reason.get(index, ''))}</span>"
        )
        lines = [
            f"<span style='font-size:13pt'><b>#{index}</b> "
            f"<b style='color:{colour}'>{html.escape(kind_label(doc, index))}</b></span>"
            f" &nbsp;·&nbsp; {f'{doc.tokens[index]:,} tokens' if doc.is_counted else 'tokens not counted yet'}"
            f" · {doc.chars[index]:,} characters",
            state,
        ]
        prov = message.provenance
        if prov is not None:
            where = html.escape(prov.file) + (f", line {prov.line}" if prov.line else "")
            if prov.path:
                where += f", at {html.escape(prov.path)}"
            lines.append(f"Provenance: {where}")
        links = doc.links(index)
        if links:
            anchors = ", ".join(f"<a href='msg:{target}'>{html.escape(label)} #{target}</a>" for label, target in links)
            lines.append(f"Links: {anchors}")
        return "<br>".join(lines)

    def _follow(self, link: str) -> None:
        if link.startswith("msg:"):
            try:
                self.message_requested.emit(int(link[4:]))
            except ValueError:
                pass

    def follow_url(self, url: QUrl) -> None:
        self._follow(url.toString())
