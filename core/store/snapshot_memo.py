"""The counter's memo kept beside a session's snapshot, so a reopened session's counter counts nothing twice.

The memo (core.request.count.Counter.memo: each block's tokens, keyed by the messages it renders and how) is pickled with
each message as its record index (a persistent id) and kept under `snapshot_inputs.counter_identity()`: the tokenizer
and the code that renders and counts (core.request, core.model, core.formats.images). A reopened session's counter is
seeded with it; a key naming a message that is not in the record is not kept.
"""

from __future__ import annotations

import gc
import io
import pickle
import zlib
from collections.abc import Mapping
from typing import Any

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.store.snapshot import SnapshotError, place_of
from foldscope.core.store.snapshot_stream import Deflating

# Memo keys pickled with one pickler memo (dump_memo): the batch's pairs and the memo's entries for them are held until it
# is written, 5 MiB at 10,000 (the memo's table past 32,768 entries), 1.7 at this size, on the window's plateau at 50k.
MEMO_BATCH = 2_000


class _MemoPickler(pickle.Pickler):
    """Pickles a memo's keys with each message as its record index (a persistent id), never by value."""

    def __init__(self, out: Any, record: FullRecord) -> None:
        super().__init__(out, protocol=5)
        self.record = record

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not Message:
            return None
        place = place_of(obj, self.record)
        if place is None:  # never: dump_memo keeps only keys whose messages are the record's
            raise pickle.PicklingError(f"a counter memo's key names message {obj.id!r}, which is not in the record")
        return place


class _MemoUnpickler(pickle.Unpickler):  # its find_class refuses every class
    def __init__(self, data: io.BytesIO, record: FullRecord) -> None:
        super().__init__(data)
        self.record = record

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(f"a counter memo names {module}.{name}: its keys hold only messages and plain values")

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, int) or not 0 <= pid < len(self.record):
            raise SnapshotError(f"a counter memo names message {pid!r}, which is not in the record")
        return self.record[pid]


def _plain_key(value: Any, record: FullRecord) -> bool:
    """Whether a memo key can be named again: only tuples, plain values and messages of the record."""
    if type(value) is Message:
        return place_of(value, record) is not None
    if type(value) is tuple:
        return all(_plain_key(v, record) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def dump_memo(memo: tuple[Mapping, ...], record: FullRecord) -> bytes:
    """A counter's memo (bodies, glue, heads, texts: Counter.memo()) with each message named by its index in `record`, pickled and
    compressed; a key naming anything else (a message outside the record) is left out, to be counted when met.

    Pickles one after the other: glue, heads and texts, then the bodies' (key, count) pairs MEMO_BATCH at a time (the
    pickler's memo cleared between batches: pickled whole, it held an entry for every key and the part it names), then
    None."""
    bodies, glue, heads, *rest = memo
    out = io.BytesIO()
    deflating = Deflating(out)
    pickler = _MemoPickler(deflating, record)
    pickler.dump((dict(glue), dict(heads), dict(rest[0]) if rest else {}))
    batch: list[tuple[Any, int]] = []
    for key, tokens in bodies.items():
        if _plain_key(key, record):
            batch.append((key, int(tokens)))
        if len(batch) == MEMO_BATCH:
            pickler.clear_memo()
            pickler.dump(batch)
            batch = []
    if batch:
        pickler.clear_memo()
        pickler.dump(batch)
    pickler.dump(None)
    deflating.finish()
    return out.getvalue()


def memo_bytes(memo: tuple[Mapping, ...] | bytes, record: FullRecord) -> bytes:
    """A counter's memo as the library keeps it: dumped now over `record`, or as dump_memo gave it already."""
    return memo if isinstance(memo, bytes) else dump_memo(memo, record)


def load_memo(data: bytes, record: FullRecord) -> tuple[dict, dict, dict, dict]:
    """The memo dump_memo kept, its messages those of `record` (the rebuilt session's); SnapshotError when damaged."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        memo = _load_memo_pickles(io.BytesIO(zlib.decompress(data)), record)
    except SnapshotError:
        raise
    except Exception as exc:
        raise SnapshotError(f"a damaged counter memo ({type(exc).__name__})") from exc
    finally:
        if collecting:
            gc.enable()
    if not all(type(n) is int for part in memo for n in part.values()):
        raise SnapshotError("a counter memo whose counts are not all integers")
    bodies, glue, heads, texts = memo
    return bodies, glue, heads, texts


def _load_memo_pickles(stream: io.BytesIO, record: FullRecord) -> tuple[dict, dict, dict, dict]:
    """dump_memo's pickles: glue, heads and texts, the bodies' batches, None."""
    parts = _MemoUnpickler(stream, record).load()
    if not (isinstance(parts, tuple) and len(parts) == 3 and all(isinstance(part, dict) for part in parts)):
        raise SnapshotError("a counter memo that is not one")
    bodies: dict = {}
    while (batch := _MemoUnpickler(stream, record).load()) is not None:
        if type(batch) is not list or not all(type(pair) is tuple and len(pair) == 2 for pair in batch):
            raise SnapshotError("a counter memo whose counts are not (key, count) pairs")
        bodies.update(batch)
    glue, heads, texts = parts
    return bodies, glue, heads, texts
