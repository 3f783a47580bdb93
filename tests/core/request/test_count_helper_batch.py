"""The counter with inspect's tokenizer helper running: a view's new block bodies go to it in one batch through its
pipe, not one round trip each, and count exactly as the local encoding counts them (core.request.count._tokenise)."""

import os

import pytest

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request import tokens
from foldscope.core.request.count import PARALLEL_CHARS, Counter
from foldscope.core.request.counting import helper as forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper needs fork")


@pytest.fixture
def fresh(monkeypatch):
    """No encoding built yet in this process, so that start_helper forks; the helper stopped afterwards."""
    monkeypatch.setattr(tokens, "_encoding", None)
    yield
    forked.stop_helper()


def _view(n: int) -> list[Message]:
    return [
        Message(
            f"m{i}",
            "instruction" if i % 3 else "assistant",
            None,
            {"instruction": f"prompt {i} ünï ✓"} if i % 3 else {"assistant_response": f"answer {i}"},
        )
        for i in range(n)
    ]


def test_a_views_new_bodies_go_to_the_helper_in_one_batch_and_count_as_here(fresh, monkeypatch):
    view = _view(60)
    expected = Counter().count(view, record=FullRecord(view))  # no helper yet: the local encoding
    monkeypatch.setattr(tokens, "_encoding", None)
    assert forked.start_helper()
    helper = tokens.encoding()
    asked: list[str] = []
    ask = helper._ask
    monkeypatch.setattr(helper, "_ask", lambda request: (asked.append(request[0]), ask(request))[1])
    assert sum(len(m.text) for m in view) < PARALLEL_CHARS  # below the size where threads are tried
    assert Counter(2).count(view, record=FullRecord(view)) == expected
    # One batch of counts for the head and the sixty bodies, not a round trip each; only the few kinds of glue
    # between blocks (each counted once and memoised) are asked apart.
    assert asked.count("counts") == 1 and asked.count("one") < 10, asked
