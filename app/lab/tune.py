"""Lab > Tune a policy: the policy sweep over a chosen folder on the local engine, with progress and cancel.

The sweep is core.replay.tune's (through core.readout.tune_facts), run on the worker; this window only gathers
the grid, shows the progress and lays the result out: a sortable table per policy and a chart of cost against
requests over the ceiling.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from foldscope.app import dialogs
from foldscope.app.lab.screen_fit import resize_within_screen
from foldscope.app.models.tune import SortRole, TuneModel
from foldscope.app.qt import (
    QCheckBox,
    QColor,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPainter,
    QPaintEvent,
    QPen,
    QPlainTextEdit,
    QPointF,
    QProgressBar,
    QPushButton,
    QSize,
    QSortFilterProxyModel,
    QSpinBox,
    QSplitter,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.theme import muted_colour, rule_colour
from foldscope.app.worker import Cancelled, Progress, Task, run_task
from foldscope.core.model.policy import PolicyError
from foldscope.core.readout.tune_facts import (
    PolicyPoint,
    SweepCancelled,
    files_swept,
    policy_grid,
    policy_words,
    session_paths,
    settings_lines,
    sweep_local,
)
from foldscope.core.readout.words import plural

HOW_TO_READ = (
    "Every policy is replayed over every session in the folder; costs are modelled against the modelled "
    "recording under the same cache setting, and the bill (what the provider reported, priced) is beside. "
    "The recommended policy (bold) is the cheapest one that refused nothing and sent nothing over its ceiling. "
    "A field left empty (\"as launched\") is each session's launch record's, else the default."
)
SWEEP_STRATEGIES = ("adr", "band", "compaction", "none")


class CostChart(QWidget):
    """A dot per policy: requests over the ceiling across, cost up; the recommended policy ringed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.points: list[tuple[str, int, float]] = []
        self.recommended: str | None = None
        self.setMinimumHeight(160)

    def set_result(self, result: dict[str, Any] | None) -> None:
        # A policy whose cost is not comparable (it refused requests) has no place on the cost axis.
        self.points = (
            [
                (policy_words(p["policy"]), p["over_ceiling"] + p["refused"], p["cost_usd"])
                for p in result["policies"]
                if p["cost_usd"] is not None
            ]
            if result
            else []
        )
        self.recommended = policy_words(result["recommendation"]["policy"]) if result and result["recommendation"]["policy"] else None
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(480, 220)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        left, top, right, bottom = 70.0, 16.0, self.width() - 16.0, self.height() - 34.0
        painter.setPen(QPen(muted_colour()))
        painter.drawLine(QPointF(left, bottom), QPointF(right, bottom))
        painter.drawLine(QPointF(left, top), QPointF(left, bottom))
        painter.drawText(int(left), int(bottom + 26), "requests refused or over the ceiling →")
        painter.drawText(4, int(top + 10), "cost ↑")
        if not self.points:
            painter.drawText(int(left + 10), int(top + 30), "Run a sweep to see each policy here.")
            return
        most_over = max(p[1] for p in self.points) or 1
        costs = [p[2] for p in self.points]
        low, high = min(costs), max(costs)
        span = (high - low) or 1.0
        painter.drawText(4, int(bottom), f"${low:,.2f}")
        painter.drawText(4, int(top + 28), f"${high:,.2f}")
        for name, over, cost in self.points:
            x = left + (right - left - 10) * over / most_over + 5
            y = bottom - (bottom - top - 10) * (cost - low) / span - 5
            colour = rule_colour("ceiling") if over else QColor("#2e7d32")
            painter.setPen(QPen(colour, 1))
            painter.setBrush(colour)
            painter.drawEllipse(QPointF(x, y), 4, 4)
            if name == self.recommended:
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(colour, 2))
                painter.drawEllipse(QPointF(x, y), 8, 8)
                painter.setPen(QPen(muted_colour()))
                # Only the recommended dot is named: policies often share a place, and the table names them all.
                painter.drawText(QPointF(min(x + 12, right - 320), y + 4), f"recommended: {name}")


class TuneView(QWidget):
    """The sweep's window: folder and grid above, progress, then the table and the chart."""

    sweep_finished = Signal(object)  # the summarised result
    sweep_cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Tune a policy")
        self.task: Task | None = None
        self.stop = threading.Event()
        self.result: dict[str, Any] | None = None
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("a folder of session files (searched whole)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.choose_folder)
        self.ceilings = QLineEdit("100000,150000")
        self.fold_ats = QLineEdit("0.8")
        self.targets = QLineEdit("0.6")
        self.bounds = QLineEdit("none")
        self.bounds.setToolTip("none, as an empty field: each session's launch record's bound, else no bound")
        # Empty, as `foldscope tune` without --caching: each session's own caching (a Claude Code session caches);
        # "off" here swept policies that drop the agent's cache, and recommended a profile with prompt_caching false.
        self.caching = QLineEdit()
        self.caching.setPlaceholderText("as recorded (or on, off, on,off)")
        self.strategies = {name: QCheckBox(name) for name in SWEEP_STRATEGIES}
        self.strategies["adr"].setChecked(True)
        # `tune --compact-at`: the agents' own compaction point swept, the answer as each agent's setting to write
        self.compact_at = QLineEdit()
        self.compact_at.setPlaceholderText("none (or fractions of each agent's window: 0.5,0.7,0.9)")
        self.compact_at.setToolTip(
            "The agent's own compaction at these fractions of its window, each session replayed with its agent's knob "
            "(Claude Code's autoCompactWindow, Codex's model_auto_compact_token_limit, pi's "
            "compaction.reserveTokens, Cline's autoCondenseThreshold, Gemini CLI's model.compressionThreshold); "
            "with no strategy ticked, only these are swept"
        )
        # The recommendation as the settings to write, as `foldscope tune` prints it: shown once a sweep recommends.
        self.settings = QPlainTextEdit()
        self.settings.setReadOnly(True)
        self.settings.setAccessibleName("The settings to write for the recommended policy")
        self.settings.setVisible(False)
        self.workers = QSpinBox()
        self.workers.setRange(1, max(1, os.cpu_count() or 1))
        self.workers.setValue(max(1, min(2, os.cpu_count() or 1)))
        self.run_button = QPushButton("Run sweep")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel(HOW_TO_READ)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it can name files and errors from sessions
        self.status.setWordWrap(True)
        self.model = TuneModel(self)
        self.sorted = QSortFilterProxyModel(self)
        self.sorted.setSourceModel(self.model)
        self.sorted.setSortRole(SortRole)
        self.table = QTableView()
        self.table.setModel(self.sorted)
        self.table.setSortingEnabled(True)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The policy takes what the figures leave (its label cut at the right, whole in its tooltip): sized to its
        # label, it pushed the recorded cost and the bill a scroll away at 1366 pixels.
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.chart = CostChart()
        self._lay_out(browse)

    def _lay_out(self, browse: QPushButton) -> None:
        form = QFormLayout()
        where = QHBoxLayout()
        where.addWidget(self.folder, 1)
        where.addWidget(browse)
        form.addRow("Sessions:", where)
        form.addRow("Ceilings (N, auto, none):", self.ceilings)
        form.addRow("Lines:", self.fold_ats)
        form.addRow("Targets:", self.targets)
        form.addRow("Result bounds (N or none):", self.bounds)
        form.addRow("Prompt caching (on, off):", self.caching)
        chosen = QHBoxLayout()
        for box in self.strategies.values():
            chosen.addWidget(box)
        chosen.addStretch(1)
        form.addRow("Strategies:", chosen)
        form.addRow("Agent's compaction at:", self.compact_at)
        form.addRow("Worker processes:", self.workers)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(self.table)
        results.addWidget(self.settings)
        results.addWidget(self.chart)
        column = QVBoxLayout(self)
        column.addLayout(form)
        column.addLayout(buttons)
        column.addWidget(self.status)
        column.addWidget(results, 1)
        resize_within_screen(self, 1100, 760)

    def choose_folder(self) -> None:
        folder = dialogs.choose_folder(self, "Sessions to sweep", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def points(self) -> list[PolicyPoint]:
        """The grid the fields name; PolicyError names the field's key when a value is refused."""
        strategies = [name for name, box in self.strategies.items() if box.isChecked()]
        if not strategies and not self.compact_at.text().strip():
            raise PolicyError("strategies", "strategy", "choose at least one, or fractions for the agent's compaction")
        return policy_grid(
            self.ceilings.text(),
            self.fold_ats.text(),
            self.targets.text(),
            self.bounds.text(),
            self.caching.text(),
            strategies,
            self.compact_at.text(),
        )

    def run(self) -> None:
        if self.task is not None:
            return
        try:
            points = self.points()
        except PolicyError as exc:
            self.status.setText(f"Not run: {exc}")
            return
        folder = self.folder.text().strip()
        paths = session_paths([folder]) if folder and os.path.isdir(folder) else []
        if not paths:
            self.status.setText(f"Not run: {folder or 'no folder chosen'} holds no session files")
            return
        workers, self.stop = self.workers.value(), threading.Event()
        stop = self.stop

        def sweep(progress: Progress) -> dict[str, Any]:
            try:
                return sweep_local(paths, points, workers, stop, progress.report)
            except SweepCancelled:
                raise Cancelled() from None

        self.progress.setRange(0, len(paths))
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Sweeping {plural(len(points), 'policy', 'policies')} over {plural(len(paths), 'file')}…")
        self.settings.setVisible(False)  # the last sweep's settings, until this one recommends
        self.task = run_task(
            sweep,
            "tune",
            self,
            progressed=self._progressed,
            succeeded=self._finished,
            failed=self._failed,
            was_cancelled=self._cancelled,
            ended=self._ended,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self.stop.set()
            self.task.cancel()
            self.status.setText("Cancelling: the sessions under way finish, then the workers stop…")

    def _progressed(self, done: int, total: int, label: str) -> None:
        self.progress.setValue(done)
        self.progress.setFormat(f"{done} of {total} files")  # the unit and total the finished sweep's line names

    def _finished(self, result: dict[str, Any]) -> None:
        self.result = result
        self.model.set_result(result)
        self.chart.set_result(result)
        self.table.sortByColumn(8, Qt.SortOrder.AscendingOrder)
        rec = result["recommendation"]
        failed = f"; the first failure: {result['failed'][0]['error']}" if result["failed"] else ""
        head = f"Recommended: {policy_words(rec['policy'])} ({rec['why']})." if rec["policy"] else f"No recommendation: {rec['why']}."
        self.status.setText(f"{head} {files_swept(result)}{failed}. {HOW_TO_READ}")  # sessions as `usage` and `tune` count them
        settings = settings_lines(rec.get("settings") or []) if rec["policy"] else []
        self.settings.setPlainText("\n".join(["The settings to write for the recommended policy:", *settings]) if settings else "")
        self.settings.setVisible(bool(settings))
        self.sweep_finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self.status.setText(f"The sweep failed: {type(exc).__name__}: {exc}")

    def _cancelled(self) -> None:
        self.status.setText("Cancelled: no worker is left running. Nothing was changed.")
        self.sweep_cancelled.emit()

    def _ended(self) -> None:
        self.task = None
        self.progress.setVisible(False)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
