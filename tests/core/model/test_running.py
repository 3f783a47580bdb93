"""The incremental view sums equal a from-scratch recomputation over random sequences of views (append, cut, replace,
start over), and the provider counter built on them gives the numbers its whole-view loop gave."""

from __future__ import annotations

import operator
from itertools import compress, count

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.running_sum import RunningSum, common_start
from foldscope.core.model.session import Message
from foldscope.core.model.shared_start import Shared, small_chunks
from foldscope.core.request.provider_text import DEFAULT_TOKENS_PER_CHAR, MESSAGE_OVERHEAD, ProviderCounter, ViewCount, seen

TEXTS = ["short", "a longer line of text with words", "[REDACTED len=120]", "x [REDACTED_TEXT len=7 sha=ab12] y", ""]


def message(n: int, text: str) -> Message:
    kind = ("instruction", "assistant")[n % 2]
    key = "instruction" if kind == "instruction" else "assistant_response"
    return Message(f"m{n}", kind, None, {key: text})


# One step of a session's views: grow, cut back, swap one message for a new object, or start over.
step = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 6), st.sampled_from(TEXTS)),
    st.tuples(st.just("cut"), st.integers(0, 30), st.sampled_from(TEXTS)),
    st.tuples(st.just("replace"), st.integers(0, 30), st.sampled_from(TEXTS)),
    st.tuples(st.just("fresh"), st.integers(0, 12), st.sampled_from(TEXTS)),
    st.tuples(st.just("same"), st.just(0), st.just("")),
)


def views_of(steps: list[tuple[str, int, str]]) -> list:
    """The views a sequence of steps makes, each a tuple, a list or a Shared (grown from the Shared before, as the
    trace's views are) of Message objects (new objects get new numbers)."""
    made = count()
    view: list[Message] = []
    shared: Shared[Message] = Shared()
    out: list = []
    for op, n, text in steps:
        if op == "append":
            new = [message(next(made), f"{text} {k}") for k in range(n)]
            view, shared = view + new, shared.grown(len(shared), new)
        elif op == "cut":
            view = view[: n % (len(view) + 1)]
            shared = shared.grown(len(view))
        elif op == "replace" and view:
            i = n % len(view)
            view = view[:i] + [message(next(made), text)] + view[i + 1 :]
            shared = shared.replaced(i, view[i])
        elif op == "fresh":
            view = [message(next(made), text) for _ in range(n)]
            shared = Shared(view)
        out.append((tuple(view), list(view), shared)[len(out) % 3])  # every kind of sequence callers pass
    return out


def naive_common_start(a, b) -> int:
    return next(compress(count(), map(operator.is_not, a, b)), min(len(a), len(b)))


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=25))
def test_a_running_sum_equals_the_sum_over_the_whole_view_after_any_sequence_of_views(steps):
    with small_chunks(1):  # Shared views of a few messages cross chunk bounds
        running = RunningSum(lambda m: len(m.text) + 1)
        previous: list[Message] = []
        for view in views_of(steps):
            assert common_start(previous, view) == naive_common_start(previous, view)
            assert running.total(view) == sum(len(m.text) + 1 for m in view)
            previous = list(view)


def _after_last_instruction(view) -> int:
    """The reference: walk back from the tail to the last instruction (the current turn)."""
    n = 0
    for m in reversed(view):
        if m.kind == "instruction":
            break
        n += len(m.text) + 1
    return n


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=25))
def test_the_sum_since_the_last_marked_item_equals_walking_back_to_it_after_any_sequence_of_views(steps):
    # The current turn's thinking (core.request.provider_text): a turn may run thousands of calls, so walking back
    # to its instruction on every request was quadratic in the turn.
    with small_chunks(1):
        running = RunningSum(lambda m: len(m.text) + 1, mark=lambda m: m.kind == "instruction")
        for view in views_of(steps):
            assert running.since_last_mark(view) == _after_last_instruction(view)


@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_the_common_start_is_where_the_first_different_object_stands(shared, extra_a, extra_b):
    same = [message(k, "s") for k in range(shared)]
    a = same + [message(1000 + k, "a") for k in range(extra_a)]
    b = tuple(same + [message(2000 + k, "b") for k in range(extra_b)])
    assert common_start(a, b) == naive_common_start(a, b) == (shared if extra_a and extra_b else min(len(a), len(b)))


def test_the_common_start_compares_identity_not_equal_content():
    a = [message(k, "same") for k in range(40)]
    b = [message(k, "same") for k in range(40)]  # equal ids and text, other objects
    assert common_start(a, b) == 0
    assert common_start(a, a[:25] + b[25:]) == 25


class WholeViewCounter(ProviderCounter):
    """The provider counter as it was before the running sums: every view summed whole (the reference)."""

    def count(self, view, tokens=True):
        if not tokens:
            if not sum(self.memo.hidden_of(m) for m in view):
                return ViewCount(0, 0, DEFAULT_TOKENS_PER_CHAR)
        n = hidden = 0
        for m in view:
            s = self.memo.of(m)
            n += s.tokens
            hidden += s.hidden_chars
        # The rate a placeholder converts at is the memo's (one for the whole session since it stopped following the
        # visible text's own ratio): the reference asks it as the counter does, so only the sums are compared here.
        return ViewCount(n, hidden, self.memo.tokens_per_char())


@settings(max_examples=100, deadline=None)
@given(st.lists(step, max_size=25), st.lists(st.booleans(), min_size=25, max_size=25))
def test_the_provider_counter_gives_the_whole_view_loops_counts_over_any_sequence_of_views(steps, tokens):
    ours, reference = ProviderCounter(), WholeViewCounter()
    for view, t in zip(views_of(steps), tokens):
        assert ours.count(view, tokens=t) == reference.count(view, tokens=t)


def test_the_whole_view_reference_counts_each_message_as_seen_does():
    m = message(0, "x [REDACTED len=40] y")
    got = WholeViewCounter().count([m])
    assert (got.tokens, got.hidden_chars) == (seen(m).tokens, 40) and seen(m).tokens > MESSAGE_OVERHEAD
