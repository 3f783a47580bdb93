"""Counting ahead (core.request.counting.ahead): a child process counts the record's block bodies while the trace is measured;
every figure is the one counting in-line gives, and a child that fails, lies or hangs costs time, never a figure."""

from __future__ import annotations

import multiprocessing
import os
import re
import stat
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.formats import load_session
from foldscope.core.model.launch import session_policy
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from foldscope.core.request.count import Counter
from foldscope.core.request.counting import ahead, backend, child
from foldscope.core.request.plan import CompileError
from foldscope.core.request.trace_measure import measure_trace
from tests.core.fold_sessions import text_of


def tool_session(turns: int, chars: int = 3000, thinking: bool = False) -> Session:
    """A Claude Code shaped session: each turn an instruction, calls with results, an answer; one request per call."""
    msgs = [Message("s", "system", 0, {"system_message": "You are a coding agent."})]
    trace: list[Request] = []
    t = 1
    for k in range(turns):
        msgs.append(Message(f"u{k}", "instruction", t, {"instruction": text_of(chars // 3, seed=k)}))
        for c in range(3):
            cid = f"toolu_{k}_{c}"
            msgs.append(
                Message(
                    cid, "action_request", t + 1, {"function": "Read", "arguments": {"path": f"src/{k}_{c}.py"}}, metadata={"call_id": cid}
                )
            )
            trace.append(Request(len(trace), tuple(m.id for m in msgs), cid, Usage(input=10 + len(trace))))
            msgs.append(
                Message(
                    f"r{k}_{c}",
                    "action_response",
                    t + 2,
                    {
                        "function": "Read",
                        "arguments": {"path": f"src/{k}_{c}.py"},
                        "output": text_of(chars, seed=1000 * k + c),
                        "action_request_id": cid,
                    },
                    metadata={"call_id": cid},
                )
            )
            t += 3
        thought = {"thinking": text_of(chars // 2, seed=7000 + k)} if thinking else {}
        msgs.append(Message(f"a{k}", "assistant", t, {"assistant_response": text_of(chars // 4, seed=-k)}, metadata=thought))
        trace.append(Request(len(trace), tuple(m.id for m in msgs), f"a{k}", Usage(input=10 + len(trace))))
    return Session(FullRecord(msgs), [m.id for m in msgs], trace=trace)


@pytest.fixture
def eager(monkeypatch):
    """Counting ahead from the first character, in small batches, so a small session crosses many of them."""
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)  # whatever else this machine is doing
    monkeypatch.setattr(ahead, "START_CHARS", 0)
    monkeypatch.setattr(ahead, "BATCH_CHARS", 8 << 10)
    monkeypatch.setattr(ahead, "LEAD_CHARS", 64 << 10)
    monkeypatch.setattr(ahead, "WAIT_FOR_START", True)
    # The measure waits for the child's answers rather than counting waiting batches itself, however loaded the
    # machine: a test that asserts the child counted is then never at the mercy of how fast it started.
    monkeypatch.setattr(ahead, "COUNT_WHILE_WAITING", False)
    monkeypatch.setattr(ahead, "START_SECONDS", 120.0)
    made: list[ahead.CountsAhead] = []
    real = ahead.CountsAhead.close

    def close(self):
        made.append(self)
        real(self)

    monkeypatch.setattr(ahead.CountsAhead, "close", close)
    return made


def rows_of(report) -> tuple:
    """Every figure of a measured trace: its rows (count, estimate, scale, prefix share, prediction, ...) and what follows."""
    return report.rows, report.scale, report.next_count_with_head, report.next_predicted, report.decisions


def inline(session: Session, policy: Policy | None, monkeypatch, counter: Counter | None = None) -> tuple:
    """The figures with every body counted in-line (no child)."""
    with monkeypatch.context() as m:
        m.setenv("FOLDSCOPE_COUNTING", "local")
        counter = counter or Counter()
        report = measure_trace(session, policy, counter=counter)
        assert counter.tokenised_chars > 0
        return rows_of(report)


@pytest.mark.parametrize(
    "policy", [None, Policy(prompt_caching=True), Policy(tool_result_max_chars=2000)], ids=["plain", "caching", "bound"]
)
def test_every_request_counts_the_same_whether_its_bodies_were_counted_ahead_or_in_line(eager, monkeypatch, policy):
    session = tool_session(30)
    alone = Counter()
    expected = inline(session, policy, monkeypatch, alone)
    counter = Counter()
    got = rows_of(measure_trace(session, policy, counter=counter))
    assert got == expected
    assert eager and eager[0].counted_ahead > 0, "the child counted nothing: the test proved nothing"
    # The counter tokenised in-line only what the guess missed. Under caching a round's results share one block,
    # which grows with each result while the round is open: those partial blocks are new every time, in-line.
    assert counter.tokenised_chars < alone.tokenised_chars / (1.1 if policy is not None and policy.caching else 3)


def test_the_thinking_a_prediction_counts_is_counted_ahead_and_predicts_the_same(eager, monkeypatch):
    session = tool_session(20, thinking=True)
    session.model = "claude-sonnet-4-5"  # a model whose predictions count the current turn's thinking
    expected = inline(session, None, monkeypatch)
    assert any(row.predicted != row.count_with_head for row in expected[0])
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert any(key[0] == "text" for key in eager[0]._counts), "no thinking was counted ahead"


def test_a_thinking_text_sent_ahead_is_hashed_once_for_its_count(eager, monkeypatch):
    """Counting ahead hashes each response's thinking for its key; the predictions' count of it (Counter.count_text)
    takes that digest rather than hash the same text again."""
    from foldscope.core.request import count as count_module
    from foldscope.core.request import count_step

    session = tool_session(20, thinking=True)
    session.model = "claude-sonnet-4-5"  # a model whose predictions count the current turn's thinking
    expected = inline(session, None, monkeypatch)
    hashed: list[str] = []

    def digest(text: str) -> bytes:
        hashed.append(text)
        return count_step.text_digest(text)

    monkeypatch.setattr(ahead, "text_digest", digest)
    monkeypatch.setattr(count_module, "text_digest", digest)
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    thoughts = [m.metadata["thinking"] for m in session.record if "thinking" in m.metadata]
    assert thoughts and all(text in hashed for text in thoughts), "a thought was not hashed: the test would prove nothing"
    assert len(hashed) == len(set(hashed)), "a thinking text was hashed twice"


def test_counts_made_ahead_are_used_as_the_child_made_them(eager, monkeypatch):
    """A child whose counts are off by one moves every figure: the measure does read the child's counts."""
    session = tool_session(10)
    expected = inline(session, None, monkeypatch)
    real = ahead.CountsAhead._receive_all

    def off_by_one(self, up):
        receive = ahead.receive
        with monkeypatch.context() as m:
            m.setattr(ahead, "receive", lambda stream: [n + 1 for n in receive(stream)])
            real(self, up)

    monkeypatch.setattr(ahead.CountsAhead, "_receive_all", off_by_one)
    assert rows_of(measure_trace(session, counter=Counter())) != expected


def test_the_dev_corpus_measures_the_same_with_counting_ahead(eager, monkeypatch, corpus_dev):
    files = sorted(
        p for p in corpus_dev.rglob("*") if p.suffix in (".jsonl", ".json") and "tmp-private" not in p.parts and "manifest" not in p.name
    )
    assert files
    used = 0
    for path in files:
        session = load_session(path)
        if not session.trace:
            continue
        policy = session_policy(session)
        expected = inline(session, policy, monkeypatch)
        eager.clear()
        assert rows_of(measure_trace(session, policy, counter=Counter())) == expected, path.name
        used += sum(a.counted_ahead for a in eager)
    assert used > 0


def fake_child(tmp_path: Path, body: str) -> str:
    """An executable standing in for the interpreter the child is started with."""
    script = tmp_path / "child"
    script.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.parametrize(
    "body",
    [
        "import sys; sys.exit(3)",  # dies at once
        # answers every batch with the wrong number of counts
        "import sys, os\nfrom foldscope.core.request.counting.child import receive, send\n"
        "down, up = os.fdopen(int(sys.argv[3]), 'rb'), os.fdopen(int(sys.argv[4]), 'wb')\n"
        "while True:\n    receive(down)\n    send(up, [1])",
        # answers every batch with as many counts, none of them a number
        "import sys, os\nfrom foldscope.core.request.counting.child import receive, send\n"
        "down, up = os.fdopen(int(sys.argv[3]), 'rb'), os.fdopen(int(sys.argv[4]), 'wb')\n"
        "while True:\n    send(up, ['x'] * len(receive(down)[1]))",
    ],
    ids=["dies", "answers out of step", "answers words"],
)
def test_a_child_that_fails_costs_time_never_a_figure(eager, monkeypatch, tmp_path, body):
    session = tool_session(12)
    expected = inline(session, None, monkeypatch)
    monkeypatch.setattr(child.sys, "executable", fake_child(tmp_path, body))
    raised: list[BaseException | None] = []  # a courier that dies of an exception would print a traceback
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert eager and eager[0].counted_ahead == 0
    assert raised == []


def test_a_child_that_never_answers_is_given_up_on_and_nothing_is_left_running(eager, monkeypatch, tmp_path):
    session = tool_session(12)
    expected = inline(session, None, monkeypatch)
    monkeypatch.setattr(ahead, "WAIT_SECONDS", 3.0)  # a batch unanswered this long after the first answer: given up on
    # Answers the first batch truly (so the measure waits for it from then on), then never answers again.
    body = (
        "import sys, os\nfrom foldscope.core.request import tokens\nfrom foldscope.core.request.counting.child import receive, send\n"
        "down, up = os.fdopen(int(sys.argv[3]), 'rb'), os.fdopen(int(sys.argv[4]), 'wb')\n"
        "encode = tokens.encoding().encode_ordinary\n"
        "send(up, [len(encode(t)) for t in receive(down)[1]])\n"
        "while True:\n    receive(down)"
    )
    monkeypatch.setattr(child.sys, "executable", fake_child(tmp_path, body))
    before = threading.active_count()
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert threading.active_count() == before
    assert eager and eager[0].counted_ahead > 0 and eager[0]._child is None


def test_a_small_record_never_starts_a_child(monkeypatch):
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    started = []
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: started.append(self))
    measure_trace(tool_session(5), counter=Counter())
    assert not started


def strings_in(value) -> int:
    """Every string's characters inside a value, keys included (the record's text as worth reads it)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return sum(strings_in(k) + strings_in(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(strings_in(v) for v in value)
    return 0


def test_a_child_is_worth_starting_from_start_chars_of_the_records_text(monkeypatch):
    session = tool_session(5)
    chars = sum(strings_in(v) for m in session.record for v in m.content.values())
    monkeypatch.setattr(ahead, "START_CHARS", chars)
    assert ahead.CountsAhead.worth(session.record)
    monkeypatch.setattr(ahead, "START_CHARS", chars + 1)
    assert not ahead.CountsAhead.worth(session.record)


def test_a_record_whose_text_is_in_results_outputs_is_worth_a_child(monkeypatch):
    """A lionagi Branch keeps nearly all its text inside each result's output mapping, none in plain strings: its
    50,000 messages (151 MB) were counted without the child, and inspect took 29 s instead of 18."""
    output = {"content": [{"type": "text", "text": text_of(5000, seed=3)}], "is_error": False}
    msgs = [
        Message("c", "action_request", 0, {"function": "Read", "arguments": {}, "action_response_id": "r"}),
        Message("r", "action_response", 1, {"function": "Read", "arguments": {}, "output": output, "action_request_id": "c"}),
    ]
    monkeypatch.setattr(ahead, "START_CHARS", 5000)
    assert ahead.CountsAhead.worth(FullRecord(msgs))


def test_a_text_of_huge_chars_does_not_make_a_child_worth_starting(monkeypatch):
    """A text of HUGE_CHARS or more is counted in-line unless the child has answered when the measure comes to it, so
    it does not count toward START_CHARS: a session of one huge message gave its child nothing to count. Texts just
    under it do."""
    monkeypatch.setattr(ahead, "HUGE_CHARS", 1000)
    monkeypatch.setattr(ahead, "START_CHARS", 1500)

    def answer(i: int, chars: int) -> Message:
        return Message(f"a{i}", "assistant", i, {"assistant_response": "x" * chars})

    def result(i: int, chars: int) -> Message:
        return Message(f"r{i}", "action_response", i, {"function": "Read", "arguments": {}, "output": "y" * chars})

    for make in (answer, result):
        assert not ahead.CountsAhead.worth(FullRecord([make(0, 5000)]))
        assert not ahead.CountsAhead.worth(FullRecord([make(0, 1000), make(1, 1000), make(2, 499)]))
        assert ahead.CountsAhead.worth(FullRecord([make(0, 999), make(1, 999)]))
        assert ahead.CountsAhead.worth(FullRecord([make(0, 5000), make(1, 999), make(2, 999)]))


def test_a_counter_that_has_counted_most_of_the_record_sends_nothing_ahead(eager, monkeypatch):
    """A followed session's poll or a reopened session measures again with a counter that knows the bodies."""
    session = tool_session(10)
    counter = Counter()
    measure_trace(session, counter=counter)
    eager.clear()
    monkeypatch.setattr(ahead.CountsAhead, "worth", staticmethod(lambda record: pytest.fail("asked again")))
    measure_trace(session, counter=counter)
    assert not eager


class ReadChild:
    """One of the read's children (core.request.counting.during_read) as DuringRead.seed sees it: it counted `counts`."""

    pid = None

    def __init__(self, counts: dict) -> None:
        self.counts = counts

    def counts_by(self, record, deadline) -> dict:
        return self.counts

    def let_go(self) -> None: ...

    def reap(self, wait: bool) -> None: ...


def record_start(session: Session, monkeypatch, share: float) -> dict:
    """The block bodies' counts of the record's first `share` of messages, as a counter counting it all makes them."""
    full = Counter()
    inline(session, None, monkeypatch, counter=full)
    start = {id(m) for m in list(session.record)[: int(len(session.record) * share)]}
    bodies = full.memo()[0]
    return {key: n for key, n in bodies.items() if id(key[0][0]) in start}


def test_a_record_whose_start_the_reads_children_counted_past_half_still_counts_the_rest_ahead(eager, monkeypatch, tmp_path):
    """A file whose first half of bytes holds most of its messages has the read's children count past half its bodies
    (review23: 0.615 of one): those are the record's start, not a reopened session's memo, so the measure still has a
    child count the rest rather than count it all itself."""
    from foldscope.core.request.counting import during_read

    session = tool_session(10)
    expected = inline(session, None, monkeypatch)
    start = record_start(session, monkeypatch, 0.75)
    assert 2 * len(start) > len(session.record), "not past half the bodies"
    path = tmp_path / "s.jsonl"
    path.write_text("{}\n")
    early = during_read.DuringRead(path, lambda session: None)
    early._children.append(ReadChild(start))
    counter = Counter()
    assert early.seed(counter, session.record) == len(start)
    assert rows_of(measure_trace(session, counter=counter)) == expected
    assert eager and eager[0].counted_ahead > 0, "the rest was counted in-line"
    assert not any(key in eager[0]._batch_of for key in start), "a body the read counted was sent again"


def test_the_windows_of_the_start_the_reads_children_counted_are_not_planned_again(eager, monkeypatch, tmp_path):
    """The measure renders ahead from the record's start: a window whose answers and prompts the read's children counted
    had every block counted with them, so it is passed over unplanned; the first one past them is planned, and the
    figures are the in-line ones."""
    from foldscope.core.request.counting import during_read

    session = tool_session(10)
    expected = inline(session, None, monkeypatch)
    start = record_start(session, monkeypatch, 0.5)
    counted = int(len(session.record) * 0.5)
    monkeypatch.setattr(ahead, "WINDOW", 8)
    planned: list[int] = []
    real = ahead.window_blocks

    def window_blocks(record, lo, hi):
        planned.append(lo)
        return real(record, lo, hi)

    monkeypatch.setattr(ahead, "window_blocks", window_blocks)
    path = tmp_path / "s.jsonl"
    path.write_text("{}\n")
    early = during_read.DuringRead(path, lambda session: None)
    early._children.append(ReadChild(start))
    counter = Counter()
    early.seed(counter, session.record)
    assert rows_of(measure_trace(session, counter=counter)) == expected
    assert planned and min(planned) == counted // 8 * 8, "a window of the counted start was planned, or none past it"


def test_a_window_is_passed_over_unplanned_only_when_it_holds_texts_and_each_is_counted():
    session = tool_session(2)
    record = session.record
    texts = {m.id for m in record if m.kind in ("instruction", "assistant")}
    calls = [i for i, m in enumerate(record) if m.kind in ("action_request", "action_response")]

    def counts(known) -> ahead.CountsAhead:
        return ahead.CountsAhead(record, None, (), known=known)

    def named(key) -> str:
        return key[0][0].id

    everything = counts(lambda key: True)
    assert everything._counted_already(0, len(record), None)
    assert not everything._counted_already(calls[0], calls[0] + 6, None), "a window of calls and results alone"
    for missing in texts:
        assert not counts(lambda key, missing=missing: named(key) != missing)._counted_already(0, len(record), None)


def test_the_windows_process_plans_every_window_its_child_counts():
    """The window's process (counts_here False) builds no encoder: a block the read left out must go to the child, so
    no window is passed over there, even one whose texts are all counted."""
    record = tool_session(2).record
    leaving = ahead.CountsAhead(record, None, (), known=lambda key: True, counts_here=False)
    assert not leaving._counted_already(0, len(record), None)


def test_a_reopened_session_whose_memo_holds_past_half_its_bodies_sends_nothing_ahead(eager, monkeypatch):
    """The same counts taken from a library's memo (Counter.seed, as a reopened session's are): no child."""
    session = tool_session(10)
    start = record_start(session, monkeypatch, 0.75)
    counter = Counter()
    counter.seed(start, {}, {})
    assert 2 * counter.bodies_counted() > len(session.record)
    measure_trace(session, counter=counter)
    assert not eager


def test_no_child_runs_with_foldscope_counting_local(monkeypatch):
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")
    monkeypatch.setattr(ahead, "START_CHARS", 0)
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: pytest.fail("a child was started"))
    counter = Counter()
    measure_trace(tool_session(5), counter=counter)
    assert counter.ahead is None


def test_a_worker_of_a_process_pool_never_starts_a_child(monkeypatch):
    """A folder's replay or a fleet's sweep already keeps every core busy with a session each."""
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    assert backend.wanted()
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    assert not backend.wanted()


@pytest.mark.parametrize(
    ("cores", "idle", "load", "free"),
    [(1, 1.0, 0.0, False), (2, 0.6, 3.0, True), (2, 0.4, 0.0, False), (2, None, 1.4, True), (2, None, 1.6, False), (8, None, 6.0, True)],
)
def test_a_child_starts_only_when_a_second_core_looks_free(monkeypatch, cores, idle, load, free):
    monkeypatch.setattr(backend.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(backend, "core_idle", lambda seconds: idle)
    monkeypatch.setattr(backend.os, "getloadavg", lambda: (load, load, load))
    assert backend.free_core() is free


@pytest.mark.parametrize(("looks", "free"), [((0.9,), True), ((0.2, 0.9), True), ((0.2, 0.3), False)])
def test_a_first_look_that_finds_no_core_free_is_looked_at_again_for_longer(monkeypatch, looks, free):
    """Another process's blip can fill the first short look on an idle machine; a second, longer look decides, and a
    free first look needs no second."""
    monkeypatch.setattr(backend.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    asked: list[float] = []

    def look(seconds: float) -> float:
        asked.append(seconds)
        return looks[len(asked) - 1]

    monkeypatch.setattr(backend, "core_idle", look)
    assert backend.free_core() is free
    assert asked == [backend.SAMPLE_SECONDS, backend.SECOND_LOOK_SECONDS][: len(looks)]


@pytest.mark.parametrize("busy_here", [True, False])
def test_this_process_s_own_threads_at_work_during_the_sample_leave_its_core_free(monkeypatch, busy_here):
    """The idle sample counts this process's own CPU meanwhile as idle (the window's thread painting while its worker
    asks): 0.3 of a core idle beside a core of its own work is a free core; 0.3 with none of its own is not."""
    monkeypatch.setattr(backend.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    clock = {"cpu": 0.0, "wall": 0.0}  # this process's CPU and the wall, as the sample moves them (no timing here)
    monkeypatch.setattr(backend, "time", types.SimpleNamespace(process_time=lambda: clock["cpu"], monotonic=lambda: clock["wall"]))

    def sample(seconds: float) -> float:
        clock["wall"] += seconds
        if busy_here:
            clock["cpu"] += seconds  # a core of this process's own work (another thread of it) meanwhile
        return 0.3

    monkeypatch.setattr(backend, "core_idle", sample)
    assert backend.free_core() is busy_here


def test_core_idle_reads_the_idle_share_of_the_machine_between_two_samples(monkeypatch, tmp_path):
    stat = tmp_path / "stat"
    samples = iter(
        [
            "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3\n",
            "cpu  250 0 150 950 50 0 0 0 0 0\ncpu0 1 2 3\n",  # 200 busy and 200 idle (150 + 50 waiting) of 400
        ]
    )
    monkeypatch.setattr(backend.time, "sleep", lambda s: stat.write_text(next(samples, "")))
    monkeypatch.setattr(backend.os, "cpu_count", lambda: 2)
    stat.write_text(next(samples))
    assert backend.core_idle(str(stat)) == pytest.approx(1.0)
    assert backend.core_idle(str(tmp_path / "missing")) is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_counting_ahead_is_not_wanted_in_a_forked_child(monkeypatch):
    """One file's strategies run at once in forked children (core.replay.parallel): the parent and the siblings keep
    every core busy, and multiprocessing.parent_process() is None in a bare fork."""
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    assert backend.wanted()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer and leave at once, never into pytest's code
        try:
            os.write(write, b"1" if backend.wanted() else b"0")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == b"0"
    assert backend.wanted()  # the parent still may


def test_a_body_with_a_very_long_piece_is_left_to_the_counter(eager, monkeypatch):
    """tiktoken is quadratic on one very long piece: the counter merges it in windows, so it is never sent ahead
    (where tiktoken counts: quicktok's merge is linear, core.request.tokens.windowed)."""
    from foldscope.core.request import tokens

    monkeypatch.setattr(tokens, "BACKEND", tokens.SLOW)
    session = tool_session(4)
    long = Message("long", "instruction", 99, {"instruction": "x" * 200_000})
    session.record.append(long)
    session.trace.append(Request(len(session.trace), tuple(m.id for m in session.record), None, Usage(input=1)))
    sent: list[str] = []
    real = ahead.CountsAhead._add
    monkeypatch.setattr(ahead.CountsAhead, "_add", lambda self, key, text: (sent.append(text), real(self, key, text)))
    expected = inline(session, None, monkeypatch)
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert sent and all(len(t) < 100_000 for t in sent)


def session_leading_with(message: Message) -> Session:
    """A short tool session whose every request holds `message` right after the first message."""
    short = tool_session(4)
    record = FullRecord([short.record[0], message, *list(short.record)[1:]])
    trace = [Request(r.index, (r.view[0], message.id, *r.view[1:]), r.response_id, r.usage) for r in short.trace]
    return Session(record, [m.id for m in record], trace=trace)


def spawned_children(monkeypatch) -> list:
    """Every counting child spawned from now on (None where one could not start)."""
    spawned: list = []
    spawn = child.spawn
    monkeypatch.setattr(child, "spawn", lambda: spawned.append(spawn()) or spawned[-1])
    return spawned


def test_a_long_text_is_counted_by_one_process_only_beside_inspects_helper(eager, monkeypatch):
    """`inspect` counts through its forked helper (core.request.counting.helper) and ahead in a spawned child at once:
    the measure reaches a huge message before the child has answered once, so it does not wait for it and asks the
    helper. Sent ahead too, the child merged the same piece as well (50 MB of random letters: 8 s in each process).
    Every text handed to a counting process is logged in this process, the only one that hands them out."""
    import random

    from foldscope.core.request import tokens
    from foldscope.core.request.counting import helper as forked
    from foldscope.core.request.long_pieces import LONG_PIECE

    if tokens.windowed() or not hasattr(os, "fork"):
        pytest.skip("with tiktoken the counter merges a long piece itself; the helper needs fork")
    monkeypatch.setattr(ahead, "WAIT_FOR_START", False)  # as in inspect: the measure never waits for a starting child
    letters = "".join(random.Random(5).choices("abcdefghijklmnopqrstuvwxyz", k=3 * LONG_PIECE))
    session = session_leading_with(Message("long", "instruction", 0, {"instruction": letters}))
    expected = inline(session, None, monkeypatch)

    handed: list[str] = []  # "ahead" or "helper", once for each time a body holding the long text was handed over
    add, ask = ahead.CountsAhead._add, forked.send

    def add_logged(self, key, text):
        if letters in text:  # queued for the child; with COUNT_WHILE_WAITING off the measure never counts it itself
            handed.append("ahead")
        add(self, key, text)

    def ask_logged(stream, request):
        if any(letters in text for text in ([request[1]] if isinstance(request[1], str) else request[1])):
            handed.append("helper")
        ask(stream, request)

    monkeypatch.setattr(ahead.CountsAhead, "_add", add_logged)
    monkeypatch.setattr(forked, "send", ask_logged)
    spawned = spawned_children(monkeypatch)
    monkeypatch.setattr(tokens, "_encoding", None)  # so that start_helper forks
    assert forked.start_helper()
    try:
        got = rows_of(measure_trace(session, counter=Counter()))
    finally:
        forked.stop_helper()
    assert got == expected
    assert spawned and spawned[0] is not None  # a child counted ahead beside the helper: the test is not vacuous
    assert handed == ["helper"]


def sent_ahead_without_a_helper(monkeypatch, message: Message) -> list[str]:
    """Every body sent ahead while a session leading with `message` is measured as the GUI and the commands measure
    (no helper, the measure not waiting for a starting child), its figures checked against the in-line count."""
    from foldscope.core.request import tokens

    monkeypatch.setattr(ahead, "WAIT_FOR_START", False)
    session = session_leading_with(message)
    expected = inline(session, None, monkeypatch)
    handed: list[str] = []
    add = ahead.CountsAhead._add
    monkeypatch.setattr(ahead.CountsAhead, "_add", lambda self, key, text: (handed.append(text), add(self, key, text)))
    spawned = spawned_children(monkeypatch)
    assert not tokens.helping()
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert spawned and spawned[0] is not None and handed  # a child counted the other bodies ahead: not vacuous
    return handed


def test_a_long_text_is_counted_by_one_process_only_without_a_helper(eager, monkeypatch):
    """The GUI and the other commands have no helper: the measure reaches a huge message before the child has answered
    once, does not wait for it (take) and counts the body in-line. Sent ahead too, the child merged the same piece
    as well (50 MB of random letters: about 10 s more CPU in the GUI). So it is not sent before that first answer."""
    import random

    from foldscope.core.request import tokens
    from foldscope.core.request.long_pieces import LONG_PIECE

    if tokens.windowed():
        pytest.skip("with tiktoken the counter merges a long piece itself and never sends it ahead")
    letters = "".join(random.Random(6).choices("abcdefghijklmnopqrstuvwxyz", k=3 * LONG_PIECE))
    handed = sent_ahead_without_a_helper(monkeypatch, Message("long", "instruction", 0, {"instruction": letters}))
    assert not any(letters in text for text in handed)


def test_a_huge_text_without_a_long_piece_is_not_sent_before_the_childs_first_answer(eager, monkeypatch):
    """Not only a long piece: any text whose count alone outlasts the child's start (50 MB of base64 or of code, a
    few seconds) was counted in-line and by the child at once. Shrunk here: HUGE_CHARS of words."""
    monkeypatch.setattr(ahead, "HUGE_CHARS", 20_000)
    words = " ".join(f"word{i}" for i in range(5_000))  # about 44,000 characters, no long piece
    handed = sent_ahead_without_a_helper(monkeypatch, Message("huge", "instruction", 0, {"instruction": words}))
    assert not any(words in text for text in handed)


def test_a_block_that_cannot_be_rendered_ahead_never_fails_the_measure(eager, monkeypatch):
    """What is sent ahead is a guess: a block it cannot render (a clipped copy under a bound it does not fit, planned
    before the first round's frozen bound is known) is left to the counter, which renders the views' own blocks."""
    session = tool_session(8)
    expected = inline(session, None, monkeypatch)
    real = ahead.body_of
    refused: list[str] = []

    def body_of(spec, record, policy, first_round):
        if spec.message.id.startswith("r2_"):
            refused.append(spec.message.id)
            raise CompileError(f"message {spec.message.id} cannot be rendered")
        return real(spec, record, policy, first_round)

    monkeypatch.setattr(ahead, "body_of", body_of)
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert refused and eager[0].counted_ahead > 0


def test_position_of_is_the_record_position_of_a_views_last_message():
    session = tool_session(2)
    rec = session.record
    assert ahead.position_of(rec, [rec[0], rec[3]]) == 3
    assert ahead.position_of(rec, []) == 0
    assert ahead.position_of(rec, [Message("elsewhere", "instruction", 0, {"instruction": "x"})]) == 0


def test_nothing_the_counter_has_counted_is_sent_ahead_again(eager, monkeypatch):
    """A counter that measured the trace once (or was seeded from the library's memo) knows every body and every
    thinking: measuring again sends the child nothing, the thinking included (its memo is keyed by the bare digest)."""
    session = tool_session(10, thinking=True)
    session.model = "claude-sonnet-4-5"  # a model whose predictions count the current turn's thinking
    counter = Counter()
    expected = inline(session, None, monkeypatch, counter)
    assert counter.memo()[3], "no thinking was counted: the test would prove nothing"
    # Past the first gate (a counter knowing most of the record attaches no child at all), to the rule under it.
    monkeypatch.setattr(counter, "bodies_counted", lambda: 0)
    sent: list = []
    real = ahead.CountsAhead._add
    monkeypatch.setattr(ahead.CountsAhead, "_add", lambda self, key, text: (sent.append(key), real(self, key, text)))
    started = []
    real_start = ahead.CountsAhead._start
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: (started.append(self), real_start(self)))
    assert rows_of(measure_trace(session, counter=counter)) == expected
    assert eager, "no child was attached: the test would prove nothing"
    assert sent == []
    assert started == [], "a child was started with nothing to count"


def test_a_thread_sharing_the_counter_never_waits_for_the_child(eager, monkeypatch):
    """Only the measure's thread waits for, flushes or steals a batch: another thread that counts with the same
    counter while the trace is measured gets the counts already made and counts the rest in-line."""
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: None)  # no child: every batch stays queued
    monkeypatch.setattr(ahead, "COUNT_WHILE_WAITING", True)  # so the measure's thread counts a queued batch itself
    rec = tool_session(6).record
    counts = ahead.CountsAhead(rec, None, (None, False))
    try:
        counts.reach(len(rec), None)
        key = next(iter(counts._batch_of))
        text = counts.body(key)
        assert text
        expected = len(ahead.tokens.encoding().encode_ordinary(text))
        elsewhere: list = []
        thread = threading.Thread(target=lambda: elsewhere.append(counts.take(key)))
        thread.start()
        thread.join()
        assert elsewhere == [None]
        assert counts.take(key) == expected  # here, the measure's thread: counted for it
        thread = threading.Thread(target=lambda: elsewhere.append(counts.take(key)))
        thread.start()
        thread.join()
        assert elsewhere == [None, expected]  # a count made is anyone's
    finally:
        counts.close()


@pytest.mark.parametrize("caching", [False, True], ids=["caching off", "caching"])
def test_a_child_that_has_counted_all_it_was_sent_is_sent_more_though_the_measure_has_not_moved(eager, monkeypatch, caching):
    """The lead runs LEAD_CHARS past the measure's place or past what the child has counted, whichever is further: while
    the measure walks bodies counted already (the record's start, counted during the read), the child is sent the next
    ones as it counts them, where it had counted one lead and then waited for the measure to come. Under caching a
    block's key waits on the first round the measure decides: there the lead stays past the measure's place."""
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: None)  # no child: its answers are given below
    monkeypatch.setattr(ahead, "WINDOW", 8)
    monkeypatch.setattr(ahead, "LEAD_CHARS", 16 << 10)
    rec = tool_session(60).record
    counts = ahead.CountsAhead(rec, Policy(prompt_caching=True) if caching else None, (None, False))
    try:
        counts.reach(0, None)
        first = counts._next
        assert 0 < first < len(rec) and counts._chars >= ahead.LEAD_CHARS
        counts.reach(0, None)
        assert counts._next == first  # nothing counted yet: the lead is full
        counts._flush()
        for batch in list(counts._queue):  # the child answers all it was sent
            counts._store(batch, [1] * len(batch.keys))
        assert counts._counted_chars == counts._chars
        counts.reach(0, None)
        if caching:
            assert counts._next == first
            return
        assert counts._next > first  # sent more, the measure still at the start
        assert counts._chars - counts._counted_chars >= ahead.LEAD_CHARS  # one lead again, not the rest of the record
        assert counts._next < len(rec)
    finally:
        counts.close()


def test_a_courier_that_cannot_start_costs_time_never_a_figure(eager, monkeypatch):
    """A process at its thread limit: the child started, the receiving courier could not; the measure counts in-line,
    and the child and the courier that did start are stopped."""
    session = tool_session(8)
    expected = inline(session, None, monkeypatch)
    real = threading.Thread.start

    def start(thread):
        if thread.name == "foldscope counts ahead: in":
            raise RuntimeError("can't start new thread")
        real(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    before = threading.active_count()
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert threading.active_count() == before
    assert eager and eager[0].counted_ahead == 0 and eager[0]._child is None


def test_a_measure_stopped_midway_leaves_nothing_running(eager, monkeypatch):
    """The GUI's load worker cancels by raising from its progress call (app.worker.Cancelled), Ctrl+C raises anywhere:
    the child is stopped and reaped, the couriers joined, and the counter is left without it."""
    session = tool_session(12)

    class Stop(Exception):
        pass

    def on_count(k, requests, count):
        if k == 10:
            assert eager == [] and counter.ahead is not None  # the child is counting: there is something to stop
            children.append(counter.ahead._child)
            raise Stop

    counter = Counter()
    children: list = []
    before = threading.active_count()
    with pytest.raises(Stop):
        measure_trace(session, counter=counter, on_count=on_count)
    assert threading.active_count() == before
    assert counter.ahead is None
    assert eager and eager[0]._child is None and not eager[0]._couriers
    assert children[0] is not None and children[0].returncode is not None  # reaped: no zombie


def test_a_ctrl_c_while_the_child_is_being_reaped_still_reaps_it(eager, monkeypatch):
    """A second interrupt can land in close() itself, while it waits for the killed child: the wait is made again, so
    no zombie is left behind the interrupt, which goes on."""
    session = tool_session(12)

    class Stop(Exception):
        pass

    def on_count(k, requests, count):
        if k == 10:
            process = counter.ahead._child
            real_wait, calls = process.wait, []

            def wait(*args, **kwargs):
                calls.append(1)
                if len(calls) == 1:
                    raise KeyboardInterrupt
                return real_wait(*args, **kwargs)

            process.wait = wait
            children.append(process)
            raise Stop

    counter = Counter()
    children: list = []
    with pytest.raises(KeyboardInterrupt):
        measure_trace(session, counter=counter, on_count=on_count)
    assert children and children[0].returncode is not None  # reaped: no zombie


def spawns_counted(monkeypatch) -> list[child.Child]:
    """Every counting child child.spawn starts, in order."""
    spawned: list[child.Child] = []
    real = child.spawn

    def spawn():
        child = real()
        spawned.append(child)
        return child

    monkeypatch.setattr(child, "spawn", spawn)
    return spawned


def test_the_child_started_while_the_file_is_read_is_the_one_the_measure_counts_with(eager, monkeypatch, tmp_path):
    monkeypatch.setattr(ahead, "START_CHARS", 100)
    session = tool_session(12)
    expected = inline(session, None, monkeypatch)
    spawned = spawns_counted(monkeypatch)
    path = text_file(tmp_path, 100)
    assert backend.hint(path)
    assert backend.has_spare() and len(spawned) == 1
    monkeypatch.setattr(backend, "free_core", lambda: pytest.fail("the core asked again with a child waiting"))
    assert rows_of(measure_trace(session, counter=Counter())) == expected
    assert len(spawned) == 1, "the measure started a second child"
    assert eager and eager[0].counted_ahead > 0
    assert not backend.has_spare()
    assert spawned[0].process.poll() is not None, "the child was left running"


def test_a_child_due_while_reading_is_forked_with_the_built_encoder_and_is_the_one_the_measure_counts_with(eager, monkeypatch, tmp_path):
    """hint(forked=True) spawns nothing: the read's own fork (during_read) forks the child once the encoder is built,
    so it starts no interpreter and builds no encoder of its own; the measure counts with it, and it is reaped."""
    from foldscope.core.request import tokens

    monkeypatch.setattr(ahead, "START_CHARS", 100)
    session = tool_session(12)
    expected = inline(session, None, monkeypatch)
    monkeypatch.setattr(child, "spawn", lambda: pytest.fail("an interpreter was spawned"))
    forked: list[child.Child] = []
    real = child.fork
    monkeypatch.setattr(child, "fork", lambda: forked.append(real()) or forked[-1])
    try:
        assert backend.hint(text_file(tmp_path, 100), forked=True)
        assert not backend.has_spare() and not forked, "started before the encoder was built"
        tokens.local_encoding()
        assert backend.fork_spare() and backend.has_spare() and len(forked) == 1
        assert not backend.fork_spare(), "a second child was forked"
        monkeypatch.setattr(backend, "free_core", lambda: pytest.fail("the core asked again with a child waiting"))
        assert rows_of(measure_trace(session, counter=Counter())) == expected
    finally:
        backend.discard_spare()
    assert eager and eager[0].counted_ahead > 0
    assert forked[0].process.returncode is not None, "the child was not reaped"


class NoCut:
    """A child during the read whose read never reaches a cut (a format the line reader does not read): nothing forks."""

    def arm(self) -> None: ...

    def disarm(self) -> None: ...

    def failed(self) -> None: ...

    def read_ended(self, session: Session) -> None: ...


def test_a_child_due_that_no_cut_of_the_read_forked_is_spawned_once_the_read_is_done(eager, monkeypatch, tmp_path):
    """read_session with a child during the read makes the counting child due (hint's `forked`); where no cut forks it,
    it is spawned after the read, so the measure still finds one waiting rather than build its start into the count."""
    from foldscope.core import formats
    from foldscope.core.cli.options import read_session

    monkeypatch.setattr(ahead, "START_CHARS", 100)
    spawned = spawns_counted(monkeypatch)
    monkeypatch.setattr(formats, "load_session", lambda *args, **kwargs: tool_session(2))
    try:
        read_session(text_file(tmp_path, 100), during=NoCut())
        assert backend.has_spare() and len(spawned) == 1, "no counting child waits for the measure"
    finally:
        backend.discard_spare()
    assert spawned[0].process.poll() is not None, "the child was left running"


def test_a_child_a_failed_read_left_due_is_not_forked_for_the_next_file(eager, monkeypatch, tmp_path):
    """A read that failed before its cut leaves the counting child due; the next file's hint says anew whether one is
    wanted, so a cut of a file too small for one forks none."""
    monkeypatch.setattr(ahead, "START_CHARS", 100)
    monkeypatch.setattr(child, "fork", lambda: pytest.fail("forked a counting child for a file that wants none"))
    assert backend.hint(text_file(tmp_path, 100), forked=True)
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    assert not backend.hint(small, forked=True)
    assert not backend.fork_spare()


def test_a_forked_child_counts_as_this_process_does_and_is_stopped_and_reaped():
    from foldscope.core.request import tokens

    texts = ["hello world", "x" * 5000, "naïve café 東京"]
    started = child.fork()
    assert started is not None
    try:
        with os.fdopen(os.dup(started.down), "wb") as down, os.fdopen(os.dup(started.up), "rb") as up:
            child.send(down, ("counts", texts))
            assert child.receive(up) == [tokens.count_text(text) for text in texts]
        assert started.process.poll() is None  # still serving
    finally:
        child.stop(started)
    assert started.process.returncode is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(started.process.pid, os.WNOHANG)  # reaped: no zombie left


@pytest.fixture
def started_while_reading(monkeypatch, tmp_path):
    """A child hint started for a file of START_CHARS bytes on a free core, as a command's read starts one."""
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    monkeypatch.setattr(ahead, "START_CHARS", 100)
    spawned = spawns_counted(monkeypatch)
    assert backend.hint(text_file(tmp_path, 100))
    yield spawned
    backend.discard_spare()


def test_a_child_started_for_a_record_too_small_to_repay_it_is_stopped_and_reaped(monkeypatch, started_while_reading):
    spawned = started_while_reading
    monkeypatch.setattr(ahead, "START_CHARS", 10**9)  # the record read holds less text than a child repays
    measure_trace(tool_session(5), counter=Counter())
    assert not backend.has_spare()
    assert spawned[0].process.returncode is not None, "the child was not reaped"


def text_file(folder: Path, chars: int, string: int = 200) -> Path:
    """A session-like file of lines each holding one string of `string` characters, `chars` of them in all."""
    path = folder / "session.jsonl"
    lines = max(1, chars // string)
    path.write_text("".join(f'{{"type": "user", "uuid": "u{k}", "content": "{"x" * string}"}}\n' for k in range(lines)))
    return path


@pytest.mark.parametrize(
    "chars, string, free, started",
    [
        (99, 66, True, False),
        (1000, 40, True, False),
        (400, 200, False, False),
        (400, 200, True, True),
    ],
    ids=["less text than a child repays", "a large file of short strings", "no free core", "text enough, free core"],
)
def test_a_child_is_started_while_reading_only_for_a_file_that_may_repay_it_on_a_free_core(
    monkeypatch, tmp_path, chars, string, free, started
):
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: free)
    monkeypatch.setattr(ahead, "START_CHARS", 100 if string > 64 else 1000)
    spawned = spawns_counted(monkeypatch)
    path = text_file(tmp_path, chars, string)
    try:
        assert backend.hint(path) is started
        assert len(spawned) == int(started)
        assert not backend.hint(path), "a second child was started beside the first"
    finally:
        backend.discard_spare()
    assert all(child.process.returncode is not None for child in spawned)


def test_foldscope_counting_local_stops_a_child_started_while_reading(monkeypatch, started_while_reading):
    spawned = started_while_reading
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")  # set between the read and the measure: the measure obeys it
    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: pytest.fail("a child counted"))
    measure_trace(tool_session(12), counter=Counter())
    assert not backend.has_spare() and spawned[0].process.returncode is not None


def test_the_text_of_a_file_is_estimated_from_its_long_strings_escapes_included(tmp_path):
    path = text_file(tmp_path, 200 * 500)
    assert 0.9 < backend.estimated_text(path) / (200 * 500) < 1.2  # the lines' envelope is not text
    short = text_file(tmp_path, 40 * 2000, string=40)
    assert backend.estimated_text(short) == 0
    escaped = tmp_path / "escaped.jsonl"
    escaped.write_text("".join('{"output": "' + '\\"quoted\\" ' * 20 + '"}\n' for _ in range(100)))
    assert backend.estimated_text(escaped) > 0.8 * escaped.stat().st_size


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b'"', b"\\", b"a", b"\n", b"x" * 70]), max_size=40))
def test_the_long_strings_of_a_window_are_those_a_json_string_literal_matches(parts):
    """Closed long strings only, each from its opening quote to its closing one, escapes inside: as the literal's own
    pattern finds them (an unclosed string is taken whole, so the search goes on after it, but it is not counted)."""
    window = b"".join(parts)
    literal = re.compile(rb'"(?:[^"\\\n]++|\\.)*+"')
    assert backend.string_bytes(window) == sum(len(m) for m in literal.findall(window) if len(m) >= backend.LONG_STRING + 2)


def test_one_unclosed_string_of_escaped_quotes_is_read_once_not_from_each_quote(tmp_path):
    """One message of JSON logs as one line: each sampled window cuts its string, which has a quote every few bytes. It
    was read again from each quote (256 kB each time: 20 s of CPU for a 50 MB message before its file was read)."""
    path = tmp_path / "logs.jsonl"
    path.write_text('{"message": {"content": "' + '{\\"ts\\": 1, \\"level\\": \\"info\\"}\\n' * 20_000 + '"}}\n')
    start = time.process_time()
    assert backend.estimated_text(path) == 0  # no string closes within a window: nothing counted, as before
    assert time.process_time() - start < 2.0  # about 10 ms; quadratic, it took tens of seconds


def test_a_missing_file_starts_no_child(monkeypatch, tmp_path):
    monkeypatch.setattr(child, "spawn", lambda: pytest.fail("a child was started"))
    assert not backend.hint(tmp_path / "absent.jsonl")


def test_a_worker_of_a_process_pool_starts_no_child_while_reading_nor_samples_its_file(monkeypatch, tmp_path):
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    monkeypatch.setattr(ahead, "START_CHARS", 100)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    monkeypatch.setattr(backend, "estimated_text", lambda path: pytest.fail("the file was sampled"))
    monkeypatch.setattr(child, "spawn", lambda: pytest.fail("a child was started"))
    assert not backend.hint(text_file(tmp_path, 400))


def test_texts_asked_of_the_child_while_the_measure_runs_are_counted_there_as_the_counter_counts_them(eager, monkeypatch):
    """CountsAhead.counts_of (the report's summaries, counted after the measure): the child's counts are
    Counter.count_text's, none is counted in this process, and a text holding a long piece is left to the counter."""
    from foldscope.core.request import tokens

    session = tool_session(10)
    texts = [text_of(3000, seed=s) for s in range(4)] + ["x" * (2 * 65_536)]
    counter, asked = Counter(), []
    counted_here = []
    real = tokens.count_text

    def heard(messages, first_round, m, meter):
        if not asked:
            monkeypatch.setattr(tokens, "count_text", lambda text: counted_here.append(text) or real(text))
            asked.append(counter.ahead.counts_of(texts))
            monkeypatch.setattr(tokens, "count_text", real)

    measure_trace(session, counter=counter, on_measured=heard)
    assert asked[0] == [Counter().count_text(t) for t in texts[:4]] + [None]
    assert not counted_here


def test_texts_asked_of_no_child_are_none():
    record = tool_session(2).record
    unstarted = ahead.CountsAhead(record, None, ("k",), known=lambda key: False)
    assert unstarted.counts_of(["a text"]) == [None]


def test_a_child_that_is_gone_lets_each_batch_go_once_not_once_a_key(monkeypatch):
    """When the child's pipe ends (closed, killed, failed), every batch a measure may wait on is let go: each once,
    however many keys it holds (a 50k load's 49,852 keys were 290 batches; setting each key's batch was 0.04 s of
    CPU that close() waited for)."""
    import io

    sets: list[int] = []

    class Counted(threading.Event):
        def set(self) -> None:
            sets.append(id(self))
            super().set()

    monkeypatch.setattr(ahead.CountsAhead, "_start", lambda self: None)  # no child: the pipe is given below
    rec = tool_session(2).record
    counts = ahead.CountsAhead(rec, None, (None, False))
    batches = [ahead._Batch() for _ in range(3)]
    for n, batch in enumerate(batches):
        batch.done = Counted()
        for i in range(40):
            counts._batch_of[("key", n, i)] = batch
    counts._receive_all(io.BytesIO(b""))  # the child's end closed: nothing more to read
    assert all(batch.done.is_set() for batch in batches)
    assert sorted(sets) == sorted(id(batch.done) for batch in batches)  # each batch once
