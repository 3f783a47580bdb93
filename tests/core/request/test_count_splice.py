"""The counter's splice: a view with a few messages changed in its middle counts as the whole plan and the whole text."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import small_chunks
from foldscope.core.request import count_splice
from foldscope.core.request.compile import compile_request, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import count_text
from tests.core.request.test_count import _parts, drawn_options
from tests.core.session_strategies import TEXT, records, views

KINDS = ("assistant", "note", "instruction", "action_request", "action_response")


def _new_message(kind: str, mid: str, text: str, like: Message | None, named: str | None = None) -> Message:
    """A message of `kind` with a new id; a call or result names `named`, else what `like` named (its result or call)."""
    c = like.content if like is not None else {}
    if kind == "action_request":
        named = named or c.get("action_response_id")
        return Message(mid, kind, 0.0, {"function": "tool", "arguments": {"t": text}, "action_response_id": named})
    if kind == "action_response":
        named = named or c.get("action_request_id")
        meta = {"clipped_from": like.id} if like is not None and like.kind == "action_response" and text.startswith("a") else {}
        return Message(mid, kind, 0.0, {"function": "tool", "arguments": {}, "output": text, "action_request_id": named}, meta)
    if kind == "instruction":
        return Message(mid, kind, 0.0, {"instruction": text})
    return Message(mid, kind, 0.0, {"assistant_response": text})


class Edits(RuleBasedStateMachine):
    """One counter measuring a view through a sequence of edits, inserts, removals, clips and steps back to a view
    measured before, every measurement checked against the whole plan (part by part) and the whole text's count."""

    def __init__(self) -> None:
        super().__init__()
        self.splicing = count_splice.splicing_short_views()
        self.splicing.__enter__()
        self.serial = 0
        self.seen: list[list[Message]] = []
        self.spliced = 0  # how many measurements the splice made

    def teardown(self) -> None:
        import os

        if os.environ.get("SPLICE_TALLY"):
            with open(os.environ["SPLICE_TALLY"], "a") as f:
                f.write(f"{self.spliced} {len(self.seen)}\n")
        self.chunks.__exit__(None, None, None)
        self.splicing.__exit__(None, None, None)

    @initialize(data=st.data())
    def start(self, data) -> None:
        # Chunks of 2 in half the runs (core.model.shared_start): the running counts a chunk shift across their bounds.
        self.chunks = small_chunks(1) if data.draw(st.booleans(), label="small chunks") else contextlib.nullcontext()
        self.chunks.__enter__()
        self.record: FullRecord = data.draw(records(max_rounds=10))
        self.view: list[Message] = data.draw(st.one_of(views(self.record), st.just([m for m in self.record if not m.is_clipped_copy])))
        policy, tools, first_round = drawn_options(data, self.view)
        self.options = dict(record=self.record, policy=policy, tools=tools, first_round=first_round)
        self.counter = Counter()
        self.measure()

    def new_id(self) -> str:
        self.serial += 1
        return f"e{self.serial}"

    def named(self, data) -> str | None:
        """Sometimes the id of a message of the view, or of one a copy in it stands for, for a new call or result to name."""
        ids = [m.id for m in self.view] + [m.clipped_from for m in self.view if m.clipped_from]
        return data.draw(st.sampled_from(ids)) if ids and data.draw(st.booleans()) else None

    def measure(self) -> None:
        """The counter's measurement of the view against a fresh counter's whole plan and the whole text."""
        self.seen.append(self.view)
        if len({m.id for m in self.view}) < len(self.view):
            return  # a view holds each message once
        try:
            whole = Counter().measure_whole(self.view, **self.options)
        except Exception as exc:  # a view that cannot compile fails the same way on either path
            with pytest.raises(type(exc)):
                self.counter.measure(self.view, **self.options)
            return
        got = self.counter.measure(self.view, **self.options)
        assert _parts(got) == _parts(whole)
        assert got.count == whole.count == count_text(counted_text(compile_request(self.view, **self.options)))
        if got.laid is not None and got.laid.refs:  # only a spliced layout carries its references
            self.spliced += 1

    @precondition(lambda self: self.view)
    @rule(data=st.data(), text=TEXT)
    def edit(self, data, text: str) -> None:
        """One message's text changed: the same kind, a new message (a call or result naming what the old one named)."""
        at = data.draw(st.integers(0, len(self.view) - 1))
        old = self.view[at]
        if old.kind == "system":
            return
        self.view = self.view[:at] + [_new_message(old.kind, self.new_id(), text + "w", old)] + self.view[at + 1 :]
        self.measure()

    @precondition(lambda self: self.view)
    @rule(data=st.data(), kind=st.sampled_from(KINDS), text=TEXT)
    def retype(self, data, kind: str, text: str) -> None:
        """One message replaced by one of another kind (a different block)."""
        at = data.draw(st.integers(0, len(self.view) - 1))
        if self.view[at].kind == "system":
            return
        like = data.draw(st.sampled_from(list(self.record)))
        self.view = self.view[:at] + [_new_message(kind, self.new_id(), text, like, self.named(data))] + self.view[at + 1 :]
        self.measure()

    @precondition(lambda self: self.view)
    @rule(data=st.data())
    def remove(self, data) -> None:
        at = data.draw(st.integers(0, len(self.view) - 1))
        self.view = self.view[:at] + self.view[at + 1 :]
        self.measure()

    @rule(data=st.data())
    def insert(self, data) -> None:
        """A message of the record not in the view (a restore), or a new one, put in anywhere."""
        at = data.draw(st.integers(0, len(self.view)))
        rest = [m for m in self.record if m not in self.view]
        if rest and data.draw(st.booleans()):
            message = data.draw(st.sampled_from(rest))
        else:
            like = data.draw(st.sampled_from(list(self.record)))
            message = _new_message(data.draw(st.sampled_from(KINDS)), self.new_id(), data.draw(TEXT), like, self.named(data))
        self.view = self.view[:at] + [message] + self.view[at:]
        self.measure()

    @rule(data=st.data())
    def clip(self, data) -> None:
        """A result replaced by a clipped copy of its original (the clip stage's and the hand clip's candidates)."""
        from foldscope.core.fold.clip import bodies_of, build_copy

        results = [i for i, m in enumerate(self.view) if m.kind == "action_response"]
        if not results:
            return
        at = data.draw(st.sampled_from(results))
        source = self.view[at].clipped_from or self.view[at].id
        if source not in self.record:
            return
        original = self.record.get(source)
        kept = {b.key: data.draw(st.integers(0, len(b.text))) for b in bodies_of(original)}
        try:
            copy = build_copy(original, self.record.index_of(source), kept, new_id=self.new_id)
        except Exception:
            return
        self.view = self.view[:at] + [copy] + self.view[at + 1 :]
        self.measure()

    @rule(data=st.data(), kind=st.sampled_from(KINDS), text=TEXT)
    def append(self, data, kind: str, text: str) -> None:
        """A message added at the end (the next request): laid out from the view before, which may be a splice's."""
        like = data.draw(st.sampled_from(list(self.record)))
        self.view = self.view + [_new_message(kind, self.new_id(), text, like, self.named(data))]
        self.measure()

    @precondition(lambda self: len(self.seen) > 1)
    @rule(data=st.data())
    def step_back(self, data) -> None:
        """A view measured before (the GUI stepping, the fold rolling a pass back)."""
        self.view = data.draw(st.sampled_from(self.seen))
        self.measure()

    @invariant()
    def nothing(self) -> None:
        pass


Edits.TestCase.settings = settings(max_examples=200, stateful_step_count=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
test_any_sequence_of_edits_inserts_removals_and_clips_counts_as_a_cold_count = Edits.TestCase


def _long_view(rounds: int) -> list[Message]:
    head = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": "do it"})]
    return head + _rounds(0, rounds)


@pytest.mark.parametrize("caching", [False, True])
def test_one_answer_edited_in_a_long_view_is_spliced_keeping_every_later_part(caching):
    """An edit of one answer in the middle of a long view re-plans only its runs: the blocks after them keep their
    parts (the same objects, shifted), and the count is the whole text's."""
    view = _long_view(40)
    record = FullRecord(view)
    policy = Policy(prompt_caching=True) if caching else None
    counter = Counter()
    before = counter.measure(view, record=record, policy=policy)
    at = 62  # a20, the 21st round's answer
    assert view[at].kind == "assistant"
    for n in range(3):  # the first edit counts the view's references; the next ones carry them
        edited = view[:at] + [Message(f"x{n}", "assistant", 2, {"assistant_response": f"step, edited {n}"})] + view[at + 1 :]
        got = counter.measure(edited, record=record, policy=policy)
        assert got.count == count_text(counted_text(compile_request(edited, record=record, policy=policy)))
        assert got.laid.refs, "spliced: the references carried"
        # every part from the next round's call on is base's own (its marks' blocks too)
        assert all(a is b for a, b in zip(got.parts[-30:], before.parts[-30:]))
        before = got


def _rounds(first: int, n: int) -> list[Message]:
    """n rounds of an answer, a call and its result, ids from `first` on."""
    out = []
    for r in range(first, first + n):
        out.append(Message(f"a{r}", "assistant", 2, {"assistant_response": f"step {r}"}))
        out.append(Message(f"q{r}", "action_request", 2, {"function": "read", "arguments": {"n": r}, "action_response_id": f"p{r}"}))
        out.append(
            Message(
                f"p{r}", "action_response", 2, {"function": "read", "arguments": {}, "output": f"line {r}", "action_request_id": f"q{r}"}
            )
        )
    return out


def _counted_as_the_whole_text(counter: Counter, view: list[Message], record: FullRecord, policy=None) -> None:
    assert counter.count(view, record=record, policy=policy) == count_text(
        counted_text(compile_request(view, record=record, policy=policy))
    )


def test_a_call_removed_that_a_later_result_names_is_not_spliced():
    """A result far past the region names a call in it (unpaired there); with the call gone it is paired through the
    call naming it (action_response_id), so the blocks past the region change: the splice must see the name."""
    head = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": "go"})]
    x = [
        Message("ax", "assistant", 2, {"assistant_response": "read x"}),
        Message("X", "action_request", 2, {"function": "read", "arguments": {}, "action_response_id": "R"}),
        Message("R", "action_response", 2, {"function": "read", "arguments": {}, "output": "x", "action_request_id": "X"}),
    ]
    later = [
        Message("ay", "assistant", 2, {"assistant_response": "read y"}),
        Message("Y", "action_request", 2, {"function": "read", "arguments": {"y": 1}, "action_response_id": "Z"}),
        Message("Z", "action_response", 2, {"function": "read", "arguments": {}, "output": "z" * 50, "action_request_id": "X"}),
    ]
    view = head + _rounds(0, 3) + x + _rounds(3, 3) + later + _rounds(6, 3)
    record = FullRecord(view)
    with count_splice.splicing_short_views():
        counter = Counter()
        _counted_as_the_whole_text(counter, view, record)
        _counted_as_the_whole_text(counter, [m for m in view if m.id != "X"], record)


def test_a_note_inserted_while_caching_moves_the_note_mark_off_an_earlier_note():
    """The newest note carries a cache mark: a note put in the middle takes it from a note before the region, whose block
    the splice would otherwise keep marked."""
    head = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": "go"})]
    note = Message("n1", "note", 1.5, {"assistant_response": "earlier work, folded"})
    view = head + [note] + _rounds(0, 12)
    record = FullRecord(view + [Message("n2", "note", 3, {"assistant_response": "more work, folded"})])
    policy = Policy(prompt_caching=True)
    with count_splice.splicing_short_views():
        counter = Counter()
        _counted_as_the_whole_text(counter, view, record, policy)
        at = view.index(record.get("a6"))
        _counted_as_the_whole_text(counter, view[:at] + [record.get("n2")] + view[at:], record, policy)
