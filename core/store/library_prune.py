"""The Library's removing and pruning: sessions removed with the bodies no other session holds, the file compacted."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from foldscope.core.store.body_bytes import BODY_BYTES, BODY_TEXT
from foldscope.core.store.library_base import LibraryBase
from foldscope.core.store.library_file import guarded


class Pruning(LibraryBase):
    """Library.remove_sessions, prune_plan and prune."""

    @guarded
    def remove_sessions(self, session_ids: Iterable[int]) -> dict[str, int]:
        """Remove sessions with their views, events and the message bodies no other session holds."""
        ids = sorted(set(session_ids))
        with self._atomic():
            for session_id in ids:
                for table in ("snapshots", "events", "view_versions", "messages"):
                    self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", [session_id])
                self.conn.execute("DELETE FROM sessions WHERE id = ?", [session_id])
            bodies, freed = self._remove_unreferenced_bodies()
        return {"sessions": len(ids), "bodies": bodies, "bytes": freed}

    def _unreferenced_bodies(self, leaving: Iterable[int] = ()) -> tuple[int, int]:
        """How many bodies, and their bytes, no session holds once the sessions `leaving` are gone (by default: now)."""
        ids = sorted(leaving)
        row = self.conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM({BODY_BYTES}), 0) FROM bodies b LEFT JOIN body_bytes x ON x.body = b.id"
            " WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = b.id AND m.session_id NOT IN"
            f" ({', '.join('?' * len(ids))}))",  # NOT IN () holds for every row; NOT IN (NULL) for none
            ids,
        ).fetchone()
        return int(row[0]), int(row[1])

    def _remove_unreferenced_bodies(self) -> tuple[int, int]:
        count, freed = self._unreferenced_bodies()
        if count:
            orphan = "NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = {}.id)"
            # An external-content index forgets a row only when told its old text.
            self.conn.execute(
                f"INSERT INTO bodies_fts (bodies_fts, rowid, text) SELECT 'delete', b.id, {BODY_TEXT} FROM bodies b"
                f" LEFT JOIN body_bytes x ON x.body = b.id WHERE b.search_indexed = 1 AND {orphan.format('b')}"
            )
            self.conn.execute(f"DELETE FROM body_bytes WHERE body IN (SELECT id FROM bodies WHERE {orphan.format('bodies')})")
            self.conn.execute(f"DELETE FROM bodies WHERE {orphan.format('bodies')}")
        return count, freed

    @guarded
    def prune_plan(self) -> list[dict[str, Any]]:
        """The sessions prune would remove, each with why: its source file is gone, or a newer version of the
        same source replaced it. A version holding a working state not yet saved or discarded is kept."""
        sessions = self.list_sessions()
        newest: dict[str, int] = {}
        for row in sessions:
            if row["source"]:
                newest[row["source"]] = max(newest.get(row["source"], 0), row["id"])
        plan = []
        for row in sessions:
            source = row["source"]
            if not source:
                continue
            if not Path(source).exists():
                plan.append({**row, "why": "its source file is gone"})
            elif row["id"] != newest[source] and not self._holds_pending_state(source, row["id"]):
                plan.append({**row, "why": f"replaced by a newer version of the same source (session {newest[source]})"})
        return plan

    def _holds_pending_state(self, source: str, session_id: int) -> bool:
        latest = self.latest_working_state(source)
        return latest is not None and latest["session_id"] == session_id and not latest["data"].get("cleared")

    @guarded
    def prune(self, dry_run: bool = False) -> dict[str, Any]:
        """Remove what prune_plan names and every body no session references; compact the file after.
        With dry_run, say what would go and change nothing."""
        plan = self.prune_plan()
        before = self.size()
        if dry_run:
            # Bodies only the planned sessions hold would go with them, as would those nobody holds now.
            bodies, freed = self._unreferenced_bodies({row["id"] for row in plan})
            return {
                "dry_run": True,
                "sessions": plan,
                "bodies": bodies,
                "body_bytes": freed,
                "size_before": before,
                "size_after": None,
            }
        removed = self.remove_sessions(row["id"] for row in plan)
        with self._atomic():
            bodies, freed = self._remove_unreferenced_bodies()
        if self.path is not None and (removed["sessions"] or removed["bodies"] or bodies):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {
            "dry_run": False,
            "sessions": plan,
            "bodies": removed["bodies"] + bodies,
            "body_bytes": removed["bytes"] + freed,
            "size_before": before,
            "size_after": self.size(),
        }
