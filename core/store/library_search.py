"""The Library's full-text search over message bodies (SQLite FTS5), indexed when first searched."""

from __future__ import annotations

import re

from foldscope.core.store.body_bytes import BODY_TEXT, huge_start
from foldscope.core.store.library_base import LibraryBase
from foldscope.core.store.library_file import guarded


class Search(LibraryBase):
    """Library.index_for_search and search."""

    @guarded
    def index_for_search(self, batch: int = 5000) -> int:
        """Add the bodies not yet indexed to the search index; returns how many.

        search() calls it first; the GUI may call it on its database thread right after an import. It
        indexes in batches, each its own short transaction, so autosave never waits long behind it.
        """
        total = 0
        while True:
            with self._atomic():
                ids = [row[0] for row in self.conn.execute("SELECT id FROM bodies WHERE search_indexed = 0 ORDER BY id LIMIT ?", [batch])]
                if not ids:
                    return total
                marks = ", ".join("?" * len(ids))
                self.conn.execute(
                    f"INSERT INTO bodies_fts (rowid, text) SELECT b.id, {BODY_TEXT} FROM bodies b"
                    f" LEFT JOIN body_bytes x ON x.body = b.id WHERE b.id IN ({marks})",
                    ids,
                )
                self.conn.execute(f"UPDATE bodies SET search_indexed = 1 WHERE id IN ({marks})", ids)
            total += len(ids)

    @guarded
    def search(self, query: str, limit: int = 100) -> list[tuple[int, int, str]]:
        """(session id, message index, snippet) for messages whose text holds every word of query, in the
        newest version of each source (an older version's copy of the same message is not repeated)."""
        if not (match := fts_query(query)):
            return []
        self.index_for_search()
        sql = (
            "SELECT m.session_id, m.idx, snippet(bodies_fts, 0, '[', ']', '…', 12), b.id "
            "FROM bodies_fts JOIN bodies b ON b.id = bodies_fts.rowid JOIN messages m ON m.body = b.id "
            "WHERE bodies_fts MATCH ? AND m.session_id IN (SELECT MAX(id) FROM sessions GROUP BY COALESCE(source, id)) "
            "ORDER BY rank, m.session_id, m.idx LIMIT ?"
        )
        rows = self.conn.execute(sql, [match, limit]).fetchall()
        return [(session_id, idx, huge_start(self.conn, body) if snippet is None else snippet) for session_id, idx, snippet, body in rows]


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)
