"""The errors a command says in one line (a bad file, an unusable library): light, so the CLI catches them unloaded."""

from __future__ import annotations


class ReadError(Exception):
    """Bad input: carries the file, the place (line or JSON path) and the problem, for one clear line."""

    def __init__(self, file: str, place: str, problem: str) -> None:
        self.file, self.place, self.problem = file, place, problem
        super().__init__(f"{file}: {place}: {problem}" if place else f"{file}: {problem}")


class NotASession(ReadError):
    """A file that belongs to a session without being one (a run manifest beside its Branch): skipped by sweeps."""


class LibraryError(Exception):
    """The library (core.store.library) cannot be used: where it is and why, in one line; a session still
    opens without it. Here, beside ReadError, so the CLI can catch it without importing the store (nor the session)."""

    def __init__(self, path: str | None, problem: str) -> None:
        self.path, self.problem = (path if path is not None else ":memory:"), problem
        super().__init__(f"library {self.path}: {problem}")
