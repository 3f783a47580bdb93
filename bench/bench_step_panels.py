"""A step of the timeline with panels hidden, before and after a change, back to back (issue 44: panels that follow
the workspace's changes themselves redraw a hidden panel when it is shown, not at every step).

Opens FILE in a fresh interpreter (the window at 1600x1000, shown, offscreen; the counted document handed over as
the loader hands it), selects the view's largest message with the Composition tab in front (the Inspector behind
it, the Cost tab's request list filled), then steps the timeline back and forth between two requests STEPS times,
each step painted (`repaint`) and its events run. Prints the CPU seconds a step costs on the GUI thread
(`time.process_time`, this process's threads: steadier than the wall clock on a shared machine) and the wall, for the
old checkout's `foldscope` first on the path (--before) and this one's, alternating which runs first each round.

    .venv/bin/python bench/bench_step_panels.py FILE --before /path/to/old/foldscope [--rounds 3] [--steps 20] [--as-loaded]

`--as-loaded` times bench_scale.py's `window step` instead: the window as the loader leaves it (the Inspector in front
on the message it selects, nothing else chosen), each step MainWindow.show_request to another request far from the
last (the middle first, then quarters, thirds and fifths of the session), painted and its events run the same way.

The old checkout is a `git archive` of a commit unpacked into DIR/foldscope (pass DIR/foldscope), as
bench_gui_before_after.py takes it. The measuring code is this file's, the same for both.
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


def child(path: str, folder: str, steps: int, as_loaded: bool) -> None:
    print(json.dumps(step_costs(path, folder, steps, as_loaded)), flush=True)
    os._exit(0)


# Where --as-loaded steps to, as shares of the session's requests: the middle (bench_scale's step), then others as far.
FAR_STEPS = (1 / 2, 1 / 4, 3 / 4, 1 / 3, 2 / 3, 1 / 5, 4 / 5, 2 / 5, 3 / 5)


def step_costs(path: str, folder: str, steps: int, as_loaded: bool = False) -> dict[str, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if as_loaded:  # as bench_scale's window step: the collector's thresholds as the app sets them (app/main.py)
        from foldscope.core.model import collector

        collector.tune()
    from foldscope.app.qt import QApplication
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow
    from foldscope.core.readout.cost_facts import document_cache
    from foldscope.core.readout.opening import open_document

    app = QApplication.instance() or QApplication(sys.argv[:1])
    db = os.path.join(folder, "lib.db")
    document = open_document(path, db)
    document_cache(document)  # as the window's loading worker does (app/loading.py)
    window = MainWindow(WindowSettings(Path(folder) / "s.ini"), db=db)
    window.resize(1600, 1000)
    window.show()
    window.loader.loaded.emit(document, False)  # as the loader hands over a stored Document
    if as_loaded:
        return far_steps(app, window, len(document.requests), steps, float(document.record_size))
    largest = max(document.view_position, key=lambda i: document.chars[i])
    window.select_message(largest, reveal=False)
    window.show_side(window.cost_panel)  # its facts computed while in front, as a user who looked at it once
    while window.cost_panel.facts is None:
        app.processEvents()
    window.show_side(window.composition_panel)
    window.repaint()
    app.processEvents()
    middle = len(document.requests) // 2
    cpu, wall = time.process_time(), time.perf_counter()
    for n in range(steps):
        window.timeline.step_to(middle + n % 2)
        window.repaint()  # the step is done when every panel on screen has painted it
        app.processEvents()
    return {
        "cpu_ms": (time.process_time() - cpu) / steps * 1000,
        "wall_ms": (time.perf_counter() - wall) / steps * 1000,
        "messages": float(document.record_size),
    }


def far_steps(app, window, requests: int, steps: int, messages: float) -> dict[str, float]:
    """bench_scale's window step, `steps` times: show_request to a request far from the one shown, one repaint() of the
    whole window, its events run."""
    window.repaint()
    app.processEvents()
    cpu, wall = time.process_time(), time.perf_counter()
    for n in range(steps):
        window.show_request(int(requests * FAR_STEPS[n % len(FAR_STEPS)]))
        window.repaint()  # the step is done when every panel has painted the new view
        app.processEvents()
    return {
        "cpu_ms": (time.process_time() - cpu) / steps * 1000,
        "wall_ms": (time.perf_counter() - wall) / steps * 1000,
        "messages": messages,
    }


def run(path: str, steps: int, env: dict[str, str], as_loaded: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            [sys.executable, __file__, path, "--child", folder, "--steps", str(steps)] + (["--as-loaded"] if as_loaded else []),
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--before", help="the old checkout (its directory is named foldscope)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--as-loaded", action="store_true", help="bench_scale's window step: the window as loaded, far steps")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.file, args.child, args.steps, args.as_loaded)
        return 0
    if not args.before:
        parser.error("--before is needed")
    before = Path(args.before).resolve()
    # The old checkout's package first on the path; this one's from the project's own (editable) install.
    runs = {"before": {"PYTHONPATH": str(before.parent)}, "after": {}}
    got: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            got[name].append(run(args.file, args.steps, runs[name], args.as_loaded))
            shown = ", ".join(f"{k} {v:,.1f}" for k, v in got[name][-1].items())
            print(f"round {r} {name}: {shown} (load {os.getloadavg()[0]:.1f})", flush=True)
    medians = {name: statistics.median(row["cpu_ms"] for row in rows) for name, rows in got.items()}
    for name, rows in got.items():
        print(f"median {name}: " + ", ".join(f"{k} {statistics.median(row[k] for row in rows):,.1f}" for k in rows[0]))
    print(f"cpu per step, after / before: {medians['after'] / medians['before']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
