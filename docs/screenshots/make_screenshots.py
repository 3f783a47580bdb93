"""Regenerate the screenshots in this folder: `.venv/bin/python docs/screenshots/make_screenshots.py`."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "shared" / "corpus" / "dev"


def shoot(app, path: Path, png: str, theme: str = "light", request: int | None = None, panel: str = "inspector") -> None:
    from app.qt import QEventLoop
    from app.settings import WindowSettings
    from app.theme import apply_theme
    from app.window import MainWindow

    apply_theme(app, theme)
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(WindowSettings(Path(tmp) / "s.ini"), db=str(Path(tmp) / "lib.db"))
        window.resize(1600, 1000)
        loop = QEventLoop()  # not app.exec(): Qt 6's quit() closes the window before the grab
        window.document_loaded.connect(loop.quit)
        window.show()
        window.open_path(path)
        loop.exec()
        window.prepare_screenshot()
        if request is not None:
            window.timeline.step_to(request)
        if panel == "request":
            window.side_tabs.setCurrentWidget(window.request_panel)
        app.processEvents()
        # Palette-indexed PNG keeps the files small; the UI uses few colours.
        from app.qt import QImage, Qt

        flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
        image = window.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8, flags)
        image.save(str(HERE / png), "PNG")
        window.close()
        print(f"{png}: {(HERE / png).stat().st_size // 1024} KB")


def main() -> int:
    from app.qt import QApplication
    from core.demo import demo_path

    app = QApplication(sys.argv[:1])
    demo = Path(demo_path())
    shoot(app, demo, "demo.png")
    shoot(app, demo, "demo-dark.png", theme="dark")
    shoot(app, demo, "demo-at-fold.png", request=5, panel="request")
    claude = CORPUS / "claude_code" / "session-196820da.jsonl"
    if claude.is_file():
        shoot(app, claude, "claude-code.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
