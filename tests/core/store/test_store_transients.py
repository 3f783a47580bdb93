"""What the store holds for a moment while it writes a counted session: the memo's pickling, the snapshot's copy into its
row, the file's hash and each message's size stored each hold a small part at a time (at 50,000 messages each moment
sits on the window's peak)."""

from __future__ import annotations

import hashlib
import io
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.compile import TEXT
from foldscope.core.store import snapshot, snapshot_inputs, snapshot_memo, snapshot_stream
from foldscope.core.store.library import Library
from foldscope.core.store.snapshot_stream import BLOCK


def _traced_peak(call: Callable[[], Any]) -> tuple[Any, int]:
    """(what the call returns, the most it held at once in bytes)."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        got = call()
        return got, tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_the_memos_pickling_holds_one_small_batch_of_pairs_at_a_time():
    # 10,000 pairs a pickle held 5 MiB at 50,000 messages: the batch's pairs and the pickler's memo of them.
    record = FullRecord([Message(f"m{i}", "instruction", None, {"instruction": f"text {i}"}) for i in range(12_000)])
    policy = ("policy", 1)
    bodies = {((message, TEXT, None, None), policy): 1000 + i for i, message in enumerate(record)}
    memo = (bodies, {}, {}, {})
    data, peak = _traced_peak(lambda: snapshot_memo.dump_memo(memo, record))
    loaded, _, _, _ = snapshot_memo.load_memo(data, record)
    assert loaded == bodies
    assert peak < 2_000_000  # 1.1 MB now; 3.6 MB with a batch of 10,000


class _Blob:
    """An SQLite blob's write, keeping only how much was written."""

    def __init__(self) -> None:
        self.written = 0

    def write(self, data: Any) -> None:
        self.written += len(memoryview(data))


def test_a_spilled_snapshot_is_written_into_its_row_through_one_buffer():
    spill = io.BytesIO(os.urandom(4 * BLOCK + 123))
    blob = _Blob()
    _, peak = _traced_peak(lambda: snapshot.fill(blob, spill))
    assert blob.written == 4 * BLOCK + 123
    assert peak < BLOCK  # a quarter of a block; a block read as bytes while the one before was held made two


def test_a_files_sha256_is_read_through_one_small_buffer(tmp_path: Path):
    data = os.urandom(4 << 20)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    digest, peak = _traced_peak(lambda: snapshot_inputs.file_sha256(path))
    assert digest == hashlib.sha256(data).hexdigest()
    assert peak < 2 * snapshot_stream.READ_BLOCK  # one block of 256 KiB; 2 MiB read a MiB at a time as bytes


def test_storing_each_messages_size_reads_the_body_ids_as_an_array(tmp_path: Path):
    # As a list, each id was an int object of its own: 1.9 MB at 50,000 messages, the top of the window's import.
    record = FullRecord([Message(f"m{i}", "instruction", None, {"instruction": f"text {i}"}) for i in range(6_000)])
    with Library(tmp_path / "library.db") as library:
        session_id = library.import_session(Session(record, [m.id for m in record]))
        sizes = [3 + i % 50 for i in range(len(record))]
        _, peak = _traced_peak(lambda: library.store_token_counts(session_id, "o200k", sizes))
        assert library.token_counts(session_id, "o200k") == sizes
    assert peak < 150_000  # 51 KB now (the array); 239 KB as a list


def test_a_load_copies_the_readers_extras_once_for_the_snapshot_and_the_store(tmp_path: Path, monkeypatch):
    # The store's copy deep-copied them again after the measure (which writes none of them): the line starts and the
    # unsent lines twice, 0.8 MiB more at 50,000 messages through the counted paint and the whole store.
    from foldscope.core.readout.opening import open_document
    from tests.paths import CORPUS_DEV

    copies: list[Any] = []
    real = snapshot.as_read

    def as_read(session: Any, extras: Any = None) -> Any:
        copies.append(real(session, extras))
        return copies[-1]

    monkeypatch.setattr(snapshot, "as_read", as_read)
    document = open_document(CORPUS_DEV / "claude_code" / "session-196820da.jsonl", str(tmp_path / "library.db"))
    assert len(copies) == 2 and document.library_id is not None
    source_lines = document.session.extras["source_lines"]
    assert copies[0].extras["source_lines"] is not source_lines  # a copy, as read
    assert copies[1].extras is copies[0].extras
