"""docs/architecture.md names only modules that exist: a module moved or renamed takes the map with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
# `core/x/y.py`, `app/x.py`, `tests/...py`, `tools/...py`, `bench/...py`; `core.x.y` and `foldscope.core.x.y` (a module,
# or a module's name followed by an attribute: the longest prefix that is a module must exist).
PATH = re.compile(r"`((?:core|app|tests|tools|bench)/[\w/]+\.py)`")
DOTTED = re.compile(r"`(?:foldscope\.)?((?:core|app)(?:\.\w+)+)")
# a bare `name.py` in the row of a folder's table names a module of that folder
ROW = re.compile(r"^\| `(core/\w+|app/\w+|app/` top)[^|]*\|(.*)\|$")


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(len(parts), min(3, len(parts)) - 1, -1):  # at least core.layer.module when named so deep
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def test_every_path_the_map_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [p for p in PATH.findall(text) if not (ROOT / p).is_file()]
    assert missing == []


def test_every_dotted_module_the_map_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [d for d in DOTTED.findall(text) if not _module_exists(d)]
    assert missing == []


def test_every_bare_module_in_a_folder_row_exists_in_that_folder() -> None:
    missing = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        row = ROW.match(line)
        if not row:
            continue
        folder = ROOT / ("app" if row.group(1) == "app/` top" else row.group(1))
        for name in re.findall(r"`(\w+\.py)`", row.group(2)):
            if not (folder / name).is_file():
                missing.append(f"{folder.relative_to(ROOT)}/{name}")
    assert missing == []
