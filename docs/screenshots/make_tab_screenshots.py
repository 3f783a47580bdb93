"""Every side tab of the window at a laptop's 1366x768 and at 1600x1000, on the bundled demo session, into tabs/:
`.venv/bin/python docs/screenshots/make_tab_screenshots.py` (`make screenshots` runs it). Each is what
`foldscope --screenshot out.png --size WxH --tab NAME` renders, with an empty library of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
OUT = HERE / "tabs"
SIZES = ("1366x768", "1600x1000")


def main() -> int:
    from foldscope.app.gui import SIDE_TABS
    from foldscope.app.qt import QApplication, QImage, Qt
    from foldscope.core.formats.demo import demo_path

    app = QApplication.instance() or QApplication(sys.argv[:1])  # for the palette conversion below
    from foldscope.app.gui import quiet_qt_noise

    quiet_qt_noise()  # the offscreen platform's notes on every show: nothing to act on
    OUT.mkdir(exist_ok=True)
    foldscope = Path(sys.executable).with_name("foldscope")
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            for tab in SIDE_TABS:
                png = OUT / f"{tab}-{size}.png"
                run = subprocess.run(
                    [
                        str(foldscope),
                        "--screenshot",
                        str(png),
                        "--size",
                        size,
                        "--tab",
                        tab,
                        "--db",
                        str(Path(tmp) / "library.db"),
                        "--theme",
                        "light",
                        str(demo_path()),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                if run.returncode:
                    print(f"{png.name}: {run.stderr.strip()}", file=sys.stderr)
                    return 1
                # Palette-indexed keeps each file small; the window uses few colours.
                flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
                QImage(str(png)).convertToFormat(QImage.Format.Format_Indexed8, flags).save(str(png), "PNG")
                print(f"{png.relative_to(HERE)} {png.stat().st_size // 1024} KB")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
