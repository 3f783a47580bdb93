"""The fold measures the head a file does not hold (system prompt, tools) as part of every request."""

from foldscope.core.fold.delivery import clone_session
from foldscope.core.fold.fold import Fold
from foldscope.core.fold.history import session_at_request
from foldscope.core.formats.demo import generate
from tests.core.fold_sessions import fold_measure


def test_the_fold_estimate_counts_the_unseen_head():
    session = generate(seed=5, rounds=3)
    bare = Fold(session, fold_measure(session, 1_000_000)).estimate()
    session.unseen_head = 20_000
    assert Fold(session, fold_measure(session, 1_000_000)).estimate() == bare + 20_000


def test_the_unseen_head_survives_clone_and_stepping_to_a_request():
    session = generate(seed=5, rounds=3)
    session.unseen_head = 12_345
    clone, _ = clone_session(session)
    assert clone.unseen_head == 12_345
    assert session_at_request(session, 1).unseen_head == 12_345
