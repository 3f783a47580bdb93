"""What QSettings keeps: window geometry, splitter and dock state, the theme and recent files, nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foldscope.app.qt import QByteArray, QSettings

RECENT_LIMIT = 8


class WindowSettings:
    """A small typed face over QSettings: an INI file, at path (tests) or settings.ini in the user's config folder."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            # The platform's config folder (platformdirs, as every folder foldscope keeps), private: recent
            # files name the user's sessions.
            from foldscope.core.model.folders import config_folder, make_private_folder

            path = make_private_folder(config_folder()) / "settings.ini"
            self.qsettings: QSettings | MemorySettings = QSettings(str(path), QSettings.Format.IniFormat)
        else:
            self.qsettings = QSettings(str(path), QSettings.Format.IniFormat)

    @classmethod
    def in_memory(cls) -> WindowSettings:
        """Settings that start empty and are never written (a `--screenshot` run must leave the user's alone)."""
        settings = cls.__new__(cls)
        settings.qsettings = MemorySettings()
        return settings

    def recent_files(self) -> list[str]:
        value = self.qsettings.value("recent_files", [])
        if isinstance(value, str):  # QSettings gives a bare string for a one-item list in INI files
            value = [value]
        return [str(v) for v in value] if isinstance(value, list) else []  # None when unset

    def add_recent_file(self, path: str) -> list[str]:
        path = str(Path(path).resolve())
        files = [path] + [f for f in self.recent_files() if f != path]
        files = files[:RECENT_LIMIT]
        self.qsettings.setValue("recent_files", files)
        return files

    def clear_recent_files(self) -> None:
        self.qsettings.setValue("recent_files", [])

    def state(self, key: str) -> QByteArray | None:
        value = self.qsettings.value(key)
        return value if isinstance(value, QByteArray) else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self.qsettings.setValue(key, value)

    def theme(self) -> str | None:
        value = self.qsettings.value("theme")
        return value if isinstance(value, str) else None

    def set_theme(self, name: str) -> None:
        self.qsettings.setValue("theme", name)

    def sync(self) -> None:
        self.qsettings.sync()


class MemorySettings:
    """The part of QSettings WindowSettings uses, kept in a dict and never written anywhere."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def value(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def setValue(self, key: str, value: Any) -> None:  # noqa: N802 (QSettings' name)
        self.values[key] = value

    def sync(self) -> None:
        pass
