"""The policy editor: a row per policy key (core.model.policy's POLICY_KEYS: its label, placeholder and help),
validated as a profile is (Amendment 3)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from foldscope.app import dialogs
from foldscope.app.qt import (
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSize,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.core.model import pricing
from foldscope.core.model.policy import KEY, KEYS, POLICY_KEYS, Policy, PolicyError, PolicyKey, resolve_ceiling
from foldscope.core.model.session import Session
from foldscope.core.readout.agent_limits import context_window

SOURCE = "the policy editor"
# A whole number with its thousands grouped, as the window and the command line print them (100,000; 100 000).
GROUPED = re.compile(r"\d{1,3}(?:[, ]\d{3})+")


def tooltip(key: PolicyKey) -> str:
    """A row's tooltip: the key, what it sets and what it takes, and what unset reads as."""
    return f"{key.name}: {key.help}; unset is {key.unset_said}"


def placeholder(key: PolicyKey) -> str:
    """A row's empty field: short, to fit a narrow dock (the tooltip says it all)."""
    return key.placeholder or key.unset_said


def parse_value(key: str, text: str) -> Any:
    """A field's text as the YAML loader reads a profile's scalar; a text key (the model) is taken as typed, and a whole
    number with its thousands grouped as every screen prints it as that number."""
    if KEY[key].type == "text":
        return text
    if KEY[key].type in ("ceiling", "integer") and GROUPED.fullmatch(text):
        return int(re.sub(r"[, ]", "", text))  # 100,000 as the screens print it, read as the flags read it (--ceiling 100,000)
    import yaml  # here and in save_profile, not at the window's start: 0.02 s of its import before usable

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError(SOURCE, key, f"not a YAML value: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise PolicyError(SOURCE, key, "not a YAML value: nested too deeply to read") from None


def field_errors(texts: dict[str, str]) -> tuple[Policy | None, dict[str, str]]:
    """The policy the fields make, or None, and an error per key: each value alone, then the line and target pair."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key, text in texts.items():
        if not text.strip():
            continue  # an empty field leaves the key unset
        try:
            values[key] = parse_value(key, text.strip())
            Policy.from_mapping({key: values[key]}, SOURCE)
        except PolicyError as exc:
            if not exc.problem.startswith("the pair"):  # a fraction alone is judged with the other's default below
                errors[key] = exc.problem
    if errors:
        return None, errors
    try:
        return Policy.from_mapping(values, SOURCE), {}
    except PolicyError as exc:
        return None, {exc.place or "context_fold_target": exc.problem}


def policy_texts(policy: Policy) -> dict[str, str]:
    """The field texts that show a policy (unset keys empty)."""
    out = {}
    for key in KEYS:
        value = getattr(policy, key)
        out[key] = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    return out


def save_profile(policy: Policy, path: str | Path) -> None:
    """Write the policy's set keys as a YAML profile (unset keys are left out, as the profile reads them)."""
    import yaml

    data = {key: getattr(policy, key) for key in KEYS if getattr(policy, key) is not None}
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


class PolicyEditor(QWidget):
    """Edits a policy; `policy_changed(Policy)` follows every edit that leaves it valid."""

    policy_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None, labels_above: bool = True) -> None:
        super().__init__(parent)
        # Labels above fields keep the window's dock narrow; the replay lab, whose column has the width and not the
        # height, puts each label beside its field.
        self.labels_above = labels_above
        self.session_model: str | None = None
        self.session: Session | None = None  # the open session: the window the policy resolves for it is shown
        self.launch = Policy()
        self.edits: dict[str, QLineEdit] = {}
        self.errors: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setColumnStretch(0 if labels_above else 1, 1)
        for row, key in enumerate(POLICY_KEYS):  # a row per policy key, in the table's order
            self._add_row(grid, row, key)
        self.resolved = QLabel()
        self.resolved.setWordWrap(True)
        self.resolved.setAccessibleName("Resolved ceiling")
        load, save, reset = QPushButton("&Load profile…"), QPushButton("&Save profile…"), QPushButton("Launch &policy")
        reset.setToolTip("Put back the policy the session was launched under")
        load.clicked.connect(self.load_dialog)
        save.clicked.connect(self.save_dialog)
        reset.clicked.connect(lambda: self.set_policy(self.launch))
        self.save_button = save
        buttons = QGridLayout()  # one column: the dock stays narrow enough for the lists and whole side tabs at 1366 pixels
        buttons.addWidget(load, 0, 0)
        buttons.addWidget(save, 1, 0)
        buttons.addWidget(reset, 2, 0)
        buttons.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(grid)
        layout.addWidget(self.resolved)
        layout.addLayout(buttons)
        layout.addStretch(1)
        self._policy: Policy | None = Policy(source=SOURCE)
        self.validate()

    def _add_row(self, grid: QGridLayout, row: int, key: PolicyKey) -> None:
        """A key's rows: its label, its field under it (the model's offers the priced models, or any name typed), and
        under that its error. Labels above fields keep the dock narrow: at 1366 pixels the lists and the side tabs'
        whole titles take the rest of the width."""
        widget: QWidget
        if key.name == "model":
            widget = QComboBox()
            widget.setEditable(True)
            widget.addItems([""] + sorted(pricing.table()["models"]))
            edit = widget.lineEdit()
            assert edit is not None  # an editable combo box has its line edit
        else:
            edit = widget = QLineEdit()
        edit.setPlaceholderText(placeholder(key))
        # As wide as its placeholder, no wider: the model's list of long names set the dock's least width (139 pixels
        # for the field alone), which at 1366 pixels took the lists' last columns.
        edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance(placeholder(key)) + 12)
        if isinstance(widget, QComboBox):
            widget.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            widget.setMinimumContentsLength(8)
        edit.setAccessibleName(f"{key.label} ({key.name})")
        edit.setToolTip(tooltip(key))
        edit.textChanged.connect(self.validate)
        error = QLabel()
        error.setObjectName(f"error_{key.name}")
        error.setStyleSheet("color: #c0392b")
        error.setWordWrap(True)
        error.setTextFormat(Qt.TextFormat.PlainText)
        error.hide()  # shown under its field, across the dock's width, while there is an error to say
        label = QLabel(f"{key.label}:")
        label.setBuddy(widget)
        grid.addWidget(label, 3 * row, 0)
        if self.labels_above:
            grid.addWidget(widget, 3 * row + 1, 0)
        else:
            grid.addWidget(widget, 3 * row, 1)
        grid.addWidget(error, 3 * row + 2, 0, 1, 2)
        self.edits[key.name], self.errors[key.name] = edit, error

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        # The dock opens at its least width: the resolved ceiling's sentence asked for more, and at 1366 pixels that
        # came from the lists, cutting their Tokens column. A user may still drag it wider.
        return QSize(self.minimumSizeHint().width(), super().sizeHint().height())

    # -- reading and showing ---------------------------------------------------------------

    def texts(self) -> dict[str, str]:
        return {key: edit.text() for key, edit in self.edits.items()}

    def set_text(self, key: str, text: str) -> None:
        self.edits[key].setText(text)

    def set_policy(self, policy: Policy) -> None:
        """Show a policy in the fields (one validation at the end)."""
        for key, text in policy_texts(policy).items():
            edit = self.edits[key]
            edit.blockSignals(True)
            edit.setText(text)
            edit.blockSignals(False)
        self.validate()

    def set_session(self, model: str | None, launch: Policy | None, session: Session | None = None) -> None:
        """The open session's model (for auto) and launch policy, which the editor starts from; with the session,
        the editor also shows the context window the policy resolves for it."""
        self.session_model, self.session = model, session
        self.launch = launch or Policy()
        self.set_policy(self.launch)

    def policy(self) -> Policy | None:
        """The policy the fields make, or None while any field is invalid."""
        return self._policy

    def error_for(self, key: str) -> str:
        return self.errors[key].text()

    def validate(self) -> Policy | None:
        policy, errors = field_errors(self.texts())
        for key, label in self.errors.items():
            label.setText(errors.get(key, ""))
            label.setVisible(key in errors)
            self.edits[key].setProperty("invalid", key in errors)
        self._policy = policy
        self.save_button.setEnabled(policy is not None)
        if policy is None:
            self.resolved.setText("<i>Fix the marked fields to resolve the ceiling.</i>")
            return None
        resolution = resolve_ceiling(policy, policy.model or self.session_model)
        shown = "no ceiling" if resolution.ceiling is None else f"{resolution.ceiling:,} tokens"
        # The why names where the value came from ("... in the policy editor", "auto: ..."): no source word
        # of its own, which said "profile" for a value typed here.
        text = f"<b>Resolved ceiling:</b> {shown} — {html.escape(resolution.why)}"
        window = context_window(self.session, policy) if self.session is not None else None
        if window is not None:
            text += f"<br><b>Context window:</b> {window.tokens:,} tokens — {html.escape(window.said)}"
        self.resolved.setText(text)
        self.policy_changed.emit(policy)
        return policy

    # -- profiles --------------------------------------------------------------------------

    def load_profile(self, path: str | Path) -> str:
        """Fill the fields from a YAML profile; returns the error line when it is refused."""
        try:
            policy = Policy.from_yaml(path)
        except PolicyError as exc:
            self.resolved.setText(f"<span style='color:#c0392b'>{html.escape(str(exc))}</span>")
            return str(exc)
        self.set_policy(policy)
        return ""

    def load_dialog(self) -> None:
        path = dialogs.profile_dialog(self, saving=False)
        if path:
            self.load_profile(path)

    def save_dialog(self) -> None:
        policy = self.policy()
        if policy is None:
            return
        path = dialogs.profile_dialog(self, saving=True)
        if path:
            save_profile(policy, path)
