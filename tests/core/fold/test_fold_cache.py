"""ADR-0130 Amendment 4 in the fold: the protected first round, folds after the newest note, the reset stage."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.fold.fold import Fold
from foldscope.core.fold.history import replay_folds
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.request.compile import compile_request, make_plan
from foldscope.core.request.first_round import decide_first_round, read_decision, request_options
from foldscope.core.request.measure import Measure
from tests.core.fold.test_fold_properties import sessions
from tests.core.fold_sessions import Build, calls_have_results, fold_measure, record_hashes, text_of


def caching(ceiling: int, bound: int | None = None, on: bool = True) -> Policy:
    return Policy(max_input_tokens=ceiling, tool_result_max_chars=bound, prompt_caching=on)


def fold_under(session, policy: Policy, fold_at: float = 0.8, target: float = 0.6, **options) -> Fold:
    ceiling = policy.max_input_tokens
    return Fold(session, fold_measure(session, ceiling, fold_at, target, policy), **options)


def note(b: Build, text: str, first: int):
    return b.add("note", {"assistant_response": f"[CONTEXT COMPACTION] {text}"}, {"context_first_index": first})


def worked_session(rounds: int = 6, chars: int = 3_000, first_chars: int = 1_200, answer_chars: int = 0):
    """A first round, then `rounds` delivered rounds of one result each (after answers of `answer_chars` more
    characters), and a last answer."""
    b = Build()
    b.system(), b.task(), b.answer("Reading the loader.")
    b.round([text_of(first_chars, seed=99)])
    for i in range(rounds):
        b.answer(f"Round {i}: reading the next file." + text_of(answer_chars, seed=200 + i))
        b.round([text_of(chars, seed=i)])
    b.answer("Still reading.")
    return b.session(delivered=[m.id for m in b.messages]), ["m1", "m2", "m3", "m4"]


def test_the_folds_protected_set_when_pending_included_and_excluded():
    session, members = worked_session()
    policy = caching(100_000)
    assert read_decision(session) is None
    assert fold_under(session, policy).protected() == set(members)  # a pending round is protected
    assert fold_under(session, caching(100_000, on=False)).protected() == set()  # caching off: no Amendment 4
    decision = decide_first_round(session, policy)
    assert decision["included"] and fold_under(session, policy).protected() == set(members)
    excluded, _ = worked_session()
    assert not decide_first_round(excluded, caching(1_000))["included"]
    assert fold_under(excluded, policy).protected() == set()  # an excluded round protects nothing


def test_the_protected_round_joins_every_stages_keep_set_and_the_floor_view():
    session, members = worked_session(rounds=10, answer_chars=2_000)
    fold = fold_under(session, caching(6_000))
    run = fold.run()
    assert any(r["stage"] == "all" for r in run.records) and run.landed
    assert all(m in session.view for m in members)
    replaced = {i for m in session.record if m.kind == "note" for i in m.metadata["context_replaced"]}
    assert not replaced & {1, 2, 3, 4}
    assert calls_have_results(compile_request(session.view_messages(), **request_options(session, fold.policy)))
    excluded, _ = worked_session(rounds=10, answer_chars=2_000)
    decide_first_round(excluded, caching(1_000))
    control = fold_under(excluded, caching(6_000))
    control.run()
    assert not all(m in excluded.view for m in members)  # the control: an excluded round is folded


def with_note(big_before: int = 0):
    """A first round, two rounds, a note, then six rounds; `big_before` characters of answer before the note."""
    b = Build()
    b.system(), b.task(), b.answer("Reading.")
    b.round([text_of(1_000, seed=50)])
    b.answer("Reading more. " + text_of(big_before, seed=51) if big_before else "Reading more.")
    b.round([text_of(3_000, seed=52)]), b.round([text_of(3_000, seed=53)])
    note(b, "Folded two rounds.", 5)
    for i in range(6):
        b.answer(f"Round {i}.")
        b.round([text_of(3_000, seed=i)])
    b.answer("Still reading.")
    session = b.session(delivered=[m.id for m in b.messages])
    return session, [m.id for m in b.messages if m.kind != "note"][:11]


def test_ordinary_stages_fold_only_after_the_newest_note():
    session, before_note = with_note()
    fold = fold_under(session, caching(8_000))
    run = fold.run()
    assert run.landed and all(r["stage"] != "reset" for r in run.records)
    assert all(m in session.view for m in before_note)  # every earlier request's prefix through the note stays
    control, before_note = with_note()
    fold_under(control, caching(8_000, on=False)).run()
    assert not all(m in control.view for m in before_note)


def noted_session(note_chars: int):
    """A first round, then three rounds each followed by a note of `note_chars` characters, then two rounds."""
    b = Build()
    b.system(), b.task(), b.answer("Reading.")
    b.round([text_of(1_000, seed=60)])
    for i in range(3):
        b.answer(f"Round {i}.")
        b.round([text_of(2_000, seed=i)])
        note(b, text_of(note_chars, seed=70 + i), 5)
    for i in range(2):
        b.answer(f"Later round {i}.")
        b.round([text_of(2_000, seed=80 + i)])
    b.answer("Still reading.")
    return b.session(delivered=[m.id for m in b.messages])


def test_the_reset_runs_first_and_alone_when_notes_are_over_15_percent_of_the_ceiling():
    session = noted_session(4_000)
    fold = fold_under(session, caching(20_000))
    assert fold.notes_estimate(session.view_messages()) > 0.15 * 20_000
    run = fold.run()
    [record] = run.records
    assert record["stage"] == "reset" and record["outcome"] == "landed"
    view = session.view_messages()
    notes = [m for m in view if m.kind == "note"]
    assert len(notes) == 1 and notes[0].metadata["context_fold_stage"] == "reset"
    assert [m.id for m in view[:5]] == ["m0", "m1", "m2", "m3", "m4"]  # the first round stands, then the note
    assert view[5].id == notes[0].id
    assert {5} <= set(notes[0].metadata["context_replaced"])  # earlier notes and rounds went into it


def test_the_reset_control_notes_under_15_percent_fold_by_the_ordinary_stages_first():
    session = noted_session(200)
    fold = fold_under(session, caching(6_000))
    assert fold.notes_estimate(session.view_messages()) <= 0.15 * 6_000
    run = fold.run()
    assert run.records[0]["stage"] == "tool_io"
    off = noted_session(4_000)
    run = fold_under(off, caching(20_000, on=False)).run()
    assert all(r["stage"] != "reset" for r in run.records)  # without caching there is no reset


def test_the_reset_runs_after_the_ordinary_stages_when_the_view_is_still_over_the_target():
    session, before_note = with_note(big_before=12_000)
    fold = fold_under(session, caching(8_000))
    assert fold.notes_estimate(session.view_messages()) <= 0.15 * 8_000
    run = fold.run()
    stages = [r["stage"] for r in run.records]
    assert stages[-1] == "reset" and stages.index("reset") > 0 and run.records[-1]["outcome"] == "landed"
    assert "m5" not in session.view and all(m in session.view for m in ["m1", "m2", "m3", "m4"])


@pytest.mark.parametrize("bound", [None, 8_000])
def test_both_clip_paths_skip_the_protected_first_round(bound):
    def session_():
        b = Build()
        b.system(), b.task(), b.answer("Reading.")
        b.round([text_of(30_000, seed=1)])
        b.answer("Now two more.")
        b.round([text_of(7_000, seed=2), text_of(7_000, seed=3)])
        return b.session(delivered=[m.id for m in b.messages[:3]])  # no stage but clip may take a result

    session = session_()
    probe = fold_under(session, caching(10**6, bound)).estimate()
    ceiling = int(probe / 0.9)
    run = fold_under(session, caching(ceiling, bound)).run()
    clipped = [e["index"] for r in run.records if r["stage"] == "clip" for e in r["clipped"]]
    assert clipped and 4 not in clipped and "m4" in session.view
    assert not any(m.clipped_from == "m4" for m in session.record)
    control = session_()
    run = fold_under(control, caching(ceiling, bound, on=False)).run()
    assert 4 in [e["index"] for r in run.records if r["stage"] == "clip" for e in r["clipped"]]


def summarised_prompts(bound: int):
    """The prompts a model-backed summariser is sent by a compact action and by the fold's reset, over a span
    holding a 60,000-character result under the bound."""
    from foldscope.core.actions.commands import Compact
    from foldscope.core.fold.summarise import CallableSummariser

    prompts: list[str] = []
    spy = CallableSummariser(lambda prompt: (prompts.append(prompt) or "summary", None))

    def build():
        b = Build()
        b.system(), b.task(), b.answer("Reading.")
        b.round([text_of(1_000, seed=1)])
        b.answer("Listing.")
        [(_, listing)] = b.round([text_of(60_000, seed=2)])
        b.answer("Listed.")
        note(b, text_of(6_000, seed=3), 5)
        for i in range(3):
            b.answer(f"Round {i}.")
            b.round([text_of(500, seed=10 + i)])
        return b.session(delivered=[m.id for m in b.messages]), listing

    session, listing = build()
    Compact(5, 7, summariser=spy, policy=caching(10**6, bound)).do(session)
    session, _ = build()
    run = fold_under(session, caching(6_000, bound), summariser=spy).run()
    assert run.records[0]["stage"] == "reset"  # the notes are over 15% of the ceiling
    return prompts, listing


def test_both_summary_paths_read_the_bounded_projection_never_a_whole_hidden_body():
    prompts, listing = summarised_prompts(4_000)
    assert len(prompts) == 2  # the compact action's and the fold's
    whole = listing.content["output"]
    for prompt in prompts:
        assert whole not in prompt and whole[:2_000] in prompt and "characters omitted here" in prompt


@pytest.mark.parametrize("ceiling", [15_000, 20_000])
def test_done_when_stepping_the_fold_keeps_the_first_rounds_compiled_bytes(ceiling):
    """The demo with --result-max 4000 --caching: every fold before a request leaves the compiled prefix
    through the first round's end byte-identical. (Its first round counts 1,454 as the native blocks it is sent
    as: a tenth of 15,000 holds it.)"""
    session = load_session(str(demo_path()))
    policy = Policy(max_input_tokens=ceiling, tool_result_max_chars=4_000, prompt_caching=True)
    replay = replay_folds(session, fold_measure(session, ceiling, policy=policy), clock=lambda: 0.0)
    work = replay.session
    decision = read_decision(work)
    assert decision is not None and decision["included"]
    options = request_options(work, policy)

    def prefix(view_ids):
        messages = [work.record.get(i) for i in view_ids]
        plan = make_plan(messages, **options)
        [at] = [p for p in plan.marks if p.anchor == "first_round"]
        payload = compile_request(messages, **options)
        head = payload["messages"][: at.item]
        last = payload["messages"][at.item]
        return payload.get("tools"), payload.get("system"), head, last["role"], last["content"][: at.block + 1]

    folds = 0
    for k in range(len(session.trace)):
        steps = [v for v in replay.versions if v.request == k]
        if not any(step.cause == "fold" for step in steps):
            continue
        before = prefix(steps[0].view)  # the view as the request's messages arrived, before its fold
        for step in steps[1:]:
            folds += 1
            assert prefix(step.view) == before, f"a fold before request {k} ({step.record['stage']}) moved the prefix"
            assert set(decision["members"]) <= set(step.view)
    assert folds >= 2


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.floats(0.2, 1.2), st.sampled_from([None, 1_024, 4_000]), st.booleans())
def test_property_a_bounded_caching_fold_keeps_the_record_the_round_and_every_call_answered(session, share, bound, decided):
    probe = Fold(session, Measure(session, caching(10**7, bound)))
    ceiling = max(10, int(probe.estimate() * share))
    policy = caching(ceiling, bound)
    if decided:
        decide_first_round(session, policy)
    protected = Fold(session, fold_measure(session, ceiling, policy=policy)).protected()
    hashes = record_hashes(session)
    delivered = set(session.branch_metadata["delivered"])
    undelivered = [m.id for m in session.view_messages() if m.id not in delivered]
    run = Fold(session, fold_measure(session, ceiling, policy=policy)).run()
    assert record_hashes(session)[: len(hashes)] == hashes
    assert set(session.view) <= set(session.record.ids())
    assert all(r["estimate_after"] < r["estimate_before"] for r in run.records if r["outcome"] == "landed")
    shown = {m.clipped_from or m.id for m in session.view_messages()}
    assert protected <= set(session.view) and all(m in shown for m in undelivered)
    request = compile_request(session.view_messages(), **request_options(session, policy))
    assert calls_have_results(request)
