"""The `foldscope` entry point: a subcommand runs headless in core; otherwise the GUI starts."""

from __future__ import annotations

import os
import sys

from foldscope.core.model import collector, environment

_headless = False  # set when main ran a subcommand (no Qt): run() then ends the process without tearing it down


def run() -> int:
    """The `foldscope` console script: main(), then a subcommand's process ends as core.cli.main.exit_now ends it (the
    threads joined, the exit handlers run, the output flushed, nothing freed one object at a time: 40 ms of an
    `inspect` of a 0.7 MB file, docs/performance.md). The GUI exits as before, so that Qt tears its objects down."""
    code = main()
    if _headless:
        from foldscope.core.cli.main import exit_now

        exit_now(code)
    return code


def main(argv: list[str] | None = None) -> int:
    _closed_streams_to_devnull()
    environment.say_problems()  # a switch set to a value it does not take is said once, here, and the command goes on
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return 130  # Ctrl-C before a command's own handler is in place (its imports): no traceback, as cli.main says it
    except BrokenPipeError:
        # The reader stopped early (`foldscope --help | head -1`, argparse's own help or usage included):
        # nothing is wrong. Standard output goes nowhere from here so the exit's flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _closed_streams_to_devnull() -> None:
    """Started with standard output or error closed (`>&-`, `2>&-`), Python has sys.stdout or sys.stderr None: what
    would go there goes to the null device, as print's would, instead of a traceback at the first flush; and the
    lowest free descriptor, the closed one, is the null device's rather than the next file this process opens (a library)."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # the process's own, as sys.stdout is
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def _main(argv: list[str]) -> int:
    global _headless
    if argv[:1] == ["statusline"]:
        _headless = True
        # Claude Code runs it after every assistant message: only its own module, not the whole CLI's parser.
        from foldscope.core.cli import statusline

        return statusline.main(argv[1:])
    if argv[:1] == ["inspect"]:
        _headless = True
        # The tokenizer's build starts on the other core before the rest of the command is imported.
        from foldscope.core.cli import inspect_early

        return inspect_early.main(argv)
    from foldscope.core.cli import main as cli

    if argv and argv[0] in cli.COMMANDS:
        _headless = True
        return cli.main(argv)
    if argv and argv[0] in ("-h", "--help") and len(argv) == 1:
        _headless = True
        from foldscope.app.gui import build_parser as gui_parser  # argparse only: no Qt for --help

        cli.top_parser().print_help()  # each command's help from its table: no command's module imported
        print("\nWith no COMMAND, foldscope opens FILE in the GUI, with these options:\n")
        print(gui_parser().format_help())
        return 0
    from foldscope.app.gui import run_gui  # Qt is imported only when the GUI is wanted

    collector.tune()  # before a session is read (a subcommand's cli.main tunes it itself)
    return run_gui(argv)


if __name__ == "__main__":
    sys.exit(run())
