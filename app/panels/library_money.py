"""Where the money went across the library: every stored session's bill by cause summed (the figures of
`foldscope cache DIR`), the requests that wasted most on cache writes, each opening its session there, and the
spend over time by day, week or month (the figures of `foldscope usage --plain`) as a table and a chart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.app.models.cost import PartsModel, RowsModel, WastedModel
from foldscope.app.qt import (
    QColor,
    QComboBox,
    QHeaderView,
    QLabel,
    QModelIndex,
    QPainter,
    QPaintEvent,
    QPersistentModelIndex,
    QPushButton,
    QScrollArea,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.worker import Task, run_task
from foldscope.core.forensics.many_sessions import cache_totals, own_sessions, session_cache, top_wasted
from foldscope.core.forensics.usage import session_lines, summarise_usage
from foldscope.core.model.money_text import usd_text
from foldscope.core.model.session import ReadError


def _usd(value: float | None) -> str:
    return usd_text(value)


def library_money(sources: list[str]) -> dict[str, Any]:
    """The library's sessions' cache reports (read from their files) summed as `foldscope cache DIR` sums a folder."""
    results, skipped = [], []
    for path in sources:
        try:
            results.append(session_cache(path))
        except ReadError as exc:
            skipped.append({"file": path, "error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - one session that cannot be read is a skip, never the end
            skipped.append({"file": path, "error": f"{type(exc).__name__}: {exc}"})
    own = own_sessions(results)
    lines = [session_lines(path, False) for path in sources]  # the reported usage per request, grouped on demand
    return {"sessions": len(own), "skipped": skipped, "totals": cache_totals(own), "top_wasted": top_wasted(own), "usage_lines": lines}


class UsageModel(RowsModel):
    """A row per period of `foldscope usage --by day|week|month`: its sessions, tokens and cost."""

    HEADERS = ("period", "sessions", "requests", "fresh", "cache read", "cache write", "output", "cost")
    KEYS = ("sessions", "requests", "fresh", "cache_read", "cache_write", "output")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.by = "day"

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.TextAlignmentRole and column:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if column == 0:
            return str(row[self.by])
        if column == len(self.HEADERS) - 1:
            return _usd(row["cost_usd"])
        return f"{row[self.KEYS[column - 1]]:,}"


class CostOverTime(QWidget):
    """The cost of each period as a bar, oldest on the left, the largest's dollars and the first and last period named."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars: list[tuple[str, float]] = []
        self.setMinimumHeight(110)
        self.setAccessibleName("The library's cost over time")

    def set_bars(self, bars: list[tuple[str, float]]) -> None:
        self.bars = bars
        self.setToolTip("\n".join(f"{label}: {_usd(usd)}" for label, usd in bars[-40:]))
        self.update()

    def bar_rects(self) -> list[tuple[float, float, float, float]]:
        """(x, y, width, height) of each bar in the widget, as painted."""
        top, bottom = 18.0, self.height() - 18.0
        peak = max((usd for _, usd in self.bars), default=0.0) or 1.0
        step = self.width() / max(len(self.bars), 1)
        return [
            (step * k + step * 0.15, bottom - (bottom - top) * usd / peak, max(step * 0.7, 1.0), (bottom - top) * usd / peak)
            for k, (_, usd) in enumerate(self.bars)
        ]

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        text = self.palette().windowText().color()
        if not self.bars:
            painter.setPen(text)
            painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignCenter), "Count the library to see its cost over time")
            return
        for x, y, w, h in self.bar_rects():
            painter.fillRect(int(x), int(y), max(1, int(w)), max(1, int(h)), QColor("#1c5fb8"))
        painter.setPen(text)
        peak = max(usd for _, usd in self.bars)
        painter.drawText(2, 13, f"largest {_usd(peak)}")
        painter.drawText(2, self.height() - 4, self.bars[0][0])
        last = self.bars[-1][0]
        painter.drawText(self.width() - painter.fontMetrics().horizontalAdvance(last) - 2, self.height() - 4, last)


def library_sources(db: str | None) -> list[str]:
    """The files of the library's sessions that are still on disk, each once."""
    from foldscope.app.panels.library import list_sessions

    return sorted({r["source"] for r in list_sessions(db) if r.get("source") and Path(r["source"]).is_file()})


def _table(model: RowsModel, name: str) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setAccessibleName(name)
    view.verticalHeader().hide()
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    view.horizontalHeader().setStretchLastSection(True)
    # Every column but the last fits its text (a 1366-pixel window leaves the Cost tab about 540 pixels); the last
    # takes what is left and elides, its whole text on hover (the models' tooltips).
    for column in range(model.columnCount() - 1):
        view.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    view.setWordWrap(False)
    return view


class LibraryMoney(QWidget):
    """Counts every library session off the GUI thread when asked; a click on a request opens it there."""

    request_chosen = Signal(str, int)  # (session file, request index)
    money_ready = Signal(object)

    def __init__(self, db: Callable[[], str | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.db = db
        self.result: dict[str, Any] | None = None
        self.task: Task | None = None
        self.heading = QLabel("Where the money went across every session in the library.")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.button = QPushButton("Count the library")
        self.button.setToolTip("Read every session of the library and put each cache write down to its cause")
        self.button.clicked.connect(self.compute)
        self.parts = PartsModel(self)
        self.wasted = WastedModel(self)
        self.parts_table = _table(self.parts, "The library's bill by cause")
        self.wasted_table = _table(self.wasted, "The requests that wasted most on cache writes")
        self.wasted_table.activated.connect(self._chosen)
        self.wasted_table.clicked.connect(self._chosen)
        self.wasted_sentence = QLabel(
            "The requests that paid most to store again text the cache could have given "
            "back (rewrites, expiries, provider misses). Click one to open its session there."
        )
        self.wasted_sentence.setWordWrap(True)
        self.by = QComboBox()
        self.by.addItems(["day", "week", "month"])
        self.by.setToolTip("What a row of the spend over time is (UTC dates; a week from its Monday)")
        self.by.currentTextChanged.connect(self._regroup)
        self.usage = UsageModel(self)
        self.usage_table = _table(self.usage, "The library's spend over time")
        self.chart = CostOverTime()
        self.usage_sentence = QLabel(
            "Spend over time: each session's reported usage priced per request, by the day (UTC) each request was sent, subagents included."
        )
        self.usage_sentence.setWordWrap(True)
        for view in (self.parts_table, self.wasted_table, self.usage_table):
            view.setMinimumHeight(120)
        inner = QWidget()
        column = QVBoxLayout(inner)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.heading)
        column.addWidget(self.button)
        column.addWidget(self.parts_table, 3)
        column.addWidget(self.wasted_sentence)
        column.addWidget(self.wasted_table, 2)
        column.addWidget(self.usage_sentence)
        column.addWidget(self.by)
        column.addWidget(self.chart)
        column.addWidget(self.usage_table, 2)
        # It scrolls when the tab is short (a 768-pixel screen with a dock open), never pushing the window.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)

    def compute(self) -> Task | None:
        if self.task is not None and not self.task.is_done:
            return None
        db = self.db()
        self.heading.setText("Counting every session in the library …")
        self.task = run_task(
            lambda progress: library_money(library_sources(db)),
            "library money",
            self,
            succeeded=self._ready,
            failed=lambda exc: self.heading.setText(f"Could not count the library: {exc}"),
        )
        return self.task

    def _ready(self, result: dict[str, Any]) -> None:
        self.result = result
        totals = result["totals"]
        rows = [(name, cell) for name, cell in totals["by_cause"].items() if cell["tokens"]]
        rows += [(kind, cell) for kind, cell in totals["children"].items() if cell.get("requests")]
        self.parts.set_rows(rows)
        self.wasted.set_rows(result["top_wasted"])
        skipped = f"; {len(result['skipped'])} could not be read" if result["skipped"] else ""
        self.heading.setText(
            f"{result['sessions']:,} sessions in the library cost {_usd(totals['total_usd'])} as billed "
            f"(their own requests {_usd(totals['bill_usd'])}, with their subagents and compaction "
            f"summarisers){skipped}. Each row is one part of that bill."
        )
        self._regroup(self.by.currentText())
        self.money_ready.emit(result)

    def _regroup(self, by: str) -> None:
        if self.result is None:
            return
        summary = summarise_usage(self.result["usage_lines"], by, forensics=False)
        self.usage.by = by
        self.usage.set_rows(summary["rows"])
        self.chart.set_bars([(str(r[by]), r["cost_usd"]) for r in summary["rows"]])

    def _chosen(self, index: QModelIndex) -> None:
        top = self.wasted.rows[index.row()]
        self.request_chosen.emit(top["file"], int(top["index"]))


def open_at_request(window, path: str, request: int) -> None:
    """Open `path` in the window (or stay, when it is shown) and step its timeline to `request`."""
    doc = window.document
    if doc is not None and str(Path(doc.path).resolve()) == str(Path(path).resolve()):
        window.timeline.step_to(request)
        return

    def loaded(*_args) -> None:
        disconnect()
        window.timeline.step_to(request)

    def disconnect(*_args) -> None:
        for signal, slot in ((window.document_loaded, loaded), (window.load_failed, disconnect)):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass

    window.document_loaded.connect(loaded)
    window.load_failed.connect(disconnect)
    if window.open_path(path) is None:
        disconnect()
