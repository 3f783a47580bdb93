"""Replay's adr strategy is the fold the CLI and GUI run: same policy, same estimate, and its refusals recorded."""

from __future__ import annotations

import pytest

from foldscope.core.fold.delivery import DELIVERED_KEY
from foldscope.core.fold.fold import Fold
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Session
from foldscope.core.replay.lab import run_strategy
from foldscope.core.replay.layouts import Layouts
from foldscope.core.request.first_round import find_round
from foldscope.core.request.measure import Measure

# (file under the dev corpus, ceiling): a Claude Code session whose reported input carries a 27,657-token unseen
# head (the fold under replay once ignored it, and ran 14 requests past 60,000), and a pi excerpt with one
# request whose floor view alone is past 150,000.
REAL = [("claude_code/session-196820da.jsonl", 60_000), ("pi/earendil-works-pi_personal-assistant_session-sample.EXCERPT.jsonl", 150_000)]


def standalone_fold(session: Session, view, layouts: Layouts) -> Fold:
    """A fresh fold over one replayed request's view, every earlier message delivered, with the replay's estimate
    (its scale and unseen head) under the same Measure's policy and counter."""
    record = FullRecord(list(session.record))
    for m in view:
        if m.id not in record:
            record.append(m)  # the replay's own notes and copies
    ids = [m.id for m in view]
    at = Session(
        record=record,
        view=ids,
        format=session.format,
        source=session.source,
        model=session.model,
        scale=layouts.scale,
        unseen_head=layouts.head,
        extras=dict(session.extras),
    )
    at.branch_metadata[DELIVERED_KEY] = ids
    return Fold(at, layouts.measure.over(at), clock=lambda: 0.0)


@pytest.mark.parametrize("name,ceiling", REAL)
def test_d4_replay_adr_is_over_the_ceiling_only_where_a_standalone_fold_cannot_bring_it_under_and_records_it_refused(
    corpus_dev, name, ceiling
):
    session = load_session(corpus_dev / name)
    layouts = Layouts(Measure(session, Policy(max_input_tokens=ceiling)))
    run = run_strategy(session, "adr", layouts, keep_views=True)
    over = [(row, view) for row, view in zip(run.rows, run.views) if row.estimate >= ceiling]
    for row, view in over:
        assert row.refused and row.over_ceiling
        assert row.floor_estimate is not None and row.floor_estimate >= ceiling  # nothing could make it sendable
        assert (row.fresh, row.cache_read, row.cache_write, row.output, row.cost_usd) == (0, 0, 0, 0, 0.0)
        runs, refusal = standalone_fold(session, view, layouts).prepare_request()
        assert refusal is not None, f"request {row.request}: a standalone fold brings {row.estimate:,} under {ceiling:,}"
    assert run.totals()["refused"] == len(over) == sum(r.refused for r in run.rows)
    assert all(not r.refused for r in run.rows if r.estimate < ceiling)
    assert len(run.rows) == len(session.trace)  # a refused request does not end the replay


def test_d4_replay_adr_folds_a_real_session_with_an_unseen_head_under_its_own_ceiling(corpus_dev):
    session = load_session(corpus_dev / "claude_code/session-196820da.jsonl")
    measure = Measure(session, Policy(max_input_tokens=60_000))
    rows = run_strategy(session, "adr", measure).rows
    assert max(r.estimate for r in rows) < 60_000 and not any(r.refused for r in rows)
    assert sum(r.folds for r in rows[:5]) > 0  # it folds where the line is crossed (request 3), not at request 25
    assert max(r.estimate for r in run_strategy(session, "none", measure).rows) > 60_000


def test_d4_replay_adr_folds_with_the_replays_own_unseen_head_not_the_sessions(corpus_dev):
    # Measuring the session keeps its 27,657-token unseen head on it; a replay given another head (0 here, as
    # cache_check gives it) must fold on that one, so without the head the line is crossed later.
    session = load_session(corpus_dev / "claude_code/session-196820da.jsonl")
    measure = Measure(session, Policy(max_input_tokens=60_000))
    first = [next(r.request for r in run_strategy(session, "adr", Layouts(measure, head=head)).rows if r.folds) for head in (None, 0)]
    assert session.unseen_head > 10_000 and first[0] < first[1]


def test_d4_a_request_refused_in_replay_sends_nothing_costs_nothing_and_the_replay_continues(corpus_dev):
    session = load_session(corpus_dev / REAL[1][0])
    measure = Measure(session, Policy(max_input_tokens=REAL[1][1]))
    run = run_strategy(session, "adr", measure)
    refused = [r for r in run.rows if r.refused]
    assert refused, "the excerpt has a request whose floor view is over 150,000"
    assert run.rows[-1].request == len(session.trace) - 1
    totals = run.totals()
    assert totals["refused"] == len(refused)
    assert totals["cost_usd"] is None or totals["cost_usd"] == pytest.approx(sum(r.cost_usd for r in run.rows if not r.refused))
    assert "refused" in run_strategy(session, "band", measure).totals()  # every strategy's totals say it


def test_amendment_4_replay_adr_with_caching_folds_under_the_protected_first_round():
    session = load_session(demo_path())
    measure = Measure(session, Policy(max_input_tokens=20_000, tool_result_max_chars=4_000, prompt_caching=True))
    first = find_round([m for m in session.record if m.kind != "note" and not m.is_clipped_copy])
    assert first is not None
    # At the scale the round was decided at (the session's kept scale, 1.0): the demo's own reports calibrate 3.4,
    # at which its first round is over a tenth of the ceiling and so excluded (it protects nothing then).
    run = run_strategy(session, "adr", Layouts(measure, scale=1.0), keep_views=True)
    assert sum(r.folds for r in run.rows) > 0
    carried = [k for k, view in enumerate(run.views) if set(first.members) <= {m.id for m in view}]
    assert carried, "the first round reaches a request whole"
    for row, view in zip(run.rows[carried[0] :], run.views[carried[0] :]):
        assert set(first.members) <= {m.id for m in view}, f"request {row.request} folded the protected first round"


def sizes_decided(session: Session, layouts: Layouts) -> dict[int, int]:
    """Each request's size as the fold decided on it (its view's last version), replayed on its own."""
    from foldscope.core.fold.history import replay_folds

    replay = replay_folds(session, layouts.measure, clock=lambda: 0.0, scale=layouts.scale, head=layouts.head)
    return {v.request: v.estimate for v in replay.versions}


@pytest.mark.parametrize(
    "policy", [Policy(max_input_tokens=20_000), Policy(max_input_tokens=20_000, tool_result_max_chars=4_000, prompt_caching=True)]
)
def test_replay_adr_shows_each_request_at_the_size_the_fold_decided_on(policy):
    # The lab lays adr's requests out under the fold's own measure (its working record and first round), so the
    # size a row shows is the one the fold decided on; a request the replay shows over the ceiling is one the fold
    # could not bring under, by construction.
    session = load_session(demo_path())
    layouts = Layouts(Measure(session, policy), scale=1.0)
    rows = run_strategy(session, "adr", layouts).rows
    decided = sizes_decided(load_session(demo_path()), layouts)
    assert sum(r.folds for r in rows) > 0
    assert [(r.request, r.estimate) for r in rows if not r.refused] == [(r.request, decided[r.request]) for r in rows if not r.refused]


def test_replay_adr_on_real_files_shows_each_request_at_the_size_the_fold_decided_on(corpus_dev):
    for name, ceiling in REAL:
        session = load_session(corpus_dev / name)
        layouts = Layouts(Measure(session, Policy(max_input_tokens=ceiling)))
        rows = run_strategy(session, "adr", layouts).rows
        decided = sizes_decided(session, layouts)
        assert [r.estimate for r in rows if not r.refused] == [decided[r.request] for r in rows if not r.refused], name


def test_replay_adr_shows_the_size_the_fold_decided_on_where_the_file_froze_another_first_round_bound():
    # The file's own first-round decision (a frozen bound of 1,000 characters) is not the replay's: the fold's
    # requests decide their own. The rows must show the fold's compile, not the file's.
    from foldscope.core.fold.history import replay_folds
    from foldscope.core.request.first_round import read_decision

    policy = Policy(max_input_tokens=20_000, tool_result_max_chars=4_000, prompt_caching=True)
    probe = load_session(demo_path())
    layouts = Layouts(Measure(probe, policy), scale=1.0)
    own = read_decision(replay_folds(probe, layouts.measure, clock=lambda: 0.0, scale=1.0, head=0).session)
    assert own is not None and own["included"]
    session = load_session(demo_path())
    session.branch_metadata.setdefault("prompt_cache", {})["protected"] = {**own, "bound": 1_000}
    layouts = Layouts(Measure(session, policy), scale=1.0)
    rows = run_strategy(session, "adr", layouts).rows
    decided = sizes_decided(session, layouts)
    assert [r.estimate for r in rows if not r.refused] == [decided[r.request] for r in rows if not r.refused]
