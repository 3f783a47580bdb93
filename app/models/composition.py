"""Thin table models over a request's composition (core.readout.composition): categories, largest things, repeats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.app.highlight import plain_tip
from foldscope.app.qt import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

SortRole = Qt.ItemDataRole.UserRole + 2
ItemRole = Qt.ItemDataRole.UserRole + 3


@dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[Any], Any]
    numeric: bool = False
    share: bool = False  # a fraction shown as a percentage
    tip: str = ""


class FactsModel(QAbstractTableModel):
    """Maps a row to one core item (a Category, Group or Repeat) and a column to one of its facts."""

    def __init__(self, columns: Sequence[Column], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns = tuple(columns)
        self.items: list[Any] = []

    def set_items(self, items: Sequence[Any]) -> None:
        self.beginResetModel()
        self.items = list(items)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.header
        if role == Qt.ItemDataRole.ToolTipRole and column.tip:
            return column.tip
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.items) or not 0 <= index.column() < len(self.columns):
            return None
        item, column = self.items[index.row()], self.columns[index.column()]
        value = column.value(item)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if column.share:
                return f"{value:.1%}"
            if isinstance(value, int) and column.numeric:
                return f"{value:,}"
            text = "" if value is None else str(value)  # a cell never renders rich text; a tooltip would
            return plain_tip(text) if role == Qt.ItemDataRole.ToolTipRole else text
        if role == SortRole:
            return value if column.numeric else str(value).casefold()
        if role == ItemRole:
            return item
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class LargestFilter(QSortFilterProxyModel):
    """Sorts by any column and keeps only the `limit` items with the most tokens (None: every item)."""

    def __init__(self, source: FactsModel, tokens: Callable[[Any], int], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.setSortRole(SortRole)
        self.tokens = tokens
        self.limit: int | None = None
        self._kept: set[int] = set()

    def set_limit(self, limit: int | None) -> None:
        self.beginFilterChange()
        self.limit = limit
        self._rank()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def refresh(self) -> None:
        """The source's items changed: rank them again."""
        self.set_limit(self.limit)

    def _rank(self) -> None:
        model: FactsModel = self.sourceModel()  # type: ignore[assignment]
        order = sorted(range(len(model.items)), key=lambda i: (-self.tokens(model.items[i]), i))
        self._kept = set(order if self.limit is None else order[: self.limit])

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        return source_row in self._kept
