"""Every command that takes a session FILE takes --sample, and reads that sample of an Inspect AI log with several."""

from __future__ import annotations

import argparse
import json

import pytest

from foldscope.core.cli.main import build_parser, main
from tests.paths import CORPUS

SESSION_FILE = ("FILE", "FILE|DIR")  # the metavars of a session file; count's FILE|- is a text file
# follow watches an agent's transcript grow as it is written; an Inspect AI log is written whole, so no sample to follow
NOT_A_LOG = {"follow"}


def file_commands() -> dict[str, argparse.ArgumentParser]:
    """Each command (and action) whose positional argument is a session file."""
    found = {}
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, parser in action.choices.items():
                if name not in NOT_A_LOG and any(not a.option_strings and a.metavar in SESSION_FILE for a in parser._actions):
                    found[name] = parser
    return found


def test_every_command_taking_a_session_file_takes_sample():
    commands = file_commands()
    assert {"inspect", "requests", "report", "cache", "compactions", "composition", "view", "fold"} <= set(commands)
    missing = [name for name, parser in commands.items() if not any("--sample" in a.option_strings for a in parser._actions)]
    assert missing == []


@pytest.fixture
def log():
    found = [CORPUS / folder / "inspect" / "2025-05-12T20-28-13-04-00_popularity.json" for folder in ("staged", "dev")]
    path = next((p for p in found if p.exists()), found[0])
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


def arguments(command: str, tmp_path) -> list[str]:
    out = str(tmp_path / f"{command}.out")
    return {
        "report": ["-o", out + ".html"],
        "export": ["-o", out + ".json"],
        "fold": ["--ceiling", "100000"],
        "replay": ["--strategy", "recorded"],
        "evict": ["--index", "2", "-o", out + ".json"],
        "restore": ["--index", "0", "-o", out + ".json"],
        "clip": ["--index", "1", "--keep", "1", "-o", out],
        "read-result": ["--index", "1"],
    }.get(command, [])


@pytest.mark.parametrize("command", sorted(file_commands()))
def test_each_file_command_reads_the_sample_named_of_a_log_with_several(command, log, tmp_path, capsys):
    without = main([command, str(log), *arguments(command, tmp_path), "--json"]) if command != "inspect" else None
    capsys.readouterr()
    code = main([command, str(log), "--sample", "2:1", *arguments(command, tmp_path), "--json"])
    out, err = capsys.readouterr()
    if command in ("restore", "clip"):
        # the sample holds no result to clip and nothing out of the view to restore: the action says so,
        # having read the sample (never a refusal of --sample itself)
        assert code == 2 and "--sample" not in err and "sample" not in err.lower(), err
        return
    assert code == 0, err
    result = json.loads(out)
    assert "samples" not in result  # one session read, not the log's list of samples
    if without is not None:
        assert without == 2  # without --sample a log of several is refused, naming --sample


# The readers of files that hold several sessions, as the help names them.
HOLDS_SEVERAL = {"inspect": "Inspect AI log", "opencode": "OpenCode database", "aider": "Aider history"}


def test_every_commands_sample_help_names_each_format_that_holds_several_sessions():
    """New user 27: --sample's help named Inspect AI and OpenCode, not Aider, whose runs it chooses as well."""
    from foldscope.core.formats.registry import FORMATS

    assert {spec.name for spec in FORMATS if spec.samples is not None} == set(HOLDS_SEVERAL)
    for name, parser in file_commands().items():
        (sample,) = [a for a in parser._actions if "--sample" in a.option_strings]
        assert [f for f in HOLDS_SEVERAL.values() if f not in sample.help] == [], name


def test_a_sample_named_for_a_file_of_one_session_names_each_format_that_holds_several(tmp_path, capsys):
    """New user 27: the refusal named Inspect AI logs and OpenCode databases, not Aider histories."""
    from foldscope.core.formats.demo import demo_path

    assert main(["inspect", str(demo_path()), "--sample", "2"]) == 2
    err = capsys.readouterr().err
    assert [w for w in ("Inspect AI", "OpenCode database", "Aider history") if w not in err] == []
