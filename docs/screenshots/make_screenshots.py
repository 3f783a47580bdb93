"""Regenerate the screenshots in this folder: `.venv/bin/python docs/screenshots/make_screenshots.py`."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
CORPUS = HERE.parents[2] / "shared" / "corpus" / "dev"
CLAUDE = CORPUS / "claude_code" / "extracted-dd381a75.jsonl"  # a real session with a compaction


def shoot(app, path: Path, png: str, theme: str = "light", setup: Callable | None = None, policy=None) -> None:
    from foldscope.app.gui import telling_message
    from foldscope.app.qt import QEventLoop, QImage, QSize, Qt
    from foldscope.app.settings import WindowSettings
    from foldscope.app.theme import apply_theme
    from foldscope.app.window import MainWindow

    apply_theme(app, theme)
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(WindowSettings(Path(tmp) / "s.ini"), db=str(Path(tmp) / "lib.db"), policy=policy)
        window.sizing.lay_out(QSize(1600, 1000))  # as a first start on a screen of that size
        loop = QEventLoop()  # not app.exec(): Qt 6's quit() closes the window before the grab
        window.document_loaded.connect(loop.quit)
        window.show()
        window.open_path(path)
        loop.exec()
        index = telling_message(window.document)
        if index is not None:
            window.select_message(index)
        if setup is not None:
            setup(window)
        app.processEvents()
        # Palette-indexed PNG keeps the files small; the UI uses few colours.
        flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
        image = window.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8, flags)
        image.save(str(HERE / png), "PNG")
        window.session_actions.editor.mark_saved()  # a screenshot run keeps nothing: close without asking
        window.close()
        print(f"{png}: {(HERE / png).stat().st_size // 1024} KB")


def at_first_fold(kind: str = "fold", members: bool = True) -> Callable:
    """Choose the first fold record (or source compaction) in the fold panel: the timeline steps to it."""

    def setup(window) -> None:
        row = next(r for r in window.fold_panel.model.rows if r.kind == kind)
        window.fold_panel.table.setFocus()
        window.fold_panel.select_number(row.number)
        if members and window.inspector.tabs.isTabEnabled(window.inspector.members_tab):
            window.inspector.tabs.setCurrentWidget(window.inspector.members)

    return setup


def request_before_fold(window) -> None:
    """The request just before the first fold, with the request panel saying where the next one diverges."""
    fold = window.timeline.fold_slots()[0]
    window.timeline.step_to(fold - 1)
    window.side_tabs.setCurrentWidget(window.request_panel)


def marks_at_request(k: int) -> Callable:
    """Request k with its cache marks: ticks on the map, listed and highlighted in the request panel."""

    def setup(window) -> None:
        window.timeline.step_to(k)
        window.side_tabs.setCurrentWidget(window.request_panel)
        panel = window.request_panel
        if panel.mark_lines:  # scroll the payload to its first mark
            block = panel.payload.document().findBlockByLineNumber(panel.mark_lines[0] - 1)
            cursor = panel.payload.textCursor()
            cursor.setPosition(block.position())
            panel.payload.setTextCursor(cursor)
            panel.payload.ensureCursorVisible()

    return setup


def what_if_at(k: int) -> Callable:
    """A what-if from request k: the old tool results evicted there, the later requests replayed."""

    def setup(window) -> None:
        from foldscope.core.actions.commands import EvictActionResults

        window.timeline.step_to(k)
        window.what_if.start()
        window.session_actions.editor.do(EvictActionResults(2), "evict of tool results but the newest 2")
        doc = window.document
        window.select_message(doc.view_index(doc.view_size - 1))

    return setup


def caching_policy():
    from foldscope.core.model.policy import Policy

    return Policy(max_input_tokens=100_000, prompt_caching=True, source="docs/screenshots (prompt caching on)")


def folded_demo(folder: Path) -> Path:
    """The demo folded by the fold core at a ceiling of 8,000 tokens: notes and a clipped copy in its view."""
    from foldscope.core.cli import main as cli
    from foldscope.core.formats.demo import demo_path

    out = folder / "demo-folded-at-8000.json"
    cli.main(["fold", str(demo_path()), "--ceiling", "8000", "--apply", "-o", str(out)])
    return out


def main() -> int:
    from foldscope.app.qt import QApplication
    from foldscope.core.formats.demo import demo_path

    app = QApplication(sys.argv[:1])
    from foldscope.app.gui import quiet_qt_noise

    quiet_qt_noise()  # the offscreen platform's notes on every show: nothing to act on
    demo = Path(demo_path())
    shoot(app, demo, "demo.png")
    shoot(app, demo, "demo-at-fold.png", setup=at_first_fold())
    shoot(app, demo, "demo-request.png", setup=request_before_fold)
    with tempfile.TemporaryDirectory() as tmp:
        shoot(app, folded_demo(Path(tmp)), "demo-copy.png")
    shoot(app, demo, "demo-dark.png", theme="dark", setup=at_first_fold(members=False))
    shoot(app, demo, "demo-marks.png", setup=marks_at_request(8), policy=caching_policy())
    shoot(app, demo, "what-if.png", setup=what_if_at(10))
    if CLAUDE.is_file():
        shoot(app, CLAUDE, "claude-code.png")
        shoot(app, CLAUDE, "claude-code-at-compaction.png", setup=at_first_fold("compaction"))
        shoot(app, CLAUDE, "claude-code-dark.png", theme="dark")
    return 0


if __name__ == "__main__":
    sys.exit(main())
