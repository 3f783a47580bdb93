"""The window's load leaves to the child counting ahead every count it sent it, so its process builds no encoder for them."""

from __future__ import annotations

import threading
import time

import pytest

from foldscope.core.formats.demo import demo_path
from foldscope.core.readout import opening
from foldscope.core.request.counting import ahead, backend


@pytest.fixture
def late_child(monkeypatch):
    """A child counting ahead from the first character, as the window has it (neither WAIT_FOR_START nor COUNT_WHILE_WAITING
    changed), whose first batch goes down its pipe only once the measure has asked for a count: the measure asks before
    the child could answer, as it does at 50k when the child is still starting. Gives the CountsAhead made, and what
    this process counted of the batches it sent (CountsAhead._count_here)."""
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    monkeypatch.setattr(ahead, "START_CHARS", 0)
    monkeypatch.setattr(ahead, "BATCH_CHARS", 2 << 10)
    monkeypatch.setattr(ahead, "LEAD_CHARS", 16 << 10)
    monkeypatch.setattr(ahead, "START_SECONDS", 120.0)  # a child starting on a loaded machine is waited for, never given up
    monkeypatch.setattr(ahead, "LEAVE_SECONDS", 120.0)  # the same: waited for whatever the machine's load
    monkeypatch.setattr(ahead, "encoder_built", lambda: False)  # as in a window that has built none (other tests here may have)
    asked = threading.Event()
    made: list[ahead.CountsAhead] = []
    here: list[int] = []
    send_all, take, count_here = ahead.CountsAhead._send_all, ahead.CountsAhead.take, ahead.CountsAhead._count_here

    def gated_send_all(self, down):
        asked.wait()
        send_all(self, down)

    def asking(self, key):
        if self not in made:
            made.append(self)
        asked.set()
        return take(self, key)

    def counting_here(self, batch):
        here.append(sum(map(len, batch.texts)))
        count_here(self, batch)

    monkeypatch.setattr(ahead.CountsAhead, "_send_all", gated_send_all)
    monkeypatch.setattr(ahead.CountsAhead, "take", asking)
    monkeypatch.setattr(ahead.CountsAhead, "_count_here", counting_here)
    return made, here


def _opened(tmp_path, name: str):
    """The demo session opened as the window's load opens it: (each message's tokens, the record's count, the Counter)."""
    document = opening.open_document(demo_path(), str(tmp_path / f"{name}.db"))
    return document.tokens, document.record_count, document.counter


def _alone(tmp_path, monkeypatch):
    """The demo session opened as _opened has it, counted in-line (FOLDSCOPE_COUNTING=local): the figures to match."""
    with monkeypatch.context() as local:
        local.setenv("FOLDSCOPE_COUNTING", "local")
        return _opened(tmp_path, "alone")


def test_the_windows_load_counts_nothing_it_sent_the_child_even_before_the_childs_first_answer(late_child, tmp_path, monkeypatch):
    made, here = late_child
    tokens, total, counter = _opened(tmp_path, "window")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2], "the child's counts gave other figures than counting in-line"
    # Every body sent ahead was the child's: what the counter tokenised itself is what was never sent (the head, misses).
    assert counter.tokenised_chars < alone[2].tokenised_chars / 4, "the window's process counted what the child was sent"
    assert here == [], f"{sum(here)} characters of batches sent to the child counted in the window's process"
    assert made and made[0].counted_ahead > 0, "no child counted ahead: the test proved nothing"


def test_a_window_that_has_built_an_encoder_counts_with_it_before_the_childs_first_answer(late_child, tmp_path, monkeypatch):
    """Built already, the encoder costs nothing more to use: the window's measure then counts as inspect's does."""
    made, here = late_child
    alone = _alone(tmp_path, monkeypatch)[2].tokenised_chars
    monkeypatch.setattr(ahead, "encoder_built", lambda: True)
    counter = _opened(tmp_path, "built")[2]
    assert made and not made[0].counts_here
    assert counter.tokenised_chars + sum(here) >= alone / 4, "the window waited for the child with an encoder of its own"


def test_a_measure_that_may_count_here_counts_in_line_before_the_childs_first_answer(late_child, tmp_path, monkeypatch):
    """The rule above is the window's: the same late child with a Counter that may count here (inspect's Backend) is not
    waited for, what it was sent counted in this process until it answers."""
    made, here = late_child
    alone = _alone(tmp_path, monkeypatch)[2].tokenised_chars
    real = backend.Backend.__init__
    monkeypatch.setattr(backend.Backend, "__init__", lambda self, counts_here=True: real(self))
    counter = _opened(tmp_path, "counts-here")[2]
    assert made and made[0].counts_here
    assert counter.tokenised_chars + sum(here) >= alone / 4, "the measure waited for the child all the same"


def test_a_child_that_does_not_answer_is_waited_for_at_most_leave_seconds_then_counted_here(late_child, tmp_path, monkeypatch):
    """A child the machine's other work starves would make the window's timeline late: the measure waits for it
    LEAVE_SECONDS in all, then counts in-line to the same figures (the encoder's memory given for the time)."""
    made, here = late_child
    monkeypatch.setattr(ahead, "LEAVE_SECONDS", 0.3)
    _held_until_closed(monkeypatch, "_send_all")  # the child gets nothing until the measure is over: it never answers
    tokens, total, counter = _opened(tmp_path, "starved")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2]
    assert made and made[0].counted_ahead == 0 and not made[0].counts_here
    assert 0.3 <= made[0].waited < 10, f"waited {made[0].waited:.2f} s for a child that never answers"
    assert counter.tokenised_chars + sum(here) >= alone[2].tokenised_chars / 4, "the rest was not counted here"


def test_a_child_holding_the_batch_the_measure_needs_is_waited_for_at_most_leave_seconds_too(late_child, tmp_path, monkeypatch):
    """The child a starved machine leaves behind holds the batch the measure needs (sent down its pipe, not answered):
    past LEAVE_SECONDS the window's measure counts it in-line rather than wait WAIT_SECONDS (10 s) more for the child, as
    it does a batch still queued; the same figures."""
    made, here = late_child
    monkeypatch.setattr(ahead, "LEAVE_SECONDS", 0.3)
    _held_until_closed(monkeypatch, "_receive_all")  # every batch sent and counted, its answer read once the measure is over
    tokens, total, counter = _opened(tmp_path, "held")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2]
    assert made and not made[0].counts_here  # (its answers, read once released, are counted_ahead: not asserted)
    assert 0.3 <= made[0].waited < 2, f"waited {made[0].waited:.2f} s for a child holding the batch needed"


def test_a_child_that_answers_batch_by_batch_is_never_given_up_however_long_the_measure_waits_in_all(late_child, tmp_path, monkeypatch):
    """LEAVE_SECONDS in all is for a child yet to answer: one that answers each batch is waited for a batch at a time. At
    50k the window's measure, ahead of its child, waited a few milliseconds at a time, 1 s in all by the record's middle,
    then built its own encoder beside a child that was keeping up (2.27x the file at the peak, the timeline later)."""
    made, here = late_child
    at_answer = _short_leave_once_answered(monkeypatch, made, 0.5, lambda: None)
    real_send = ahead.send

    def slow_send(down, message):
        time.sleep(0.1)  # a child slower than the measure: its batches wait in the queue, and the measure for them
        real_send(down, message)

    monkeypatch.setattr(ahead, "send", slow_send)
    tokens, total, counter = _opened(tmp_path, "slow")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2]
    assert made and made[0].counted_ahead > 0 and not made[0].counts_here
    since = made[0].waited - at_answer[0]
    assert since >= 0.5, f"waited {since:.2f} s in all after the child's first answer: the test proved nothing"
    assert here == [], f"{sum(here)} characters of batches sent to the child counted in the window's process"


def test_a_child_that_has_answered_then_answers_nothing_for_leave_seconds_is_given_up_and_counted_here(late_child, tmp_path, monkeypatch):
    """Once given up (one wait of LEAVE_SECONDS with no answer), the child's batches are counted in-line, a batch it
    holds too, rather than waited for WAIT_SECONDS (10 s) more; the same figures."""
    made, here = late_child
    released = threading.Event()
    close = ahead.CountsAhead.close

    def closing(self):
        released.set()
        close(self)

    monkeypatch.setattr(ahead.CountsAhead, "close", closing)
    # The child's later answers read once the measure is over: it stalls after its first.
    at_answer = _short_leave_once_answered(monkeypatch, made, 0.3, lambda: None, later=released.wait)
    tokens, total, counter = _opened(tmp_path, "stalled")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2]
    assert made and made[0].counted_ahead > 0 and not made[0].counts_here, "the child never answered: the test proved nothing"
    since = made[0].waited - at_answer[0]
    assert 0.3 <= since < 2, f"waited {since:.2f} s for a child that stopped answering"


def test_a_child_that_has_answered_is_waited_for_leave_seconds_for_each_leave_chars_of_a_batch(late_child, tmp_path, monkeypatch):
    """A batch of one long text is that much of the child's work: a child that answers it in more than LEAVE_SECONDS,
    within LEAVE_SECONDS a LEAVE_CHARS, is keeping up and not given up (given up, the window built its encoder and
    counted the text again beside the child: a 12 MB text of one piece, 2.7 s of the child's CPU)."""
    made, here = late_child
    monkeypatch.setattr(ahead, "LEAVE_CHARS", 512)
    slow: list[int] = []

    def long_batch_slow():
        chars = made[0]._sent[0].chars  # the batch whose answer is read next
        if chars >= 4 * 512:  # waited for 1.2 s at least (LEAVE_SECONDS, 0.3, for each 512 characters)
            slow.append(chars)
            time.sleep(0.45)  # past LEAVE_SECONDS

    _short_leave_once_answered(monkeypatch, made, 0.3, lambda: None, later=long_batch_slow)
    tokens, total, counter = _opened(tmp_path, "long-batches")
    alone = _alone(tmp_path, monkeypatch)
    assert (tokens, total) == alone[:2]
    assert made and made[0].counted_ahead > 0 and not made[0].counts_here
    assert slow, "no batch of 4 LEAVE_CHARS was answered after the child's first answer: the test proved nothing"
    assert here == [], f"{sum(here)} characters of batches sent to the child counted in the window's process"
    assert counter.tokenised_chars < alone[2].tokenised_chars / 4, "the window's process counted what the child was sent"


def _short_leave_once_answered(monkeypatch, made, leave: float, after_each, later=lambda: None) -> list[float]:
    """The child's answers read through a wrapper: at the first, LEAVE_SECONDS becomes `leave` (the child's start, an
    interpreter and its encoder, is waited for as the fixture has it) and what the measure had waited by then is kept
    (the list returned); `after_each` runs after each answer is read, `later` before each answer after the first."""
    real_receive = ahead.receive
    at_answer: list[float] = []

    def receive(stream):
        if at_answer:
            later()
        answer = real_receive(stream)
        if not at_answer:
            at_answer.append(made[0].waited)
            monkeypatch.setattr(ahead, "LEAVE_SECONDS", leave)
        after_each()
        return answer

    monkeypatch.setattr(ahead, "receive", receive)
    return at_answer


def _held_until_closed(monkeypatch, pipe_end: str) -> None:
    """CountsAhead's `pipe_end` (_send_all or _receive_all) waits until the CountsAhead is closed, then runs as before."""
    released = threading.Event()
    real, close = getattr(ahead.CountsAhead, pipe_end), ahead.CountsAhead.close

    def held(self, pipe):
        released.wait()
        real(self, pipe)

    def closing(self):
        released.set()
        close(self)

    monkeypatch.setattr(ahead.CountsAhead, pipe_end, held)
    monkeypatch.setattr(ahead.CountsAhead, "close", closing)
