"""The Replay lab's totals table: a thin Qt adapter over core.replay.lab's per-strategy totals (read through core.readout.replay_facts)."""

from __future__ import annotations

from typing import Any

from foldscope.app.qt import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from foldscope.app.theme import rule_colour, strategy_colour
from foldscope.core.readout.replay_facts import BILL_LABEL, MODELLED_LABEL, beside_bill, cost_text

# The totals shown, in order, with what each means (the CLI's names, DESIGN.md's words).
METRICS = (
    (
        "estimator",
        "Decides on",
        "what the strategy's policy decides on: adr, the estimate (count x scale, ADR-0130), "
        "or predicted, the predicted input; none: nothing decides",
    ),
    ("requests", "Requests", "requests sent, a compaction's summary calls included"),
    ("peak", "Peak", "the largest request's estimate, in tokens"),
    ("over_ceiling", "Over the ceiling", "requests whose estimate reached the ceiling (the fold core would refuse them)"),
    ("refused", "Refused", "requests refused before the send: nothing sent, nothing billed"),
    ("reported_over_ceiling", "Reported over the ceiling", "recorded requests whose reported input reached the ceiling"),
    ("fresh", "Fresh input", "input tokens neither read from nor written to the prompt cache"),
    ("cache_read", "Cache read", "input tokens read from the prompt cache"),
    ("cache_write", "Cache write", "input tokens written to the prompt cache"),
    ("rewrites", "Rewrites", "requests whose prefix changed before their tail (the cache is lost past the change)"),
    ("folds", "Folds", "folds, band commits or compactions landed"),
    (
        "cost_usd",
        "Cost (USD)",
        "recorded, as billed: the reported usage priced per request (the bill); recorded, "
        "modelled and the strategies: the cache model priced, set beside each other; not "
        "comparable where a strategy refused requests (they sent nothing)",
    ),
)
STRATEGY_HINTS = {
    "recorded": "the views the source actually sent, and its usage as the file reported it (the bill)",
    "none": "everything so far, no management",
    "band": "pi-fold's band: one commit at maxTarget folds marked units down to minTarget",
    "compaction": "summarise everything at the line and start again (the summary call counted)",
    "adr": "our fold (ADR-0130) before every request, under the ceiling, line and target",
}
LABEL_HINTS = {
    BILL_LABEL: "the views the source actually sent, and its usage as the file reported it: the bill",
    MODELLED_LABEL: "the views the source actually sent under the strategies' cache model: what to set them against",
}
RawRole = Qt.ItemDataRole.UserRole + 1  # a cell's value as core.replay.lab gives it


def shown(key: str, value: Any, totals: dict[str, Any] | None = None) -> str:
    if key == "estimator":
        return value or "none"
    if key == "cost_usd":
        return cost_text(totals) if totals is not None else "n/a" if value is None else f"${value:,.4f}"
    return "-" if value is None else f"{value:,}"


class TotalsModel(QAbstractTableModel):
    """A metric per row, a strategy per column: maps a cell to one strategy's total, nothing more."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.totals: list[dict[str, Any]] = []
        self.labels: list[str] = []

    def set_totals(self, totals: list[dict[str, Any]]) -> None:
        """A column per strategy; where the recording's bill stands beside strategies, the modelled recording
        follows it (core.readout.replay_facts.beside_bill), and the recorded column is labelled as the bill."""
        self.beginResetModel()
        columns = beside_bill(totals)
        self.labels = [label for label, _ in columns]
        self.totals = [t for _, t in columns]
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(METRICS)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.totals)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        key = METRICS[index.row()][0]
        value = self.totals[index.column()][key]
        if role == Qt.ItemDataRole.DisplayRole:
            return shown(key, value, self.totals[index.column()])
        if role == RawRole:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and key == "over_ceiling" and value:
            return rule_colour("ceiling")
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal:
            if not 0 <= section < len(self.totals):
                return None
            name, label = self.totals[section]["strategy"], self.labels[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return label
            if role == Qt.ItemDataRole.DecorationRole:
                return strategy_colour(label)  # the cost chart's colour for the bill and the modelled recording
            if role == Qt.ItemDataRole.ToolTipRole:
                return LABEL_HINTS.get(label) or STRATEGY_HINTS.get(name)
            return None
        if not 0 <= section < len(METRICS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return METRICS[section][1]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{METRICS[section][0]}: {METRICS[section][2]}"
        return None
