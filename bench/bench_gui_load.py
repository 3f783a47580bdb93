"""GUI load benchmark: a generated 10,000-message session, from the import finishing to the window showing its view."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def make_session(folder: Path, messages: int) -> Path:
    """A demo-shaped session of about `messages` messages (foldscope.core.formats.demo.generate with many rounds)."""
    from foldscope.core.formats.demo import write_demo

    rounds = max(3, messages // 6)
    path = folder / "large.json"
    session = write_demo(path, rounds=rounds, listing_chars=2_000)
    while len(session.record) < messages:  # the generator's rounds vary in size: top up
        rounds += max(1, (messages - len(session.record)) // 5)
        session = write_demo(path, rounds=rounds, listing_chars=2_000)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of R for the GUI step")
    args = parser.parse_args(argv)

    from foldscope.app.qt import QApplication
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow
    from foldscope.core.readout.opening import open_document

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = make_session(folder, args.messages)
        start = time.perf_counter()
        document = open_document(path, str(folder / "lib.db"))  # what the worker runs: read, import, count
        worker = time.perf_counter() - start
        shown: list[float] = []
        for run in range(args.repeat):
            window = MainWindow(WindowSettings(folder / f"s{run}.ini"), db=str(folder / "lib.db"))
            window.resize(1600, 1000)
            window.show()
            app.processEvents()
            start = time.perf_counter()
            window.loader.loaded.emit(document, False)  # as the loader hands over a stored Document
            window.repaint()  # every panel painted once: the view is on screen
            app.processEvents()
            shown.append(time.perf_counter() - start)
            window.close()
            window.deleteLater()
            app.processEvents()
        size = path.stat().st_size
    print(
        f"session: {document.record_size:,} messages, {len(document.requests):,} requests, "
        f"{size / 1e6:.1f} MB, {sum(document.tokens):,} tokens"
    )
    print(f"worker (read, import, count, measure the trace): {worker:.2f} s")
    print(
        f"import finished -> window showing the view: {min(shown) * 1000:.0f} ms best of {len(shown)} "
        f"(all: {', '.join(f'{s * 1000:.0f}' for s in shown)} ms; target < 1000 ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
