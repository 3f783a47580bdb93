"""The Help menu: the window's keyboard shortcuts, the README's first five minutes, the docs folder and About."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.menus import add_action
from foldscope.app.qt import QAction, QDesktopServices, QKeySequence, QMainWindow, QMenu, QMenuBar, QUrl, QWidget

PROJECT = Path(__file__).resolve().parent.parent  # the project's root is the package (pyproject: foldscope = ".")
README = PROJECT / "README.md"
DOCS = PROJECT / "docs"
SPECS = ("ADR-0130 (input ceiling and context folding) with Amendments 1 to 4", "ADR-0127 (prompt cache placement)")
FIRST_MINUTES = "## Your first five minutes"


def shortcuts_text(bar: QMenuBar) -> str:
    """Every menu action that has a key, menu by menu, as the menus name them (so the list is never out of date)."""
    lines: list[str] = []
    for top in bar.actions():
        menu = top.menu()
        if menu is None:
            continue
        keyed = [a for a in _actions(menu) if not a.shortcut().isEmpty()]
        if keyed:
            lines.append(f"{_plain(top.text())}")
            lines += [f"    {a.shortcut().toString(QKeySequence.SequenceFormat.NativeText):<18} {_plain(a.text())}" for a in keyed]
    return "\n".join(lines)


def _actions(menu) -> list[QAction]:
    found: list[QAction] = []
    for action in menu.actions():
        if action.menu() is not None:
            found += _actions(action.menu())
        elif not action.isSeparator():
            found.append(action)
    return found


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def first_minutes_text(readme: Path = README) -> str:
    """The README's "Your first five minutes" section as written, or where to find it when the README is absent."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return f'The README is not beside this foldscope ({readme}): its "Your first five minutes" is in the project\'s README.md.'
    start = text.find(FIRST_MINUTES)
    if start < 0:
        return f'{readme} has no "Your first five minutes" section.'
    body = text[start + len(FIRST_MINUTES) :]
    end = re.search(r"^## ", body, flags=re.MULTILINE)
    return body[: end.start() if end else len(body)].strip()


def about_text(db: str | None) -> str:
    """The version, the specs foldscope implements and where its library is."""
    from importlib import metadata  # here, not at the window's start: 0.03-0.04 s of its import before usable

    from foldscope.core.store.library_file import default_path

    try:
        version = metadata.version("foldscope")
    except metadata.PackageNotFoundError:
        version = "unknown (not installed as a package)"
    library = db or str(default_path())
    return "\n".join(
        [
            f"foldscope {version}",
            "A desktop inspector for the context window of LLM agents.",
            "",
            "Implements " + "; ".join(SPECS) + ".",
            f"The library: {library}",
            f"The documentation: {DOCS}",
        ]
    )


def open_docs(parent: QWidget) -> bool:
    """Open the docs folder in the desktop's file browser; say where it is when that cannot be done."""
    if DOCS.is_dir() and QDesktopServices.openUrl(QUrl.fromLocalFile(str(DOCS))):
        return True
    dialogs.show_message(
        parent, "Documentation", f"The documentation is the folder {DOCS}" + ("" if DOCS.is_dir() else " (absent beside this foldscope)")
    )
    return False


def fill_menu(menu: QMenu, window: QMainWindow, db: Callable[[], str | None]) -> None:
    """The Help menu's items; `window` is the one whose menu bar the keys are read from, `db()` the library in use."""
    add_action(
        menu,
        window,
        "&Keyboard Shortcuts",
        "F1",
        lambda: dialogs.show_text(window, "Keyboard shortcuts", shortcuts_text(window.menuBar())),
    )
    add_action(
        menu,
        window,
        "Your &First Five Minutes",
        None,
        lambda: dialogs.show_text(window, "Your first five minutes", first_minutes_text(), markdown=True),
        "The README's walk through a first session",
    )
    add_action(menu, window, "The &Documentation Folder", None, lambda: open_docs(window), str(DOCS))
    add_action(
        menu,
        window,
        "&About foldscope",
        None,
        lambda: dialogs.show_message(window, "About foldscope", about_text(db())),
    )
