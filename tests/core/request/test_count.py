"""Exact incremental counting: the segment sum equals counting the whole payload text, over random views and edits."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.compile import compile_request, counted_text
from foldscope.core.request.count import Counter, estimate
from foldscope.core.request.count_reference import whole_layout
from foldscope.core.request.tokens import count_text
from tests.core.session_strategies import TEXT, also_in_small_chunks, records, views

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.data())
@also_in_small_chunks
def test_incremental_count_equals_whole_count_over_random_views_and_edits(data):
    record = data.draw(records())
    tools = data.draw(st.sampled_from([None, [{"name": "tool", "description": "d", "input_schema": {"type": "object"}}]]))
    counter = Counter()
    for _ in range(3):  # successive views share one counter, so later counts come mostly from the memo
        view = data.draw(views(record))
        text = counted_text(compile_request(view, record=record, tools=tools))
        assert "".join(counter.pieces(view, record=record, tools=tools)) == text
        assert counter.count(view, record=record, tools=tools) == count_text(text)


@settings(max_examples=40, deadline=None)
@given(st.lists(TEXT.map(lambda t: t + "w"), min_size=2, max_size=6), TEXT)
def test_editing_one_message_retokenises_only_that_message(texts, edit):
    msgs = [Message("s", "system", 0, {"system_message": "sys"})]
    msgs += [
        Message(f"a{i}", "assistant" if i % 2 else "instruction", i, {"assistant_response": t, "instruction": t})
        for i, t in enumerate(texts)
    ]
    counter = Counter()
    counter.count(msgs)
    before = counter.tokenised_chars
    edited = Message("edit", "assistant", 99, {"assistant_response": edit + "x"})
    view = msgs[:-1] + [edited]
    assert counter.count(view) == count_text(counted_text(compile_request(view)))
    body = 'text":' + json.dumps(edit + "x", ensure_ascii=False) + ',"'
    assert counter.tokenised_chars - before == len(body)  # the edited body alone was tokenised


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["w1", "w2", "ok", "", "ünï ✓", 'a"b']), min_size=1, max_size=40))
def test_equal_texts_are_tokenised_once_and_every_block_counts_as_its_own_text(texts):
    """A file of tiny prompts repeats a few words: each distinct body is tokenised once (Counter._tokenise), and each
    message's part is its own text's count all the same."""
    msgs = [
        Message(f"m{i}", "instruction" if i % 4 else "assistant", i, {"instruction": t, "assistant_response": t})
        for i, t in enumerate(texts)
    ]
    counter = Counter()
    got = counter.measure(msgs, record=FullRecord(msgs))
    assert got.count == count_text(counted_text(compile_request(msgs)))
    from foldscope.core.request.compile import make_plan

    pieces = whole_layout(Counter(), make_plan(msgs), {}, None, None, None, every_body=True)  # (key, body, glue, message)
    assert [p.tokens for p in got.parts] == [count_text(body) + count_text(glue) for _, body, glue, _ in pieces]
    bodies = {'text":' + json.dumps(t, ensure_ascii=False) + ',"' for t in texts if t}
    head = len('{"')
    assert counter.tokenised_chars == sum(len(b) for b in bodies) + head


def test_measure_parts_add_up_and_name_their_messages():
    msgs = [
        Message("s", "system", 0, {"system_message": "You review code."}),
        Message("i", "instruction", 1, {"instruction": "Read it."}),
        Message("a", "assistant", 2, {"assistant_response": "word " * 500}),
    ]
    m = Counter().measure(msgs, record=FullRecord(msgs))
    assert sum(p.tokens for p in m.parts) == m.count
    assert max(m.parts, key=lambda p: p.tokens).message.id == "a"


def test_estimate_is_counted_times_scale_rounded_up():
    assert estimate(1000, 1.0) == 1000
    assert estimate(1000, 1.37) == 1370
    assert estimate(1000, 1.3701) == 1371


def _rounded_up(counted, scale):
    return math.ceil(round(counted * scale, 6))


# Fractions either side of what the decimal rounding to six places decides (5e-7) and of the 1e-6 the estimate reads
# without it: 3e-7 rounds down, 8e-7 up.
NEAR_THE_SIXTH_PLACE = [0.0, 1e-9, 3e-7, 4.9999e-7, 5e-7, 5.0001e-7, 8e-7, 1e-6, 1.0001e-6, 0.25, 0.5, 0.999999, 0.9999999]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=10**9),
    st.one_of(st.just(1.0), st.floats(min_value=0.5, max_value=4.0), st.sampled_from([1.37, 1.3701, 1.0000004, 1.000001])),
    st.integers(min_value=0, max_value=2**31),
    st.sampled_from(NEAR_THE_SIXTH_PLACE),
)
def test_the_estimate_is_the_product_rounded_to_six_places_then_up(counted, scale, whole, fraction):
    assert estimate(counted, scale) == _rounded_up(counted, scale)
    x = whole + fraction  # a product whose fraction sits at the sixth place, at every size
    assert estimate(x, 1.0) == _rounded_up(x, 1.0)
    assert estimate(whole, 1.0) == whole and type(estimate(whole, 1.0)) is int


def _parts(m):
    return [(p.message.id if p.message is not None else None, p.kind, p.tokens) for p in m.parts]


def drawn_options(data, view):
    """A policy (none, caching, a result bound, both), tools or none, and sometimes a first round over the view's first three."""
    from foldscope.core.model.policy import Policy
    from foldscope.core.request.compile import IncludedRound

    policy = data.draw(
        st.sampled_from(
            [
                None,
                Policy(prompt_caching=True),
                Policy(tool_result_max_chars=1_024),
                Policy(tool_result_max_chars=1_024, prompt_caching=True),
            ]
        )
    )
    tools = data.draw(st.sampled_from([None, [{"name": "tool", "input_schema": {"type": "object"}}]]))
    first_round = None
    if data.draw(st.booleans()) and len(view) > 2:
        members = frozenset(m.id for m in view[:3])
        first_round = IncludedRound(members, view[2].id, data.draw(st.sampled_from([None, 1_024])))
    return policy, tools, first_round


def measured_as_whole(counter, reference, messages, options):
    """(the counter's measurement, the whole plan's) after checking they agree, part by part; None when the view
    cannot compile, having checked the counter fails the same way."""
    try:
        whole = reference.measure_whole(messages, **options)
    except Exception as exc:  # a view that cannot compile fails the same way either path
        with pytest.raises(type(exc)):
            counter.measure(messages, **options)
        return None
    got = counter.measure(messages, **options)
    assert _parts(got) == _parts(whole) and got.count == whole.count
    return got, whole


@SETTINGS
@given(st.data())
@also_in_small_chunks
def test_measuring_a_growing_view_equals_measuring_it_whole(data):
    """The incremental plan (a view sharing its start with a measured one) gives the whole plan's parts, under every policy."""

    record = data.draw(records())
    view = data.draw(views(record))
    policy, tools, first_round = drawn_options(data, view)
    counter, reference = Counter(), Counter()
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(view)), max_size=5)) + [len(view)]))
    shown = [view[:n] for n in cuts]  # each view extends the one before: the counter re-plans the new part
    for _ in range(data.draw(st.integers(0, 3))):  # then views that part from it somewhere (a fold, a clip)
        at = data.draw(st.integers(0, len(view)))
        rest = [m for m in record if m not in view[:at]]
        shown.append(view[:at] + data.draw(st.lists(st.sampled_from(rest), unique=True, max_size=4)) if rest else view[:at])
    # The largest parts are worked out only when asked for: ask after some measurements, and always after the last.
    asked = data.draw(st.lists(st.booleans(), min_size=len(shown), max_size=len(shown)))
    asked[-1] = True
    for messages, ask in zip(shown, asked):
        options = dict(record=record, policy=policy, tools=tools, first_round=first_round)
        measured = measured_as_whole(counter, reference, messages, options)
        if measured is None:
            continue
        got, whole = measured
        if ask:
            top = sorted(whole.parts, key=lambda p: -p.tokens)[:3]
            assert [(p.message, p.tokens) for p in got.largest(3)] == [(p.message, p.tokens) for p in top]


def _run_starts(view):
    """Positions where the view goes on from a user message to an assistant one (system messages skipped)."""
    from foldscope.core.request.plan import ROLE

    out, last = [], None
    for i, m in enumerate(view):
        role = ROLE.get(m.kind)
        if role is not None:
            if last == "user" and role == "assistant":
                out.append(i)
            last = role
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@also_in_small_chunks
def test_a_view_growing_or_parting_where_an_assistant_run_begins_equals_measuring_it_whole(data):
    """A trace's requests each add an answer and what follows it to the request before: views that grow, or part
    from a measured one, where a user run ends and an assistant run begins re-plan from there
    (core.request.count_step.closed_run) and give the whole plan's parts, under every policy."""
    from foldscope.core.request.plan import ROLE

    record = data.draw(records(max_rounds=12))
    view = data.draw(st.one_of(views(record), st.just(list(record)), st.just([m for m in record if not m.is_clipped_copy])))
    policy, tools, first_round = drawn_options(data, view)
    bounds = _run_starts(view)
    cuts = sorted(set(data.draw(st.lists(st.sampled_from(bounds), max_size=6)) if bounds else []) | {len(view)})
    shown = [view[:n] for n in cuts]
    # Views parting after a user message (at a run's start, or inside a run), another answer there.
    after_user = [i for i in range(1, len(view) + 1) if ROLE.get(view[i - 1].kind) == "user"]
    for _ in range(data.draw(st.integers(0, 3)) if after_user else 0):
        at = data.draw(st.sampled_from(after_user))
        answers = [m for m in record if m not in view[:at] and ROLE.get(m.kind) == "assistant"]
        if answers:
            rest = [m for m in record if m not in view[:at]]
            shown.append(
                view[:at]
                + data.draw(st.lists(st.sampled_from(answers), min_size=1, max_size=2, unique=True))
                + data.draw(st.lists(st.sampled_from(rest), max_size=4, unique=True))
            )
    counter, reference = Counter(), Counter()
    options = dict(record=record, policy=policy, tools=tools, first_round=first_round)
    for messages in shown:
        if len({m.id for m in messages}) < len(messages):
            continue  # a view holds each message once
        measured_as_whole(counter, reference, messages, options)


def _prompts_between_answers(answers: int, prompts: int, tools: bool = False) -> list[Message]:
    """A system message, then runs of prompts each closed by an answer (with a call and its result, `tools`)."""
    msgs = [Message("s", "system", 0, {"system_message": "sys"})]
    for r in range(answers):
        msgs += [Message(f"u{r}.{i}", "instruction", 1, {"instruction": f"w{i % 7}"}) for i in range(prompts)]
        msgs.append(Message(f"a{r}", "assistant", 2, {"assistant_response": "ok"}))
        if tools:
            msgs.append(Message(f"q{r}", "action_request", 2, {"function": "read", "arguments": {"n": r}}))
            msgs.append(
                Message(
                    f"p{r}",
                    "action_response",
                    2,
                    {"function": "read", "arguments": {}, "output": f"line {r}", "action_request_id": f"q{r}"},
                )
            )
    return msgs


@pytest.mark.parametrize("tools", [False, True])
@pytest.mark.parametrize("caching", [False, True])
def test_a_request_adding_an_answer_and_what_follows_keeps_every_block_of_the_request_before_but_its_last(tools, caching):
    """Each request re-lays only what it adds and the block before it (whose glue, and while caching its mark, moves),
    not the request before's last runs as well (core.request.count_step.closed_run)."""
    from foldscope.core.model.policy import Policy

    msgs = _prompts_between_answers(6, 20, tools)
    record = FullRecord(msgs)
    policy = Policy(prompt_caching=True) if caching else None
    ends = [i for i in range(1, len(msgs)) if msgs[i].kind == "assistant"] + [len(msgs)]
    counter, before = Counter(), None
    for end in ends:
        view = msgs[:end]
        got = counter.measure(view, record=record, policy=policy)
        assert got.count == count_text(counted_text(compile_request(view, record=record, policy=policy)))
        if before is not None:
            assert got.since == before.serial
            assert got.kept == len(before.parts) - 1  # the head and every block of the request before but its last
        before = got


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@also_in_small_chunks
def test_replacing_one_result_in_the_middle_equals_measuring_it_whole(data):
    """A candidate that replaces one result with a clipped copy of its original (the clip's estimates) gives the
    whole plan's parts and the whole text's count, under every policy, chained from the last candidate."""
    from foldscope.core.fold.clip import bodies_of, build_bounded_copy, build_copy

    record = data.draw(records())
    # A random view, or the record in order without its copies (the fold's case: every result paired).
    view = data.draw(st.one_of(views(record), st.just([m for m in record if not m.is_clipped_copy])))
    policy, tools, first_round = drawn_options(data, view)
    options = dict(record=record, policy=policy, tools=tools, first_round=first_round)
    counter, reference = Counter(), Counter()
    serial = iter(range(10**6))
    for _ in range(data.draw(st.integers(1, 4))):
        results = [i for i, m in enumerate(view) if m.kind == "action_response"]
        try:
            counter.measure(view, **options)
        except Exception:
            return  # a view that cannot compile (the growing-view test covers the failure path)
        if not results:
            return
        at = data.draw(st.sampled_from(results))
        original = (
            view[at] if view[at].clipped_from is None else record.get(view[at].clipped_from) if view[at].clipped_from in record else None
        )
        if original is None or original.id not in record:
            return
        index = record.index_of(original.id)
        kept = {b.key: data.draw(st.integers(0, len(b.text))) for b in bodies_of(original)}
        new_id = lambda: f"copy{next(serial)}"  # noqa: E731
        bound = policy.tool_result_max_chars if policy is not None else None
        try:  # under the bound a copy is the original's projection; one too short to project is cut plainly
            copy = build_bounded_copy(original, index, bound, kept, new_id=new_id)[0] if bound is not None else None
        except Exception:
            copy = None
        try:
            copy = copy or build_copy(original, index, kept, new_id=new_id)
        except Exception:
            return
        view = view[:at] + [copy] + view[at + 1 :]
        measured = measured_as_whole(counter, reference, view, options)
        if measured is None:
            return
        got, whole = measured
        text = counted_text(compile_request(view, **options))
        assert got.count == count_text(text)
        top = sorted(whole.parts, key=lambda p: -p.tokens)[:3]
        assert [(p.message, p.tokens) for p in got.largest(3)] == [(p.message, p.tokens) for p in top]


def test_a_copy_in_the_middle_costs_its_own_block():
    """Replacing one result by a copy of its original counts the copy's block alone (foldscope.core.request.count_step.one_replaced)."""
    from foldscope.core.fold.clip import bodies_of, build_copy
    from foldscope.core.model.policy import Policy

    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("i", "instruction", 1, {"instruction": "go"})]
    for r in range(6):
        msgs.append(Message(f"q{r}", "action_request", 2 + r, {"function": "read", "arguments": {"n": r}}))
        msgs.append(
            Message(
                f"p{r}",
                "action_response",
                2 + r,
                {"function": "read", "arguments": {}, "output": "line\n" * 400, "action_request_id": f"q{r}"},
            )
        )
        msgs.append(Message(f"a{r}", "assistant", 2 + r, {"assistant_response": f"read {r}"}))
    record = FullRecord(msgs)
    for policy in (None, Policy(prompt_caching=True), Policy(tool_result_max_chars=1_024, prompt_caching=True)):
        counter = Counter()
        view = list(msgs)
        counter.measure(view, record=record, policy=policy)
        original = record.get("p2")
        body = bodies_of(original)[0]
        copy = build_copy(original, record.index_of("p2"), {body.key: 100}, new_id=lambda: "c2")
        view[view.index(original)] = copy
        before = counter.tokenised_chars
        got = counter.measure(view, record=record, policy=policy)
        assert got.laid.where is not None  # laid out from the measured view, its blocks after the copy kept
        assert got.count == count_text(counted_text(compile_request(view, record=record, policy=policy)))
        assert counter.tokenised_chars - before < 1_000  # the copy's block, not the view after it


def test_a_text_block_of_one_message_is_memoised_by_the_message_itself():
    """A file of a million tiny prompts: each prompt's text block is memoised by its message (which the record keeps
    anyway), not by a block_key tuple paired with the policy key, 136 bytes a block (docs/performance.md, Scale)."""
    from foldscope.core.request.count import policy_key

    msgs = [Message(f"m{i}", "instruction", i, {"instruction": f"w{i % 7}"}) for i in range(20)]
    msgs.append(Message("a", "assistant", 20, {"assistant_response": "ok"}))
    counter = Counter()
    counter.measure(msgs, record=FullRecord(msgs))
    memo = counter._bodies[policy_key(None)]
    assert len(memo) == len(msgs) and all(key is m for key, m in zip(memo, msgs))


@SETTINGS
@given(st.data())
def test_the_memo_reads_out_as_block_keys_with_the_policy_key_and_seeds_a_counter_that_counts_nothing_again(data):
    """Counter.memo() gives each body's tokens by (block_key, policy key), the form a library keeps, whatever the
    counter holds them by; a counter seeded with it counts the same views without tokenising a body."""
    from foldscope.core.request.compile import block_key, make_plan
    from foldscope.core.request.count import policy_key

    record = data.draw(records())
    view = data.draw(views(record))
    policy, tools, first_round = drawn_options(data, view)
    options = {"record": record, "policy": policy, "tools": tools, "first_round": first_round}
    counter = Counter()
    try:
        first = counter.measure(view, **options)
    except Exception:
        return  # a view that cannot compile counts nothing
    bodies, glue, heads, texts = counter.memo()
    plan = make_plan(view, **options)
    wanted = {(block_key(spec, record, policy, first_round), policy_key(policy)) for _, blocks in plan.turns for spec in blocks}
    assert set(bodies) == wanted
    seeded = Counter()
    seeded.seed(bodies, glue, heads, texts)
    again = seeded.measure(view, **options)
    assert again.count == first.count and seeded.tokenised_chars == 0
    assert all(seeded.is_counted(key) for key in bodies)
    assert seeded.memo()[0] == bodies


@pytest.mark.parametrize("shift", [2, 8])
def test_a_layout_keeps_one_running_total_a_chunk_of_blocks_not_one_a_block(shift):
    """The counter keeps the running tokens at the end of each whole chunk of blocks (a million ints were 40 MB on a
    file of tiny prompts); a request grown from one whose blocks end inside a chunk counts as measured whole."""
    from foldscope.core.model import shared_start as shared
    from foldscope.core.model.shared_start import small_chunks

    with small_chunks(shift):
        msgs = [
            Message(f"m{i}", "instruction" if i % 5 else "assistant", i, {"instruction": f"w{i % 7}", "assistant_response": "ok"})
            for i in range(3 * shared.CHUNK + 5)
        ]
        record = FullRecord(msgs)
        counter, whole = Counter(), Counter()
        for end in (shared.CHUNK - 1, shared.CHUNK + 3, 2 * shared.CHUNK, len(msgs)):
            got = counter.measure(msgs[:end], record=record)
            assert got.count == whole.measure_whole(msgs[:end], record=record).count
            laid = got.laid
            assert len(laid.cum) == len(laid.parts) >> shared.SHIFT
            assert laid.total == sum(p.tokens for p in laid.parts)


def test_finding_where_to_re_plan_reads_only_the_tail_past_the_shared_start():
    """start_of asks whether a system message lies past the start two views share; it reads that tail alone, never
    the messages before it: a trace's requests each share nearly all of the request before's view, so a walk over
    the shared start was a quadratic pass over the trace (every request walking the whole view)."""
    from dataclasses import replace

    from foldscope.core.model.shared_start import Shared
    from foldscope.core.request.count_step import start_of

    class Watched(Shared):
        read: list[int] = []

        def __iter__(self):
            Watched.read.append(len(self))  # a walk from the start: every message before the tail too
            return super().__iter__()

    messages = [
        Message(
            id=f"m{i}",
            kind="instruction" if i % 2 == 0 else "assistant",
            content={"instruction": f"q{i}"} if i % 2 == 0 else {"assistant_response": f"a{i}"},
            created_at=float(i),
        )
        for i in range(40)
    ]
    counter = Counter()
    laid = counter.measure(messages, record=FullRecord(messages)).laid
    watched = replace(laid, messages=Watched(laid.messages))
    assert start_of(watched, 38) == start_of(laid, 38)
    assert Watched.read == []


@given(st.text())
def test_a_block_strings_json_is_json_dumps_text_for_any_string(text):
    """json_string writes canonical()'s text for a string (json.dumps's, not escaping non-ASCII), whichever encoder it takes."""
    from foldscope.core.request.count_step import json_string

    assert json_string(text) == json.dumps(text, ensure_ascii=False)


@pytest.mark.parametrize("kind", ["instruction", "assistant"])
def test_a_huge_texts_block_body_is_its_json_whatever_ascii_character_it_holds(kind, monkeypatch):
    """text_body and plain_body join a huge ASCII text with nothing to escape straight into its body (no JSON copy of it
    beside the text: a 50 MB message's parent peaked at three copies); any character JSON escapes, in the text's
    first megabyte or a later one (here 64 characters), sends it the JSON way."""
    from foldscope.core.request import count_step

    monkeypatch.setattr(count_step, "_HUGE", 64)
    for code in range(128):
        for text in ("plain words " * 8 + chr(code) + " end", chr(code) + " plain words" * 8):
            m = Message("m", kind, 0, {"instruction" if kind == "instruction" else "assistant_response": text})
            body = count_step.text_body(m)
            assert body == 'text":' + json.dumps(text, ensure_ascii=False) + ',"', hex(code)
            plain = count_step.plain_body(m)
            assert (plain if isinstance(plain, str) else "".join(plain)) == body, hex(code)


def test_counting_keeps_no_second_copy_of_the_sessions_non_ascii_texts():
    """Counting a prompt, an answer and a result of non-ASCII text leaves their strings as they were: an encoder that
    reads a str as UTF-8 makes CPython keep that copy inside the str for its life, and these strings are the session's
    (count_step.json_string; docs/performance.md, 15.7 MB at 50,000 messages)."""
    import sys

    def fresh(i: int) -> str:
        return "".join(["résumé → 中文 ", str(i)] * 300)

    msgs = [
        Message("s", "system", 0, {"system_message": "sys"}),
        Message("u", "instruction", 1, {"instruction": fresh(1)}),
        Message("a", "assistant", 2, {"assistant_response": fresh(2)}),
        Message("q", "action_request", 3, {"function": "read", "arguments": {"n": 1}, "action_response_id": "p"}),
        Message("p", "action_response", 4, {"function": "read", "arguments": {}, "output": fresh(3), "action_request_id": "q"}),
    ]
    texts = [m.text for m in msgs[1:3]] + [msgs[4].content["output"]]
    sizes = [sys.getsizeof(t) for t in texts]
    assert Counter().measure(msgs, record=FullRecord(msgs)).count > 3 * 300
    assert [sys.getsizeof(t) for t in texts] == sizes


@SETTINGS
@given(st.data())
def test_a_layouts_keys_made_at_once_are_each_blocks_memo_key(data):
    """memo_keys (a layout's keys in one comprehension) gives memo_key of each block, under every policy."""
    from foldscope.core.request.compile import make_plan, memo_key, memo_keys, plain_key

    record = data.draw(records())
    view = data.draw(views(record))
    policy, tools, first_round = drawn_options(data, view)
    try:
        plan = make_plan(view, record=record, policy=policy, tools=tools, first_round=first_round)
    except Exception:
        return  # a view that cannot compile has no blocks to key
    specs = [spec for _, blocks in plan.turns for spec in blocks]
    expected = [memo_key(spec, record, policy, first_round) for spec in specs]
    assert memo_keys(specs, record, policy, first_round, plain_key(policy, first_round)) == expected
