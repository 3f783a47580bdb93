"""The Replay lab: the open session under several strategies and one policy, totals side by side and charts."""

from __future__ import annotations

import html
from collections.abc import Sequence

from foldscope.app.lab.replay_chart import ReplayChart, Rule, Series
from foldscope.app.lab.screen_fit import resize_within_screen
from foldscope.app.lab.whole_columns import WholeColumns
from foldscope.app.models.messages import preview_text
from foldscope.app.models.replay import STRATEGY_HINTS, TotalsModel
from foldscope.app.panels.policy_editor import PolicyEditor
from foldscope.app.qt import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.worker import Task
from foldscope.core.model.one_line import collapsed_start
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message, Session
from foldscope.core.readout.replay_facts import (
    ADR,
    BILL_LABEL,
    ESTIMATOR_SPECS,
    ESTIMATORS,
    MANAGED,
    MODELLED_LABEL,
    STRATEGIES,
    ReplayRuns,
    compare_line,
    model_vs_reported,
    no_ceiling_line,
    replay_measure,
    replay_runs,
    replay_warnings,
    session_model,
)
from foldscope.core.readout.usage_precision import no_requests, usage_note
from foldscope.core.readout.words import plural

# Each strategy's checkbox label, in the user's words; the spec it follows is named in its tooltip (STRATEGY_HINTS).
STRATEGY_SHORT = {
    "recorded": "as the source sent it",
    "none": "everything, no management",
    "band": "one commit at 80% folds down to 20%",
    "compaction": "summarise all at the line",
    "adr": "our fold before every request, line to target",
}
HOW_TO_READ = (
    "Each strategy drives the same recorded messages through the trace; the policy sets the ceiling, "
    "line and target. Every line on a chart is one strategy (colours as in the table's header); the red "
    "dashed line is the ceiling. Click a point to list the view that request carried under that strategy; "
    "the main window steps to the same request."
)


def idle_line(strategies: Sequence[str]) -> str:
    """Under Run when no ceiling let the managing strategies act: lines lying on one another read as a replay that
    found nothing, unless this is said where the eye is after a run."""
    idle = [s for s in MANAGED if s in strategies]
    listed = idle[0] if len(idle) == 1 else f"{', '.join(idle[:-1])} and {idle[-1]}"
    return (
        f"No ceiling, so {listed} did not act: {'its line lies on' if len(idle) == 1 else 'their lines lie on'} the "
        "recording's. Set the policy's Ceiling above (the heading names the agent's window and compaction point) and run again."
    )


def payback_lines(result: ReplayRuns) -> list[str]:
    """Per strategy, after how many requests each fold had saved more than it cost, against the none replay."""
    from foldscope.core.readout.payback_facts import payback_line, strategy_paybacks

    found = strategy_paybacks(result)
    if not found:
        return []
    return [
        "Paid back (each fold against the none replay, modelled against modelled): "
        + "; ".join(f"{name} {payback_line(folds)}" for name, folds in found.items())
    ]


def decides(estimator: str) -> str:
    """The estimator's name and what it is, as the heading shows it."""
    return f"{estimator}: {ESTIMATORS.get(estimator, '')}"


def chart_series(runs: ReplayRuns) -> dict[str, list[Series]]:
    """Per chart, a line per strategy: request size, cumulative cost, and the share read from cache."""
    size, cost, share = [], [], []
    for run in runs.runs:
        requests = tuple(r.request for r in run.rows)
        size.append(Series(run.strategy, requests, tuple(float(r.estimate) for r in run.rows)))
        share.append(Series(run.strategy, requests, tuple(r.cache_read / r.estimate if r.estimate else 0.0 for r in run.rows)))
        # A run that refused requests has no cost line: its refusals sent nothing, so it would run flat as if free.
        if all(r.cost_usd is not None for r in run.rows) and not any(r.refused for r in run.rows):
            # The recording's cost is the bill where it reported usage: named so, with the modelled recording (the
            # same views under the strategies' cache model) beside it as the line to set the strategies against.
            billed = run.strategy == "recorded" and any(r.reported for r in run.rows)
            cost.append(Series(BILL_LABEL if billed else run.strategy, requests, running([r.cost_usd for r in run.rows])))
            modelled = [r.modelled_cost_usd for r in run.rows]
            if billed and len(runs.runs) > 1 and all(c is not None for c in modelled):
                cost.append(Series(MODELLED_LABEL, requests, running(modelled)))
    return {"size": size, "cost": cost, "share": share}


def running(costs: Sequence[float | None]) -> tuple[float, ...]:
    """Each request's cost summed with those before it."""
    total, sums = 0.0, []
    for c in costs:
        total += c or 0.0
        sums.append(total)
    return tuple(sums)


# A line of the cost chart named for the recording as billed or modelled stands for the recorded run's rows.
CHART_RUNS = {BILL_LABEL: "recorded", MODELLED_LABEL: "recorded"}


class ReplayView(QWidget):
    """Pick strategies and a policy, replay the session in the worker, then read totals and charts.

    `replay_finished(ReplayRuns)` follows a completed run; `request_chosen(k)` follows a click on a
    chart point (request k of the trace), after the view lists what that request carried.
    """

    replay_finished = Signal(object)
    request_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window)
        self.setWindowTitle("Replay lab — foldscope")
        self.session: Session | None = None
        self.task: Task | None = None
        self.result: ReplayRuns | None = None
        self.chosen: tuple[str, int] | None = None  # (strategy, row) of the request shown
        self.checks: dict[str, QCheckBox] = {}
        left = self._controls()
        self._results()
        layout = QHBoxLayout(self)
        layout.addWidget(left)
        layout.addWidget(self.splitter, 1)
        self._running(False)
        resize_within_screen(self, 1500, 1000)

    def _controls(self) -> QWidget:
        """The left column: the strategies to run, the policy and what the adr fold decides on, run and cancel, progress."""
        strategies = QGroupBox("Strategies")
        box = QVBoxLayout(strategies)
        for name, hint in STRATEGY_HINTS.items():
            check = QCheckBox(f"{name}: {STRATEGY_SHORT[name]}")
            check.setChecked(True)
            check.setToolTip(hint)
            self.checks[name] = check
            box.addWidget(check)
        self.policy_editor = PolicyEditor(labels_above=False)
        policy = QGroupBox("Policy")
        policy_column = QVBoxLayout(policy)
        policy_column.addWidget(self.policy_editor)
        # What the adr fold decides on: the spec's estimate by default, or the predicted input (what a better
        # estimator would have done); core.request.estimators names both.
        self.estimator = QComboBox()
        for name, short in (("adr", "the estimate, count x scale (the default)"), ("predicted", "the predicted input")):
            self.estimator.addItem(f"{name}: {short}", name)
            hint = f"{ESTIMATORS[name]} ({ESTIMATOR_SPECS[name]})"
            self.estimator.setItemData(self.estimator.count() - 1, hint, Qt.ItemDataRole.ToolTipRole)
        self.estimator.setAccessibleName("What the adr fold decides on")
        self.estimator.setToolTip(
            "adr: the estimate the ceiling and the fold decide on (ADR-0130, the default); "
            "predicted: the predicted input, the forecast of what the provider reports"
        )
        estimator_row = QHBoxLayout()
        estimator_row.addWidget(QLabel("adr fold decides on"))
        estimator_row.addWidget(self.estimator, 1)
        policy_column.addLayout(estimator_row)
        self.run_button = QPushButton("&Run replay")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("&Cancel")
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.status = QLabel("Choose strategies and a policy, then run.")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # a failed run says its exception
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        left = QWidget()
        column = QVBoxLayout(left)
        for widget in (strategies, policy):
            column.addWidget(widget)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        column.addWidget(self.status)
        how = QLabel(HOW_TO_READ)
        how.setWordWrap(True)
        column.addWidget(how)
        column.addStretch(1)
        left.setMinimumWidth(380)
        left.setMaximumWidth(520)
        return left

    def _results(self) -> None:
        """The right side, split top to bottom: the totals per strategy, the charts, the chosen request's view."""
        self.heading = QLabel("No replay yet")
        self.heading.setWordWrap(True)
        self.model = TotalsModel(self)
        self.table = QTableView()
        self.table.setHorizontalHeader(WholeColumns(self.table))  # the columns share the width, no header cut
        self.table.setModel(self.model)
        self.table.setAccessibleName("Totals per strategy")
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.charts = {
            "size": ReplayChart("Request size (tokens) per request, against the ceiling", lambda v: f"{v:,.0f}"),
            "cost": ReplayChart("Cumulative cost (USD) over the requests", lambda v: f"${v:,.2f}" if v >= 0.1 or v == 0 else f"${v:.4f}"),
            "share": ReplayChart("Share of each request read from the prompt cache, per request", lambda v: f"{v:.0%}"),
        }
        chart_box = QWidget()
        chart_column = QVBoxLayout(chart_box)
        chart_column.setContentsMargins(0, 0, 0, 0)
        for chart in self.charts.values():
            chart.point_clicked.connect(self.open_point)
            chart_column.addWidget(chart)
        self.request_heading = QLabel("Click a point on a chart to list that request's view under its strategy.")
        self.request_heading.setWordWrap(True)
        self.request_list = QListWidget()
        self.request_list.setAccessibleName("The chosen request's view")
        request_box = QWidget()
        request_column = QVBoxLayout(request_box)
        request_column.setContentsMargins(0, 0, 0, 0)
        request_column.addWidget(self.request_heading)
        request_column.addWidget(self.request_list)
        top = QWidget()
        top_column = QVBoxLayout(top)
        top_column.setContentsMargins(0, 0, 0, 0)
        # The heading says the model, the policy and what was billed in up to 7 wrapped lines: on a 768-pixel screen
        # it scrolls within about 4, and the totals keep 8 rows, so that the table is read, not its heading.
        heading_box = QScrollArea()
        heading_box.setWidget(self.heading)
        heading_box.setWidgetResizable(True)
        heading_box.setFrameShape(QScrollArea.Shape.NoFrame)
        heading_box.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        heading_box.setMaximumHeight(self.heading.fontMetrics().lineSpacing() * 4 + 12)
        top_column.addWidget(heading_box)
        top_column.addWidget(self.table)
        rows = self.table.fontMetrics().height() + 6  # a row sized to its contents, as the vertical header does
        header = max(self.table.horizontalHeader().sizeHint().height(), 0)  # -1 (no sections yet) is no height
        self.table.setMinimumHeight(header + 8 * rows + 4)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        for part in (top, chart_box, request_box):
            self.splitter.addWidget(part)
        self.splitter.setChildrenCollapsible(False)
        # Shares of the height: at a laptop's 1366x768 the totals keep 8 of their rows in view, the charts the rest.
        self.splitter.setSizes([320, 590, 150])

    # -- session and settings -------------------------------------------------------------

    def set_session(self, session: Session | None, launch: Policy | None = None) -> None:
        """The session to replay; the policy editor starts from its launch policy."""
        self.cancel()
        # A run that finished as the session changed has its result queued: it was the old session's, so the lab
        # stops listening to it (its end would otherwise be the lab's cue to stop looking busy).
        self.task = None
        self._running(False)
        self.session = session
        self.result = None
        self.policy_editor.set_session(session_model(session) if session else None, launch)
        self.model.set_totals([])
        for chart in self.charts.values():
            chart.set_series([], 0)
        self.request_list.clear()
        self.heading.setText("No replay yet" if session else "No session open")
        self.run_button.setEnabled(session is not None)

    def strategies(self) -> list[str]:
        return [name for name in STRATEGIES if name in self.checks and self.checks[name].isChecked()]

    # -- running --------------------------------------------------------------------------

    def run(self) -> Task | None:
        """Replay the session under the chosen strategies and policy, in the worker."""
        policy, strategies, session = self.policy_editor.policy(), self.strategies(), self.session
        if session is None:
            return None
        if policy is None:
            self.status.setText("Fix the marked policy fields first.")
            return None
        if not strategies:
            self.status.setText("Choose at least one strategy.")
            return None
        self.cancel()
        measure = replay_measure(session, policy)
        why = measure.resolution.why
        # Without a ceiling the managing strategies never act: the heading says so, with a ceiling to give, and so does
        # the line under Run (the heading shows its first four lines at 1366x768, and this one came after them).
        notice = no_ceiling_line(measure, strategies, "the policy's max_input_tokens")
        # What `foldscope replay` says of a format that does not hold its requests or rounds its usage (Aider's).
        exactness = [no_requests(session, "replay"), usage_note(session)]
        estimator = self.estimator.currentData() or ADR
        task = Task(
            lambda progress: replay_runs(session, strategies, measure, report=progress.report, keep_views=True, estimator=estimator),
            "Replay",
            self,
        )
        task.progressed.connect(self._progressed)
        requests = len(session.trace)
        # What `foldscope replay` warns of (a ceiling under the unseen head, another model's prices) rests on the
        # measure the run calibrates: asked once it has run.
        task.succeeded.connect(
            lambda result, t=task, w=why, n=notice: self._finished(
                t, result, w, requests, "\n".join(filter(None, [n, *exactness, *replay_warnings(measure)])), n and idle_line(strategies)
            )
        )
        task.failed.connect(lambda exc, t=task: self._ended_with(t, f"The replay failed: {exc}"))
        task.was_cancelled.connect(lambda t=task: self._ended_with(t, "Replay cancelled."))
        task.ended.connect(lambda t=task: self._ended(t))
        self.status.setText(f"Replaying {plural(requests, 'request')} under {', '.join(strategies)}…")
        self.progress.setRange(0, 0)
        self._running(True)
        self.task = task.start()
        return task

    def cancel(self) -> None:
        if self.task is not None and not self.task.is_done:
            self.task.cancel()

    def _running(self, running: bool) -> None:
        self.run_button.setEnabled(not running and self.session is not None)
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)

    def _progressed(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%")

    def _ended_with(self, task: Task, line: str) -> None:
        if task is self.task:
            self.status.setText(line.splitlines()[0])

    def _ended(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            self._running(False)

    def _finished(
        self, task: Task, result: ReplayRuns, why: str, requests: int, notice: str | None = None, idle: str | None = None
    ) -> None:
        if task is not self.task:
            return
        self.show_result(result, why, notice)
        done = f"Replayed {plural(requests, 'request')} under {plural(len(result.runs), 'strategy', 'strategies')}."
        self.status.setText(f"{done}\n{idle}" if idle else done)
        self.replay_finished.emit(result)

    def show_result(self, result: ReplayRuns, why: str = "", notice: str | None = None) -> None:
        """The totals, the heading (with `notice`: why no strategy acts, when no ceiling lets one) and the charts."""
        self.result = result
        totals = [run.totals() for run in result.runs]
        s = result.settings
        ceiling = f"{s['ceiling']:,} tokens" if s["ceiling"] else "no ceiling"
        from foldscope.core.model import pricing

        reason = pricing.resolve(result.model).reason or "no price for the model"
        priced = "" if result.priced else f" · <b>cost n/a</b>: {html.escape(reason)}"
        billed = [model_vs_reported(t) for t in totals if t["strategy"] == "recorded"]
        notes = [
            notice,
            compare_line(totals),
            *(f"{t['strategy']}: cost {t['cost_not_comparable']}" for t in totals if t.get("cost_not_comparable")),
        ]
        notes = [line for note in notes if note for line in note.splitlines()]
        self.heading.setText(
            f"<b>Model</b> {html.escape(result.model or 'unknown')} · <b>ceiling</b> {ceiling} "
            f"({html.escape(why)}) · <b>line</b> {s['fold_at']:g} · <b>target</b> {s['target']:g} · "
            f"<b>cache</b> {result.cache_mode} ({html.escape(result.cache_why)}) · "
            f"<b>adr fold decides on</b> {html.escape(decides(s.get('estimator', ADR)))}{priced}"
            + "".join(f"<br>{html.escape(line)}" for line in billed)
            + "".join(f"<br>{html.escape(line)}" for line in notes if line)
            + "".join(f"<br>{html.escape(line)}" for line in payback_lines(result))
        )
        self.model.set_totals(totals)
        series = chart_series(result)
        requests = len(self.session.trace) if self.session else 0
        rules = [Rule(s["ceiling"], f"ceiling {s['ceiling']:,}")] if s["ceiling"] else []
        self.charts["size"].set_series(series["size"], requests, rules)
        self.charts["cost"].set_series(series["cost"], requests)
        self.charts["share"].set_series(series["share"], requests, top=1.0)
        self.request_list.clear()
        self.chosen = None

    # -- a request under a strategy -------------------------------------------------------

    def open_point(self, strategy: str, row: int) -> None:
        """List the view a strategy sent at one of its rows, mark its request on every chart, and say so."""
        if self.result is None:
            return
        strategy = CHART_RUNS.get(strategy, strategy)
        run = next(r for r in self.result.runs if r.strategy == strategy)
        facts, view = run.rows[row], run.views[row]
        self.chosen = (strategy, row)
        for chart in self.charts.values():
            chart.select(facts.request)
        kind = "the summary call before request" if facts.kind == "summary" else "request"
        self.request_heading.setText(
            f"<b>{kind} {facts.request}</b> under <b>{strategy}</b>: {plural(len(view), 'message')}, estimate "
            f"{facts.estimate:,} tokens"
            + (f" (predicted input {facts.predicted:,}, which the fold decided on)" if facts.predicted is not None else "")
            + f", {facts.cache_read:,} read from cache, {facts.change}"
            + (f", {facts.folds} fold(s) just before" if facts.folds else "")
        )
        self.request_list.clear()
        for message in view:
            item = QListWidgetItem(self.view_line(message))
            item.setData(Qt.ItemDataRole.UserRole, message.id)
            self.request_list.addItem(item)
        self.request_chosen.emit(facts.request)

    def view_line(self, message: Message) -> str:
        """One line per message of the chosen view: its full-record index (or new), kind, id and text."""
        record = self.session.record if self.session else None
        at = f"#{record.index_of(message.id)}" if record is not None and message.id in record else "new"
        folded = message.metadata.get("folded_ids")
        # a strategy's brief holds its ids as a Shared (core.replay.strategies.folded_ids); a source's own, a list
        held = folded if isinstance(folded, Sequence) and not isinstance(folded, str) else None
        extra = f" (stands for {plural(len(held), 'message')})" if held is not None else ""
        text = collapsed_start(preview_text(message), 140)
        return f"{at:>7}  {message.kind}{extra}  {message.id}  {text}"

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.cancel()
        super().closeEvent(event)
