"""Regenerate fold-preview.png and pager.png: `.venv/bin/python docs/screenshots/make_fold_screenshots.py`."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
SESSION = HERE.parents[2] / "shared" / "corpus" / "dev" / "claude_code" / "session-196820da.jsonl"
CEILING = "80000"


def wait(app, signal, start) -> None:
    from foldscope.app.qt import QEventLoop

    loop = QEventLoop()
    signal.connect(loop.quit)
    start()
    loop.exec()
    app.processEvents()


def save(app, window, name: str) -> None:
    from foldscope.app.qt import QImage, Qt

    app.processEvents()
    # Palette-indexed PNG keeps the file small; the UI uses few colours.
    flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8, flags)
    out = HERE / name
    image.save(str(out), "PNG")
    print(f"{out.name}: {out.stat().st_size // 1024} KB")


def main() -> int:
    import foldscope.app.dialogs as dialogs_module
    from foldscope.app.qt import QApplication, QSize
    from foldscope.app.settings import WindowSettings
    from foldscope.app.theme import apply_theme
    from foldscope.app.window import MainWindow

    app = QApplication(sys.argv[:1])
    from foldscope.app.gui import quiet_qt_noise

    quiet_qt_noise()  # the offscreen platform's notes on every show: nothing to act on
    apply_theme(app, "light")
    folder = tempfile.mkdtemp()
    window = MainWindow(settings=WindowSettings(Path(folder) / "settings.ini"), db=str(Path(folder) / "library.db"))
    window.sizing.lay_out(QSize(1600, 1100))  # as a first start on a screen of that size
    window.show()
    wait(app, window.document_loaded, lambda: window.open_path(SESSION))
    actions = window.session_actions
    actions.policy_dock.show()
    actions.policy_editor.set_text("max_input_tokens", CEILING)
    task = actions.preview_fold()
    wait(app, task.ended, lambda: None) if not task.is_done else None
    app.processEvents()
    panel = actions.preview
    if panel.passes.rowCount() > 2:
        panel.passes.selectRow(2)  # the summarising pass: its note's text is the telling part
    actions.preview_dock.raise_()
    save(app, window, "fold-preview.png")

    # Apply, then clip the largest folded result by hand and page its omitted middle.
    panel.apply()
    actions.policy_dock.hide()  # the pager needs the width: the lists keep their columns readable
    doc = window.document
    out = [i for i, m in enumerate(doc.session.record) if m.kind == "action_response" and not doc.in_view(i)]
    largest = max(out, key=lambda i: doc.chars[i])
    dialogs_module.ask_clip_length = lambda parent, document, index: 1600  # every modal lives in app/dialogs.py
    dialogs_module.ask_clip_into_view = lambda parent, index: True  # the result is out of the view: clip it into it
    window.select_message(largest)
    actions.clip()
    copy_index = doc.record_size - 1
    window.select_message(copy_index)
    actions.pager.limit.setValue(2000)
    actions.open_pager(copy_index)
    actions.pager_dock.raise_()
    save(app, window, "pager.png")
    window.session_actions.editor.mark_saved()  # the screenshot run keeps nothing: close without asking
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
