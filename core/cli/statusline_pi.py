"""`foldscope statusline --install --agent pi`: the shipped pi extension (resources/pi/foldscope-status.js, which shows
the status line in pi's footer after each turn) named in pi's settings.json "extensions" list; printed, written only
with --write."""

from __future__ import annotations

import json
import os
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from foldscope.core.cli.statusline_install import write_settings

EXTENSION = "foldscope-status.js"


def extension_path() -> Path:
    """The extension as installed with the package (package data under foldscope.resources)."""
    return Path(str(resources.files("foldscope.resources").joinpath("pi", EXTENSION)))


def settings_path() -> Path:
    """pi's own settings file: PI_CODING_AGENT_DIR's settings.json when set (pi's config.ts getAgentDir), else
    ~/.pi/agent/settings.json."""
    folder = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(folder).expanduser() / "settings.json" if folder else Path.home() / ".pi" / "agent" / "settings.json"


def add_extension(settings: dict[str, Any], path: Path) -> str | None:
    """Name `path` in settings["extensions"], the user's other entries kept in their order; an earlier foldscope
    extension (another install's path) is replaced, not doubled, since both would draw the same footer entry."""
    extensions = settings.get("extensions", [])
    if not isinstance(extensions, list):
        return '"extensions" is not a list'
    kept = [e for e in extensions if not (isinstance(e, str) and Path(e).name == EXTENSION)]
    settings["extensions"] = [*kept, str(path)]
    return None


def command_words() -> str:
    """Which foldscope the extension will run: pi's PATH finds it, or FOLDSCOPE_BIN must name it."""
    found = shutil.which("foldscope")
    if found:
        return f"the extension runs `foldscope` from pi's PATH (here {found}), or $FOLDSCOPE_BIN"
    own = Path(sys.executable).with_name("foldscope")
    named = str(own) if own.exists() else "the path of foldscope"
    return f"foldscope is not on this PATH: start pi with FOLDSCOPE_BIN={named}"


def install(args: Any) -> int:
    """Print the "extensions" entry for pi's settings.json; with --write add it there, the rest kept and a backup made."""
    path = extension_path()
    if not path.is_file():
        print(f"foldscope: the pi extension is missing from this installation ({path})")
        return 0
    target = Path(args.settings).expanduser() if args.settings else settings_path()
    print(json.dumps({"extensions": [str(path)]}, indent=2))
    print(command_words())
    if not args.write:
        print(f'(add the path to the "extensions" list in {target}, or run `foldscope statusline --install --agent pi --write`)')
        return 0
    return write_settings(target, lambda settings: add_extension(settings, path))
