"""Writes docs/cli.md's section on the policy flags from the one table of policy keys (core.model.policy.POLICY_KEYS).

Each key's row (its flag, its editor label, what it sets, its default) and which commands take its flag are read from
the table and from the commands' own parsers, so the page says what `--help` says:

    .venv/bin/python tools/policy_docs.py           # rewrite the section in docs/cli.md
    .venv/bin/python tools/policy_docs.py --check   # exit 1 when the page differs from what would be written

tests/app/test_policy_keys.py holds the page to it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from foldscope.app.gui import build_parser as gui_parser
from foldscope.core.cli.main import build_parser
from foldscope.core.cli.options import OTHER_FLAGS, flag_help
from foldscope.core.model.policy import POLICY_KEYS, PolicyKey

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
BEGIN = "<!-- written by tools/policy_docs.py from POLICY_KEYS in core/model/policy.py: edit the table there, then run it -->"
END = "<!-- end of what tools/policy_docs.py writes -->"


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by the name the page gives it, the GUI's last."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {**{f"`{name}`": parser for name, parser in commands.items()}, "the GUI": gui_parser()}


def takers(key: PolicyKey, every: dict[str, argparse.ArgumentParser]) -> list[str]:
    """The commands whose flag of this name is this key's (`tune`'s `--ceiling` takes a list to sweep, not the key)."""
    help = flag_help(key)
    return [name for name, parser in every.items() if any(key.flag in a.option_strings and a.help == help for a in parser._actions)]


def _said(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def section() -> str:
    """The section's text between its two markers."""
    every = parsers()
    groups: dict[tuple[str, ...], list[str]] = {}
    for key in POLICY_KEYS:
        groups.setdefault(tuple(takers(key, every)), []).append(f"`{key.flag}`")
    which = "; ".join(f"{_said(list(commands))} take {_said(flags)}" for commands, flags in groups.items())
    lines = [
        BEGIN,
        "",
        f"A flag per key of the policy (`core/model/policy.py`'s `POLICY_KEYS`; `core/cli/options.py` adds them): {which}. "
        "A YAML profile (`--profile`) names the same keys, and the GUI's policy editor shows a row per key with its label. "
        "A flag left out leaves its key as the session's launch record has it, else at its default; a flag beats the "
        "profile's key, and a profile the launch record's. A profile's key that is not a policy key is refused by name "
        "(an agent's profile, one that declares `api_tools`, may hold keys of its own).",
        "",
        "| flag | key | editor | what it sets | default |",
        "|---|---|---|---|---|",
    ]
    for key in POLICY_KEYS:
        flag = f"`{key.flag}` / `--no-{key.flag[2:]}`" if key.type == "boolean" else f"`{key.flag} {key.metavar}`"
        lines.append(f"| {_cell(flag)} | `{key.name}` | {key.label} | {_cell(key.help)} | {_cell(key.unset_said)} |")
    lines += ["", "Beside them, the commands that take the policy flags also take:", "", "| flag | what it does |", "|---|---|"]
    lines += [f"| {_cell(f'`{flag} {metavar}`')} | {_cell(help)} |" for flag, metavar, help in OTHER_FLAGS]
    return "\n".join([*lines, "", END])


def written(text: str) -> str:
    """The page with its section replaced by what the table says now."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + section() + text[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether docs/cli.md is as the table would write it")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    new = written(text)
    if args.check:
        if new != text:
            print(f"{DOC}: the policy flags' section differs from POLICY_KEYS: run tools/policy_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    print(f"{DOC}: the policy flags' section written from {len(POLICY_KEYS)} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
