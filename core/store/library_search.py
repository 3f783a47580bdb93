"""The Library's full-text search over message bodies (SQLite FTS5, indexed when first searched; words of scripts
written without spaces found by a scan)."""

from __future__ import annotations

import re

import regex  # type: ignore[import-untyped]  # \p{M}: a mark (a Thai vowel) is part of a word, which re cannot say

from foldscope.core.store.body_bytes import BODY_TEXT, huge_start
from foldscope.core.store.library_base import LibraryBase
from foldscope.core.store.library_file import guarded

# Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, Han, Hangul's syllables, halfwidth
# katakana. The index's tokenizer (FTS5's unicode61) takes a run of their letters as one word, so a word inside a
# sentence (函数 in 这是一个函数的测试) is no term of the index: a query word holding one is found by a scan instead.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
# What SQLite's lower() folds (ASCII only, without ICU): a scanned word matches in any ASCII case, as an indexed one does.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# A query word's letters, digits and marks (a Thai vowel is a mark): what the index's tokenizer keeps of it (unicode61:
# any other character, punctuation, symbols and emoji, separates).
_TERM = regex.compile(r"[\p{L}\p{N}\p{M}]+")
SCAN_CONTEXT = 30  # characters either side of a scanned word in its hit's snippet
# Only the newest version of each source is searched: an older version's copy of the same message is not repeated.
_NEWEST = "m.session_id IN (SELECT MAX(id) FROM sessions GROUP BY COALESCE(source, id))"


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
        newest version of each source. A word of a script written without spaces (_UNSPACED) is found anywhere in a
        text, by a scan; the others as words, by the index."""
        indexed, scanned = query_terms(query)
        if not (indexed or scanned):
            return []
        scan = "".join(f" AND instr(lower({BODY_TEXT}), ?) > 0" for _ in scanned)
        bodies = "JOIN bodies b ON b.id = bodies_fts.rowid" if indexed else "bodies b"
        body_text = "LEFT JOIN body_bytes x ON x.body = b.id" if scanned else ""
        if indexed:
            self.index_for_search()
            shown, where, order = "snippet(bodies_fts, 0, '[', ']', '…', 12)", "bodies_fts MATCH ? AND ", "rank, "
        else:  # no word for the index: the scan alone, its snippet made around the first word's place
            shown, where, order = "b.text", "", ""
        sql = (
            f"SELECT m.session_id, m.idx, {shown}, b.id FROM {'bodies_fts ' if indexed else ''}{bodies} {body_text} "
            f"JOIN messages m ON m.body = b.id WHERE {where}{_NEWEST}{scan} ORDER BY {order}m.session_id, m.idx LIMIT ?"
        )
        params = ([fts_query(" ".join(indexed))] if indexed else []) + scanned + [limit]
        rows = self.conn.execute(sql, params).fetchall()
        return [
            (session_id, idx, huge_start(self.conn, body) if text is None else text if indexed else scanned_snippet(text, scanned[0]))
            for session_id, idx, text, body in rows
        ]


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """(the words asked of the index, the words scanned for, ASCII-lowered) of a query. A word holding a letter of a
    script written without spaces is cut at its punctuation as the index would cut it (「函数」, 函数。 and (函数) look
    for 函数), each piece scanned for when it holds such a letter, else asked of the index; any other word goes to the
    index whole, which drops its punctuation itself (a word of punctuation alone adds nothing to the match)."""
    indexed: list[str] = []
    scanned: list[str] = []
    for word in query.split():
        if not _UNSPACED.search(word):
            if _TERM.search(word):
                indexed.append(word)
            continue
        for piece in _TERM.findall(word):
            if _UNSPACED.search(piece):
                scanned.append(piece.translate(_ASCII_LOWER))
            else:
                indexed.append(piece)
    return indexed, scanned


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def scanned_snippet(text: str, word: str) -> str:
    """A scanned hit's snippet, as the index's look: the word [marked], SCAN_CONTEXT characters either side, … where the
    text goes on. `word` is ASCII-lowered, as the scan compared it."""
    at = text.translate(_ASCII_LOWER).find(word)
    start, end = max(0, at - SCAN_CONTEXT), min(len(text), at + len(word) + SCAN_CONTEXT)
    before = ("…" if start else "") + text[start:at]
    return f"{before}[{text[at : at + len(word)]}]{text[at + len(word) : end]}{'…' if end < len(text) else ''}"
