"""After an edit of the active view, the next request's predicted input is the one `inspect` of the edited session gives."""

from __future__ import annotations

import pytest

from foldscope.core.fold.fold import Fold
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.opening import build_document
from foldscope.core.request.measure import Measure
from foldscope.core.request.provider_text import PredictionCounter

CODEX = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"


def fresh_prediction(session) -> int:
    """The next request's predicted input as a new measure of the session (what `inspect` prints) makes it."""
    return Measure(session).trace.next_predicted.predicted


def test_an_edit_moves_the_next_requests_prediction_by_the_change_in_its_count(corpus_dev):
    session = load_session(str(corpus_dev / CODEX))
    document = build_document(session, session.source)
    rule = document.next_basis
    assert rule is not None and document.now_predicted > 0
    counted = document.counter.count(session.view_messages(), record=session.record)
    assert document.predict_view(counted) == document.now_predicted  # no edit: no change
    dropped = session.view[-1]
    session.set_view(session.view[:-1])
    after = document.predict_view(counted)
    gone = PredictionCounter(session.format).count([session.record.get(dropped)], 0, session.model).total
    assert after < document.now_predicted
    assert abs((document.now_predicted - after) - gone * rule.predictor._ratio_for(rule.predictor._stretch, rule.model)) <= 2


# Issue 41, finding 5: after Apply fold the GUI showed 46,398 where `inspect` of the same fold showed 46,399 (the GUI
# moved the loaded prediction by the change at the old ratio, rounding twice; a fold's note also starts a stretch).
@pytest.mark.parametrize(
    "name,ceiling", [("claude_code/session-9eda1058.jsonl", 30_000), ("claude_code/extracted-dd381a75.jsonl", 60_000), (CODEX, 20_000)]
)
def test_after_a_fold_the_next_requests_prediction_is_the_one_a_fresh_measure_of_the_folded_session_gives(corpus_dev, name, ceiling):
    session = load_session(str(corpus_dev / name))
    document = build_document(session, session.source)
    measure = document.measure_for(Policy(max_input_tokens=ceiling))
    run = Fold(session, measure).run()
    assert run.records and session.view != [r for r in document.requests[-1].view]
    counted = measure.count(measure.messages(session.view))
    assert document.predict_view(counted) == fresh_prediction(session)
