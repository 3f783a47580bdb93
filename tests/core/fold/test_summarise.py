"""The summariser interface and its default deterministic brief: bounded, from the span, no model."""

from __future__ import annotations

from foldscope.core.fold.stages import call_entry
from foldscope.core.fold.summarise import BRIEF_MAX_CHARS, BriefSummariser, CallableSummariser, brief, short_arguments
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
