"""What files are on disk, as a line kept beside a cache: a file's hash is checked again only when its stamp changed.

A stamp is each file's device, inode, size and modified and changed times to the nanosecond. A write to a file changes
its ctime, which no user call sets back, so a stamp written after a file's hash was checked stands for that check
until the file changes (core.request.small_count's table and vocabulary, core.model.pricing_cache's genai-prices)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path


def of(stats: Iterable[os.stat_result]) -> str:
    """The stamp of files already asked (os.stat, or os.fstat of a file as opened)."""
    return " ".join(f"{s.st_dev}:{s.st_ino}:{s.st_size}:{s.st_mtime_ns}:{s.st_ctime_ns}" for s in stats)


def of_paths(paths: Iterable[Path]) -> str | None:
    """The stamp of the files at `paths`, None when one cannot be asked."""
    try:
        return of([os.stat(p) for p in paths])
    except OSError:
        return None


def read(path: Path) -> str | None:
    """The text kept at `path`, None when there is none to read."""
    try:
        return path.read_text(encoding="ascii")
    except (OSError, ValueError):
        return None


def write(path: Path, text: str) -> None:
    """Keep `text` at `path` whole or not at all (a file beside it renamed over it); in a read-only cache folder not at
    all: the next process checks the hashes again."""
    from foldscope.core.model.folders import make_private_folder

    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        make_private_folder(path.parent)
        temporary.write_text(text, encoding="ascii")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
