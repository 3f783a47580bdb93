"""The window's message sizes are counted while the child counting ahead still runs: the blocks no request carried (a
result a compaction left unsent, the record's tail) are the child's to count, so the window builds no tokenizer for them."""

from __future__ import annotations

import pytest

from foldscope.core.readout import opening
from foldscope.core.request.count import Counter
from tests.core.request.test_ahead import eager, tool_session  # noqa: F401  # eager: the child counting ahead, waited for


def _sized(session, monkeypatch) -> tuple[list[int], int, int]:
    """(each message's tokens, the record's count, the characters this process tokenised while sizing them)."""
    counter = Counter(threads=1)
    during: list[int] = []
    real = opening.record_sizes

    def sizes(measure):
        before = counter.tokenised_chars
        try:
            return real(measure)
        finally:
            during.append(counter.tokenised_chars - before)

    monkeypatch.setattr(opening, "record_sizes", sizes)
    document = opening.build_document(session, "session.jsonl", counter=counter)
    return document.tokens, document.record_count, sum(during)


@pytest.mark.usefixtures("eager")
def test_the_blocks_no_request_carried_are_sized_by_the_child_counting_ahead_to_the_same_figures(monkeypatch):
    session = tool_session(12)
    # The last turns' results and answers: in the record, in no request's view nor in the active view (as a result a
    # compaction left unsent: the view after it starts again)
    session.trace = session.trace[:-6]
    session.view = list(session.trace[-1].view)
    tokens, total, here = _sized(session, monkeypatch)
    assert here == 0, f"{here} characters tokenised in the window's process for its sizes"
    with monkeypatch.context() as local:
        local.setenv("FOLDSCOPE_COUNTING", "local")
        alone = _sized(session, local)
    assert alone[2] > 0, "counted in-line, sizing tokenised nothing: the test proved nothing"
    assert (tokens, total) == alone[:2]
