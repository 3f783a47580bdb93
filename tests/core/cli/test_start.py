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


def test_inspect_requests_replay_cache_and_compactions_read_and_measure_with_the_collector_off_and_leave_it_as_they_found_it(
    monkeypatch, tmp_path, capsys
):
    # core.model.collector.spared: each object reading and measuring makes is walked at least twice by the young
    # generations' passes before it settles, about a fifth of inspecting a million tiny lines.
    import gc

    from foldscope.core.formats.demo import demo_path
    from foldscope.core.request import count

    seen: list[bool] = []
    counted = count.Counter.measure

    def watched(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return counted(self, *args, **kwargs)

    monkeypatch.setattr(count.Counter, "measure", watched)
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")
    for argv in (
        ["inspect", str(demo_path()), "--json"],
        ["requests", str(demo_path()), "--json"],
        ["replay", str(demo_path()), "--strategy", "adr", "--json"],
        ["cache", str(demo_path()), "--json"],
        ["compactions", str(demo_path()), "--json"],
    ):
        seen.clear()
        assert gc.isenabled()
        assert cli.main(argv) == 0
        assert seen and not any(seen), argv  # measured with the collector off
        assert gc.isenabled(), argv  # and on again after
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user"}\nnot json\n{"type": "user"}\n', encoding="utf-8")
    for command in ("inspect", "requests", "replay", "cache", "compactions"):
        assert cli.main([command, str(bad)]) == 2
        assert gc.isenabled(), command  # a command that fails leaves it on too
    gc.disable()
    try:
        cli.main(["inspect", str(demo_path()), "--json"])
        assert not gc.isenabled()  # a caller that keeps it off finds it off
    finally:
        gc.enable()
    capsys.readouterr()


def test_the_top_level_help_table_says_what_each_command_registers():
    # `foldscope --help` is built from SUMMARIES alone (no command's module imported): it must say what they say.
    whole = cli.build_parser()
    registered = {}
    for action in whole._actions:
        if isinstance(action, argparse._SubParsersAction):
            registered = {choice.dest: choice.help for choice in action._choices_actions}
    assert registered == cli.SUMMARIES
    assert set(cli.SUMMARIES) == set(cli.COMMANDS)


def test_the_top_level_help_lists_the_commands_in_the_readmes_order():
    """Polish 6: `foldscope --help` listed inspect, count, export, composition, ... in no order a reader could follow;
    the README's command block goes from a session to its requests, the fold, replay, the fleet and the tools."""
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Command line", 1)[1].split("A list option takes", 1)[0]
    named: list[str] = []
    for first in re.findall(r"^    foldscope ([a-z|-]+)", block, flags=re.MULTILINE):
        named += [name for name in first.split("|") if name not in named]
    assert named == list(cli.SUMMARIES)


def test_every_commands_file_argument_says_in_its_help_what_it_takes():
    """Polish 6: `inspect --help` and a dozen others listed a bare FILE: a newcomer could not tell that a Cline task folder
    is one, or that `count -` reads stdin. (report's FILE is report6's to word, this session.)"""
    whole = cli.build_parser()
    bare = []
    for action in whole._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                for argument in command._actions:
                    listed = isinstance(argument, argparse._SubParsersAction)  # `library ACTION` lists its actions
                    if not argument.option_strings and not listed and not argument.help:
                        bare.append(f"{name} {argument.metavar or argument.dest}")
    assert bare == ["report FILE"]


# What neither `--help` nor `count` of a word uses: the GUI, the price table, the library, the readers, the measure.
NOT_FOR_START = (
    "PySide6",
    "genai_prices",
    "sqlite_utils",
    "sqlite3",
    "tiktoken",
    "multiprocessing",
    "foldscope.core.formats",
    "foldscope.core.model.pricing",
    "foldscope.core.model.session",
    "foldscope.core.request.measure",
    "foldscope.core.store",
)


def _modules_after(argv: list[str], stdin: str = "", env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from foldscope.app.main import main\n"
        "code = main(sys.argv[1:])\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write('\\n' + json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *argv], input=stdin, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout, set(json.loads(done.stderr.splitlines()[-1]))


def test_help_and_count_of_a_word_import_none_of_what_they_do_not_use():
    out, modules = _modules_after(["--help"])
    assert "statusline" in out and "Open a session in the foldscope window" in out  # the commands and the GUI's options
    assert not {m for m in modules if m.split(".")[0] in NOT_FOR_START or m.startswith(NOT_FOR_START)}
    assert not {
        m
        for m in modules
        if m.startswith("foldscope.core.cli.")
        and m
        not in ("foldscope.core.cli.main", "foldscope.core.cli.output", "foldscope.core.cli.terminal_text", "foldscope.core.cli.options")
    }
    out, modules = _modules_after(["count", "-"], "hello world\n")
    from foldscope.core.request.tokens import count_text

    assert out.strip() == str(count_text("hello world\n"))
    assert not {m for m in modules if m.split(".")[0] in NOT_FOR_START or m.startswith(NOT_FOR_START)}
    assert "foldscope.core.cli.basic" not in modules and "argparse" in modules


def test_count_of_a_word_loads_neither_the_policy_nor_openssl_once_the_tables_were_checked(tmp_path):
    import os

    env = {**os.environ, "FOLDSCOPE_CACHE": str(tmp_path)}
    for _ in range(2):  # the first start builds the table; the next maps it, checks both hashes and stamps them
        _, first = _modules_after(["count", "-"], "hello world\n", env)
        assert "_hashlib" in first
    out, modules = _modules_after(["count", "-"], "hello world\n", env)
    from foldscope.core.request.tokens import count_text

    assert out.strip() == str(count_text("hello world\n"))
    # The policy (dataclasses, inspect: 14 ms) and OpenSSL (3 ms) were a fifth of a word's count.
    assert "foldscope.core.model.policy" not in modules and "dataclasses" not in modules
    assert "_hashlib" not in modules and "hashlib" not in modules
