"""The summariser interface and its default deterministic brief: bounded, from the span, no model."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from foldscope.core.fold.stages import call_entry
from foldscope.core.fold.summarise import BRIEF_MAX_CHARS, BriefSummariser, CallableSummariser, brief, first_lines, short_arguments
from tests.core.fold_sessions import Build, text_of


def span():
    b = Build()
    b.task("Find the bug in the loader.\nIt ignores the home folder.")
    b.answer("First I read the loader.\nIt builds paths early.\nA third line.")
    pairs = b.round([text_of(3_000)])
    b.answer("The bug is in resolve_profile.")
    return b, pairs


def test_the_brief_holds_the_opening_instruction_each_answers_first_lines_and_the_calls():
    b, pairs = span()
    record = b.session().record
    calls = [call_entry(pairs[0][1], record)]
    text = brief(b.messages, calls)
    assert text.startswith("Task: Find the bug in the loader. It ignores the home folder.")
    assert "- First I read the loader." in text and "- It builds paths early." in text
    assert "A third line" not in text  # first lines only
    assert text.index("First I read") < text.index("resolve_profile")
    assert "reader" in text and "src/f" in text and "3,000 chars" in text


def test_the_brief_is_deterministic_and_at_most_2000_characters():
    b = Build()
    b.task("t")
    for k in range(200):
        b.answer(text_of(300, k))
    first = BriefSummariser().summarise(b.messages, [])
    second = BriefSummariser().summarise(b.messages, [])
    assert first == second and first.source == "host" and first.usage is None
    assert len(first.text) <= BRIEF_MAX_CHARS == 2_000


def test_a_model_summariser_is_called_only_when_configured_and_falls_back_to_the_brief_on_failure():
    b, _ = span()

    def fails(prompt):
        raise ConnectionError("no network")

    summary = CallableSummariser(fails).summarise(b.messages, [])
    assert summary.source == "host" and summary.text == brief(b.messages, [])
    summary = CallableSummariser(lambda p: ("the model's words", {"input_tokens": 3, "output_tokens": 2})).summarise(b.messages, [])
    assert summary.source == "model" and summary.usage == {"input_tokens": 3, "output_tokens": 2}


def test_a_path_argument_is_kept_whole_up_to_1000_characters_and_others_clipped_to_160():
    path = "src/" + "a" * 900 + ".py"
    shown = short_arguments({"path": path, "content": "x" * 500})
    assert path in shown and "x" * 161 not in shown and "(500 chars)" in shown


def _brief_written_whole(span, calls, max_chars):
    """The brief as first written: every line, then the cut (the reference for the one that writes what can show)."""
    from foldscope.core.fold.summarise import _INSTRUCTION_CHARS, _LINE_CHARS, _LINES_PER_ANSWER, _clip_line, call_line

    parts = []
    opening = next((m for m in span if m.kind == "instruction"), None)
    if opening is not None:
        parts.append("Task: " + _clip_line(opening.text, _INSTRUCTION_CHARS))
    for message in span:
        if message.kind in ("assistant", "note"):
            lines = [ln.strip() for ln in message.text.splitlines() if ln.strip()][:_LINES_PER_ANSWER]
            parts.extend("- " + _clip_line(line, _LINE_CHARS) for line in lines)
    if calls:
        parts.append(f"Calls ({len(calls)}):")
        parts.extend("- " + call_line(call) for call in calls)
    text = "\n".join(parts)
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 40].rsplit("\n", 1)[0]
    return f"{cut}\n- ... {text[len(cut) :].count(chr(10))} more lines"[:max_chars]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 400), max_size=6),
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 10**6)), max_size=120),
    st.integers(60, 3_000),
)
def test_a_brief_writes_only_the_calls_that_can_show_and_says_how_many_lines_it_left(answers, calls, max_chars):
    # A note carries the call lists of every note it folds, so a long session's brief has thousands of calls behind
    # it: the brief writes the lines that fit, and counts the rest, as writing them all then cutting would.
    b = Build()
    b.task("Find the bug.\nIn the loader.")
    for k, n in enumerate(answers):
        b.answer(text_of(n, k) + "\nsecond line\nthird")
    entries = [{"function": "read", "arguments": "x" * a, "output_chars": out, "index": i} for i, (a, out) in enumerate(calls)]
    assert brief(b.messages, entries, max_chars) == _brief_written_whole(b.messages, entries, max_chars)


class _NotJson:
    """What JSON cannot hold: written as its str (not its repr)."""

    def __str__(self) -> str:
        return "not json, é"

    def __repr__(self) -> str:
        return "NotJson()"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30) | st.just(_NotJson()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_a_calls_arguments_are_written_as_json_dumps_writes_them_unescaped_with_str_for_the_rest(value):
    # The one encoder a note's call list reuses writes what json.dumps(value, ensure_ascii=False, default=str) does:
    # non-ASCII as it is, what JSON cannot hold as its str; a string argument is shown as it is.
    import json

    from foldscope.core.fold.summarise import _json

    assert _json(value) == (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=12) | st.integers() | st.none(), st.text(max_size=30) | st.integers() | st.none(), max_size=5))
def test_a_flat_dict_of_strings_is_written_as_json_dumps_writes_it(value):
    # The call's commonest arguments, a flat dict of strings, are written without the encoder: quotes, backslashes,
    # control and non-ASCII characters, separators and key order as json.dumps(ensure_ascii=False) writes them; a key
    # or value of another type is the encoder's.
    import json

    from foldscope.core.fold.summarise import _json

    assert _json(value) == json.dumps(value, ensure_ascii=False, default=str)
    flat = {str(k): str(v) for k, v in value.items()}
    assert _json(flat) == json.dumps(flat, ensure_ascii=False, default=str)


# Every break str.splitlines knows, \r\n (one break of two characters) among them.
_BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1_500), st.sampled_from(["x", " ", " y ", "\t", "z "]), st.sampled_from(_BREAKS)), max_size=25),
    st.integers(0, 4),
)
@example([(1_023, "x", "\r\n"), (5, "y", "\n")], 2)  # the two characters of \r\n either side of the first prefix's end
@example([(3_000, " ", "\n"), (2, "x", "\n")], 1)  # a first prefix of blanks alone
def test_an_answers_first_lines_are_those_the_whole_text_split_gives(lines, n):
    text = "".join(fill * length + brk for length, fill, brk in lines)
    assert first_lines(text, n) == [ln.strip() for ln in text.splitlines() if ln.strip()][:n]
