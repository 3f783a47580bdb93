"""Where one GUI load's time goes until the timeline is complete: the window opened on FILE (1600x1000, a new library,
as bench_scale.py's `gui launch`), each named step of the load worker and of the GUI thread timed by its own thread's
CPU (time.thread_time, the functions wrapped, no profiler), the worker's waits for the window's paint by the clock.

    .venv/bin/python bench/bench_gui_steps.py FILE [--local]

Prints `usable` and `complete` (the first step painted, the counted document painted: wall seconds from this
interpreter's start and its CPU then, every thread and the counting child once ended), then each step's calls and CPU
seconds, the largest first, on each thread. Steps nest (measure_requests holds Counter.measure, which holds
Tokenising._tokenise): a line is its step's own total, not a share of a sum. `--local` keeps every count in this
process (FOLDSCOPE_COUNTING=local: the same work each run, whatever the second core is doing); without it a counting
child may take the tokenising on the other core when it looks free, and its CPU is not in the worker's figures.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

STARTED = time.time()

# (module, attribute) of each step timed, on the thread that runs it.
WORKER_STEPS = (
    ("foldscope.core.readout.opening", "first_part"),
    ("foldscope.core.formats", "load_session"),
    ("foldscope.core.readout.opening", "_show_first"),
    ("foldscope.core.store.snapshot", "as_read"),
    ("foldscope.core.readout.opening", "measure_requests"),
    ("foldscope.core.request.count", "Counter.measure"),
    ("foldscope.core.request.count_texts", "Tokenising._tokenise"),
    ("foldscope.core.request.trace_measure", "PredictionCounts.add"),
    ("foldscope.core.request.provider_text", "PredictionCounter.thinking"),
    ("foldscope.core.request.prefix", "PrefixMeter.step"),
    ("foldscope.core.forensics.trace_pass", "MeasuredPass.step"),
    ("foldscope.core.readout.opening", "record_sizes"),
    ("foldscope.core.readout.opening", "fold_rows"),
    ("foldscope.core.readout.opening", "as_counted"),
    ("foldscope.app.loading", "document_cache"),
)
GUI_STEPS = (
    ("foldscope.app.window", "MainWindow.show_first"),
    ("foldscope.app.window", "MainWindow._show_counts"),
    ("foldscope.app.window", "MainWindow.show_counted"),
    ("foldscope.app.window", "MainWindow.set_document"),
    ("foldscope.app.panels.folds", "FoldPanel.set_rows"),
    ("foldscope.app.panels.timeline_paint", "PaintedTimeline.paintEvent"),
    ("foldscope.app.panels.timeline_paint", "PaintedTimeline._bars_layer"),
    ("foldscope.app.panels.cache_lane", "CacheLane.paint"),
    ("foldscope.app.panels.window_map_paint", "PaintedMap.paintEvent"),
    ("foldscope.app.panels.busy", "BusyBar.report"),
)


def timed(module: str, attribute: str, into: dict[str, list[float]], clock: Callable[[], float]) -> None:
    """Wrap module.attribute (a function, or Class.method) so each call adds its `clock` time to into[attribute]."""
    owner = importlib.import_module(module)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        start = clock()
        try:
            return real(*args, **kwargs)
        finally:
            cell = into.setdefault(attribute, [0, 0.0])
            cell[0] += 1
            cell[1] += clock() - start

    setattr(owner, name, wrapper)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--local", action="store_true", help="every count in this process (FOLDSCOPE_COUNTING=local)")
    args = parser.parse_args()
    if args.local:
        os.environ["FOLDSCOPE_COUNTING"] = "local"
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scale import cpu_now

    steps: dict[str, list[float]] = {}
    for module, attribute in WORKER_STEPS + GUI_STEPS:
        timed(module, attribute, steps, time.thread_time)
    from foldscope.app import worker

    waits: list[tuple[float, float]] = []  # (when it began, seconds from this interpreter's start; how long)
    wait_shown = worker.Progress.wait_shown

    def waited(progress, seconds: float) -> None:
        began = time.time()
        try:
            wait_shown(progress, seconds)
        finally:
            waits.append((began - STARTED, time.time() - began))

    worker.Progress.wait_shown = waited  # type: ignore[method-assign]

    from foldscope.app.qt import QApplication, QEventLoop
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow

    with tempfile.TemporaryDirectory() as folder:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        window = MainWindow(WindowSettings.in_memory(), db=os.path.join(folder, "lib.db"))
        window.resize(1600, 1000)
        window.show()
        moments: dict[str, tuple[float, float, float]] = {}
        loop = QEventLoop()

        def painted(name: str) -> None:
            window.repaint()  # every panel painted once: what a person sees
            if name not in moments:
                moments[name] = (time.time() - STARTED, cpu_now(), time.thread_time())
            if name == "complete":
                loop.quit()

        window.record_shown.connect(lambda doc: painted("usable"))
        window.document_counted.connect(lambda doc: painted("complete"))
        window.load_failed.connect(lambda line: loop.quit())
        window.open_path(args.file)
        loop.exec()
        frozen = json.loads(json.dumps(steps)), list(waits)  # as at the paint: the store goes on after
        window.close()
        app.processEvents()
    steps, waits = frozen
    for name, (wall, cpu, gui) in moments.items():
        print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU (the GUI thread {gui:.2f} s)")
    for title, names in (("worker", [a for _, a in WORKER_STEPS]), ("GUI thread", [a for _, a in GUI_STEPS])):
        print(f"{title}, CPU seconds by step until complete:")
        for name in sorted((n for n in names if n in steps), key=lambda n: -steps[n][1]):
            calls, cpu = steps[name]
            print(f"  {name:<32} {int(calls):>6} calls {cpu:8.3f} s")
    complete = moments.get("complete", (float("inf"), 0.0, 0.0))[0]
    shown = ", ".join(f"{seconds:.3f} s at {began:.2f} s" for began, seconds in waits if began < complete)
    print(f"the worker's waits for the window's paint before complete (wall): {shown or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
