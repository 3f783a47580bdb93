"""Colours for kinds and rules, light or dark following the system palette."""

from __future__ import annotations

from core.model import Message

from app.qt import QApplication, QColor, QPalette

# (light, dark) per kind as the window map and lists show them.
_KIND_COLOURS = {
    "system": ("#6b5bbd", "#a597f0"),
    "instruction": ("#1f7a4d", "#5fd39a"),
    "assistant": ("#1c5fb8", "#6aa7ff"),
    "action_request": ("#b8741a", "#f0b25f"),
    "action_response": ("#8a6a2a", "#d8b774"),
    "clipped_copy": ("#c0392b", "#ff7b6b"),
    "note": ("#0f8a8a", "#4fd6d6"),
}
KIND_LEGEND = (
    ("system", "system"),
    ("instruction", "instruction"),
    ("assistant", "assistant"),
    ("action_request", "call"),
    ("action_response", "result"),
    ("clipped_copy", "clipped copy"),
    ("note", "note"),
)
# Rules drawn across the timeline and the window map.
RULE_COLOURS = {
    "ceiling": ("#c0392b", "#ff6b5b"),
    "line": ("#d68910", "#f5b041"),
    "target": ("#1e8449", "#58d68d"),
    "tier": ("#7d3c98", "#c39bd3"),
}


def is_dark() -> bool:
    app = QApplication.instance()
    if app is None:
        return False
    window = app.palette().color(QPalette.ColorRole.Window)  # type: ignore[attr-defined]
    return window.lightnessF() < 0.5


def _pick(pair: tuple[str, str]) -> QColor:
    return QColor(pair[1] if is_dark() else pair[0])


def kind_key(message: Message) -> str:
    if message.is_clipped_copy:
        return "clipped_copy"
    if message.kind == "note" or "context_first_index" in message.metadata:
        return "note"
    return message.kind


def kind_colour(message: Message) -> QColor:
    return _pick(_KIND_COLOURS[kind_key(message)])


def colour_for_key(key: str) -> QColor:
    return _pick(_KIND_COLOURS[key])


def rule_colour(name: str) -> QColor:
    return _pick(RULE_COLOURS[name])


def muted_colour() -> QColor:
    app = QApplication.instance()
    if app is None:
        return QColor("#888888")
    palette = app.palette()  # type: ignore[attr-defined]
    return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)


def pygments_style() -> str:
    return "monokai" if is_dark() else "friendly"
