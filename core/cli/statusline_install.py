"""The settings file a status line install writes (Claude Code's, pi's): the user's other settings kept, the old
file backed up, nothing written when the file is not a JSON object. Both go through write_output, as every file
foldscope writes: a linked settings file (dotfiles) is written through its link, never over a device, new files
private (settings can hold keys), a replaced one keeping its mode."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_settings(target: Path, change: Callable[[dict[str, Any]], str | None]) -> int:
    """Apply `change` to the JSON object in `target` (a missing file is an empty one) and write it, the old file kept
    as a dated backup that no later run overwrites. A file that is not a JSON object, or a problem `change` returns,
    is said and nothing written; a file the change leaves as it is is not written or backed up again (a second run
    in the same second wrote the changed file over the backup holding the user's own entry)."""
    from foldscope.core.model.errors import ReadError
    from foldscope.core.model.outputs import output_target, write_output

    try:
        output_target(target)  # a device or a folder refused before anything is read or backed up
    except ReadError as exc:
        print(f"foldscope: {exc}; it was left as it is")
        return 0
    settings: dict[str, Any] = {}
    text = None
    if target.exists():
        text = target.read_text(encoding="utf-8")
        try:
            settings = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            print(f"foldscope: {target} is not JSON ({exc}); it was left as it is")
            return 0
        if not isinstance(settings, dict):
            print(f"foldscope: {target} holds no JSON object; it was left as it is")
            return 0
    before = json.loads(json.dumps(settings))
    problem = change(settings)
    if problem:
        print(f"foldscope: {target}: {problem}; it was left as it is")
        return 0
    if text is not None and settings == before:
        print(f"already there: {target} (nothing written)")
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if text is not None:
            backup = unused_backup(target)
            write_output(backup, text)
            print(f"backup: {backup}")
        write_output(target, json.dumps(settings, indent=2) + "\n")
    except ReadError as exc:
        print(f"foldscope: {exc}; it was left as it is")
        return 0
    print(f"wrote: {target}")
    return 0


def unused_backup(target: Path) -> Path:
    """A dated backup name beside `target` that no file has yet: a second backup in the same second gets -2, -3..."""
    stem = f"{target.name}.{time.strftime('%Y%m%d-%H%M%S')}"
    backup = target.with_name(f"{stem}.bak")
    n = 2
    while backup.exists() or backup.is_symlink():
        backup = target.with_name(f"{stem}-{n}.bak")
        n += 1
    return backup
