"""The full record's look-ups of many ids at once give what looking each up gives."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message

RECORD = FullRecord(Message(f"m{i}", "instruction", i, {"instruction": f"w{i}"}) for i in range(8))
IDS = st.lists(st.sampled_from([f"m{i}" for i in range(10)]), max_size=20)  # m8 and m9 are not in the record


@given(IDS)
def test_found_gives_the_messages_of_the_ids_the_record_holds_in_order_and_leaves_the_rest_out(ids):
    assert RECORD.found(ids) == [RECORD.get(i) for i in ids if i in RECORD]


@given(IDS)
def test_all_of_gives_every_ids_message_in_order_or_a_key_error_as_get_does(ids):
    if all(i in RECORD for i in ids):
        assert RECORD.all_of(ids) == [RECORD.get(i) for i in ids]
    else:
        with pytest.raises(KeyError):
            RECORD.all_of(ids)
