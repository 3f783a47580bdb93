"""Replaying a session's trace through the fold: one view version per change, with its cause."""

from __future__ import annotations

import itertools
import uuid

import pytest

from foldscope.core.fold import fold as fold_module
from foldscope.core.fold.history import Folding, replay_folds, session_at_request
from foldscope.core.formats.demo import generate
from foldscope.core.model.policy import Policy
from tests.core.fold_sessions import fold_measure


def test_replaying_the_demo_gives_a_version_per_request_and_per_landed_fold_without_changing_the_session():
    session = generate()
    view, size = list(session.view), len(session.record)
    replay = replay_folds(session, fold_measure(session, 20_000))
    assert session.view == view and len(session.record) == size
    causes = {v.cause for v in replay.versions}
    assert {"request", "fold"} <= causes
    assert sum(1 for v in replay.versions if v.cause == "request") == len(session.trace)
    folds = [v for v in replay.versions if v.cause == "fold"]
    assert all(v.record["outcome"] == "landed" for v in folds)
    assert all(set(v.view) <= set(replay.session.record.ids()) for v in replay.versions)
    assert [v.request for v in replay.versions] == sorted(v.request for v in replay.versions)


def test_every_request_after_its_folds_is_under_the_ceiling_or_refused():
    session = generate()
    replay = replay_folds(session, fold_measure(session, 20_000))
    for k in range(len(session.trace)):
        last = [v for v in replay.versions if v.request == k][-1]
        assert last.estimate <= 20_000 or k in replay.refusals


def test_the_session_at_a_request_has_its_record_up_to_the_answer_and_delivery_so_far():
    session = generate()
    at = session_at_request(session, 5)
    answer = session.record.index_of(session.trace[5].response_id)
    assert len(at.record) == answer and list(at.view) == list(session.trace[5].view)
    assert set(at.branch_metadata["delivered"]) == set(session.trace[4].view) | set(session.trace[0].view)


def test_the_fold_history_decides_the_first_round_once_by_the_first_request_that_carries_it_whole():
    from foldscope.core.model.policy import Policy
    from foldscope.core.request.first_round import find_round, read_decision

    session = generate()
    policy = Policy(max_input_tokens=20_000, tool_result_max_chars=4_000, prompt_caching=True)
    replay = replay_folds(session, fold_measure(session, 20_000, policy=policy), clock=lambda: 0.0)
    decision = read_decision(replay.session)
    first_whole = next(
        k for k, r in enumerate(session.trace) if (found := find_round([session.record.get(i) for i in r.view])) and found.whole
    )
    assert decision["members"] == list(find_round([session.record.get(i) for i in session.trace[first_whole].view]).members)
    at = session_at_request(session, first_whole, policy)
    assert read_decision(at) is None  # the request that carries it decides it in its own compile
    later = session_at_request(session, first_whole + 1, policy)
    assert read_decision(later)["members"] == decision["members"]
    assert session.branch_metadata.get("prompt_cache") is None  # the session itself is never changed
    unbounded = replay_folds(session, fold_measure(session, 20_000), clock=lambda: 0.0)
    assert read_decision(unbounded.session) is None  # without a caching policy nothing decides


@pytest.mark.parametrize("ceiling", [20_000, 9_000, 4_000])
def test_each_version_and_each_delivery_holds_the_view_as_it_stood_then(monkeypatch, ceiling):
    # The versions share the view's ids as it grows (a new list after each fold): read after the whole replay, each
    # still holds the view as it stood when it was made, and each request delivers the view it was sent with.
    from foldscope.core.fold import history

    session = generate()
    before: list[tuple[str, ...]] = []
    after: list[tuple[str, ...]] = []
    delivered: list[tuple[str, ...]] = []
    real_prepare, real_mark = history.Fold.prepare_request, history.mark_delivered

    def prepare(self, estimate=None, **options):
        before.append(tuple(self.session.view))
        out = real_prepare(self, estimate, **options)
        after.append(tuple(self.session.view))
        return out

    def mark(work, ids):
        assert tuple(ids) == tuple(work.view)
        delivered.append(tuple(ids))
        return real_mark(work, ids)

    monkeypatch.setattr(history.Fold, "prepare_request", prepare)
    monkeypatch.setattr(history, "mark_delivered", mark)
    replay = replay_folds(session, fold_measure(session, ceiling))
    assert [tuple(v.view) for v in replay.versions if v.cause == "request"] == before
    refused = sorted(replay.refusals)
    assert [tuple(v.view) for v in replay.versions if v.cause == "refused"] == [after[k] for k in refused]
    assert delivered == [after[k] for k in range(len(after)) if k not in replay.refusals]
    assert replay.session.branch_metadata["delivered"] == list(dict.fromkeys(i for view in delivered for i in view))
    if ceiling == 4_000:
        assert refused and any(v.cause == "fold" for v in replay.versions)  # both kinds of change are exercised


@pytest.mark.parametrize("caching", [False, True])
def test_a_fold_without_span_digests_folds_the_same_views_at_the_same_estimates(caching, monkeypatch):
    # The replay lab's adr folds without its notes' span digests and its copies' originals' (core.replay.strategies.adr:
    # it never reads them);
    # the digest is bookkeeping for a restore, never sent or counted, so every version is the same without it.
    def versions(digests: bool):
        ids = itertools.count()  # the notes' ids, the same in both runs
        monkeypatch.setattr(fold_module.uuid, "uuid4", lambda: uuid.UUID(int=next(ids)))
        session = generate()
        policy = Policy(max_input_tokens=20_000, tool_result_max_chars=4_000, prompt_caching=caching)
        folding = Folding(session, fold_measure(session, 20_000, policy=policy), clock=lambda: 0.0, digests=digests)
        for _ in folding:
            pass
        made = [m for m in folding.replay.session.record if m.id not in session.record]
        return [(v.request, tuple(v.view), v.cause, v.estimate) for v in folding.replay.versions], made, session.record

    (with_digests, noted, record), (without, bare, _) = versions(True), versions(False)
    assert with_digests == without and any(cause == "fold" for _, _, cause, _ in without)
    notes, copies = [m for m in noted if m.kind == "note"], [m for m in noted if m.is_clipped_copy]
    assert notes and all(len(m.metadata["context_replaced_sha256"]) == 64 for m in notes)
    # so are its clipped copies, each of which recorded its original's SHA-256
    assert copies and all(m.metadata["context_clip_sha256"] == record.get(m.clipped_from).sha256() for m in copies)
    assert [m.text for m in bare] == [m.text for m in noted]
    assert all("context_replaced_sha256" not in m.metadata and "context_clip_sha256" not in m.metadata for m in bare)
    assert [{k: v for k, v in m.metadata.items() if not k.endswith("sha256")} for m in bare] == [
        {k: v for k, v in m.metadata.items() if not k.endswith("sha256")} for m in noted
    ]  # none recorded, rather than a false one; every other fact the same


def test_the_folds_count_hands_a_shared_view_to_the_counter_as_it_is_so_its_start_is_found_a_chunk_at_a_time(monkeypatch):
    # A copy as a list would be compared with the counter's last Shared item by item on every request of a replay.
    from foldscope.core.model.shared_start import Shared

    session = generate()
    measure = fold_measure(session, 20_000)
    counted = measure.count
    seen: list = []
    monkeypatch.setattr(measure, "count", lambda messages, **how: seen.append(messages) or counted(messages, **how))
    view = Shared(session.view_messages())
    count = fold_module.default_count(measure)
    assert count(view) == counted(list(view), decide=False)
    assert seen[0] is view
    as_list = list(view)
    count(as_list)
    assert seen[1] is not as_list and list(seen[1]) == as_list  # a list may change after: the counter gets a copy


def test_the_working_record_reaches_every_message_a_request_gains_whatever_its_answers_place():
    # The record is fed to each request's answer, and further where its arrivals hold a message written after it: the
    # last arrival, in record order, is the furthest, so every id the working view holds is a message of its record.
    from foldscope.core.replay.strategies import Arrival, arrivals

    session = generate(rounds=6)
    given = arrivals(session)
    late = next(m for m in reversed(session.record) if m.kind == "action_response")  # written after request 0's answer
    fed = [Arrival([m for m in new if m is not late], dropped) for new, dropped in given]
    fed[0] = Arrival([*fed[0].new, late], fed[0].dropped)
    assert session.record.index_of(late.id) > session.record.index_of(session.trace[0].response_id)
    folding = Folding(session, fold_measure(session, 200_000), clock=lambda: 0.0, arrivals=fed)
    work = folding.replay.session
    for _ in folding:
        assert all(mid in work.record for mid in work.view)
