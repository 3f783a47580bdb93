"""Starting the GUI: `foldscope [FILE] [--screenshot PNG [--size WxH] [--tab NAME]] [--db PATH] [policy flags] [--theme T]`.

The policy flags are fold's, requests' and replay's (core.cli.options), resolved the same way over each session's launch record."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from foldscope.app.display import no_display_line, no_display_reason
from foldscope.core.cli.options import add_policy_flags, add_window_flag, policy_choice
from foldscope.core.cli.output import Parser

if TYPE_CHECKING:
    from foldscope.core.readout.document import Document

SCREENSHOT_SIZE = (1600, 1000)
# The window's side tabs, as --tab names them (their titles, lower case); tests/app/test_gui_flags.py holds the
# window to this list.
SIDE_TABS = ("inspector", "request", "composition", "library", "cost")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="foldscope", description="Open a session in the foldscope window.")
    parser.add_argument("file", nargs="?", help="a session file (default: the bundled demo session)")
    parser.add_argument("--screenshot", metavar="PNG", help="render the window with FILE loaded to PNG and exit")
    parser.add_argument("--db", metavar="PATH", help="the library database (default: the user's data folder)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history to open"
        " (default: the window asks; a --screenshot names them and stops)",
    )
    parser.add_argument(
        "--head", metavar="FILE", help="Claude Code's /context output pasted into a file: the unseen head split by its figures"
    )
    add_policy_flags(parser)  # the same policy flags as fold, requests and replay (core.cli.options)
    add_window_flag(parser)
    parser.add_argument(
        "--theme",
        choices=("system", "light", "dark"),
        help="colour theme (default: the one chosen in View > Theme, else follow the system)",
    )
    parser.add_argument(
        "--follow", action="store_true", help="follow FILE as an agent writes it (View > Follow): new lines are read as they land"
    )
    parser.add_argument(
        "--size", metavar="WxH", type=_size, default=SCREENSHOT_SIZE, help="the --screenshot window size (default: 1600x1000)"
    )
    parser.add_argument("--tab", choices=SIDE_TABS, type=str.lower, help="the side tab in front in the --screenshot (default: inspector)")
    parser.add_argument(
        "--first-step", action="store_true", help="with --screenshot: render the load's first step (the record read, nothing counted yet)"
    )
    return parser


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (e.g. 1366x768)") from None
    return width, height


def default_session() -> str:
    from foldscope.core.formats.demo import demo_path

    return str(demo_path())


def _needs_offscreen() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return False
    return no_display_reason() is not None


# What the offscreen platform says whenever a window is shown: its own limit, nothing the user can act on.
QT_NOISE = ("This plugin does not support propagateSizeHints", "This plugin does not support raise")


def quiet_qt_noise():
    """Keep the platform plugin's notes off stderr (a screenshot run prints only its own lines); the rest goes to
    the handler before (Qt's own when None). Returns that handler, for qInstallMessageHandler to put back."""
    from foldscope.app.qt import qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if message.startswith(QT_NOISE):
            return
        if before is not None:
            before(mode, context, message)
        else:
            print(message, file=sys.stderr)

    before = qInstallMessageHandler(handler)
    return before


EXIT_WAIT_MS = 10_000  # at most this long for running tasks after the window closes: never a hang


def run_gui(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.screenshot and _needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif not args.screenshot and (reason := no_display_reason()) is not None:
        print(no_display_line(reason, args.file), file=sys.stderr)  # before Qt, which would abort or hide the window
        return 2
    path = args.file or default_session()

    from foldscope.app.qt import QApplication
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("foldscope")
    app.setOrganizationName("foldscope")
    from foldscope.core.model import pricing
    from foldscope.core.model.policy import PolicyError
    from foldscope.core.model.session import ReadError
    from foldscope.core.readout.head_split import use_head_file

    try:  # checked before any file is read: one clear line when refused
        policy = policy_choice(args)
        if args.prices:
            pricing.use_prices_file(args.prices)
        if args.head:  # the session's composition shows the head's parts by these figures (core.readout.head_split)
            use_head_file(path, args.head)
    except (OSError, PolicyError, ReadError) as exc:
        print(f"foldscope: {exc}", file=sys.stderr)
        return 2
    # A screenshot run reads and writes no settings: no geometry, no recent files, no theme of the user's.
    settings = WindowSettings.in_memory() if args.screenshot else WindowSettings()
    window = MainWindow(settings=settings, db=args.db, policy=policy)
    window.themes.set_theme(args.theme or settings.theme() or "system", remember=False)
    if args.screenshot:
        from foldscope.app.qt import qInstallMessageHandler

        before = quiet_qt_noise()
        try:
            return screenshot(app, window, path, args.screenshot, args.size, args.tab, first_step=args.first_step, sample=args.sample)
        finally:
            qInstallMessageHandler(before)
    window.show()
    if args.follow:

        def follow_once(document) -> None:
            window.document_loaded.disconnect(follow_once)
            if document is not None:
                window.following.action.setChecked(True)

        window.document_loaded.connect(follow_once)
    window.open_path(path, sample=args.sample)
    code = app.exec()
    # The window has closed and cancelled its load, but a task may be between two reports (a session importing
    # into the library): let it end, briefly, so that no worker runs Python while the interpreter is torn down.
    from foldscope.app.worker import pool

    pool().waitForDone(EXIT_WAIT_MS)
    return code


def screenshot(
    app,
    window,
    path: str,
    png: str,
    size: tuple[int, int] = SCREENSHOT_SIZE,
    tab: str | None = None,
    first_step: bool = False,
    sample: str | None = None,
) -> int:
    """Load FILE (its sample `sample`, for a file of several), render the window at a fixed size to PNG (with side
    tab `tab` in front; `first_step`: as the load's first step shows it, before anything is counted), and say how it went."""
    from foldscope.app import dialogs
    from foldscope.app.loader import error_line
    from foldscope.app.qt import QEventLoop
    from foldscope.app.worker import pool

    outcome: dict[str, str] = {}
    from foldscope.app.qt import QSize

    window.sizing.lay_out(QSize(*size))  # as a first start on a screen of that size lays it out
    window.load_failed.connect(lambda line: outcome.setdefault("error", line))
    # Replace the modal dialog: a screenshot run must never wait for a click.
    dialogs.error_dialog = lambda parent, title, text: None

    def refuse_to_choose(parent, path: str, samples: list[dict]) -> str | None:
        outcome.setdefault("error", several_line(path, samples))  # nobody to ask: name them, and open none
        return None

    dialogs.choose_sample = refuse_to_choose
    # A local loop, not app.exec()/quit(): in Qt 6 quit() closes every window before we can grab it.
    loop = QEventLoop()
    window.document_loaded.connect(loop.quit)
    if first_step:
        window.record_shown.connect(loop.quit)
    window.load_failed.connect(loop.quit)
    window.show()
    try:
        task = window.open_path(path, sample=sample)
    except Exception as exc:  # noqa: BLE001 - a bad path must still give one line
        print(f"foldscope: {error_line(path, exc)}", file=sys.stderr)
        return 2
    if task is not None:  # None: nothing was started (a file of several samples and no --sample), so nothing to wait for
        loop.exec()
    if "error" in outcome:
        print(f"foldscope: {outcome['error']}", file=sys.stderr)
        return 2
    index = telling_message(window.document)
    if index is not None:
        window.select_message(index)
    if tab:
        show_tab(window, tab)
    if first_step:  # the load is still counting: waiting for the pool would show the counted step instead
        app.processEvents()
    else:
        settle(app)
    image = window.grab()
    made = window.size().toTuple()  # in the window's own pixels (a high-DPI screen's PNG holds more)
    if made != tuple(size):  # the window's least size is more: say so, not a PNG of another size unsaid
        print(
            f"foldscope: --size {size[0]}x{size[1]} is below the window's least size; it is drawn at {made[0]}x{made[1]}", file=sys.stderr
        )
    if first_step:  # the rest of the load is not wanted: stop it before the window goes
        window.cancel_loading()
        pool().waitForDone()
    if not write_png(image, png, read=[path]):
        return 2
    window.close()
    return 0


def telling_message(doc: Document | None) -> int | None:
    """The message a screenshot selects, so it shows the inspector at work: a clipped copy, else the newest note, else
    the largest message in view."""
    from foldscope.core.readout.document import is_note

    if doc is None or doc.record_size == 0:
        return None
    in_view = sorted(doc.view_position)
    copies = [i for i in in_view if doc.message(i).is_clipped_copy]
    notes = [i for i in in_view if is_note(doc.message(i))]
    if copies:
        return copies[0]
    if notes:
        return notes[-1]
    return max(in_view or [0], key=lambda i: doc.sizes[i])


def write_png(image, png: str, read: list[str]) -> bool:
    """Write the screenshot as the user's other outputs are (core.model.outputs): private when new, never over a
    device or the session, a link written through; one line on stderr when it cannot."""
    from foldscope.app.qt import QBuffer, QByteArray
    from foldscope.core.model.outputs import write_output
    from foldscope.core.model.session import ReadError

    data = QByteArray()
    buffer = QBuffer(data)
    if not buffer.open(QBuffer.OpenModeFlag.WriteOnly) or not image.save(buffer, "PNG"):
        print(f"foldscope: {png}: cannot encode the screenshot", file=sys.stderr)
        return False
    buffer.close()
    try:
        Path(png).parent.mkdir(parents=True, exist_ok=True)
        write_output(png, bytes(data.data()), read)
    except (OSError, ReadError) as exc:
        print(f"foldscope: {exc if isinstance(exc, ReadError) else f'{png}: cannot write the screenshot: {exc}'}", file=sys.stderr)
        return False
    return True


def show_tab(window, name: str) -> None:
    """Bring the side tab titled `name` (any case) to the front."""
    tabs = window.side_tabs
    for i in range(tabs.count()):
        if tabs.tabText(i).replace("&", "").lower() == name.lower():
            tabs.setCurrentIndex(i)
            return
    raise ValueError(f"no side tab named {name!r}")


def several_line(path: str, samples: list[dict]) -> str:
    """A screenshot of a file holding several samples or sessions, given none: the one line naming them and the flag,
    as the format's own error names it (an Aider history's runs: --session N, as the command line says)."""
    from foldscope.core.formats import detect_format
    from foldscope.core.formats.registry import sample_flag, sessions_word
    from foldscope.core.model.session import ReadError

    try:
        name = detect_format(Path(path))
    except ReadError:
        name = ""
    names = ", ".join(str(s["name"]) for s in samples)
    what = "samples" if any(s.get("epoch") is not None for s in samples) else sessions_word(name)  # an Inspect AI log's have epochs
    flag = sample_flag(name)
    return f"{path}: holds {len(samples)} {what} ({names}): choose one with {flag} {'N' if flag == '--session' else 'ID'}"


def settle(app) -> None:
    """Let the panels finish what they count off the GUI thread (a tab counts when shown), then paint."""
    from foldscope.app.worker import pool

    app.processEvents()
    for _ in range(600):  # at most a minute: a screenshot never hangs
        if not pool().activeThreadCount():
            app.processEvents()  # deliver the results; a result may start the next task
            if not pool().activeThreadCount():
                break
        pool().waitForDone(100)
        app.processEvents()
    for _ in range(5):  # a result's text re-wraps labels: each layout pass may ask for one more
        app.sendPostedEvents()
        app.processEvents()
