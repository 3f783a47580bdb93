"""Files a user hands foldscope beside the session (a profile, a policies file, a prices file) nested thousands deep:
one line naming the file, never a RecursionError's traceback; and a help read by `head` ends quietly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import demo_path

DEPTH = 3000


def _deep_yaml(depth: int) -> str:
    return "ceiling: " + "[" * depth + "]" * depth + "\n"


def test_a_profile_nested_thousands_deep_is_refused_in_one_line(tmp_path, capsys):
    profile = tmp_path / "deep.yaml"
    profile.write_text(_deep_yaml(DEPTH))
    assert main(["requests", str(demo_path()), "--profile", str(profile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err and str(profile) in err


def test_a_policies_file_nested_thousands_deep_is_refused_in_one_line(tmp_path, capsys):
    policies = tmp_path / "policies.yaml"
    policies.write_text("a:\n  " + _deep_yaml(DEPTH))
    assert main(["tune", str(demo_path()), "--policies", str(policies)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err


def test_a_prices_file_nested_far_too_deep_is_refused_in_one_line(tmp_path, capsys):
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert main(["inspect", str(demo_path()), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err


@pytest.mark.parametrize("argv", [["--help"], ["requests", "--help"]])
def test_help_read_by_a_reader_that_stopped_ends_without_a_traceback(argv):
    # The reader has gone before foldscope writes a byte (as `| head -1` has gone after the first line of a long
    # output): every write meets a closed pipe.
    child = subprocess.Popen([sys.executable, "-m", "foldscope", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    _, err = child.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert child.returncode in (0, 1)
