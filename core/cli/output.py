"""What the CLI writes to a terminal: session text with its control characters made visible (unless --raw)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

from foldscope.core.cli.terminal_text import terminal_safe  # the commands import it from here too

# What json.dumps(ensure_ascii=False) leaves raw though a terminal acts on it: DEL, the C1 controls and the
# bidirectional overrides (C0 controls JSON escapes itself). They can only stand inside a JSON string, where
# their \u escape means the same character, so the document parses to the same value.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")  # the last: half a pair, UTF-8 has none


def json_safe(document: str) -> str:
    """A JSON text with every character a terminal would act on written as its \\u escape (U+009B as \\u009b)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


class Parser(argparse.ArgumentParser):
    """An argument parser whose refusal is one line, as every other error is (`foldscope requests: the following
    arguments are required: FILE (foldscope requests --help)`), not the usage block and then the reason."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {terminal_safe(message)} ({self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def columns_help(intro: str, columns: tuple[tuple[str, str], ...]) -> dict:
    """The keyword arguments that give a command's --help its table's columns, one a paragraph under its name (the
    same words docs/cli.md gives): pass them to add_parser."""
    import textwrap

    width = min(max(len(name) for name, _ in columns), 22) + 2
    lines = textwrap.wrap(intro, 100) + ["", "columns:"]
    for name, what in columns:
        if len(name) > width - 2:  # a long name on a line of its own, its words under it
            lines.append(f"  {name}")
            lines += textwrap.wrap(what, 100, initial_indent=" " * (width + 2), subsequent_indent=" " * (width + 2))
        else:
            lines += textwrap.wrap(what, 100, initial_indent=f"  {name:<{width}}", subsequent_indent=" " * (width + 2))
    return {"description": "\n".join(lines), "formatter_class": argparse.RawDescriptionHelpFormatter}
