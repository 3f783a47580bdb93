"""The library: a SQLite store of imported sessions, their messages, view versions and events."""

from __future__ import annotations

from foldscope.core.model.session import LibraryError
from foldscope.core.store.library_base import WORKING_STATE
from foldscope.core.store.library_import import Imports
from foldscope.core.store.library_prune import Pruning
from foldscope.core.store.library_search import Search
from foldscope.core.store.library_snapshots import Snapshots

__all__ = ["WORKING_STATE", "Library", "LibraryError"]  # where app/save.py and the tests import them


class Library(Imports, Snapshots, Search, Pruning):
    """The session library. One connection, owned by the thread that opened it (STYLE.md point 7).

    The connection is plain sqlite3 in autocommit mode, every write in its own BEGIN IMMEDIATE transaction; `db`, the
    sqlite-utils wrapper around it, is made when first used, so that creating a library and importing into it never
    import sqlite-utils. Any SQLite or OS failure comes out as one LibraryError naming the library and the problem.

    Its parts, each a module of its own over the connection and rows they share (library_base.LibraryBase): imports
    (library_import), snapshots (library_snapshots), search (library_search), removing and pruning (library_prune).
    """
