"""Colours for kinds and rules, light or dark following the system palette."""

from __future__ import annotations

from foldscope.app.qt import QApplication, QColor, QGuiApplication, QPalette, Qt
from foldscope.core.model.session import Message

THEMES = ("system", "light", "dark")

# (light, dark) per kind as the window map and lists show them.
_KIND_COLOURS = {
    "system": ("#6b5bbd", "#a597f0"),
    "instruction": ("#1f7a4d", "#5fd39a"),
    "assistant": ("#1c5fb8", "#6aa7ff"),
    "action_request": ("#d35400", "#ff9f43"),
    "action_response": ("#b08d57", "#c9a56b"),
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


def gui_app() -> QApplication | None:
    """The running QApplication, None before there is one (QApplication.instance() is typed as the core one)."""
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else None


def is_dark() -> bool:
    app = gui_app()
    if app is None:
        return False
    window = app.palette().color(QPalette.ColorRole.Window)
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


def highlight_colour() -> QColor:
    """The background of what a chosen fold record took (a warm tint, unlike the selection's)."""
    return QColor("#5c4a1a" if is_dark() else "#fdebc8")


def taken_colour() -> QColor:
    """The window map's mark under what a chosen fold record took: strong enough to find in a long bar."""
    return QColor("#f39c12" if is_dark() else "#e67e22")


def panel_colour() -> QColor:
    """What the panels are drawn on (the palette's window colour, light or dark): a label drawn over lines and bars
    sits on a box of it, so nothing runs through its letters."""
    app = gui_app()
    if app is None:
        return QColor("#ffffff")
    return app.palette().color(QPalette.ColorRole.Window)


def muted_colour() -> QColor:
    app = gui_app()
    if app is None:
        return QColor("#888888")
    palette = app.palette()
    return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)


def pygments_style() -> str:
    return "monokai" if is_dark() else "friendly"


def system_prefers_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def dark_palette() -> QPalette:
    """A dark palette for the Fusion style, for when the system asks for dark (or the user does)."""
    p = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    for r, colour in (
        (role.Window, "#26282b"),
        (role.WindowText, "#e6e6e6"),
        (role.Base, "#1d1f21"),
        (role.AlternateBase, "#25282b"),
        (role.ToolTipBase, "#2f3236"),
        (role.ToolTipText, "#e6e6e6"),
        (role.Text, "#e6e6e6"),
        (role.Button, "#313438"),
        (role.ButtonText, "#e6e6e6"),
        (role.BrightText, "#ff6b6b"),
        (role.Link, "#6aa7ff"),
        (role.Highlight, "#2f65b5"),
        (role.HighlightedText, "#ffffff"),
        (role.PlaceholderText, "#8a8f96"),
        (role.Mid, "#45494e"),
        (role.Dark, "#151618"),
        (role.Light, "#3a3e43"),
        (role.Midlight, "#34373b"),
        (role.Shadow, "#000000"),
    ):
        p.setColor(r, QColor(colour))
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(group.Disabled, r, QColor("#7a7f86"))
    return p


def follow_system_theme(changed) -> None:
    """Call `changed(scheme)` (a QObject's method, disconnected when it goes) when the system switches light and dark."""
    QGuiApplication.styleHints().colorSchemeChanged.connect(changed)


def apply_theme(app: QApplication, choice: str = "system") -> None:
    """Fusion everywhere; dark when the system (or the choice) says so, else the style's light palette."""
    app.setStyle("Fusion")
    dark = choice == "dark" or (choice == "system" and system_prefers_dark())
    app.setPalette(dark_palette() if dark else app.style().standardPalette())


# (light, dark) per strategy, the same in every chart and in the table's header.
STRATEGY_COLOURS = {
    "recorded": ("#5f5f5f", "#c8c8c8"),
    "recorded, as billed": ("#5f5f5f", "#c8c8c8"),  # the recording's bill, the recorded run's own line
    "recorded, modelled": ("#a0a0a0", "#8a8a8a"),  # the same views under the cache model: a lighter grey beside it
    "none": ("#d35400", "#ff9f43"),
    "band": ("#1c5fb8", "#6aa7ff"),
    "compaction": ("#8e44ad", "#c39bd3"),
    "adr": ("#1e8449", "#58d68d"),
}


def strategy_colour(name: str) -> QColor:
    """A replay strategy's colour, the same in every chart and in the totals table's header."""
    pair = STRATEGY_COLOURS.get(name, ("#333333", "#dddddd"))
    return QColor(pair[1] if is_dark() else pair[0])
