"""Writing a file the user named: never over a device, never replacing a link, never over a file the command read.

Every command and dialog that writes a file a user named (`export`, `report`, `fold --apply`, `restore`/`clip`/
`evict -o`, `replay`/`tune -o`, Save As, Export Report, `--screenshot`) goes through `write_output`, so the three
rules hold in one place:
- an output that exists and is not a regular file (a device such as /dev/null, a folder, a pipe) is refused;
- a symbolic link is written through: its target is replaced atomically in the target's own folder, the link stays;
- an output that is one of the files the command read (by device and inode, so another name or a link to the same
  file counts) is refused.
What foldscope writes holds session text, so a new file is private (0600); a file it replaces keeps its mode.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from foldscope.core.model.files import Blocks, write_atomically
from foldscope.core.model.session import ReadError

STDOUT = "-"


Inputs = Iterable[str | Path] | Mapping[str | Path, str]


def output_target(path: str | Path, read: Inputs = ()) -> Path:
    """The regular file to write for `path` (a link's target), or a ReadError saying in one line why not.
    `read` holds the files the command read, or maps each to what it is ("the session's source file")."""
    named = str(path)
    target = Path(os.path.realpath(path))
    try:
        status = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise ReadError(named, "-o", f"cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(status.st_mode):
        kind = "a folder" if stat.S_ISDIR(status.st_mode) else "a device, pipe or socket"
        raise ReadError(named, "-o", f"is {kind}, not a regular file; refusing to replace it")
    described = read if isinstance(read, Mapping) else dict.fromkeys(read, "a file this command read")
    for source, what in described.items():
        if _same(status, source):
            raise ReadError(named, "-o", f"refusing to overwrite {what}; choose another name")
    return target


def write_output(path: str | Path, data: bytes | str | Blocks, read: Inputs = ()) -> str:
    """Write data (or what makes it a block at a time) to the file the user named (see the module's rules); `-`
    writes to standard output. Returns where it went."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if str(path) == STDOUT:
        sys.stdout.flush()
        for block in payload() if callable(payload) else (payload,):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
        return "standard output"
    target = output_target(path, read)
    try:
        write_atomically(target, payload)
    except OSError as exc:
        raise ReadError(str(path), "-o", f"cannot write: {exc.strerror or exc}") from None
    return str(path)


def _same(status: os.stat_result, source: str | Path) -> bool:
    try:
        other = os.stat(source)
    except OSError:
        return False
    return (status.st_dev, status.st_ino) == (other.st_dev, other.st_ino)
