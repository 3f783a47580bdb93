"""The counter's shortcuts for the commonest message and block give what the general rule gives: a typed prompt's
text (core.request.plan.instruction_text) and a plain text block's counted body (core.request.count_step.body_of),
over random contents and texts (quotes, backslashes, control characters, any Unicode)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import Message
from foldscope.core.request.compile import canonical, render_block
from foldscope.core.request.count_step import body_of, type_glue
from foldscope.core.request.plan import (
    TEXT,
    BlockSpec,
    CompileError,
    has_text,
    instruction_parts_text,
    instruction_text,
    value_text,
)
from tests.core.model.test_canonical import VALUES

# The characters JSON escapes or a shortcut could lose (quotes, backslashes, controls, spaces at the ends), and any
# Unicode, lone surrogates too.
texts = st.text(alphabet=' \t\n"\\a/\x00\x1fé\u2028😀', max_size=8) | st.text(alphabet=st.characters(blacklist_categories=()), max_size=12)
values = st.none() | texts | st.integers() | st.lists(texts, max_size=2) | st.dictionaries(texts, texts, max_size=2)
contents = st.one_of(
    st.builds(lambda t: {"instruction": t}, texts | st.integers() | st.lists(texts, max_size=2)),
    st.dictionaries(st.sampled_from(["instruction", "guidance", "context", "prompt_context"]), values, max_size=4),
)


@given(contents)
def test_a_typed_prompts_text_is_the_general_rules_text(content):
    message = Message("m1", "instruction", None, content)
    assert instruction_text(message) == instruction_parts_text(message)
    assert has_text(message) == bool(instruction_parts_text(message))  # whether it renders a block of its own


def general_body(spec: BlockSpec) -> str:
    """body_of's general rule: the block's canonical JSON between its opening `{"` and its type."""
    text = canonical(render_block(spec))
    return text[2 : len(text) - len(type_glue(spec))]


@given(
    texts,
    st.sampled_from(["instruction", "assistant", "note"]),
    st.sampled_from([None, "5m", "1h"]),
    st.sampled_from([None, {"guidance": "g"}, {"context": ["c", 1]}]),
)
def test_a_text_blocks_body_is_its_canonical_json_less_its_type(text, kind, mark, more):
    content = {"instruction": text, **(more or {})} if kind == "instruction" else {"assistant_response": text}
    spec = BlockSpec(Message("m1", kind, None, content), TEXT, mark=mark)
    assert body_of(spec, None, None, None) == general_body(spec)


def test_a_text_block_set_through_its_slots_is_the_block_the_dataclass_makes_and_so_is_a_part():
    """plan_runs makes its text blocks and the counter its parts without the frozen dataclasses' __init__ (a million
    each on a file of tiny prompts): equal, hashed and shown alike, every field set."""
    from foldscope.core.model.session import Message
    from foldscope.core.request.count import Part, new_part
    from foldscope.core.request.plan import TEXT, BlockSpec, text_block

    m = Message("m", "instruction", 0, {"instruction": "w1"})
    made, reference = text_block(m), BlockSpec(m, TEXT)
    assert made == reference and hash(made) == hash(reference) and repr(made) == repr(reference)
    assert new_part(m, "instruction", 5) == Part(m, "instruction", 5)
    assert repr(new_part(None, "system", 0)) == repr(Part(None, "system", 0))


@given(VALUES.filter(lambda v: not isinstance(v, str)))  # a string is its own text
def test_a_values_request_text_is_the_sorted_key_json_of_json_dumps_or_the_same_refusal(value):
    """value_text writes a non-string value through canonical_json (msgspec where its text is the same): the text
    json.dumps gives with sorted keys, no spaces and no NaN, or a CompileError where json.dumps refuses."""
    message = Message("m", "action_response", 0, {"output": value})
    try:
        expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        with pytest.raises(CompileError):
            value_text(value, message)
        return
    assert value_text(value, message) == expected


arguments = VALUES | st.dictionaries(texts, VALUES, max_size=3)


@given(
    st.sampled_from(["tool_use", "tool_result"]),
    arguments,
    texts,
    texts,
    st.sampled_from([None, "5m", "1h"]),
    st.sampled_from([None, True, False, "yes"]),
)
def test_a_calls_and_a_results_body_is_its_canonical_json_less_its_type(tag, value, name, call_id, mark, is_error):
    """body_of writes a tool_use's and a tool_result's body key by key: the text the general rule cuts from the whole
    block's canonical JSON (any arguments or output, errors flagged or not, marked or not), or the same refusal."""
    metadata = {} if is_error is None else {"is_error": is_error}
    if tag == "tool_use":
        message = Message("c1", "action_request", None, {"function": name, "arguments": value})
    else:
        message = Message("r1", "action_response", None, {"function": name, "output": value}, metadata)
    spec = BlockSpec(message, tag, call_id, mark)
    try:
        expected = general_body(spec)
    except (TypeError, ValueError, CompileError) as exc:
        with pytest.raises(type(exc)):
            body_of(spec, None, None, None)
        return
    assert body_of(spec, None, None, None) == expected


@given(VALUES | st.dictionaries(texts, VALUES, max_size=3))
def test_a_results_json_escaped_by_two_replaces_is_its_json_string(value):
    """quoted_json escapes a result's JSON text (canonical_bytes') by its backslashes and quotes only: the text
    json_string writes of that JSON text, inside its quotes, for any value msgspec writes (controls, U+2028, DEL,
    any Unicode); a value it does not write is left to value_text's way."""
    from foldscope.core.model.canonical import canonical_bytes, canonical_json
    from foldscope.core.request.count_step import json_string, quoted_json

    data = canonical_bytes(value)
    if data is None:
        return
    assert quoted_json(data) == json_string(canonical_json(value))[1:-1]
