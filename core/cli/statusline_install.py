"""The settings file a status line install writes (Claude Code's, pi's): the user's other settings kept, the old
file backed up, nothing written when the file is not a JSON object."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_settings(target: Path, change: Callable[[dict[str, Any]], str | None]) -> int:
    """Apply `change` to the JSON object in `target` (a missing file is an empty one) and write it, the old file kept
    as a dated backup. A file that is not a JSON object, or a problem `change` returns, is said and nothing written."""
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
    problem = change(settings)
    if problem:
        print(f"foldscope: {target}: {problem}; it was left as it is")
        return 0
    if text is not None:
        backup = target.with_name(f"{target.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        backup.write_text(text, encoding="utf-8")
        print(f"backup: {backup}")
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(target.name + ".tmp")
    aside.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    os.replace(aside, target)
    print(f"wrote: {target}")
    return 0
