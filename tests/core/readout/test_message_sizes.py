"""One size for one message: its part of the full record compiled as one request, the figure the lists, the window
map and `inspect` share, and the part the Composition panel shows for it in a request that carries it alike."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.message_sizes import record_sizes
from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text

FILES = [
    "claude_code/session-9eda1058.jsonl",
    "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    "pi/pi-mono_large-session.jsonl",
]


@pytest.mark.parametrize("name", FILES)
def test_the_records_size_is_inspects_and_its_messages_are_their_parts_of_it(corpus_dev, capsys, name):
    path = corpus_dev / name
    session = load_session(path)
    sizes = record_sizes(Measure(session))
    assert main(["inspect", str(path), "--json"]) == 0
    assert sizes.total == json.loads(capsys.readouterr().out)["record_size"]["tokens"]
    composition = Measure(session).parts(list(session.record), head=0, first_round=None)
    parts: dict[str, int] = {}
    for message, n in composition.messages:
        parts[message.id] = parts.get(message.id, 0) + n
    for i, message in enumerate(session.record):
        assert sizes.tokens[i] == parts.get(message.id, count_text(message.text)), i
    placed = sum(sizes.tokens[i] for i, m in enumerate(session.record) if m.id in parts)
    assert placed + composition.system + composition.tools + composition.framing == sizes.total


def test_a_result_is_the_size_the_composition_shows_for_it_in_the_last_request(corpus_dev):
    # The list said 6,356 (its text alone) where the Composition said 7,040 (its block in the request): now one size.
    session = load_session(corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    measure = Measure(session, Policy())
    sizes = record_sizes(measure)
    k = len(measure.requests) - 1
    results = [(m, n) for m, n in measure.request_parts(k).messages if m.kind == "action_response"]
    assert results
    for message, n in results:
        assert sizes.tokens[session.record.index_of(message.id)] == n


def test_a_message_no_block_carries_with_no_text_is_sized_0_without_asking_the_counter(corpus_dev, monkeypatch):
    # An assistant turn of calls alone has an empty text and, its calls laid out as their own blocks, no part: 7,522 of
    # them at 50,000 messages, each a call into the counter for nothing on the window's way to its counted timeline.
    from foldscope.core.readout import message_sizes

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")  # 26 such turns
    before = record_sizes(Measure(session)).tokens
    texts: list[str] = []
    real = message_sizes.count_text
    monkeypatch.setattr(message_sizes, "count_text", lambda text: texts.append(text) or real(text))
    after = record_sizes(Measure(session)).tokens
    assert after == before
    assert "" not in texts
    assert any(n == 0 and m.text == "" for m, n in zip(session.record, after))  # such a message is there, sized 0
