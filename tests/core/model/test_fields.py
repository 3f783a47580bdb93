"""A message's content and metadata kept as Fields (core.model.session) read exactly as the read-only dict copy
(MappingProxyType) they replace: over random mappings every read, comparison, copy and pickle gives what the
proxy gave, and neither the message nor the mapping it was made from can change the other."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Mapping
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import Fields, Message, canonical_json

keys = st.sampled_from(["instruction", "assistant_response", "function", "arguments", "output", "uuid", "model", "x"])
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
mappings = st.dictionaries(keys, values, max_size=6)
probes = keys | st.just("absent") | st.integers()


@given(mappings, st.lists(probes, max_size=8))
def test_fields_read_as_the_read_only_copy_they_replace(mapping, asked):
    fields, proxy = Fields(mapping), MappingProxyType(dict(mapping))
    assert list(fields) == list(proxy)  # the keys in their order
    assert len(fields) == len(proxy)
    assert list(fields.items()) == list(proxy.items())
    assert list(fields.values()) == list(proxy.values())
    assert len(fields.values()) == len(proxy) and all(v in fields.values() for v in proxy.values())
    assert list(fields.pairs()) == list(proxy.items())
    for key in asked:
        assert (key in fields) == (key in proxy)
        assert fields.get(key) == proxy.get(key)
        assert fields.get(key, "default") == proxy.get(key, "default")
        assert fields.sole(key, "default") == (proxy[key] if list(proxy) == [key] else "default")
        if key in proxy:
            assert fields[key] is proxy[key]
        else:
            with pytest.raises(KeyError):
                fields[key]
    assert dict(fields) == dict(proxy) and {**fields} == {**proxy}
    assert canonical_json(dict(fields)) == canonical_json(dict(proxy))
    assert json.dumps(dict(fields)) == json.dumps(dict(proxy))  # the order a dump keeps without sort_keys
    assert isinstance(fields, Mapping)


@given(mappings, mappings)
def test_fields_compare_as_dicts_do(a, b):
    assert (Fields(a) == Fields(b)) == (a == b)
    assert (Fields(a) == b) == (a == b) and (a == Fields(b)) == (a == b)
    assert (Fields(a) == MappingProxyType(b)) == (a == b)
    assert (Fields(a) != b) == (a != b)
    assert Fields(a) != list(a.items())  # a mapping is never equal to a list, as a dict is not


@given(mappings)
def test_fields_pickle_and_copy_to_equal_fields(mapping):
    fields = Fields(mapping)
    for again in (pickle.loads(pickle.dumps(fields, protocol=5)), copy.copy(fields), copy.deepcopy(fields)):
        assert type(again) is Fields and again == fields and list(again.pairs()) == list(fields.pairs())


def test_a_message_content_cannot_be_changed_through_it_or_through_the_dict_it_was_made_from():
    content = {"instruction": "hi", "guidance": {"deep": 1}}
    message = Message("m1", "instruction", None, content, {"uuid": "u1"})
    content["instruction"] = "changed"
    content["added"] = True
    assert dict(message.content) == {"instruction": "hi", "guidance": {"deep": 1}}
    with pytest.raises(TypeError):
        message.content["instruction"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        del message.metadata["uuid"]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        message.content.update({})  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(message.content)


def test_mappings_of_the_same_keys_share_one_keys_tuple_and_a_message_keeps_fields_it_is_given():
    one, two = Fields({"uuid": "a", "model": "m"}), Fields({"uuid": "b", "model": "m"})
    assert one._keys is two._keys
    first = Message("m1", "instruction", None, {"instruction": "hi"}, one)
    assert first.metadata is one  # nothing to copy: a Fields cannot change
