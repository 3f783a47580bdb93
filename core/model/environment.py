"""The FOLDSCOPE_* switches: each one's values, and one line on stderr for a value, a name or a retired switch foldscope does not take."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

PREFIX = "FOLDSCOPE_"
# A switch's check takes its set, non-empty value: None when the value is taken, else the rest of the line ("is ...: what
# is used instead"). Plain tuples, not dataclasses: the status line imports this at every run, and nothing else it
# imports loads dataclasses or typing.
Check = Callable[[str], "str | None"]


def _one_of(values: tuple[str, ...], instead: str, strip: bool) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        said = value.strip() if strip else value
        return None if said.lower() in values else f"is not one of {', '.join(values)}: {instead}"

    return check


def _seconds(value: str) -> str | None:
    # core.cli.statusline_reader._idle: float(value), at least 0; a value float() refuses is the default
    try:
        seconds = float(value)
    except ValueError:
        return "is not a number of seconds: using 600 (the default)"
    return None if seconds >= 0 else "is below 0: using 0 (no warm reader is kept)"


def _folder(value: str) -> str | None:
    return "is a file, not a folder: using the platform's folder instead" if os.path.exists(value) and not os.path.isdir(value) else None


def _library(value: str) -> str | None:
    return (
        "is a folder, not a file: nothing is used instead (commands that open the library stop and say so)"
        if os.path.isdir(value)
        else None
    )


def _profile(value: str) -> str | None:
    return None if os.path.isfile(value) else "names no file: the status line says so instead of its figures (unless --profile is given)"


def _command(value: str) -> str | None:
    import shutil

    return None if shutil.which(value) else "names no command to run: pi's foldscope extension will show no line"


# Each switch: what it sets (docs/environment.md says the same) and its check.
SWITCHES: dict[str, tuple[str, Check]] = {
    "FOLDSCOPE_COUNTING": (
        "`local`: no child process counts, replays or stores for this one; `child` (the default): one may",
        _one_of(("local", "child"), "using child (the default)", True),
    ),
    "FOLDSCOPE_TOKENIZER": (
        "`tiktoken`: count with tiktoken even where quicktok is installed; `quicktok` (the default): quicktok where installed",
        _one_of(("quicktok", "tiktoken"), "using quicktok where installed, else tiktoken (the default)", False),
    ),
    "FOLDSCOPE_CACHE": ("the folder of what can be rebuilt (parsed vocabularies, genai-prices' prices, the status line's state)", _folder),
    "FOLDSCOPE_CONFIG": ("the folder of the window's settings", _folder),
    "FOLDSCOPE_DB": ("the library's file", _library),
    "FOLDSCOPE_AGENT_HOME": ("the home whose agents' settings are read (CLAUDE.md, MCP servers), instead of ~", _folder),
    "FOLDSCOPE_PROFILE": ("the policy profile (YAML) the status line's line and ceiling come from", _profile),
    "FOLDSCOPE_STATUSLINE_IDLE": ("seconds a warm status line reader waits for the next run (default 600; 0: none is kept)", _seconds),
    "FOLDSCOPE_BIN": ("the foldscope command pi's extension runs (default: `foldscope` on pi's PATH)", _command),
}
# Taken, and said to be ignored: what each did is another switch's now.
RETIRED = {"FOLDSCOPE_NO_HELPER": "FOLDSCOPE_COUNTING=local does what it did"}
# Read by the pi extension itself, the test suite and the tools, never by the command: known, so never a misspelling.
ELSEWHERE = ("FOLDSCOPE_PI_TIMEOUT_MS", "FOLDSCOPE_BLOCK_QT", "FOLDSCOPE_HYPOTHESIS", "FOLDSCOPE_KILL_RUNS", "FOLDSCOPE_TEST_PI")
KNOWN = (*SWITCHES, *ELSEWHERE)


def problems(environ: Mapping[str, str]) -> list[str]:
    """One line for each switch set to a value it does not take, each retired switch and each name close to a known one."""
    lines = []
    for name, value in sorted(environ.items()):
        if not name.startswith(PREFIX) or name in ELSEWHERE:
            continue
        if name in SWITCHES:
            wrong = SWITCHES[name][1](value) if value else None
            if wrong:
                lines.append(f"foldscope: {name}={value!r} {wrong}")
        elif name in RETIRED:
            lines.append(f"foldscope: {name} is retired and ignored ({RETIRED[name]})")
        else:
            import difflib  # only for a name foldscope does not know

            # The shared prefix would make every name look close: the rest of the name is compared.
            close = difflib.get_close_matches(name[len(PREFIX) :], [k[len(PREFIX) :] for k in KNOWN], n=1, cutoff=0.75)
            if close:
                lines.append(f"foldscope: {name} is not a switch foldscope reads (ignored): did you mean {PREFIX}{close[0]}?")
    return lines


def say_problems(environ: Mapping[str, str] | None = None) -> None:
    """Print problems() on stderr, each once: the command goes on as the lines say."""
    if sys.stderr is None:  # started with no stderr: print(file=None) would write to stdout, into a command's output
        return
    for line in problems(os.environ if environ is None else environ):
        try:  # a closed or missing stderr (a GUI launched without one) must not stop the command
            print(line.encode("ascii", "backslashreplace").decode("ascii"), file=sys.stderr)
        except (AttributeError, OSError, ValueError):
            return


def folder(name: str) -> Path | None:
    """The folder a folder switch names, or None when it is unset, empty or names a file (its check says so)."""
    value = os.environ.get(name)
    return Path(value) if value and SWITCHES[name][1](value) is None else None
