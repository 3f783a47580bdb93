"""The Cost panel: where the session's money went, why each request wrote to the cache, and what each
compaction cost, lost and paid back, with one plain sentence under each figure (facts from core.readout.cost_facts)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from foldscope.app.follows_changes import FollowsChanges
from foldscope.app.models.cost import CompactionModel, RequestCostModel
from foldscope.app.panels.library_money import LibraryMoney
from foldscope.app.panels.swatches import SwatchLegend
from foldscope.app.qt import (
    QAbstractItemView,
    QColor,
    QHeaderView,
    QLabel,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPlainTextEdit,
    QRectF,
    QScrollArea,
    QSize,
    Qt,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.theme import is_dark, muted_colour
from foldscope.app.worker import Task, run_task
from foldscope.core.forensics.cache_report import GAP_MARKS, CacheRow
from foldscope.core.model.money_text import usd_text
from foldscope.core.readout.cost_facts import (
    CostFacts,
    Part,
    compaction_sentence,
    cost_facts,
    divergence_sentence,
    duration,
    gap_sentence,
    parts_explained,
    request_sentence,
    untimed,
)
from foldscope.core.readout.document import Document
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.words import plural

# (light, dark) per part of the bill; cache writes by cause from calm (expected) to loud (waste).
PART_COLOURS = {
    "fresh": ("#7f8c8d", "#aab7b8"),
    "cache_read": ("#5dade2", "#85c1e9"),
    "first": ("#1e8449", "#58d68d"),
    "append": ("#27ae60", "#82e0aa"),
    "rewrite": ("#c0392b", "#ff7b6b"),
    "expired": ("#d68910", "#f5b041"),
    "provider": ("#8e44ad", "#c39bd3"),
    "unexplained": ("#34495e", "#d5d8dc"),
    "output": ("#1c5fb8", "#6aa7ff"),
    "subagents": ("#b08d57", "#c9a56b"),
    "summariser": ("#0f8a8a", "#4fd6d6"),
}
WRITE_CAUSES = ("first", "append", "rewrite", "expired", "provider", "unexplained")


def part_colour(name: str) -> QColor:
    pair = PART_COLOURS.get(name, ("#999999", "#bbbbbb"))
    return QColor(pair[1] if is_dark() else pair[0])


def sentence(text: str = "") -> QLabel:
    """A plain-text label that wraps: what a figure means, in words."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setForegroundRole(label.foregroundRole())
    return label


class CostBar(QWidget):
    """The bill as one bar, a segment per part in proportion to its dollars (tokens when unpriced); click a part."""

    part_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.parts: list[Part] = []
        self.by_usd = True
        self.near = ""  # "~" where the usage is approximate or estimated (usage_precision.near)
        self.selected: str | None = None
        self.setFixedHeight(30)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, 30)

    def set_parts(self, parts: Sequence[Part], by_usd: bool, near: str = "") -> None:
        self.parts, self.by_usd, self.near, self.selected = list(parts), by_usd, near, None
        self.update()

    def _amount(self, p: Part) -> float:
        return (p.usd or 0.0) if self.by_usd else float(p.tokens)

    def segments(self) -> list[tuple[Part, float, float]]:
        """(part, x from, x to) for each part with anything in it."""
        total = sum(self._amount(p) for p in self.parts)
        out: list[tuple[Part, float, float]] = []
        x, width = 0.0, float(max(1, self.width() - 2))
        if total <= 0:
            return out
        for p in self.parts:
            w = self._amount(p) / total * width
            if w > 0:
                out.append((p, x + 1, x + 1 + w))
                x += w
        return out

    def part_at(self, x: float) -> Part | None:
        return next((p for p, a, b in self.segments() if a <= x < b), None)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        h = self.height() - 2
        for p, a, b in self.segments():
            painter.fillRect(int(a), 1, max(1, int(math.ceil(b - a))), h, part_colour(p.name))
            if p.name == self.selected:
                painter.setPen(QPen(self.palette().text().color(), 2))
                painter.drawRect(int(a), 1, max(1, int(b - a)), h - 1)
        painter.end()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        p = self.part_at(event.position().x())
        self.setToolTip("" if p is None else f"{p.label}: {_money(p, self.by_usd, self.near)}. {p.meaning}.")

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        p = self.part_at(event.position().x())
        if p is not None:
            self.selected = p.name
            self.update()
            self.part_clicked.emit(p.name)


def _money(p: Part, by_usd: bool, near: str = "") -> str:
    """A part's money and tokens; `near` ("~") before each where the session's usage is approximate or estimated."""
    tokens = f"{near}{p.tokens:,} tokens"
    return f"{near}{usd_text(p.usd)} ({tokens})" if by_usd and p.usd is not None else tokens


class GapStrip(QWidget):
    """The idle gap before each request, on a log scale, coloured by its largest cache-write cause; the five-minute
    and one-hour lifetimes drawn across and named on the axis at the left. Click a bar to step the timeline there."""

    request_clicked = Signal(int)
    TOP = 4 * 3600.0  # gaps past four hours are drawn at full height
    AXIS = 48  # the left margin the axis's values are written in

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[CacheRow] = []
        self.current: int | None = None
        self.setFixedHeight(110)  # tall enough that the 5 min and 1 h values sit a line apart

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, 110)

    def set_rows(self, rows: list[CacheRow]) -> None:
        self.rows = list(rows)
        self.update()

    def _y(self, seconds: float) -> float:
        h = self.height() - 10
        share = math.log1p(max(0.0, seconds)) / math.log1p(self.TOP)
        return self.height() - 2 - min(1.0, share) * h

    def axis_labels(self) -> list[tuple[str, QRectF]]:
        """The axis's values (0 s, the lifetimes, the top) where they are written; one that would touch the
        one below it is left out, so none ever overlap."""
        metrics = self.fontMetrics()
        tall = metrics.height()
        out: list[tuple[str, QRectF]] = []
        for seconds in (0.0, *GAP_MARKS, self.TOP):
            text = duration(seconds) + ("+" if seconds == self.TOP else "")
            y = self._y(seconds)
            rect = QRectF(0, min(max(0.0, y - tall / 2), self.height() - tall), self.AXIS - 6, tall)
            if out and rect.bottom() > out[-1][1].top():
                continue
            out.append((text, rect))
        return out

    def request_at(self, x: float) -> int | None:
        if not self.rows:
            return None
        plot = max(1.0, self.width() - self.AXIS)
        i = int((x - self.AXIS) / plot * len(self.rows))
        return self.rows[min(max(i, 0), len(self.rows) - 1)].index

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        n = len(self.rows)
        bottom = self.height() - 2
        left = self.AXIS
        if n:
            w = (self.width() - left) / n
            for i, row in enumerate(self.rows):
                causes = row.causes.causes
                writes = {c: causes.get(c, 0) for c in WRITE_CAUSES}
                cause = max(writes, key=lambda c: writes[c]) if any(writes.values()) else None
                colour = part_colour(cause) if cause else muted_colour()
                y = self._y(row.causes.gap_s or 0.0)
                x = left + int(i * w)
                painter.fillRect(x, int(y), max(1, int(w) - (1 if w > 3 else 0)), max(1, int(bottom - y)), colour)
                if row.index == self.current:
                    painter.setPen(QPen(self.palette().highlight().color(), 2))
                    painter.drawRect(x, 1, max(2, int(w)), bottom - 1)
        text = self.palette().windowText().color()
        painter.setPen(QPen(text, 1))
        painter.drawLine(left - 2, 2, left - 2, bottom)
        painter.setPen(QPen(text, 1, Qt.PenStyle.DashLine))
        for seconds in GAP_MARKS:
            y = int(self._y(seconds))
            painter.drawLine(left - 4, y, self.width(), y)
        painter.setPen(text)
        for label, rect in self.axis_labels():
            painter.drawText(rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.position().x() < self.AXIS:
            return
        index = self.request_at(event.position().x())
        if index is not None:
            self.request_clicked.emit(index)


def table(model, stretch: int | None = None) -> QTableView:
    """Each column fits its text; column `stretch` (when given) takes what is left and elides, its text whole on
    hover, so that a 1366-pixel window shows every column without scrolling."""
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)  # as the Composition table's rows
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is None:
        header.setStretchLastSection(True)
    else:
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    view.setWordWrap(False)
    return view


class CostPanel(QWidget):
    """Where the money went. Counts the trace off the GUI thread, only while visible."""

    request_chosen = Signal(int)  # step the timeline to this request
    facts_ready = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.facts: CostFacts | None = None
        self.task: Task | None = None
        self.slot: int | None = None
        self._pending = False

        self.heading = sentence("No session open")
        self.bar = CostBar()
        self.bar_sentence = sentence()
        self.legend = SwatchLegend()  # each part's square in the bar's own colour
        self.explained = sentence()  # the parts whose name alone says too little (provider misses), in words
        self.gaps = GapStrip()
        self.gap_sentence = sentence(gap_sentence())
        self.request_model = RequestCostModel(self)
        self.requests = table(self.request_model, stretch=RequestCostModel.CAUSES)
        self.requests_sentence = sentence("Each request's cache write split by cause. Click one to step the timeline to it.")
        self.detail = sentence()
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compaction_model = CompactionModel(self)
        self.compactions = table(self.compaction_model)
        self.compaction_sentence = sentence(
            "Each compaction or fold: the sizes before and after, what it cost, how many "
            "names and paths its summary lost, and whether its savings covered its cost."
        )
        self.lost = QPlainTextEdit()
        self.lost.setReadOnly(True)
        self.lost.setPlaceholderText("Select a compaction to list the exact details (names, numbers, paths) its summary lost.")

        money = QWidget()
        top = QVBoxLayout(money)
        top.setContentsMargins(0, 0, 0, 0)
        for w in (self.heading, self.bar, self.bar_sentence, self.legend, self.explained, self.gaps, self.gap_sentence):
            top.addWidget(w)
        top.addStretch(1)
        # The figures and their sentences scroll when the tab is short.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(money)
        middle = QWidget()
        mid = QVBoxLayout(middle)
        mid.setContentsMargins(0, 0, 0, 0)
        mid.addWidget(self.requests, 1)
        mid.addWidget(self.requests_sentence)
        bottom = QWidget()
        low = QVBoxLayout(bottom)
        low.setContentsMargins(0, 0, 0, 0)
        low.addWidget(self.compactions, 2)
        low.addWidget(self.compaction_sentence)
        low.addWidget(self.lost, 1)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(scroll, "Money")
        self.tabs.addTab(middle, "Requests")
        self.tabs.addTab(bottom, "Compactions")
        # Across the library: the window says where the library is (library_db) and opens a chosen request.
        self.library_db: Callable[[], str | None] = lambda: None
        self.library = LibraryMoney(lambda: self.library_db())
        self.tabs.addTab(self.library, "Library")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.detail)  # the shown request's cache cause, whichever tab is in front

        self.bar.part_clicked.connect(self.show_part)
        self.gaps.request_clicked.connect(self.request_chosen)
        self.requests.clicked.connect(lambda index: self.request_chosen.emit(self.request_model.request_at(index.row())))
        self.compactions.clicked.connect(lambda index: self.show_compaction(index.row()))

    def follow(self, changed) -> None:
        """Say why the request the workspace shows wrote to the cache, after each step (app.undo.SessionEditor.display_changed)."""
        self.follower = FollowsChanges(
            self,
            lambda changes: changes is None or changes.shown or changes.policy,
            lambda changes: self.set_request(self.document.shown) if self.document is not None else None,
        )
        self.follower.follow(changed)

    # -- the document -----------------------------------------------------------------------

    def set_document(self, document: Document | None) -> None:
        if self.task is not None:
            self.task.cancel()
        self.document, self.facts, self.task = document, None, None
        self.request_model.set_rows([])
        self.compaction_model.set_rows([])
        self.bar.set_parts([], True)
        self.legend.set_items([])
        self.explained.setText("")
        self.gaps.set_rows([])
        self.lost.setPlainText("")
        self.detail.setText("")
        self.heading.setText("No session open" if document is None else "Counting the session's requests …")
        self._pending = document is not None
        if self._pending and self.isVisible():
            self._compute()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if self._pending:
            self._compute()

    def _compute(self) -> None:
        document = self.document
        if document is None or self.task is not None:
            return
        self._pending = False
        session, policy = document.session, document.policy
        cache = document.cache_report()  # made at load from the trace's own count: only the compactions are added
        self.task = run_task(
            lambda progress: cost_facts(session, policy, cache=cache),
            "cost",
            self,
            succeeded=lambda facts, d=document: self._ready(d, facts),
            failed=lambda exc: self.heading.setText(f"Could not work out the costs: {exc}"),
        )

    def _ready(self, document: Document, facts: CostFacts) -> None:
        if document is not self.document:
            return  # a later document replaced it while it counted
        self.task = None
        self.facts = facts
        self.heading.setText(
            f"Where the money went: {plural(len(facts.cache.rows), 'request')}"
            + ("" if facts.priced else " (the model has no price: in tokens)")
        )
        near = near_mark(document.session)  # the README: Copilot CLI's estimate and Aider's rounding marked on every screen
        self.bar.set_parts(facts.parts, facts.priced, near)
        self.bar_sentence.setText(facts.sentence(near))
        shown = [p for p in facts.parts if p.tokens or p.usd]
        self.legend.set_items(
            [(part_colour(p.name), f"{p.label} {_money(p, facts.priced, near)}", f"{p.label}: {p.meaning}.") for p in shown]
        )
        self.explained.setText(" ".join(parts_explained(shown) + (["; ".join(facts.notes)] if facts.notes else [])))
        self.gaps.set_rows(facts.cache.rows)
        self.gap_sentence.setText(gap_sentence(facts.cache.implicit, timed=not untimed(facts.cache.rows), requests=len(facts.cache.rows)))
        self.requests_sentence.setText(
            (
                "Each request's read, and what broke it where it fell short"
                if facts.cache.implicit
                else "Each request's cache write split by cause"
            )
            + ". Click one to step the timeline to it."
        )
        self.request_model.set_rows(facts.cache.rows)
        self.compaction_model.set_rows(facts.compactions)
        self.tabs.setTabText(2, f"Compactions ({len(facts.compactions)})")
        if not facts.compactions:
            self.compaction_sentence.setText("No compaction or fold in this session's requests.")
        if self.slot is not None:
            self.set_request(self.slot)
        self.facts_ready.emit(facts)

    # -- what the user picks ------------------------------------------------------------------

    def show_part(self, name: str) -> None:
        """List only the requests that make up one part of the bill."""
        if self.facts is None:
            return
        part = self.facts.part(name)
        wanted = set(part.requests)
        self.request_model.set_rows([r for r in self.facts.cache.rows if r.index in wanted] if wanted else [])
        self.requests_sentence.setText(
            f"The {plural(len(wanted), 'request')} with {part.label}: {part.meaning}. Click one to step the timeline to it."
        )
        self.tabs.setCurrentIndex(1)

    def show_all(self) -> None:
        if self.facts is not None:
            self.request_model.set_rows(self.facts.cache.rows)

    def set_request(self, slot: int | None) -> None:
        """Say why the request the timeline shows wrote to the cache, with its divergence from the one before."""
        self.slot = slot
        self.gaps.current = slot
        self.gaps.update()
        facts = self.facts
        if facts is None:
            return
        if slot is None or not 0 <= slot < len(facts.cache.rows):
            self.detail.setText("The timeline shows the active view now: no request was sent from it yet.")
            return
        row = facts.cache.rows[slot]
        measured = facts.cache.measured[slot] if slot < len(facts.cache.measured) else None
        self.detail.setText(request_sentence(row) + " " + divergence_sentence(row, measured))
        for r, shown in enumerate(self.request_model.rows):
            if shown.index == slot:
                self.requests.selectRow(r)
                break

    def show_compaction(self, row: int) -> None:
        c = self.compaction_model.rows[row]
        lost = "\n".join(f"{x.kind}: {x.text}" for x in c.literals.lost)
        again = "\n".join(f"request {r.request}: {r.tool} {r.what} ({r.tokens:,} tokens)" for r in c.refetched)
        self.lost.setPlainText(
            compaction_sentence(c)
            + "\n\nLost from the summary:\n"
            + (lost or "nothing")
            + ("\n\nFetched again after it:\n" + again if again else "")
        )
        self.request_chosen.emit(c.request)
