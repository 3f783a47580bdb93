"""`foldscope inspect` started early: the tokenizer's helper forks before the rest of the command is imported, when the
file is large enough to want an encoder (a small one is counted without one: core.request.tokens.expect)."""

from __future__ import annotations

import os


def main(argv: list[str]) -> int:
    """Run `inspect` with the tokenizer built meanwhile on the other core (core.request.counting.helper.start_helper)
    when the file is large; run_inspect finds the helper running and stops it when done, and this stops it when the
    command stopped before run_inspect did (a usage error)."""
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import helper

    if any(not tokens.small_input(size) for size in _file_sizes(argv)):
        helper.start_helper()
    try:
        from foldscope.core.cli import main as cli

        return cli.main(argv)
    finally:
        helper.stop_helper()


def _file_sizes(argv: list[str]) -> list[int]:
    """The sizes of the existing files argv names, a library's (--db's) aside: the command's parser is not built yet."""
    sizes = []
    for before, word in zip(["", *argv], argv):
        if before == "--db" or word.startswith("-"):
            continue
        try:
            if os.path.isfile(word):
                sizes.append(os.path.getsize(word))
        except (OSError, ValueError):
            continue
    return sizes
