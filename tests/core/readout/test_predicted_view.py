"""After an edit of the active view, the next request's predicted input moves by what the edit changed in the count."""

from __future__ import annotations

from foldscope.core.formats import load_session
from foldscope.core.readout.document import build_document
from foldscope.core.request.provider_text import PredictionCounter

CODEX = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"


def test_an_edit_moves_the_next_requests_prediction_by_the_change_in_its_count(corpus_dev):
    session = load_session(str(corpus_dev / CODEX))
    document = build_document(session, session.source)
    basis = document.next_basis
    assert basis is not None and document.now_predicted == basis[0] > 0
    counted = document.counter.count(session.view_messages(), record=session.record)
    assert document.predict_view(counted) == document.now_predicted  # no edit: no change
    dropped = session.view[-1]
    session.set_view(session.view[:-1])
    after = document.predict_view(counted)
    gone = PredictionCounter(session.format).count([session.record.get(dropped)], 0, session.model).total
    assert after < document.now_predicted
    assert abs((document.now_predicted - after) - gone * basis[2]) <= 2
