"""Regenerate replay.png, the Replay lab on a real Claude Code session: `.venv/bin/python docs/screenshots/make_replay.py`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
SESSION = HERE.parents[2] / "shared" / "corpus" / "dev" / "claude_code" / "session-196820da.jsonl"
CEILING = "60000"


def main() -> int:
    from foldscope.app.lab.replay import ReplayView
    from foldscope.app.qt import QApplication, QEventLoop, QImage, Qt
    from foldscope.app.theme import apply_theme
    from foldscope.core.formats import load_session

    app = QApplication(sys.argv[:1])
    from foldscope.app.gui import quiet_qt_noise

    quiet_qt_noise()  # the offscreen platform's notes on every show: nothing to act on
    apply_theme(app, "light")
    session = load_session(SESSION)
    view = ReplayView()
    view.resize(1600, 1040)
    view.set_session(session)
    view.policy_editor.set_text("max_input_tokens", CEILING)
    view.show()
    loop = QEventLoop()
    view.replay_finished.connect(loop.quit)
    view.run()
    loop.exec()
    app.processEvents()
    # Open the first request the adr fold changed, as a reader would by clicking its point.
    adr = next(run for run in view.result.runs if run.strategy == "adr")
    row = next((i for i, r in enumerate(adr.rows) if r.folds), 0)
    view.open_point("adr", row)
    app.processEvents()
    # Palette-indexed PNG keeps the file small; the UI uses few colours.
    flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
    image = view.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8, flags)
    out = HERE / "replay.png"
    image.save(str(out), "PNG")
    print(f"{out.name}: {out.stat().st_size // 1024} KB")
    view.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
