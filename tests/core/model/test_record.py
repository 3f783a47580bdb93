"""The full record's look-ups of many ids at once give what looking each up gives."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import KINDS, Fields, FullRecord, Message, Provenance, new_message

RECORD = FullRecord(Message(f"m{i}", "instruction", i, {"instruction": f"w{i}"}) for i in range(8))
IDS = st.lists(st.sampled_from([f"m{i}" for i in range(10)]), max_size=20)  # m8 and m9 are not in the record


@given(IDS)
def test_found_gives_the_messages_of_the_ids_the_record_holds_in_order_and_leaves_the_rest_out(ids):
    assert RECORD.found(ids) == [RECORD.get(i) for i in ids if i in RECORD]


# Runs of consecutive ids (the record's order, a view's new ids), some past the end, some with one id changed: the
# look-up takes a run as a slice of the record, so these reach that path, and its fall-back, every time.
RUNS = st.tuples(st.integers(0, 9), st.integers(0, 10), st.integers(-1, 9)).map(
    lambda t: [f"m{i}" if i != t[0] + t[2] else f"m{(i + 3) % 10}" for i in range(t[0], t[0] + t[1])]
)


@given(RUNS)
def test_a_run_of_the_records_ids_gives_what_looking_each_up_gives(ids):
    expected = [RECORD.get(i) for i in ids if i in RECORD]
    assert RECORD.found(ids) == expected and RECORD.found(tuple(ids)) == expected
    assert RECORD.found([str(i.encode().decode()) for i in ids]) == expected  # equal ids, not the same objects
    if all(i in RECORD for i in ids):
        assert RECORD.all_of(ids) == expected
    else:
        with pytest.raises(KeyError):
            RECORD.all_of(ids)


@given(IDS)
def test_all_of_gives_every_ids_message_in_order_or_a_key_error_as_get_does(ids):
    if all(i in RECORD for i in ids):
        assert RECORD.all_of(ids) == [RECORD.get(i) for i in ids]
    else:
        with pytest.raises(KeyError):
            RECORD.all_of(ids)


FIELDS = st.dictionaries(
    st.sampled_from(["instruction", "uuid", "is_meta", "output"]), st.one_of(st.text(max_size=5), st.integers(), st.booleans()), max_size=3
)


@given(
    st.text(max_size=4),
    st.sampled_from(KINDS),
    st.one_of(st.none(), st.floats(allow_nan=False)),
    FIELDS,
    FIELDS,
    st.integers(0, 10**6),
    st.text(max_size=12),
    st.one_of(st.none(), FIELDS),
)
def test_a_message_made_through_its_slots_is_the_one_its_constructor_makes(mid, kind, at, content, metadata, line, path, raw):
    """new_message, a reader's every line's, sets the slots without the frozen dataclass's __init__: the same message."""
    made = new_message(mid, kind, at, content, metadata, "f.jsonl", line, path=path, raw=raw)
    expected = Message(mid, kind, at, content, metadata, Provenance("f.jsonl", line, path), raw)
    assert [getattr(made, f.name) for f in fields(Message)] == [getattr(expected, f.name) for f in fields(Message)]
    assert type(made.content) is Fields and type(made.metadata) is Fields and made.provenance == expected.provenance


def test_a_message_of_an_unknown_kind_is_refused_through_its_slots_too():
    with pytest.raises(ValueError, match="unknown message kind 'memo'"):
        new_message("m", "memo", None, {}, {}, "f.jsonl", 1)


def _answers(record: FullRecord, ids: list[str]) -> dict[str, object]:
    """Every look-up of a record's on these ids, each answer or the exception it raises."""

    def tried(call):
        try:
            return call()
        except (KeyError, IndexError) as exc:
            return type(exc).__name__

    n = len(record)
    return {
        "len": n,
        "iter": list(record),
        "items": [tried(lambda i=i: record[i]) for i in range(-n - 2, n + 2)],
        "slice": record[1:-1],
        "contains": [i in record for i in ids],
        "get": [tried(lambda i=i: record.get(i)) for i in ids],
        "places": record.places(ids),
        "all_of": tried(lambda: record.all_of(ids)),
        "found": record.found(ids),
        "holds": record.holds(set(ids)),
        "index_of": [tried(lambda i=i: record.index_of(i)) for i in ids],
        "indexes_of": tried(lambda: record.indexes_of(ids)),
        "ids": record.ids(),
    }


@given(st.integers(0, 8), IDS)
def test_a_records_prefix_answers_as_a_record_of_its_messages_alone_though_the_record_grew(length, ids):
    """The library stores the record as it stood when counted (RecordPrefix), read from the record's own list while
    the window appends to it: every look-up answers as a record of those messages alone, never a message since."""
    from foldscope.core.model.record_prefix import RecordPrefix

    grown = FullRecord(list(RECORD)[:length])
    prefix = RecordPrefix(grown)
    for message in list(RECORD)[length:]:
        grown.append(message)
    alone = FullRecord(list(RECORD)[:length])
    assert _answers(prefix, ids) == _answers(alone, ids)
    assert prefix._messages is grown._messages  # read from the record, not a copy
    with pytest.raises(TypeError):
        prefix.append(Message("m9", "instruction", 9, {"instruction": "w9"}))


def test_every_look_up_of_a_record_is_a_prefixs_own():
    """A method FullRecord gains reads its whole list unless RecordPrefix answers it too."""
    from foldscope.core.model.record_prefix import RecordPrefix

    methods = {name for name, value in vars(FullRecord).items() if callable(value) and name not in ("__init__", "__getstate__")}
    assert methods and methods <= {name for name in vars(RecordPrefix)}
