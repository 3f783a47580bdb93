"""The console entry point ends the process without tearing it down (core.cli.main.exit_now), owing the world nothing."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from foldscope.core.cli.main import main

BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output buffered, as a user's shell runs it
# A program that leaves the exit something to do: a thread still running, an exit handler, output not yet flushed.
LEFT_OVER = """
import atexit, sys, threading, time
from foldscope.core.cli.main import exit_now
def late():
    time.sleep(0.2)
    sys.stdout.write("thread done\\n")
threading.Thread(target=late).start()
atexit.register(lambda: sys.stdout.write("handler ran\\n"))
sys.stdout.write("printed")
sys.stdout.write("\\n")
{end}(3)
"""


@pytest.mark.parametrize("end", ["exit_now", "sys.exit"])
def test_exit_now_joins_threads_runs_exit_handlers_and_flushes_as_sys_exit_does(end):
    done = subprocess.run([sys.executable, "-c", LEFT_OVER.format(end=end)], capture_output=True, text=True, env=BUFFERED, timeout=60)
    assert (done.returncode, done.stdout) == (3, "printed\nthread done\nhandler ran\n")


@pytest.mark.parametrize("end", ["exit_now", "sys.exit"])
def test_output_that_cannot_be_written_exits_120_as_the_interpreter_does(end):
    # The text waits in stdout's buffer while the descriptor under it is closed: the exit's flush fails.
    program = f"import os, sys\nfrom foldscope.core.cli.main import exit_now\nsys.stdout.write('x')\nos.close(1)\n{end}(0)\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, env=BUFFERED, timeout=60)
    assert done.returncode == 120


def test_the_entry_point_prints_what_main_prints_and_exits_with_its_code(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "message": {"role": "user", "content": "hello"}})
        + "\n",
        encoding="utf-8",
    )
    assert main(["inspect", "--json", str(path)]) == 0
    expected = json.loads(capsys.readouterr().out)
    for module in ("foldscope.core.cli.main", "foldscope.core.cli"):
        done = subprocess.run([sys.executable, "-m", module, "inspect", "--json", str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and json.loads(done.stdout) == expected
        bad = subprocess.run(
            [sys.executable, "-m", module, "inspect", str(tmp_path / "missing.jsonl")], capture_output=True, text=True, timeout=120
        )
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "missing.jsonl" in bad.stderr


# An object that says so when the interpreter frees it: at a torn-down exit, its module's globals are cleared.
TEAR_DOWN_WITNESS = """
import builtins, sys
class Witness:
    def __del__(self):
        sys.stderr.write("torn down\\n")
builtins.witness = Witness()
sys.argv = ["foldscope", *sys.argv[1:]]
from foldscope.app.main import run
sys.exit(run())
"""


def test_the_console_script_ends_a_subcommand_without_tearing_the_process_down(tmp_path):
    import tomllib
    from pathlib import Path

    scripts = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["foldscope"] == "foldscope.app.main:run"
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "message": {"role": "user", "content": "hi"}})
        + "\n",
        encoding="utf-8",
    )
    for argv in (["inspect", "--json", str(path)], ["count", str(path)]):
        done = subprocess.run([sys.executable, "-c", TEAR_DOWN_WITNESS, *argv], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() and "torn down" not in done.stderr, (argv, done.stderr)
    # A usage error still exits 2 with its one line, the same way.
    done = subprocess.run([sys.executable, "-c", TEAR_DOWN_WITNESS, "inspect", str(tmp_path / "no.jsonl")], capture_output=True, text=True)
    assert done.returncode == 2 and "no.jsonl" in done.stderr and "torn down" not in done.stderr
    # The same program ending with sys.exit(main()) is torn down: the witness can tell the two apart.
    torn = TEAR_DOWN_WITNESS.replace("import run\nsys.exit(run())", "import main\nsys.exit(main())")
    done = subprocess.run([sys.executable, "-c", torn, "count", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "torn down" in done.stderr


@pytest.mark.parametrize("closed", ["1", "2"])
def test_a_command_started_with_its_output_or_error_closed_ends_without_a_traceback(tmp_path, closed):
    # Python started with a descriptor closed has that stream None: the command's output (or its one line) goes nowhere.
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "message": {"role": "user", "content": "hi"}})
        + "\n",
        encoding="utf-8",
    )
    err = tmp_path / "err.txt"
    for argv in (["requests", str(path)], ["export", str(path), "-o", "-"], ["statusline"], ["inspect", str(tmp_path / "no.jsonl")]):
        program = f"import sys; sys.argv = ['foldscope', *{argv!r}]; from foldscope.app.main import run; sys.exit(run())"
        redirect = ">&-" if closed == "1" else f"2>&- >{shlex.quote(str(err))}"
        command = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)} {redirect} </dev/null"
        done = subprocess.run(command, shell=True, stderr=subprocess.PIPE if closed == "1" else None, text=True, timeout=120)
        said = done.stderr if closed == "1" else err.read_text(encoding="utf-8")
        assert "Traceback" not in said and done.returncode == (2 if argv[0] == "inspect" else 0), (argv, said)


def test_ctrl_c_while_a_command_starts_exits_130_without_a_traceback():
    # A KeyboardInterrupt before the command's own handler is in place (while inspect's modules are imported).
    program = (
        "import sys\n"
        "from foldscope.core.cli import inspect_early\n"
        "def interrupted(argv):\n"
        "    raise KeyboardInterrupt\n"
        "inspect_early.main = interrupted\n"
        "sys.argv = ['foldscope', 'inspect', 'x.jsonl']\n"
        "from foldscope.app.main import run\n"
        "sys.exit(run())\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "")
