"""Writing a file whole or not at all: a crash leaves the old file or the new one, never a half or a stray copy."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from foldscope.core.model.folders import PRIVATE_FILE, fsync_folder

TEMP_SUFFIX = ".foldscope-tmp"
# What makes the data a block at a time (a long report is never held whole); called again if the write starts over.
Blocks = Callable[[], Iterable[bytes]]


def temp_path(path: Path) -> Path:
    """The hidden name a save writes under before it replaces the file (only where O_TMPFILE is missing)."""
    return path.with_name(f".{path.name}{TEMP_SUFFIX}")


def write_atomically(path: str | Path, data: bytes | Blocks) -> None:
    """Write data to path so that a crash or a kill at any point leaves the old file or the new one.

    The new file keeps the mode of the file it replaces; a new file is private (0600). The data and the
    folder are synced, so the rename survives a power cut. On Linux the data is written to an unnamed
    file (O_TMPFILE), which a kill leaves nowhere; it gets a name only for the instant before the rename.
    Elsewhere a hidden temporary file is used, removed on any failure (and by the next save, if a kill
    left it).
    """
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = PRIVATE_FILE
    temporary = temp_path(path)
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # a copy an earlier save left when it was killed
    if not _write_unnamed(path, temporary, data, mode):
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        try:
            try:
                _write_all(fd, data)
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_folder(path.parent)


def _write_unnamed(path: Path, temporary: Path, data: bytes | Blocks, mode: int) -> bool:
    """Write data to an unnamed file in path's folder and link it as temporary; False where the platform or
    the file system cannot (the caller then writes temporary itself)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not Path("/proc/self/fd").is_dir():
        return False
    try:
        fd = os.open(path.parent, flag | os.O_WRONLY, PRIVATE_FILE)
    except OSError:
        return False
    try:
        _write_all(fd, data)
        os.fchmod(fd, mode)
        os.fsync(fd)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            # linkat(..., AT_SYMLINK_FOLLOW) through /proc: a dir fd makes os.link call linkat, not link().
            os.link(f"/proc/self/fd/{fd}", temporary, src_dir_fd=folder, follow_symlinks=True)
        except OSError:
            return False
        finally:
            os.close(folder)
    finally:
        os.close(fd)
    return True


def _write_all(fd: int, data: bytes | Blocks) -> None:
    for block in data() if callable(data) else (data,):
        view = memoryview(block)
        while view:
            written = os.write(fd, view)
            view = view[written:]
