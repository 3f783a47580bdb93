"""The policy sweep's table: one row per policy, its totals over the fleet, sortable by any column."""

from __future__ import annotations

from typing import Any

from foldscope.app.qt import QAbstractTableModel, QFont, QModelIndex, QObject, QPersistentModelIndex, Qt
from foldscope.core.readout.tune_facts import policy_words

# (key, header, how it reads): the columns `foldscope tune` prints, in the same order.
COLUMNS = (
    ("policy", "Policy", str),  # shown in words (policy_words: "ceiling 100,000"); the label, the row's key, says 100000
    ("sessions", "Files", lambda v: f"{v:,}"),  # a row a file, as the status line counts them (subagent files apart)
    ("requests", "Requests", lambda v: f"{v:,}"),
    ("refused", "Refused", lambda v: f"{v:,}"),
    ("over_ceiling", "Over ceiling", lambda v: f"{v:,}"),
    ("folds", "Folds", lambda v: f"{v:,}"),
    ("rewrites", "Rewrites", lambda v: f"{v:,}"),
    ("cache_read_share", "Cache read", lambda v: f"{v:.1%}"),
    ("cost_usd", "Cost", lambda v: f"${v:,.4f}"),
    ("cost_vs_recorded", "vs recorded", lambda v: "n/a" if v is None else f"{v:.3f}x"),
    ("recorded_modelled_cost_usd", "Recorded, modelled", lambda v: "n/a" if v is None else f"${v:,.4f}"),
    ("bill_usd", "Bill", lambda v: f"${v:,.4f}"),
)
HEADER_TIPS = {
    "sessions": "the files replayed under the policy: each session's, and a subagent's file beside its session as one of its own",
    "cost_usd": "the policy's replays under the cache model, priced; not comparable where it refused requests",
    "recorded_modelled_cost_usd": "the recorded views under the same cache model, priced: what the cost is set against",
    "bill_usd": "the recording as billed: the reported usage priced per request, beside, never the baseline",
}
SortRole = Qt.ItemDataRole.UserRole + 1  # the raw value, so numbers sort as numbers


class TuneModel(QAbstractTableModel):
    """Maps a row to one policy's totals (`summarise`'s `policies`) and a column to one of its figures."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.policies: list[dict[str, Any]] = []
        self.recommended: str | None = None

    def set_result(self, result: dict[str, Any] | None) -> None:
        self.beginResetModel()
        self.policies = list(result["policies"]) if result else []
        self.recommended = result["recommendation"]["policy"] if result else None
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.policies)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.policies):
            return None
        key, _, shown = COLUMNS[index.column()]
        row = self.policies[index.row()]
        value = row.get(key)
        if role == Qt.ItemDataRole.DisplayRole:
            if key == "cost_usd" and row.get("cost_not_comparable"):
                return "not comparable"  # it refused requests: never a sum that leaves them out, nor $0
            return policy_words(row["policy"]) if key == "policy" else shown(value)
        if role == Qt.ItemDataRole.ToolTipRole and key == "cost_usd" and row.get("cost_not_comparable"):
            return row["cost_not_comparable"]
        if role == SortRole:
            return -1.0 if value is None else value
        if role == Qt.ItemDataRole.TextAlignmentRole and key != "policy":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and row["policy"] == self.recommended:
            font = QFont()
            font.setBold(True)
            return font
        recommended = "recommended: the cheapest policy with no request refused or over its ceiling"
        if role == Qt.ItemDataRole.ToolTipRole and key == "policy":  # whole, where a narrow table cuts the label
            words = policy_words(row["policy"])
            return f"{words}\n{recommended}" if row["policy"] == self.recommended else words
        if role == Qt.ItemDataRole.ToolTipRole and row["policy"] == self.recommended:
            return recommended
        return None

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,  # noqa: N802
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(COLUMNS):
            return COLUMNS[section][1]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and 0 <= section < len(COLUMNS):
            return HEADER_TIPS.get(COLUMNS[section][0])
        return None
