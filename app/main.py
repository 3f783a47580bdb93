"""The `foldscope` entry point: a subcommand runs headless in core; otherwise the GUI starts."""

from __future__ import annotations

import os
import sys

from foldscope.core.model import collector, environment


def main(argv: list[str] | None = None) -> int:
    environment.say_problems()  # a switch set to a value it does not take is said once, here, and the command goes on
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # The reader stopped early (`foldscope --help | head -1`, argparse's own help or usage included):
        # nothing is wrong. Standard output goes nowhere from here so the exit's flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _main(argv: list[str]) -> int:
    if argv[:1] == ["statusline"]:
        # Claude Code runs it after every assistant message: only its own module, not the whole CLI's parser.
        from foldscope.core.cli import statusline

        return statusline.main(argv[1:])
    if argv[:1] == ["inspect"]:
        # The tokenizer's build starts on the other core before the rest of the command is imported.
        from foldscope.core.cli import inspect_early

        return inspect_early.main(argv)
    from foldscope.core.cli import main as cli

    if argv and argv[0] in cli.COMMANDS:
        return cli.main(argv)
    if argv and argv[0] in ("-h", "--help") and len(argv) == 1:
        from foldscope.app.gui import build_parser as gui_parser  # argparse only: no Qt for --help

        cli.top_parser().print_help()  # each command's help from its table: no command's module imported
        print("\nWith no COMMAND, foldscope opens FILE in the GUI, with these options:\n")
        print(gui_parser().format_help())
        return 0
    from foldscope.app.gui import run_gui  # Qt is imported only when the GUI is wanted

    collector.tune()  # before a session is read (a subcommand's cli.main tunes it itself)
    return run_gui(argv)


if __name__ == "__main__":
    sys.exit(main())
