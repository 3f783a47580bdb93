"""The fold preview: each pass of a fold run on a copy, as a diff of the active view, then Apply or Discard."""

from __future__ import annotations

import html

from foldscope.app.models.messages import preview_text
from foldscope.app.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.undo import SessionEditor
from foldscope.app.worker import Progress, Task
from foldscope.core.model.commands import Changes
from foldscope.core.model.one_line import collapsed_start
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message
from foldscope.core.readout.document import Document
from foldscope.core.readout.preview_facts import DECIDER, DECIDER_MEANS, ApplyPreview, FoldPreview, PassPreview, over_ceiling, preview_of
from foldscope.core.readout.words import OUTCOMES, plural

COLUMNS = ("Pass", "Stage", "Tail", "Outcome", "Estimate before", "Estimate after", "Folded", "Clipped", "Note")
SHOWN = 200  # messages listed per pass in the diff; the rest are counted
IDLE = "<i>Preview a fold (Actions ▸ Preview fold) to see what it would do.</i>"


def fold_work(document: Document, measure, request: int | None = None):
    """The function the worker runs: the fold preview (core.readout.preview_facts), reporting each measured
    candidate (and so cancellable)."""

    def work(progress: Progress) -> FoldPreview:
        return preview_of(document, measure, request, progress.report)

    return work


def pass_title(number: int, p: PassPreview) -> str:
    r = p.record
    tail = f", the newest {plural(r['kept_tail'], 'message')} kept as they are" if r.get("kept_tail") else ""
    return f"Pass {number}: the {r['stage']} stage{tail}, {OUTCOMES.get(r['outcome'], r['outcome'])}"


class FoldPreviewPanel(QWidget):
    """Runs a preview in the worker, shows its passes and their diff; Apply adopts it on the undo stack."""

    preview_ready = Signal(object)  # FoldPreview
    applied = Signal(object)  # Changes

    def __init__(self, editor: SessionEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.document: Document | None = None
        self.preview: FoldPreview | None = None
        self.request: int | None = None  # the recorded request previewed; None: the next one (now)
        self.task: Task | None = None
        self.summary = QLabel(IDLE)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.passes = QTableWidget(0, len(COLUMNS))
        self.passes.setHorizontalHeaderLabels(COLUMNS)
        self.passes.setAccessibleName("Fold passes")
        self.passes.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.passes.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.passes.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.passes.verticalHeader().setVisible(False)
        self.passes.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.passes.horizontalHeader().setStretchLastSection(True)
        self.passes.currentCellChanged.connect(lambda row, *_: self.show_pass(row))
        self._applying = False
        editor.changed.connect(self._session_changed)
        self.diff = QTextBrowser()
        self.diff.setAccessibleName("Fold diff")
        self.apply_button = QPushButton("&Apply fold")
        self.discard_button = QPushButton("&Discard")
        self.apply_button.clicked.connect(self.apply)
        self.discard_button.clicked.connect(self.discard)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.discard_button)
        buttons.addWidget(self.apply_button)
        # Small minimums: the preview opens beside the folds at the bottom and the lists above keep their rows.
        self.passes.setMinimumHeight(48)
        self.diff.setMinimumHeight(36)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.passes)
        split.addWidget(self.diff)
        split.setSizes([110, 300])
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self._enable()

    def set_document(self, document: Document | None) -> None:
        self.document = document
        self.discard()

    # -- running ---------------------------------------------------------------------------

    def start(self, policy: Policy, **slots) -> Task | None:
        """Preview, in the worker, the fold under `policy` of the request the timeline shows (the view as it stood
        before a recorded request, or now); None when there is no ceiling."""
        doc = self.document
        if doc is None:
            return None
        shown = doc.shown if doc.shown is not None and doc.shown < len(doc.requests) else None
        measure = doc.measure_for(policy)
        if measure.ceiling is None:
            self.summary.setText("<b>No ceiling:</b> under this policy nothing folds. Set a ceiling in the policy editor.")
            return None
        self.discard()
        self.request = shown
        self.summary.setText(f"<i>Previewing the fold of {self.subject()}…</i>")
        self.editor.busy = "a fold preview is running; wait for it or cancel it"
        task = Task(fold_work(doc, measure, shown), "Previewing the fold", self)
        task.succeeded.connect(self.show_preview)
        task.failed.connect(lambda exc: self.summary.setText(f"<b>The preview failed:</b> {html.escape(str(exc))}"))
        task.was_cancelled.connect(lambda: self.summary.setText("<i>Preview cancelled; nothing changed.</i>"))
        task.ended.connect(self._ended)
        for name, slot in slots.items():
            getattr(task, name).connect(slot)
        self.task = task.start()
        return task

    def _ended(self) -> None:
        self.task = None
        self.editor.busy = ""
        self._enable()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    # -- showing ---------------------------------------------------------------------------

    def subject(self) -> str:
        return "the next request (now)" if self.request is None else f"request {self.request}"

    def show_preview(self, preview: FoldPreview) -> None:
        self.preview = preview
        run, s = preview.run, preview.measure
        if not run.records:
            verdict = "already at or under the target: nothing to fold"
        else:
            verdict = "target reached" if run.target_reached else "<b style='color:#c0392b'>target not reached</b>"
        rolled = sum(1 for p in preview.passes if not p.landed)
        if self.request is None:
            ending = "Nothing has changed: <b>Apply</b> or <b>Discard</b>."
        else:  # the past is recorded: there is nothing to apply it to
            ending = (
                f"This is what the fold would have done before request {self.request} (as <code>fold "
                f"--at-request {self.request}</code>); nothing has changed, and only a preview of now can be "
                "applied: step the timeline to now to fold the active view."
            )
        self.summary.setText(
            f"<b>Fold preview of {self.subject()}</b> under a ceiling of {s.ceiling:,} (line {round(s.line_tokens or 0):,}, target "
            f"{round(s.target_tokens or 0):,}): estimate <b>{run.estimate_before:,} → {run.estimate_after:,}</b>, {verdict}; "
            f"{len(preview.passes)} pass{'es' if len(preview.passes) != 1 else ''}, {rolled} rolled back. "
            f"Decides on <b>{DECIDER}</b>: {html.escape(DECIDER_MEANS)}; over_ceiling: "
            f"{'yes' if over_ceiling(preview) else 'no'} (the estimate at or past the ceiling). " + ending
        )
        self.passes.setRowCount(len(preview.passes))
        for row, p in enumerate(preview.passes):
            r = p.record
            clipped = r.get("clipped_total") or 0
            cells = (
                row + 1,
                r["stage"],
                r.get("kept_tail") or "",
                r["outcome"].replace("_", " "),
                f"{r['estimate_before']:,}",
                f"{r['estimate_after']:,}",
                r.get("messages_folded") or "",
                clipped or "",
                self._note_cell(r.get("note_index")),
            )
            for column, value in enumerate(cells):
                item = QTableWidgetItem(str(value))
                if not p.landed:
                    item.setForeground(Qt.GlobalColor.gray)
                self.passes.setItem(row, column, item)
        self._enable()
        self._fit_passes()
        if preview.passes:
            self.passes.selectRow(0)
            self.show_pass(0)
        self.preview_ready.emit(preview)

    def passes_height(self, rows: int) -> int:
        """The passes table's height that shows its header and `rows` rows."""
        table = self.passes
        return (
            table.horizontalHeader().sizeHint().height() + rows * table.verticalHeader().defaultSectionSize() + 2 * table.frameWidth() + 2
        )

    def _fit_passes(self) -> None:
        """Every pass in view (up to five, then the table scrolls); the diff takes the rest, at least 60 pixels."""
        total = sum(self.split.sizes())
        wanted = self.passes_height(min(max(self.passes.rowCount(), 1), 5))
        top = min(wanted, max(total - 60, self.passes.minimumHeight()))
        self.split.setSizes([top, max(total - top, 0)])

    def show_pass(self, row: int) -> None:
        preview, doc = self.preview, self.document
        if preview is None or doc is None or not 0 <= row < len(preview.passes):
            self.diff.clear()
            return
        p = preview.passes[row]
        r = p.record
        parts = [
            f"<h3>{html.escape(pass_title(row + 1, p))}</h3>",
            f"<p>Estimate {r['estimate_before']:,} → {r['estimate_after']:,}"
            f"{'' if p.landed else ' (not lower, so the pass is rolled back and the view kept)'}; "
            f"{'target reached' if r.get('target_reached') else 'target not reached yet'}.</p>",
        ]
        note = next((preview.message(m, doc.session) for m in p.added if preview.message(m, doc.session).kind == "note"), None)
        if note is not None:  # first: what the model would read in place of the span
            parts.append("<p><b>The note's text:</b></p>")
            parts.append(f"<pre style='white-space:pre-wrap; background:rgba(127,127,127,0.12)'>{html.escape(note.text)}</pre>")
        if p.removed:
            parts.append(f"<p><b>Leaves the active view</b> ({len(p.removed)}):</p>")
            parts.append(self._lines(preview, doc, p.removed, "−", "#c0392b"))
        if p.added:
            parts.append(f"<p><b>{'Enters' if p.landed else 'Would have entered'} the active view</b> ({len(p.added)}):</p>")
            parts.append(self._lines(preview, doc, p.added, "+", "#1e8449"))
        for item in r.get("clipped") or []:
            parts.append(
                f"<p>Clips #{item['index']}{' ' + html.escape(item['key']) if item.get('key') else ''}: "
                f"{item['chars']:,} characters → {item['kept']:,} kept</p>"
            )
        self.diff.setHtml("".join(parts))

    def _lines(self, preview: FoldPreview, doc: Document, ids: tuple[str, ...], sign: str, colour: str) -> str:
        rows = []
        for mid in ids[:SHOWN]:
            message = preview.message(mid, doc.session)
            index = preview.index_of(mid, doc.session)
            # A past request's fold is never applied, so what it made gets no index in the record.
            label = f"#{index}" if self.request is None or mid in doc.session.record else "(new)"
            rows.append(f"<span style='color:{colour}'>{sign} {label} {html.escape(self._describe(doc, message, index))}</span>")
        if len(ids) > SHOWN:
            rows.append(f"… and {len(ids) - SHOWN:,} more")
        return "<pre>" + "\n".join(rows) + "</pre>"

    def _note_cell(self, index) -> str:
        """The note's record index; a past request's preview is never applied, so its note gets none."""
        if not isinstance(index, int):
            return ""
        return f"#{index}" if self.request is None else "new note"

    def _describe(self, doc: Document, message: Message, index: int) -> str:
        kind = "clipped copy" if message.is_clipped_copy else message.kind
        known = message.id in doc.session.record  # a note or copy the fold made has no count yet
        tokens = f"{doc.tokens[index]:,} tokens · " if known and index < len(doc.tokens) else ""
        text = collapsed_start(preview_text(message), 91) or "(no text: tool calls only)"
        return f"{kind:<15} {tokens}{text[:90]}{'…' if len(text) > 90 else ''}"

    # -- deciding --------------------------------------------------------------------------

    def apply(self) -> Changes | None:
        if self.preview is None or self.request is not None:
            return None
        stages = ", ".join(dict.fromkeys(p.record["stage"] for p in self.preview.passes if p.landed)) or "nothing"
        self._applying = True
        try:
            changes = self.editor.do(ApplyPreview(self.preview), f"fold ({stages})")
        finally:
            self._applying = False
        if changes.success:
            self.discard()
            self.summary.setText(f"<i>Fold applied ({html.escape(stages)}); Edit ▸ Undo takes it back.</i>")
            self.applied.emit(changes)
        else:
            self.summary.setText(f"<b>Not applied:</b> {html.escape(changes.message)}")
        return changes

    def _session_changed(self, changes) -> None:
        """Another action, an undo or a redo changed the session: what this panel said (a preview, "applied")
        no longer holds."""
        if self._applying or self.task is not None:
            return
        if self.preview is not None or self.summary.text() != IDLE:
            self.discard()
            self.summary.setText(IDLE)

    def discard(self) -> None:
        self.preview = None
        self.passes.setRowCount(0)
        self.diff.clear()
        self._enable()

    def _enable(self) -> None:
        ready = self.preview is not None and self.task is None
        changes = self.preview is not None and self.preview.changes_anything
        self.apply_button.setEnabled(ready and self.request is None and changes)
        self.apply_button.setToolTip(
            "" if self.request is None else f"A preview of request {self.request}, in the past: step to now to apply a fold"
        )
        self.discard_button.setEnabled(ready)
