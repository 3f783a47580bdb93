"""Plain files foldscope loads with importlib.resources: the vocabulary, the pricing table, the demo session, profiles."""

from __future__ import annotations

from pathlib import Path


def read_text(name: str) -> str:
    """A shipped file's text: read beside this module where the package is a folder on disk, as it is installed
    (importlib.resources costs about 9 ms of a command's start, zipfile and tempfile, for the same path), else
    through importlib.resources."""
    beside = Path(__file__).parent / name
    if beside.is_file():
        return beside.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
