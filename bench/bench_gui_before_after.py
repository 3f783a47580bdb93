"""The window's launch on one file, before and after a change, back to back (issue 17's GUI at 50k).

Launches the window on FILE (1600x1000, a new library, as bench_scale.py's `gui launch` does) in a fresh interpreter
with the old checkout's `foldscope` first on the path, then with this one's, alternating which goes first each round,
and prints each run and the medians, in seconds from the interpreter's start: `usable` and `complete` (the first step
painted and the counted document painted, bench_scale's `launch to usable` and `timeline complete`), `editable` (the
first moment the session's actions are on: the Evict action enabled on the counted document), `stored` (the library
holds the session: document_loaded); `cpu` (this process's CPU until complete, both threads, the counting child
apart: steadier than the wall clock on a shared machine), `edit` (an Evict of the view's last message made at
`editable`, its wall time on the GUI thread: while the store runs, if the actions come on before it), and the peak
memory until stored (`peak_mb`), and whether quicktok's encoder was built in the window's process (`encoder`, 1 or 0:
not where a child counted ahead). `--free-core` has both sides take the second core as free, so a child counts ahead
on a machine whose other work would say not (the figures where a child runs, on a shared machine).

    .venv/bin/python bench/bench_gui_before_after.py FILE --before /path/to/old/checkout [--rounds 4]

The old checkout is imported as `foldscope` from its parent directory (a `git archive` of a commit unpacked into
DIR/foldscope: pass DIR/foldscope). The measuring code is this file's, the same for both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FREE_CORE = "FOLDSCOPE_BENCH_FREE_CORE"  # set by --free-core, read in each launched window


def child(path: str, folder: str) -> None:
    """In the fresh interpreter: the window on the file (the app first on the path: the old checkout's with
    --before), its moments printed as one JSON line."""
    print(json.dumps(window_moments(path, folder)), flush=True)
    os._exit(0)


def window_moments(path: str, folder: str) -> dict[str, float]:
    """bench_scale.gui_launch's moments, and when the session's actions came on, an edit made then, the store."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from bench_scale import encoder_built, peak_mb

    if os.environ.get(FREE_CORE):  # --free-core: a child counts ahead whatever else the machine runs, on both sides
        from foldscope.core.request.counting import backend

        backend.free_core = lambda: True

    from foldscope.app.qt import QApplication, QEventLoop
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow
    from foldscope.core.actions.commands import Evict

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(WindowSettings.in_memory(), db=os.path.join(folder, "lib.db"))
    window.resize(1600, 1000)
    window.show()
    got: dict[str, float] = {}
    loop = QEventLoop()

    def painted(name: str) -> None:
        window.repaint()  # every panel painted once: what a person sees
        got.setdefault(name, time.time())
        got.setdefault(f"{name}_cpu", time.process_time())

    def editable(doc) -> None:
        if "editable" in got or not window.session_actions.evict_action.isEnabled():
            return
        got["editable"] = time.time()
        last = doc.index_of(doc.session.view[-1])
        started = time.perf_counter()
        window.session_actions.editor.do(Evict([last]), f"evict of #{last}")
        app.processEvents()  # the panels redrawn from it
        got["edit"] = time.perf_counter() - started

    def stored(doc) -> None:
        editable(doc)
        got["stored"] = time.time()
        loop.quit()

    window.record_shown.connect(lambda doc: painted("usable"))
    window.document_counted.connect(lambda doc: (painted("complete"), editable(doc)))
    window.document_loaded.connect(stored)
    window.load_failed.connect(lambda line: loop.quit())
    window.open_path(path)
    loop.exec()
    got["peak_mb"] = peak_mb()
    got["encoder"] = float(encoder_built())  # 1: quicktok's encoder (64 MiB) built in the window's process
    return got


def launch(path: str, env: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, path, "--child", tmp], capture_output=True, text=True, env={**os.environ, **env}, check=True
        )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        **{name: got[name] - started for name in ("usable", "complete", "editable", "stored")},
        "cpu": got["complete_cpu"],
        "edit": got["edit"],
        "peak_mb": got["peak_mb"],
        "encoder": got["encoder"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--before", help="the old checkout (its directory is named foldscope)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--free-core",
        action="store_true",
        help="both sides take the second core as free (a child counts ahead), on a machine whose other work would say not",
    )
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.free_core:
        os.environ[FREE_CORE] = "1"
    if args.child:
        child(args.file, args.child)
        return 0
    if not args.before:
        parser.error("--before is needed")
    before = Path(args.before).resolve()
    # The old checkout's package first on the path; this one's from the project's own (editable) install.
    runs = {"before": {"PYTHONPATH": str(before.parent)}, "after": {}}
    got: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            got[name].append(launch(args.file, runs[name]))
            shown = ", ".join(f"{k} {v:.2f}" for k, v in got[name][-1].items())
            print(f"round {r} {name}: {shown} (load {os.getloadavg()[0]:.1f})", flush=True)
    for name, rows in got.items():
        print(f"median {name}: " + ", ".join(f"{k} {statistics.median(row[k] for row in rows):.2f}" for k in rows[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
