"""Thin table models for the Cost panel: a row per request (its cache causes), a row per compaction, and across
the library a row per part of the bill and per request that wasted most."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.app.qt import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from foldscope.core.forensics.cache_report import CacheRow
from foldscope.core.readout.cost_facts import PART_WORDS, duration

if TYPE_CHECKING:  # imported when the Cost panel's compactions are first made (core.readout.cost_facts.cost_facts)
    from foldscope.core.forensics.compactions import Compaction

Index = QModelIndex | QPersistentModelIndex
# The library's tables show a cell's text and, where a narrow column elides it, the whole of it on hover.
WHOLE_TEXT = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


class RowsModel(QAbstractTableModel):
    """A row per item of `rows`, a column per header: what the two Cost tables share; each says its cells."""

    HEADERS: tuple[str, ...] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None


class RequestCostModel(RowsModel):
    """One row per request of the shown rows (all, or those making up one part of the bill)."""

    HEADERS = ("request", "idle before", "cache read", "cache write", "causes", "wasted")
    # An implicit cache (core.forensics.reads): no write is billed, so its columns say what a short read missed.
    READ_HEADERS = ("request", "idle before", "cache read", "short of prefix", "what broke the read", "read share")
    CAUSES = 4  # the column of causes: the one a narrow panel elides, whole on hover
    rows: list[CacheRow]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if self.rows and self.rows[0].read is not None and role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.READ_HEADERS):
                return self.READ_HEADERS[section]
        return super().headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        c, u = row.causes, row.causes.usage
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() != 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole and (role != Qt.ItemDataRole.ToolTipRole or index.column() != self.CAUSES):
            return None
        column = index.column()
        if column == 0:
            return str(c.index)
        if column == 1:
            return "" if c.gap_s is None else duration(c.gap_s)
        if u is None:
            return "" if column != 4 else "no usage reported"
        if column == 2:
            return f"{u.cache_read:,}"
        if row.read is not None:
            read = row.read
            if column == 3:
                return f"{read.short:,}" if read.prefix is not None else ""
            if column == 4:
                return ", ".join(f"{cause} {n:,}" for cause, n in read.broke.items())
            return "" if read.share is None else f"{read.share:.0%}"
        if column == 3:
            return f"{u.cache_write:,}"
        if column == 4:
            return ", ".join(f"{cause} {n:,}" for cause, n in c.causes.items())
        return _usd(row.wasted) if row.priced.waste_usd is not None else "n/a"

    def request_at(self, row: int) -> int:
        return self.rows[row].index


class CompactionModel(RowsModel):
    """One row per compaction or fold of the session."""

    HEADERS = (
        "before request",
        "kind",
        "tokens before → after",
        "summariser",
        "rewrite",
        "exact details lost",
        "fetched again",
        "paid back",
    )
    rows: list[Compaction]

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows) or role != Qt.ItemDataRole.DisplayRole:
            return None
        c = self.rows[index.row()]
        lost, kept = len(c.literals.lost), len(c.literals.kept)
        return (
            str(c.request),
            c.kind,
            f"{c.before:,} → {c.after:,}",
            _usd(c.summariser_cost_usd),
            _usd(c.rewrite_cost_usd),
            f"{lost} of {lost + kept}",
            f"{c.refetched_tokens:,} tokens ({len(c.refetched)})",
            "never" if c.payback_requests is None else f"after {c.payback_requests}",
        )[index.column()]


class PartsModel(RowsModel):
    """One row per part of the library's bill (the session parts, then subagents and the summariser)."""

    HEADERS = ("part", "tokens", "cost", "wasted", "what it is")

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows) or role not in WHOLE_TEXT:
            return None
        name, cell = self.rows[index.row()]
        label, meaning = PART_WORDS[name]
        return (label, f"{cell['tokens']:,}", _usd(cell["cost_usd"]), _usd(cell["waste_usd"]) if "waste_usd" in cell else "", meaning)[
            index.column()
        ]


class WastedModel(RowsModel):
    """The requests that wasted most on cache writes across the library."""

    HEADERS = ("session", "request", "wasted", "causes")

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows) or role not in WHOLE_TEXT:
            return None
        top = self.rows[index.row()]
        causes = ", ".join(f"{c} {n:,}" for c, n in top["causes"].items())
        return (Path(top["file"]).name, str(top["index"]), _usd(top["waste_usd"]), causes)[index.column()]
