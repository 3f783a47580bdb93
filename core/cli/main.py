"""The headless command line: `foldscope SUBCOMMAND ...`, JSON with --json, one clear line on bad input."""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from foldscope.core.cli.output import Parser, json_safe, terminal_safe
from foldscope.core.model import collector
from foldscope.core.model.errors import LibraryError, ReadError

# Each module here defines `register(subparsers)`, adding its subcommand(s) with
# `set_defaults(run=callable)`. A callable takes the parsed args and returns a result
# (printed as JSON with --json, else by the command's own `format` if given) or an exit code.
# Both tables keep one entry a line in alphabetical order, so that commands added side by side merge cleanly.
COMMAND_MODULES = [
    "foldscope.core.cli.basic",  # inspect, export
    "foldscope.core.cli.composition",  # composition
    "foldscope.core.cli.count",  # count
    "foldscope.core.cli.fold",  # fold, read-result, restore, clip, evict
    "foldscope.core.cli.forensics",  # cache, compactions
    "foldscope.core.cli.library",  # library list|remove|prune
    "foldscope.core.cli.replay",  # replay
    "foldscope.core.cli.report",  # report
    "foldscope.core.cli.requests",  # requests
    "foldscope.core.cli.sessions",  # sessions
    "foldscope.core.cli.statusline",  # statusline, follow
    "foldscope.core.cli.tune",  # tune
    "foldscope.core.cli.usage",  # usage
    "foldscope.core.cli.view",  # view
]
# Which module registers each subcommand, so that running one imports and builds only its own
# module's parsers (start-up time is a target: replay alone pulls in multiprocessing). A name
# missing here still runs, through the whole parser; tests/core/cli/test_start.py keeps it complete.
COMMANDS = {
    "cache": "foldscope.core.cli.forensics",
    "clip": "foldscope.core.cli.fold",
    "compactions": "foldscope.core.cli.forensics",
    "composition": "foldscope.core.cli.composition",
    "count": "foldscope.core.cli.count",
    "evict": "foldscope.core.cli.fold",
    "export": "foldscope.core.cli.basic",
    "fold": "foldscope.core.cli.fold",
    "follow": "foldscope.core.cli.statusline",
    "inspect": "foldscope.core.cli.basic",
    "library": "foldscope.core.cli.library",
    "read-result": "foldscope.core.cli.fold",
    "replay": "foldscope.core.cli.replay",
    "report": "foldscope.core.cli.report",
    "requests": "foldscope.core.cli.requests",
    "restore": "foldscope.core.cli.fold",
    "sessions": "foldscope.core.cli.sessions",
    "statusline": "foldscope.core.cli.statusline",
    "tune": "foldscope.core.cli.tune",
    "usage": "foldscope.core.cli.usage",
    "view": "foldscope.core.cli.view",
}
# Each subcommand's one-line help in the order `foldscope --help` lists them (the README's: a session, its requests
# and view, the fold and the actions, then replay, the forensics, the fleet, the agents' lines and the tools): the
# top-level help is built from this table alone, without importing any command's module.
# tests/core/cli/test_start.py holds it to the registered parsers' help, word for word.
SUMMARIES = {
    "inspect": "summarise a session: kinds, sizes, requests, folds",
    "requests": "a row per request: predicted and reported input, estimate, counted, scale, prefix share",
    "view": "list the active view (or --record, the full record): each message's index, kind, in or out and why, tokens and a preview",
    "fold": "fold a session's view under a ceiling: the passes, their records, the view after",
    "read-result": "characters of an original tool result, by its index in the full record",
    "restore": "bring messages back into the view by index, writing -o OUT",
    "clip": "clip a tool result by hand to KEEP characters per body, writing -o OUT",
    "evict": "take messages out of the view by index, writing -o OUT",
    "replay": "replay a session (or every session in a folder) under strategies",
    "composition": "what a request is made of: categories adding up to its count, the largest things in it, content carried twice",
    "cache": "why each cache write happened, and its price (a session, or every session in a folder)",
    "compactions": (
        "what each compaction or fold cost, dropped and lost, and whether it paid back (a session, or every session in a folder)"
    ),
    "tune": "sweep policies over many sessions and name the cheapest safe one",
    "report": "write the session as one self-contained HTML file (offline, no loads)",
    "sessions": (
        "the agent sessions on this machine (Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode, Cline, Roo Code, Kilo Code, "
        "GitHub Copilot CLI, Aider), newest first"
    ),
    "usage": "reported usage and cost over many sessions, by day, project, model ...",
    "statusline": "a status line for Claude Code and pi's footer (JSON on stdin): the next request's size, the cache, the cost",
    "follow": "follow a growing session file: --line prints the status line each time it grows",
    "export": "write a session as a native (lionagi) file",
    "count": "o200k_base tokens of a text file, or stdin with -",
    "library": "list the library's sessions, remove some, prune the rest",
}


class UsageError(Exception):
    """A bad flag value or a missing argument: one line, exit 2."""


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = Parser(prog="foldscope", description="Inspect the context window of LLM agent sessions.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(subparsers)
    for command in subparsers.choices.values():
        _add_raw(command)
    return parser


def _add_raw(parser: argparse.ArgumentParser) -> None:
    """--raw on every command (and action): session text printed as it is, control characters included."""
    if not any("--raw" in action.option_strings for action in parser._actions):
        parser.add_argument(
            "--raw", action="store_true", help="print session text as it is (by default control characters are shown escaped)"
        )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_raw(sub)


def top_parser() -> argparse.ArgumentParser:
    """The parser of `foldscope` with no known command (its help, a usage error): each command named with its help
    (SUMMARIES), none of their modules imported."""
    parser = Parser(prog="foldscope", description="Inspect the context window of LLM agent sessions.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in SUMMARIES.items():
        subparsers.add_parser(name, help=summary)
    return parser


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for argv: only the first word's module when it names a known command, else the top one."""
    module = COMMANDS.get(argv[0]) if argv else None
    return build_parser([module]) if module else top_parser()


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command (and action: `library list`) args name under `parser`; the top one when none."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return _command_parser(action.choices[getattr(args, action.dest)], args)
    return parser


def _folder_hint(command: argparse.ArgumentParser, extra: list[str]) -> str:
    """Where a command reads a folder through --in (`sessions`), a folder given bare says so: the way to name it."""
    if "--in" not in command._option_string_actions:
        return ""
    folders = [e for e in extra if not e.startswith("-") and os.path.isdir(e)]
    return f" (a folder is named with --in: --in {folders[0]})" if folders else ""


def command_names() -> set[str]:
    return set(COMMANDS)


def emit(result: Any, as_json: bool, formatter: Callable[[Any], str] | None = None, raw: bool = False, stream: Any = None) -> None:
    """Print a command's result: JSON (which escapes control characters itself), or its text through
    terminal_safe unless raw."""
    if as_json or formatter is None:
        import json  # here: `count` and `--help` print no JSON unless asked

        print(json_safe(json.dumps(result, indent=2, ensure_ascii=False, default=str)), file=stream)
    else:
        text = formatter(result)
        print(text if raw else terminal_safe(text), file=stream)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    collector.tune()
    parser = parser_for(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:  # a flag the command does not take: its own --help lists those it does, not foldscope's
        command = _command_parser(parser, args)
        command.error(f"unrecognized arguments: {' '.join(extra)}{_folder_hint(command, extra)}")
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        if getattr(args, "prices", None):
            from foldscope.core.model import pricing

            pricing.use_prices_file(args.prices)  # the user's overrides for this run (core.model.pricing)
        result = args.run(args)
    except (ReadError, LibraryError, UsageError) as exc:
        # One line: a problem can quote the file (a message id), so it is made safe for the terminal too.
        print(f"foldscope: {terminal_safe(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    if isinstance(result, int):
        return result
    if result is not None:
        try:
            # `-o -` put the written file on standard output: what the command says goes to standard error
            stream = sys.stderr if getattr(args, "output", None) == "-" else sys.stdout
            emit(result, getattr(args, "json", False), getattr(args, "format", None), getattr(args, "raw", False), stream)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader (e.g. `| head`) stopped early: nothing is wrong, and no traceback either.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    return 0


def exit_now(code: int) -> NoReturn:
    """End a command's process as `sys.exit(code)` would, without tearing down what it built: the console entry
    points call this after main() returns (never main() itself, which tests call in the same process).

    Freeing a big session and its counter one object at a time at exit costs CPU and nothing else (about 4 s after
    `inspect` of a million tiny lines, 7% of the command, docs/performance.md). Everything an exit owes the world
    is done first, in the order the interpreter does it: the threads left running are joined, the exit handlers
    run (the tokenizer helper stopped, a worker pool's children ended), and the output is flushed; a flush that
    fails exits 120, as the interpreter's own does. Where this Python lacks either hook, the ordinary exit."""
    shutdown = getattr(threading, "_shutdown", None)
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_handlers is None:
        sys.exit(code)
    shutdown()
    run_handlers()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None where Python started with the descriptor closed (`2>&-`)
                stream.flush()
    except (OSError, ValueError):
        code = 120
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
