"""The composition panel: what is eating the shown request's context, as one bar and three sortable tables.

The figures are core.readout.composition's, from the same measurement the trace makes; the panel composes
only while visible, and again when the shown request or the policy in force changes.
"""

from __future__ import annotations

import html

from foldscope.app.models.composition import Column, FactsModel, ItemRole, LargestFilter
from foldscope.app.panels.shown_request import ShownRequestPanel
from foldscope.app.panels.tab_titles import whole_tabs
from foldscope.app.panels.window_map_blocks import LEAD_COLOURS
from foldscope.app.qt import (
    QAbstractItemView,
    QColor,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QModelIndex,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QRectF,
    QSize,
    Qt,
    QTableView,
    QTabWidget,
    QToolTip,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.theme import colour_for_key, muted_colour
from foldscope.core.readout.composition import (
    ASSISTANT,
    CALLS,
    COPIES,
    FRAMING,
    HEAD,
    INSTRUCTIONS,
    NOTES,
    RESULTS,
    UNSEEN,
    Category,
    Composition,
    request_composition,
)
from foldscope.core.readout.document import Document
from foldscope.core.readout.head_split import NOT_SPLIT, ORDER, HeadSources, sources_for
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.words import sizes_words

# The kind colour each category borrows from the lists and the window map.
CATEGORY_KINDS = {
    HEAD: "system",
    INSTRUCTIONS: "instruction",
    ASSISTANT: "assistant",
    CALLS: "action_request",
    NOTES: "note",
    COPIES: "clipped_copy",
}
HEAD_SHADES = (125, 160, 112, 145, 135, 175)  # each part of the unseen head a grey darker than the part not split, neighbours apart
LARGEST = (("largest 10", 10), ("largest 25", 25), ("largest 100", 100), ("all", None))


def category_colour(name: str, shade: int = 0) -> QColor:
    if name in (UNSEEN, NOT_SPLIT):
        return muted_colour()
    if name == FRAMING:  # the window map's framing grey: it fell to the system prompt's colour, one colour for two parts
        return QColor(LEAD_COLOURS["framing"])
    if name.startswith(f"{UNSEEN}: "):  # a part of the unseen head (core.readout.head_split): a grey as its one block, by shade
        part = name.removeprefix(f"{UNSEEN}: ")
        return muted_colour().darker(HEAD_SHADES[ORDER.index(part) % len(HEAD_SHADES)] if part in ORDER else 130)
    if name.startswith(RESULTS):
        base = colour_for_key("action_response")
        return base.lighter(100 + 12 * (shade % 4)) if shade % 2 == 0 else base.darker(100 + 10 * (shade % 4))
    return colour_for_key(CATEGORY_KINDS.get(name, "system"))


def composition_for(document: Document, slot: int | None, measure=None, head: HeadSources | None = None) -> Composition:
    """The composition of request `slot` of the document's trace (None or past the last: the next request, now),
    from the document's one Measure (its scale and head are the request panel's and the status bar's); `head`: what
    names the unseen head's parts, when the caller keeps it (core.readout.head_split.sources_for)."""
    measure = measure or document.measure_for()
    at = None if slot is None or slot >= len(document.requests) else slot
    # The window the document resolved under its policy (core.readout.agent_limits): the status bar's; and the next
    # request's predicted input as the document holds it (moved by any edit since the load), which free is taken from.
    return request_composition(
        measure,
        at,
        window=document.context_window,
        window_source=document.window_source,
        predicted=document.now_predicted if at is None else None,
        head=head,
    )


class CompositionBar(QWidget):
    """The request as one bar: a segment per category (its share of the estimate), then the free window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.composition: Composition | None = None
        self.setMinimumHeight(20)
        self.setMouseTracking(True)
        self.setAccessibleName("Composition bar")

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(400, 22)  # a strip to hover, not a chart: at 1366x768 each 20 pixels is a row of the table below

    def set_composition(self, composition: Composition | None) -> None:
        self.composition = composition
        self.update()

    def segments(self) -> list[tuple[QRectF, Category | None, QColor]]:
        """(rectangle, category or None for the free space, colour) across the widget's width."""
        c = self.composition
        if c is None or c.size <= 0:
            return []
        span = max(c.window or 0, c.estimate, 1)
        width = self.width() - 2
        out: list[tuple[QRectF, Category | None, QColor]] = []
        x = 1.0
        shade = 0
        for part in c.parts:
            if part.tokens <= 0:
                continue
            w = width * part.tokens * c.scale / span
            colour = category_colour(part.name, shade)
            shade += part.name.startswith(RESULTS)
            out.append((QRectF(x, 1, w, self.height() - 2), part, colour))
            x += w
        if c.window:
            out.append((QRectF(x, 1, max(width - x + 1, 0), self.height() - 2), None, QColor(0, 0, 0, 0)))
        return out

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(muted_colour(), 1))
        painter.drawRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1))
        for rect, _, colour in self.segments():
            painter.fillRect(rect, colour)
        painter.end()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        c = self.composition
        for rect, part, _ in self.segments():
            if rect.contains(event.position()) and c is not None:
                if part is None:
                    text = (
                        f"the predicted input, {c.predicted:,}, is over the {c.window:,}-token context window by {c.over:,}"
                        if c.over is not None
                        else f"free: {c.free or 0:,} tokens of the {c.window:,}-token context window "
                        f"(the window less the predicted input, {c.predicted:,})"
                    )
                else:
                    text = f"{part.name}: {part.tokens:,} tokens ({part.tokens / c.size:.1%} of the count)"
                QToolTip.showText(event.globalPosition().toPoint(), text, self)
                return
        QToolTip.hideText()


class _FactsTable(QTableView):
    """A table whose first column, when it holds words, takes at most two fifths of the width: a Codex session's
    MCP tool names ("results: mcp__cloud-associates__execute_workflow") pushed the Tokens column out of sight at
    1366 pixels. The cut names end in an ellipsis and read whole in their tooltips."""

    def __init__(self, capped: bool) -> None:
        super().__init__()
        self.capped = capped

    def setModel(self, model) -> None:  # noqa: N802 (Qt override)
        super().setModel(model)
        if self.capped:
            for signal in (model.modelReset, model.layoutChanged, model.rowsInserted, model.dataChanged):
                signal.connect(self.fit_first_column)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if self.capped:
            self.fit_first_column()

    def fit_first_column(self, *_) -> None:
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        wanted = max(self.sizeHintForColumn(0), header.sectionSizeHint(0))
        header.resizeSection(0, min(wanted, max(120, self.viewport().width() * 2 // 5)))


def _table(name: str, proxy: LargestFilter, sort_column: int, capped: bool = False) -> QTableView:
    table = _FactsTable(capped)
    table.setAccessibleName(name)
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(sort_column, Qt.SortOrder.DescendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


class CompositionPanel(ShownRequestPanel):
    """What is eating the context of the shown request; choosing a row asks for its newest message."""

    message_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.composition: Composition | None = None
        self._head: tuple[int, HeadSources] | None = None  # (the facts' revision, what names the unseen head's parts)
        self.heading = QLabel("<i>No session open.</i>")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.bar = CompositionBar()
        self.largest = QComboBox()
        self.largest.setAccessibleName("Show the largest")
        for label, limit in LARGEST:
            self.largest.addItem(label, limit)
        self.largest.setCurrentIndex(1)
        self.largest.currentIndexChanged.connect(self._limit_changed)

        size = lambda: self.composition.size if self.composition and self.composition.size else 1  # noqa: E731
        self.categories = FactsModel(
            [
                Column("Category", lambda c: c.name),
                Column("Tokens", lambda c: c.tokens, numeric=True),
                Column("Share", lambda c: c.tokens / size(), numeric=True, share=True, tip="of the request's count"),
                Column("Blocks", lambda c: c.blocks, numeric=True),
                Column("Note", lambda c: c.note),
            ],
            self,
        )
        self.groups = FactsModel(
            [
                Column("Tokens", lambda g: g.tokens, numeric=True),
                Column("Share", lambda g: g.tokens / size(), numeric=True, share=True, tip="of the request's count"),
                Column("Times", lambda g: g.times, numeric=True),
                Column("Category", lambda g: g.category),
                Column("Tool", lambda g: g.tool),
                Column("Path, command or message", lambda g: g.target),
            ],
            self,
        )
        self.repeats = FactsModel(
            [
                Column("Repeats cost", lambda r: r.repeat_tokens, numeric=True, tip="tokens of every copy but the newest"),
                Column("Times", lambda r: r.times, numeric=True),
                Column("In all", lambda r: r.tokens, numeric=True),
                Column("Why", lambda r: r.why),
                Column("What", lambda r: r.label),
            ],
            self,
        )
        self.category_proxy = LargestFilter(self.categories, lambda c: c.tokens, self)
        self.group_proxy = LargestFilter(self.groups, lambda g: g.tokens, self)
        self.repeat_proxy = LargestFilter(self.repeats, lambda r: r.repeat_tokens, self)
        self.category_table = _table("Composition by category", self.category_proxy, 1, capped=True)
        self.group_table = _table("Largest things in the request", self.group_proxy, 0)
        self.repeat_table = _table("Content carried more than once", self.repeat_proxy, 0)
        for table in (self.group_table, self.repeat_table):
            table.activated.connect(self._chosen)
            table.clicked.connect(self._chosen)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.category_table, "By category")
        self.tabs.addTab(self.group_table, "By tool and target")
        self.tabs.addTab(self.repeat_table, "Carried twice")
        # The tabs' titles whole: in the tab bar's corner "Show largest N" left "By category" and scroll arrows at
        # 1366 pixels with a dock open. It sits beside the bar instead, not on a row of its own: on a 768-pixel
        # screen that row is two of the table's.
        whole_tabs(self.tabs)
        strip = QHBoxLayout()
        strip.setContentsMargins(0, 0, 0, 0)
        strip.addWidget(self.bar, 1)
        strip.addWidget(QLabel("Show"))
        strip.addWidget(self.largest)
        # Close-set (the bar thin, the margins and gaps small): at 1366x768 the category table keeps its 8 rows with
        # a heading line to spare (issue 45), not 8.15 where one more wrapped line of the heading cost a row.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(3)
        layout.addWidget(self.heading)
        layout.addLayout(strip)
        layout.addWidget(self.tabs, 1)
        self._limit_changed()

    # -- what is shown ------------------------------------------------------------------------
    def refresh(self, force: bool = False) -> None:
        doc, slot = self.document, self.slot
        # The next request changes with every action and policy (the workspace moves the facts' revision), not a step.
        key = (doc.facts_revision if doc is not None else None, slot)
        if key == self._shown and not force:
            return
        self._shown = key
        if doc is None:
            self._show(None, "<i>No session open.</i>")
            return
        try:
            composition = composition_for(doc, slot, head=self._head_sources(doc))
        except Exception as exc:  # noqa: BLE001 - a view the compiler refuses is said, not raised
            self._show(None, f"<b>Cannot compose this request:</b> {html.escape(f'{type(exc).__name__}: {exc}')}")
            return
        near = near_mark(doc.session)  # an Aider history's rounded usage, a Copilot CLI session's estimate
        self._show(composition, self._heading(composition, near))

    def _head_sources(self, doc: Document) -> HeadSources:
        """What names the unseen head's parts, kept while the record and the policy stand (the facts' revision): it
        walks the whole record for the MCP servers its calls name, which a step does not change."""
        if self._head is None or self._head[0] != doc.facts_revision:
            self._head = (doc.facts_revision, sources_for(doc.session))
        return self._head[1]

    def _heading(self, c: Composition, near: str = "") -> str:
        """The heading over the composition alone (`near`: "~" before a predicted input made from approximate usage)."""
        which = "the next request (the active view now)" if c.request is None else f"request {c.request}"
        lines = [
            # the count, not bold: the request's headline size is its predicted input (the request panel's)
            f"<b>What is eating the context</b> of {which}: "
            + sizes_words(c.own_count, c.unseen_head, c.estimate, c.scale, c.predicted, near)
        ]
        if c.window and c.free is not None:
            # The free figure before the window's source: a long source (and its note) wraps below it, never hides it.
            room = (
                f"the predicted input is over it by {c.over:,}"
                if c.over is not None
                else f"{c.free:,} free ({c.free / c.window:.0%}, the window less the predicted input)"
            )
            lines.append(f"Context window {c.window:,}: {room} — {html.escape(c.window_source)}")
        repeats = c.carried_twice
        if repeats:
            lines.append(f"Content carried more than once costs {repeats:,} tokens ({repeats / c.size:.1%})")
        return "<br>".join(lines)

    def _show(self, composition: Composition | None, heading: str) -> None:
        self.composition = composition
        self.heading.setText(heading)
        self.bar.set_composition(composition)
        self.categories.set_items(composition.parts if composition else [])
        self.groups.set_items(composition.groups if composition else [])
        self.repeats.set_items(composition.repeats if composition else [])
        for proxy in (self.category_proxy, self.group_proxy, self.repeat_proxy):
            proxy.refresh()

    def _limit_changed(self) -> None:
        limit = self.largest.currentData()
        for proxy in (self.group_proxy, self.repeat_proxy):
            proxy.set_limit(limit)

    def _chosen(self, index: QModelIndex) -> None:
        item = index.data(ItemRole)
        indexes = getattr(item, "indexes", ())
        if indexes:
            self.message_requested.emit(indexes[-1])
