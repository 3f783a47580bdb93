"""The literal checks a child forked during the read makes are the checks made in-line: taken only for the parent's own
span of that request, with the very messages the child checked, and what it has not made is made by another process
(core.forensics.literals_during_read)."""

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from foldscope.core.cli.options import read_session
from foldscope.core.forensics.compactions import literal_spans
from foldscope.core.forensics.literals import LiteralCheck
from foldscope.core.forensics.literals_ahead import JobsAhead, LiteralChecks, Span
from foldscope.core.forensics.literals_during_read import ChecksDuringRead, wanted
from tests.processes import alive, gone

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform: the checks are made in-line")

WRONG = ("wrong", b"\x00", b"\x00")  # a check no span gives: what a child's check is, where the test makes it so


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    """A generated Claude Code session that repeats nothing, with compactions all along it (bench/fresh_session.py)."""
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 3000)
    return path


def _parts(checks):
    return [c.parts() for c in checks]


def _read(path, fraction=0.6):
    """The session read with a child forked at `fraction` of the file, and the child, waited for until it has written
    every check it makes (so what the parent takes from it is all it makes)."""
    early = ChecksDuringRead(path, (fraction,))
    session = read_session(path, during=early)
    _wait(early)
    return session, early


def _wait(early):
    """Every child of `early` waited for until it has written every check it makes."""
    assert early.pids
    for child in early.children:
        _, status = os.waitpid(child.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        child.pid = None


def test_the_checks_made_during_the_read_are_the_checks_made_in_line(path):
    session, early = _read(path)
    spans = literal_spans(session)
    made = early.matched(spans)
    # The compactions read by half the file, not the others: the child read no further.
    assert 4 <= len(made) < len(spans) and made == list(range(len(made)))
    checks = LiteralChecks(spans, fork=False, early=early)
    got = checks.collect()
    assert checks.made_here == len(spans) - len(made)
    assert _parts(got) == _parts(LiteralChecks(spans, fork=False).collect())


def test_two_cuts_check_the_compactions_read_by_the_second_each_in_one_child_as_made_in_line(path):
    """A child forked at a later cut checks only the compactions read since the one before it: none twice, and all of
    those read by the later cut made during the read, the checks the in-line ones."""
    early = ChecksDuringRead(path, (0.3, 0.6))
    session = read_session(path, during=early)
    assert len(early.pids) == 2
    _wait(early)
    first, second = ([k for k, _, _ in child.frame(0)] for child in early.children)
    assert first and second and not set(first) & set(second)
    spans = literal_spans(session)
    made = early.matched(spans)
    assert made == list(range(len(first) + len(second))) and len(made) < len(spans)
    assert _parts(LiteralChecks(spans, fork=False, early=early).collect()) == _parts(LiteralChecks(spans, fork=False).collect())


def test_a_check_is_taken_only_where_the_parents_span_holds_the_messages_the_child_checked(path, monkeypatch):
    """The child's checks made wrong on purpose tell which the parent took: those of its spans holding the very
    objects the child named, never one whose note or dropped message the parent holds as another object (as a message
    its read made again after the fork would be), however equal."""
    parent = os.getpid()
    real = Span.parts

    def wrong_in_the_child(self):
        return WRONG if os.getpid() != parent else real(self)

    monkeypatch.setattr(Span, "parts", wrong_in_the_child)
    session, early = _read(path)
    monkeypatch.setattr(Span, "parts", real)
    spans = literal_spans(session)
    again = dataclasses.replace  # an equal message, another object
    spans[0] = Span(spans[0].request, spans[0].note, [*spans[0].dropped[:-1], again(spans[0].dropped[-1])], spans[0].text_of)
    spans[1] = Span(spans[1].request, again(spans[1].note), spans[1].dropped, spans[1].text_of)
    spans[2] = Span(spans[2].request, spans[2].note, spans[2].dropped[1:], spans[2].text_of)  # a message fewer
    made = early.matched(spans)
    assert made and made[0] == 3
    got = _parts(LiteralChecks(spans, fork=False, early=early).collect())
    in_line = _parts(LiteralChecks(spans, fork=False).collect())
    assert got[:3] == in_line[:3] and got[3] == WRONG  # the child's own where it matched: taken


def test_what_the_child_has_not_made_when_the_count_is_done_is_made_by_the_checks_child(path, monkeypatch):
    """The child stopped short (here: it never made a check after its first) hands the rest to the checks' child
    forked again at the count's end, which makes them, not the parent; the checks are the in-line ones."""
    parent = os.getpid()
    real = Span.parts
    made_in_child = []

    def one_then_stop(self):
        if os.getpid() != parent:
            if made_in_child:
                os._exit(3)
            made_in_child.append(1)
        return real(self)

    monkeypatch.setattr(Span, "parts", one_then_stop)
    early = ChecksDuringRead(path, (0.5,))
    session = read_session(path, during=early)
    (pid,) = early.pids
    # Waited for but not reaped (WNOWAIT): the pid stays this test's until stop_short kills and reaps it, so no other
    # process can have it by then.
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    early.children[0].pid = pid  # as if it still ran at the count's end
    monkeypatch.setattr(Span, "parts", real)
    spans = literal_spans(session)
    made = early.matched(spans)
    assert len(made) >= 2
    with JobsAhead([s.parts for s in spans], fork=True, elsewhere=made) as ahead:
        checks = LiteralChecks(spans, ahead=ahead, early=early)
        checks.count_done()  # the niced child forked again: with the early child's checks it had not made
        assert ahead.pid is not None and not alive(pid)  # killed (reaped below, by stop)
        os.waitpid(ahead.pid, 0)
        ahead.pid = None
        got = checks.collect()
    early.stop()
    assert gone(pid)
    assert checks.made_here == 0
    assert _parts(got) == _parts(LiteralChecks(spans, fork=False).collect())


def test_a_child_that_named_nothing_is_stopped_and_every_check_made_as_before(path, monkeypatch):
    from foldscope.core.forensics import literals_during_read

    monkeypatch.setattr(literals_during_read, "_child_jobs", lambda session, held, earlier: os._exit(3))
    early = ChecksDuringRead(path, (0.5,))
    session = read_session(path, during=early)
    (pid,) = early.pids
    os.waitpid(pid, 0)
    early.children[0].pid = None
    spans = literal_spans(session)
    assert early.matched(spans) == []
    checks = LiteralChecks(spans, fork=False)
    assert _parts(checks.collect()) == [c.parts() for c in (s.check() for s in spans)]
    assert checks.made_here == len(spans) and isinstance(checks.collect()[0], LiteralCheck)


def test_a_small_file_forks_no_child_during_its_read(path):
    assert not wanted(path)


def test_the_report_with_a_child_checking_during_the_read_is_the_page_made_in_line(path, tmp_path, monkeypatch):
    """The command's own path (core.cli.report): the child forked during the read, its checks taken, the child reaped,
    and the page byte for byte the one made with no child at all (the footer's minute aside)."""
    import re

    from foldscope.core.cli.main import main
    from foldscope.core.forensics import literals_ahead, literals_during_read

    footer = re.compile(rb"on \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    monkeypatch.setattr(literals_during_read, "wanted", lambda path: True)
    monkeypatch.setattr(literals_during_read, "FRACTIONS", (0.6,))
    forked, taken = [], []
    real_fork, real_take, real_matched = ChecksDuringRead._fork, ChecksDuringRead.take, ChecksDuringRead.matched

    def fork(self, builder):
        in_child = real_fork(self, builder)
        forked.append(self.pids[-1] if self.pids else None)
        return in_child

    def matched(self, spans):  # the child waited for, whatever the load: every check it makes is there to take
        for child in self.children:
            os.waitpid(child.pid, 0)
            child.pid = None
        return real_matched(self, spans)

    def take(self, i):
        got = real_take(self, i)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(ChecksDuringRead, "_fork", fork)
    monkeypatch.setattr(ChecksDuringRead, "take", take)
    monkeypatch.setattr(ChecksDuringRead, "matched", matched)
    main(["report", str(path), "-o", str(tmp_path / "a.html")])
    assert len(forked) == 1 and forked[0] is not None and gone(forked[0]) and taken.count(True) >= 4
    monkeypatch.setattr(literals_during_read, "wanted", lambda path: False)
    monkeypatch.setattr(literals_ahead, "may_fork", lambda: False)
    main(["report", str(path), "-o", str(tmp_path / "b.html")])
    assert footer.sub(b"", (tmp_path / "a.html").read_bytes()) == footer.sub(b"", (tmp_path / "b.html").read_bytes())


def test_the_child_names_no_check_holding_a_message_made_after_its_fork(path):
    """A message the child's read made after the fork (closing the response open at its cut) may sit at the place of
    another the parent's read made since: a span holding one is not named, so the parent can never take its check."""
    from foldscope.core.forensics.literals_during_read import _child_jobs
    from foldscope.core.formats import load_session

    session = load_session(path)
    spans = literal_spans(session)
    held = {id(m) for m in session.record}
    named = [k for k, _, _ in _child_jobs(session, held)[0]()]
    assert named == [s.request for s in spans]
    # a tool result each of two spans took out (in no other span), and the last span's note (no later span takes it)
    for span in spans[1:3]:
        held.discard(id(next(m for m in span.dropped if m.kind == "action_response")))
    held.discard(id(spans[-1].note))
    named = [k for k, _, _ in _child_jobs(session, held)[0]()]
    assert named == [s.request for s in spans[:1] + spans[3:-1]]


def test_a_read_with_a_child_checking_during_it_forks_its_counting_child_at_the_cut_with_the_encoder_built(path, monkeypatch):
    """The count's counting child is forked at the cut, after the checks' child, holding the encoder the parent builds
    for the count anyway, not spawned as the read starts to build its own on the core the checks run on."""
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import ahead, backend, child

    monkeypatch.setattr(ahead, "START_CHARS", 0)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    monkeypatch.setattr(tokens, "_encoding", None)  # not built yet, as in the command's process
    spawned, forked = [], []
    real_fork = child.fork

    def fork():
        started = real_fork()
        forked.append((tokens.encoder_built(), bool(early.pids), started))
        return started

    monkeypatch.setattr(child, "spawn", lambda: spawned.append(1))
    monkeypatch.setattr(child, "fork", fork)
    early = ChecksDuringRead(path, (0.6,))
    try:
        read_session(path, during=early)
    finally:
        early.stop()
        backend.discard_spare()
    assert spawned == [] and [f[:2] for f in forked] == [(True, True)]
    assert gone(forked[0][2].process.pid)
