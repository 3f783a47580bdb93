"""The FOLDSCOPE_* switches (core.model.environment): a value a switch does not take, a retired switch and a misspelled
name are each said in one line on stderr, the command goes on, and nothing is said for the values a switch takes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.formats import agent_setup
from foldscope.core.model import environment, folders

ROOT = Path(__file__).resolve().parents[3]

# Per switch: a value it does not take, and what the line says is used instead.
WRONG = {
    "FOLDSCOPE_COUNTING": ("chid", "using child (the default)"),
    "FOLDSCOPE_TOKENIZER": ("tiktokn", "using quicktok where installed, else tiktoken (the default)"),
    "FOLDSCOPE_STATUSLINE_IDLE": ("ten", "using 600 (the default)"),
    "FOLDSCOPE_CACHE": (__file__, "using the platform's folder instead"),
    "FOLDSCOPE_CONFIG": (__file__, "using the platform's folder instead"),
    "FOLDSCOPE_AGENT_HOME": (__file__, "using the platform's folder instead"),
    "FOLDSCOPE_DB": (str(ROOT), "nothing is used instead"),
    "FOLDSCOPE_PROFILE": ("/no/such/profile.yaml", "the status line says so instead of its figures"),
    "FOLDSCOPE_BIN": ("/no/such/foldscope", "pi's foldscope extension will show no line"),
}


def fine_values(tmp_path: Path) -> dict[str, list[str]]:
    """Values each switch takes (a folder not made yet is one: foldscope makes it)."""
    profile = tmp_path / "profile.yaml"
    profile.write_text("max_input_tokens: 100000\n")
    return {
        "FOLDSCOPE_COUNTING": ["local", "child", "LOCAL", " local "],
        "FOLDSCOPE_TOKENIZER": ["tiktoken", "quicktok", "TikToken"],
        "FOLDSCOPE_STATUSLINE_IDLE": ["0", "600", "2.5"],
        "FOLDSCOPE_CACHE": [str(tmp_path), str(tmp_path / "new")],
        "FOLDSCOPE_CONFIG": [str(tmp_path)],
        "FOLDSCOPE_AGENT_HOME": [str(tmp_path)],
        "FOLDSCOPE_DB": [str(tmp_path / "library.db")],
        "FOLDSCOPE_PROFILE": [str(profile)],
        "FOLDSCOPE_BIN": [sys.executable],
    }


def test_every_switch_has_a_wrong_value_tested():
    assert set(WRONG) == set(environment.SWITCHES)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_value_a_switch_does_not_take_is_one_line_naming_the_switch_the_value_and_what_is_used(name):
    value, instead = WRONG[name]
    lines = environment.problems({name: value})
    assert len(lines) == 1
    assert lines[0].startswith(f"foldscope: {name}={value!r} ")
    assert instead in lines[0]


def test_the_values_a_switch_takes_say_nothing(tmp_path):
    for name, values in fine_values(tmp_path).items():
        for value in values:
            assert environment.problems({name: value}) == [], (name, value)
    assert environment.problems({name: "" for name in environment.SWITCHES}) == []  # empty is unset, as each reader has it


def test_the_retired_no_helper_switch_is_said_to_be_ignored():
    assert environment.problems({"FOLDSCOPE_NO_HELPER": "1"}) == [
        "foldscope: FOLDSCOPE_NO_HELPER is retired and ignored (FOLDSCOPE_COUNTING=local does what it did)"
    ]


def test_a_misspelled_switch_is_named_with_the_switch_it_is_close_to():
    lines = environment.problems({"FOLDSCOPE_TOKENISER": "tiktoken", "FOLDSCOPE_STATUSLINE_IDEL": "0"})
    assert lines == [
        "foldscope: FOLDSCOPE_STATUSLINE_IDEL is not a switch foldscope reads (ignored): did you mean FOLDSCOPE_STATUSLINE_IDLE?",
        "foldscope: FOLDSCOPE_TOKENISER is not a switch foldscope reads (ignored): did you mean FOLDSCOPE_TOKENIZER?",
    ]


def test_names_read_elsewhere_and_other_programs_names_say_nothing():
    quiet = {name: "1" for name in environment.ELSEWHERE} | {"FOLDSCOPE_MY_OWN_THING": "x", "PATH": "/bin"}
    assert environment.problems(quiet) == []


def test_a_folder_switch_naming_a_file_falls_back_to_the_platforms_folder(monkeypatch):
    for name in ("FOLDSCOPE_CACHE", "FOLDSCOPE_CONFIG", "FOLDSCOPE_AGENT_HOME"):
        monkeypatch.delenv(name, raising=False)
    default_cache, default_config = folders.cache_folder(), folders.config_folder()
    for name in ("FOLDSCOPE_CACHE", "FOLDSCOPE_CONFIG", "FOLDSCOPE_AGENT_HOME"):
        monkeypatch.setenv(name, __file__)
    assert folders.cache_folder() == default_cache
    assert folders.config_folder() == default_config
    assert agent_setup.user_home() == Path.home()


def test_every_switch_read_in_core_and_app_is_listed_and_documented():
    read = set()
    for folder in ("core", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"[\"'](FOLDSCOPE_[A-Z_]+)[\"']", path.read_text(encoding="utf-8")))
    assert read - set(environment.SWITCHES) - set(environment.ELSEWHERE) - set(environment.RETIRED) == set()
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    for name in (*environment.SWITCHES, *environment.RETIRED):
        assert f"`{name}`" in page, name


def run(argv: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "foldscope", *argv], input=stdin, capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )


def test_the_command_goes_on_after_saying_each_wrong_switch_once(tmp_path):
    wrong = {name: value for name, (value, _) in WRONG.items() if name != "FOLDSCOPE_DB"}  # `count` opens no library
    wrong |= {"FOLDSCOPE_NO_HELPER": "1", "FOLDSCOPE_TOKENISER": "tiktoken"}
    done = run(["count", "-"], wrong | {"XDG_CACHE_HOME": str(tmp_path / "cache")}, "hello world")  # the fallback's cache: here
    assert done.returncode == 0
    assert done.stdout.strip() == "2"
    lines = done.stderr.splitlines()
    assert sorted(lines) == sorted(environment.problems(wrong))
    assert len(lines) == len(wrong)
    assert "Traceback" not in done.stderr


def test_a_command_run_with_the_values_switches_take_prints_nothing_on_stderr(tmp_path):
    fine = {name: values[0] for name, values in fine_values(tmp_path).items()}
    done = run(["count", "-"], fine, "hello world")
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "2", "")


def test_with_no_stderr_the_line_is_not_written_into_the_commands_output():
    # Python started with fd 2 closed has sys.stderr None, and print(file=None) writes to stdout
    done = subprocess.run(
        f"{shlex.quote(sys.executable)} -m foldscope count - 2>&-",
        shell=True,
        input="hello world",
        capture_output=False,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "FOLDSCOPE_COUNTING": "chid"},
        timeout=120,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "2")
