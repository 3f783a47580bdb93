"""Start-up: a subcommand builds only its own module's parser, and the table naming them is complete."""

import argparse
import importlib

from foldscope.core.cli import main as cli


def _names(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).register(subparsers)
    return set(subparsers.choices)


def test_commands_table_names_every_subcommand_with_its_module():
    table = {name: module for module in cli.COMMAND_MODULES for name in _names(module)}
    assert table == cli.COMMANDS


def test_a_known_command_parses_as_with_the_whole_parser():
    argv = ["inspect", "some.jsonl", "--json", "--db", "x.db"]
    whole = vars(cli.build_parser().parse_args(argv))
    alone = vars(cli.parser_for(argv).parse_args(argv))
    assert whole == alone


def test_the_readme_lists_each_command_once():
    """New user 29: `library list|remove|prune` was listed twice with different options."""
    from pathlib import Path

    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    commands = [line.split()[1] for line in readme.splitlines() if line.startswith("    foldscope ") and len(line.split()) > 1]
    assert "library" in commands and len(commands) == len(set(commands)), commands


def test_a_command_runs_with_the_collector_tuned_for_many_long_lived_objects(capsys):
    # core.model.collector: with Python's default thresholds the collector spent a fifth of a 50k-message replay
    # walking the session's objects and finding no garbage.
    import gc

    from foldscope.core.model.collector import THRESHOLDS

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert cli.main([]) == 2  # no command: the help, and nothing run
        assert gc.get_threshold() == THRESHOLDS
    finally:
        gc.set_threshold(*before)
    capsys.readouterr()
