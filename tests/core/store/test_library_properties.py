"""Invariants of the deduplicated library, over any sequence of imports of a growing file's versions and removals:
every session reads back exactly as it was read, no body is left that no session holds, none is missing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats import load_session
from foldscope.core.store.library import Library
from tests.paths import CORPUS_DEV

SOURCE = CORPUS_DEV / "claude_code" / "tool_heavy.jsonl"
LINES = SOURCE.read_bytes().splitlines(keepends=True) if SOURCE.exists() else []

operations = st.lists(
    st.one_of(
        st.tuples(st.just("import"), st.integers(min_value=12, max_value=max(len(LINES), 12))),
        st.tuples(st.just("remove"), st.integers(min_value=0, max_value=20)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_any_imports_and_removals_keep_every_session_whole_and_no_body_orphaned(ops):
    if not LINES:
        return  # no dev corpus on this machine (the corpus_dev fixture would skip; hypothesis cannot take fixtures)
    with tempfile.TemporaryDirectory() as folder:
        live = Path(folder) / "live.jsonl"
        expected: dict[int, list[tuple[str, str]]] = {}
        with Library(Path(folder) / "library.db") as library:
            for op, n in ops:
                if op == "import":
                    live.write_bytes(b"".join(LINES[:n]))
                    session = load_session(live)
                    expected[library.import_session(session)] = [(m.id, m.text) for m in session.record]
                elif expected:
                    victim = sorted(expected)[n % len(expected)]
                    library.remove_sessions([victim])
                    del expected[victim]
                assert {r["id"] for r in library.list_sessions()} == set(expected)
                for session_id, messages in expected.items():
                    assert [(r["message_id"], r["text"]) for r in library.messages(session_id)] == messages
                held = {row[0] for row in library.conn.execute("SELECT id FROM bodies")}
                used = {row[0] for row in library.conn.execute("SELECT body FROM messages")}
                assert held == used
