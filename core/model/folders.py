"""The folders foldscope keeps (data, cache, config), from platformdirs, each private to the user."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from foldscope.core.model import environment

APP = "foldscope"
PRIVATE_FOLDER = 0o700  # the library holds every imported transcript: nobody else reads it
PRIVATE_FILE = 0o600


def data_folder() -> Path:
    """Where the library lives: the platform's user data folder (~/.local/share/foldscope on Linux, XDG_DATA_HOME honoured)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def cache_folder() -> Path:
    """What can be rebuilt (parsed vocabularies): FOLDSCOPE_CACHE, else the platform's user cache folder."""
    chosen = environment.folder("FOLDSCOPE_CACHE")  # None for a file named there (the start says so)
    if chosen is not None:
        return chosen
    linux = linux_folder("XDG_CACHE_HOME", "~/.cache")
    if linux is not None:
        return linux
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def config_folder() -> Path:
    """Window settings: FOLDSCOPE_CONFIG, else the platform's user config folder."""
    chosen = environment.folder("FOLDSCOPE_CONFIG")
    if chosen is not None:
        return chosen
    linux = linux_folder("XDG_CONFIG_HOME", "~/.config")
    if linux is not None:
        return linux
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def linux_folder(variable: str, default: str) -> Path | None:
    """platformdirs' user folder on Linux, without importing it (about 9 ms of a command's start, which `count` of a
    word and `inspect` of a small file pay for a path): an absolute XDG variable's folder, else the default under an
    absolute HOME; None wherever platformdirs' other rules may apply (not Linux, Android, no absolute HOME).
    tests/core/model/test_folders.py holds the two equal."""
    env = os.environ
    if not sys.platform.startswith("linux") or hasattr(sys, "getandroidapilevel"):
        return None
    if env.get("ANDROID_DATA") == "/data" and env.get("ANDROID_ROOT") == "/system":
        return None
    if env.get(variable, "").startswith("/"):  # platformdirs takes it when absolute
        return Path(env[variable], APP)
    if env.get("HOME", "").startswith("/"):
        return Path(os.path.expanduser(default), APP)
    return None


def is_folder(path: str | Path) -> bool:
    """Whether path names a folder; False where asking fails (a file in a folder one cannot enter: Path.is_dir raises
    for EACCES), so the read says what is wrong in one line."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def make_private_folder(folder: Path) -> Path:
    """Create the folder (and its parents) if missing; the folder itself is made 0700 when foldscope created it
    or owns it by name (a folder called foldscope), so an existing folder the user chose keeps its mode."""
    existed = folder.is_dir()
    folder.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    if not existed or folder.name == APP:
        with contextlib.suppress(OSError):  # someone else's folder: reading it still works
            if folder.stat().st_mode & 0o077:
                folder.chmod(PRIVATE_FOLDER)
    return folder


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new file in the folder durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
