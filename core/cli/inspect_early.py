"""`foldscope inspect` started early: the tokenizer's helper forks before the rest of the command is imported."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    """Run `inspect` with the tokenizer built meanwhile on the other core (core.request.counting.helper.start_helper);
    run_inspect finds the helper running and stops it when done, and this stops it when the command stopped
    before run_inspect did (a usage error)."""
    from foldscope.core.request.counting import helper

    helper.start_helper()
    try:
        from foldscope.core.cli import main as cli

        return cli.main(argv)
    finally:
        helper.stop_helper()
