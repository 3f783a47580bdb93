"""Where the window's load peaks in memory and what holds it: the window opened on FILE (1600x1000, a new library, as
bench_scale.py's `gui launch`) until the library holds the session, its resident memory read every 2 ms with every
thread's stack kept at each new high, and each named step of the load marked.

    .venv/bin/python bench/bench_gui_memory.py FILE [--free-core] [--edit]

`--edit` makes bench_gui_before_after's edit (an Evict of the view's last message, as soon as the session's actions
are on) and marks it, so a load with an edit in it is read too.

Prints each step's resident memory (MiB) as it starts and ends, on whichever thread runs it; at each paint (the first
step, the counted document, the stored one) what the process's memory is made of: anonymous and file-backed pages
(/proc/self/smaps_rollup), what glibc's malloc has handed out and holds free (mallinfo2), pymalloc's arenas and the
blocks in use in them; then the highest resident memory seen with the load worker's stack at that moment, and VmHWM
(what bench_scale judges). Sampling needs the interpreter lock, so a high reached inside one long C call is seen when
it returns. The docs/performance.md section "the window's peak memory at 50k" is this script's reading.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import importlib
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STARTED = time.time()
PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20
EVERY_S = 0.002  # between two reads of the resident memory

# (module, attribute) of each step marked: the load worker's, then the GUI thread's.
STEPS = (
    ("foldscope.core.readout.opening", "first_part"),
    ("foldscope.core.formats", "load_session"),
    ("foldscope.core.store.snapshot", "as_read"),
    ("foldscope.core.readout.opening", "measure_requests"),
    ("foldscope.core.readout.opening", "record_sizes"),
    ("foldscope.core.readout.opening", "fold_rows"),
    ("foldscope.core.readout.opening", "release_freed"),
    ("foldscope.core.readout.opening", "as_counted"),
    ("foldscope.app.loading", "document_cache"),
    ("foldscope.core.store.snapshot", "dump_session_to"),
    ("foldscope.core.readout.opening", "import_into_library"),
    ("foldscope.core.readout.opening", "keep_snapshot"),
    ("foldscope.app.window", "MainWindow.show_first"),
    ("foldscope.app.window", "MainWindow.show_counted"),
)


def resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_MIB


class Highest:
    """The highest resident memory read so far, when, and every other thread's stack then (as text: a frame kept
    would keep its locals alive, a painter among them)."""

    def __init__(self) -> None:
        self.mib, self.at, self.stacks = 0.0, 0.0, {}
        self.stop = False

    def watch(self) -> None:
        me = threading.get_ident()
        while not self.stop:
            now = resident_mib()
            if now > self.mib + 1:
                stacks = {}
                for ident, frame in sys._current_frames().items():
                    if ident != me:
                        stacks[ident] = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in traceback.extract_stack(frame)[-12:]]
                    del frame
                self.mib, self.at, self.stacks = now, time.time() - STARTED, stacks
            time.sleep(EVERY_S)


def marked(module: str, attribute: str, lines: list[str]) -> None:
    """Wrap module.attribute (a function, or Class.method) so its start and end are noted with the memory then."""
    owner: Any = importlib.import_module(module)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  > {attribute}")
        try:
            return real(*args, **kwargs)
        finally:
            lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  < {attribute}")

    setattr(owner, name, wrapper)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
    ]


def made_of() -> str:
    """What the process's memory is made of now, in MiB (the parts this platform can tell)."""
    parts = []
    with contextlib.suppress(OSError):
        with open("/proc/self/smaps_rollup") as rollup:
            fields = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in rollup if line.split(":")[0] in ("Rss", "Anonymous")}
        parts.append(f"anonymous {fields['Anonymous']:.1f}, file-backed {fields['Rss'] - fields['Anonymous']:.1f}")
    with contextlib.suppress(OSError, AttributeError):
        mallinfo2 = ctypes.CDLL(None).mallinfo2  # glibc 2.33 and later
        mallinfo2.restype = _MallInfo2
        info = mallinfo2()
        parts.append(f"malloc in use {info.uordblks / 2**20:.1f} (free held {info.fordblks / 2**20:.1f})")
    stats = pymalloc_stats()
    if stats:
        parts.append(
            f"pymalloc arenas {stats.get('arenas allocated current', 0)} (of 1 MiB on Python 3.10 and later), "
            f"blocks in use {stats.get('bytes in allocated blocks', 0) / 2**20:.1f}"
        )
    return "; ".join(parts)


def pymalloc_stats() -> dict[str, int]:
    """sys._debugmallocstats' summary lines ("# name = value"), read from its standard error."""
    read, write = os.pipe()
    saved = os.dup(2)
    try:
        os.dup2(write, 2)
        os.close(write)
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    os.set_blocking(read, False)
    out = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(read, 1 << 20):
            out += chunk
    os.close(read)
    stats = {}
    for line in out.decode(errors="replace").splitlines():
        if line.startswith("#") and "=" in line:
            key, value = line[1:].split("=", 1)
            with contextlib.suppress(ValueError):
                stats[key.strip()] = int(value.replace(",", "").strip())
    return stats


@contextlib.contextmanager
def watched() -> Iterator[Highest]:
    highest = Highest()
    thread = threading.Thread(target=highest.watch, daemon=True)
    thread.start()
    try:
        yield highest
    finally:
        highest.stop = True
        thread.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument(
        "--free-core",
        action="store_true",
        help="take the second core as free (a child counts ahead), on a machine whose other work would say not",
    )
    parser.add_argument("--edit", action="store_true", help="an Evict of the view's last message once the actions are on")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.free_core:  # as bench_gui_before_after's --free-core
        from foldscope.core.request.counting import backend

        backend.free_core = lambda: True
    lines: list[str] = []
    for module, attribute in STEPS:
        marked(module, attribute, lines)
    from foldscope.app.qt import QApplication, QEventLoop
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow

    with tempfile.TemporaryDirectory() as folder, watched() as highest:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        window = MainWindow(WindowSettings.in_memory(), db=os.path.join(folder, "lib.db"))
        window.resize(1600, 1000)
        window.show()
        window.repaint()
        loop = QEventLoop()

        def painted(name: str) -> None:
            window.repaint()  # every panel painted once: what a person sees
            lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  ** {name} painted: {made_of()}")

        edited: list[bool] = []

        def editable(doc) -> None:  # bench_gui_before_after's edit, marked
            if not args.edit or edited or not window.session_actions.evict_action.isEnabled():
                return
            from foldscope.core.actions.commands import Evict

            edited.append(True)
            last = doc.index_of(doc.session.view[-1])
            lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  > the edit")
            window.session_actions.editor.do(Evict([last]), f"evict of #{last}")
            app.processEvents()  # the panels redrawn from it
            lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  < the edit")

        window.record_shown.connect(lambda doc: painted("first step"))
        window.document_counted.connect(lambda doc: (painted("counted document"), editable(doc)))
        window.document_loaded.connect(lambda doc: (editable(doc), painted("stored document"), loop.quit()))
        window.load_failed.connect(lambda line: loop.quit())
        lines.append(f"{time.time() - STARTED:7.2f} s {resident_mib():7.1f} MiB  the window open, no session: {made_of()}")
        window.open_path(args.file)
        loop.exec()
        if not edited:  # an edited session would ask whether to keep its changes
            window.close()
        app.processEvents()
    print("\n".join(lines))
    with open("/proc/self/status") as status:
        hwm = next((int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:")), float("nan"))
    print(f"highest resident memory seen: {highest.mib:.1f} MiB at {highest.at:.2f} s; VmHWM {hwm:.1f} MiB")
    for stack in highest.stacks.values():
        if any("worker.py" in frame for frame in stack):
            print("the load worker's stack then (innermost last):")
            print("\n".join(f"    {frame}" for frame in stack))
    return 0


if __name__ == "__main__":
    sys.exit(main())
