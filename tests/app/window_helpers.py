"""Small readings of the main window shared by GUI tests."""

from __future__ import annotations

from foldscope.app.models.messages import IndexRole


def view_rows(window) -> list[int]:
    """The record indices the active view list shows, in order."""
    model = window.view_model
    return [model.index(row, 0).data(IndexRole) for row in range(model.rowCount())]


def modules_at_the_window_s_start(prefixes: tuple[str, ...], folder) -> list[str]:
    """The modules whose names start with one of `prefixes` that a fresh process holds once the main window is built and
    shown (offscreen, its settings and library in `folder`), sorted: what the window's start imports, apart from
    whatever this test process has imported already."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys; from PySide6.QtWidgets import QApplication; app = QApplication([]); "
        "from foldscope.app.settings import WindowSettings; from foldscope.app.window import MainWindow; "
        f"w = MainWindow(settings=WindowSettings({str(folder / 'settings.ini')!r}), db={str(folder / 'library.db')!r}); "
        f"w.show(); app.processEvents(); print(json.dumps(sorted(m for m in sys.modules if m.startswith({tuple(prefixes)!r}))))"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout)
