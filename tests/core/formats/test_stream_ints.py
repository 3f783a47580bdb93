"""A line-based reader keeps one int object a value (issue 17's import memory): the record's indexes, the views'
lengths and the requests' indexes are the line numbers' own ints (stream.SessionBuilder.ints), where each kept its own."""

from __future__ import annotations

import json
import pickle

from foldscope.core.formats import load_session
from foldscope.core.model.session import FullRecord


def _short_session(path, pairs: int) -> None:
    parent = None
    with open(path, "w", encoding="utf-8") as out:
        for n in range(pairs):
            for role in ("user", "assistant"):
                uuid = f"{role[0]}{n}"
                message: dict = {"role": role, "content": f"{role} {n}"}
                if role == "assistant":
                    message = {
                        **message,
                        "id": f"msg_{n}",
                        "model": "m",
                        "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 5, "output_tokens": 1},
                    }
                out.write(
                    json.dumps(
                        {
                            "parentUuid": parent,
                            "sessionId": "s",
                            "isSidechain": False,
                            "type": role,
                            "uuid": uuid,
                            "message": message,
                            "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
                        }
                    )
                    + "\n"
                )
                parent = uuid


def test_a_line_based_record_shares_one_int_object_a_value(tmp_path):
    path = tmp_path / "short.jsonl"
    _short_session(path, 400)  # 800 messages and lines: values past the 256 ints Python shares itself
    session = load_session(path)
    record = session.record
    by_line = {m.provenance.line: m.provenance.line for m in record}
    shared = [i for i in range(300, len(record)) if i in by_line]
    assert len(shared) > 400
    for i in shared:
        assert record._index[record[i].id] is by_line[i]
    requests = [r for r in session.trace if r.index in by_line and len(r.view) in by_line and r.index > 256]
    assert len(requests) > 100
    for request in requests:
        assert request.index is by_line[request.index]
        assert request.view._length is by_line[len(request.view)]


def test_a_record_pickles_without_the_shared_ints_and_lets_go_of_them_when_read(tmp_path):
    path = tmp_path / "short.jsonl"
    _short_session(path, 3)
    record = load_session(path).record
    assert record._ints is None  # the reader let go of its lines' ints
    ints = list(range(10))
    grown = FullRecord(record, ints=ints)
    assert grown._ints is ints
    copy = pickle.loads(pickle.dumps(grown))
    assert set(vars(copy)) == {"_messages", "_index"} and copy._ints is None
    assert [m.id for m in copy] == [m.id for m in record] and copy._index == grown._index
