"""The compactions' literal checks made in a forked child give the checks made in-line, whatever becomes of the child."""

import marshal
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from foldscope.core.forensics import literals_ahead
from foldscope.core.forensics.compactions import compaction_report, find_compactions, literal_checks, literal_text
from foldscope.core.forensics.literals_ahead import JobsAhead, LiteralChecks, Span
from foldscope.core.formats import load_session
from tests.processes import alive, gone

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform: the checks are made in-line")


def _parts(checks):
    return [c.parts() for c in checks]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated Claude Code session that repeats nothing, with compactions (bench/fresh_session.py)."""
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 1500)
    session = load_session(path)
    assert len(find_compactions(session)) >= 3
    return session


def test_the_forked_checks_are_the_in_line_checks_on_a_generated_session(generated):
    with literal_checks(generated, fork=True) as forked:
        pid = forked.pid
        assert pid is not None
        _, status = os.waitpid(pid, 0)  # let the child write every check, so every one collected is the child's
        forked.ahead.pid = None
        assert os.waitstatus_to_exitcode(status) == 0
        got = forked.collect()
        assert forked.made_here == 0
    in_line = literal_checks(generated, fork=False).collect()
    assert in_line is not None and got is not None
    assert _parts(got) == _parts(in_line) and len(got) == len(find_compactions(generated))
    assert sum(c.kept_count + c.lost_count for c in got) > 0


def test_the_forked_checks_are_the_in_line_checks_on_dev_corpus_texts(corpus_dev):
    """No dev file holds a carried compaction, so each file's record is cut into spans, each summarised by a message of
    its own: the literals of real paths, names, numbers and URLs go through the child."""
    for path in sorted(p for p in (corpus_dev / "claude_code").glob("*.jsonl")) + sorted((corpus_dev / "codex").glob("*.jsonl")):
        record = list(load_session(path).record)
        spans = [Span(k, record[min(k + 3, len(record) - 1)], record[k : k + 20], literal_text) for k in range(0, len(record), 20)]
        forked = LiteralChecks(spans, fork=True)
        assert forked.pid is not None
        assert _parts(forked.collect()) == _parts(LiteralChecks(spans, fork=False).collect()), path.name


def test_a_child_killed_at_once_leaves_the_same_checks_made_in_line_and_no_process(generated):
    forked = literal_checks(generated, fork=True)
    pid = forked.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    got = forked.collect()
    assert _parts(got) == _parts(literal_checks(generated, fork=False).collect())
    assert forked.made_here == len(got) and gone(pid)


def test_a_child_that_fails_leaves_the_same_checks_made_in_line(generated, monkeypatch):
    parent = os.getpid()
    real = Span.check

    def failing_in_the_child(self):
        if os.getpid() != parent:
            raise RuntimeError("the child's check fails")
        return real(self)

    monkeypatch.setattr(Span, "check", failing_in_the_child)
    forked = literal_checks(generated, fork=True)
    pid = forked.pid
    assert pid is not None
    os.waitpid(pid, 0)  # the child has ended, having written nothing
    forked.ahead.pid = None
    got = forked.collect()
    monkeypatch.setattr(Span, "check", real)
    assert _parts(got) == _parts(literal_checks(generated, fork=False).collect())
    assert forked.made_here == len(got)


def test_a_child_that_hangs_is_never_waited_for_and_is_reaped(generated, monkeypatch):
    parent = os.getpid()
    real = Span.check

    def hanging_in_the_child(self):
        if os.getpid() != parent:
            time.sleep(3600)
        return real(self)

    monkeypatch.setattr(Span, "check", hanging_in_the_child)
    forked = literal_checks(generated, fork=True)
    pid = forked.pid
    assert pid is not None
    started = time.monotonic()
    got = forked.collect()
    assert time.monotonic() - started < 60
    monkeypatch.setattr(Span, "check", real)
    assert _parts(got) == _parts(literal_checks(generated, fork=False).collect())
    assert forked.made_here == len(got) and gone(pid)


def test_leaving_the_checks_uncollected_stops_and_reaps_the_child(generated, monkeypatch):
    parent = os.getpid()
    real = Span.check
    monkeypatch.setattr(Span, "check", lambda self: time.sleep(3600) if os.getpid() != parent else real(self))
    with pytest.raises(KeyError):
        with literal_checks(generated, fork=True) as forked:
            pid = forked.pid
            assert pid is not None
            raise KeyError("the command failed before its report was built")
    assert forked.pid is None and gone(pid)


def test_a_half_written_frame_is_not_taken():
    ahead = JobsAhead([lambda: "never run"], fork=False)
    ahead._file = tempfile.TemporaryFile()
    data = marshal.dumps(("a result", b"\x01"))
    ahead._file.write(len(data).to_bytes(8, "little") + (0).to_bytes(4, "little") + data[:-1])
    ahead._file.flush()
    assert ahead.take(0) is None
    ahead._file.write(data[-1:])
    ahead._file.flush()
    assert ahead.take(0) == ("a result", b"\x01") and ahead.take(1) is None
    ahead.stop()


def test_no_fork_while_another_thread_runs():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not literals_ahead.may_fork()
    finally:
        stop.set()
        other.join()


def test_no_fork_where_a_qt_application_runs(monkeypatch):
    """The GUI's report export runs on a worker of Qt's pool, a thread Python's threading never counts (it reads 1
    there): where a Qt application runs the work is made in-line, never in a fork; Qt loaded with none running (a
    test plugin) forks."""
    import types

    running: list[object] = []
    qt = types.ModuleType("PySide6.QtCore")
    qt.QCoreApplication = types.SimpleNamespace(instance=lambda: running[0] if running else None)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "PySide6.QtCore", qt)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # a thread an earlier test left does not decide this one
    assert literals_ahead.may_fork()
    running.append(object())
    assert not literals_ahead.may_fork()


def test_no_fork_with_counting_kept_local(monkeypatch):
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")
    assert not literals_ahead.may_fork()


def test_checks_started_for_other_compactions_are_not_used(generated):
    checks = literal_checks(generated, fork=True)
    assert checks.collect([(0, "another note")]) is None
    assert checks.pid is None


def test_the_compaction_report_with_forked_checks_is_the_report_made_in_line(generated, monkeypatch):
    forks = []
    real_fork = os.fork

    def counted_fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted_fork)
    # may_fork refuses while any other thread runs: one an earlier test left finishing must not decide this test
    monkeypatch.setattr(literals_ahead, "may_fork", lambda: True)
    forked = compaction_report(generated).as_dict()  # forks its checks before the count
    assert len(forks) == 1 and gone(forks[0])
    monkeypatch.setattr(literals_ahead, "may_fork", lambda: False)
    assert forked == compaction_report(generated).as_dict()
    assert len(forks) == 1


def test_the_compaction_report_from_the_trace_measure_is_the_one_from_the_cache_reports_own_count(generated, corpus_dev):
    """compaction_report counts through the trace measure (a child may count ahead) with the cache causes' pass riding
    on it: the same report as the cache report's own pass gives, on a generated session and on every dev file."""
    from foldscope.core.forensics.cache_report import cache_report
    from foldscope.core.model.launch import session_policy

    sessions = [generated] + [
        load_session(p)
        for p in sorted(corpus_dev.rglob("*.json*"))
        if "subagents" not in p.parts and "manifest" not in p.name and p.suffix in (".jsonl", ".json")
    ]
    for session in sessions:
        policy = session_policy(session)
        assert (
            compaction_report(session, policy).as_dict()
            == compaction_report(session, policy, cache=cache_report(session, policy)).as_dict()
        )


def _held_until(go: Path):
    """A first job that says it has started (the file `go` names, with .started) and waits until `go` exists (at most
    30 s), so the parent acts while the child is inside it and has made nothing."""

    def job() -> int:
        go.with_suffix(".started").touch()
        end = time.monotonic() + 30
        while not go.exists() and time.monotonic() < end:
            time.sleep(0.005)
        return 0

    return job


def _inside_the_first_job(go: Path) -> None:
    end = time.monotonic() + 30
    while not go.with_suffix(".started").exists() and time.monotonic() < end:
        time.sleep(0.005)


def _all_made(ahead: JobsAhead) -> None:
    """Until the child has made what it makes and ended (asking for a job it has not made would tell it not to)."""
    assert ahead.pid is not None
    os.waitpid(ahead.pid, 0)
    ahead.pid = None  # reaped here: nothing left for stop() to kill


def _number(k: int):
    return lambda: k


def test_the_child_makes_its_jobs_at_a_lower_priority_than_its_parent():
    """The parent is the command's critical path; the child's jobs fill what time the two cores have left."""
    if os.nice(0) >= 19:
        pytest.skip("this process already runs at the lowest priority")
    with JobsAhead([lambda: os.nice(0)], fork=True) as ahead:
        assert ahead.pid is not None
        _all_made(ahead)
        assert ahead.take(0) == min(19, os.nice(0) + literals_ahead.NICE) > os.nice(0)


def test_a_job_the_parent_made_itself_is_never_made_by_the_child(tmp_path):
    go = tmp_path / "go"
    with JobsAhead([_held_until(go)] + [_number(k) for k in range(1, 10)], fork=True) as ahead:
        assert ahead.pid is not None
        _inside_the_first_job(go)
        assert ahead.take(5) is None and ahead.take(2) is None  # not made yet: the parent makes them itself
        go.touch()
        _all_made(ahead)
        assert [ahead.take(k) for k in range(10)] == [0, 1, None, 3, 4, None, 6, 7, 8, 9]


def test_where_the_parent_taking_in_order_catches_the_child_up_the_child_goes_on_from_halfway_to_the_end(tmp_path):
    """A page written in order makes itself what the child has not made; the child then leaves it the jobs just
    ahead (it would make them as soon) and goes on from halfway between the parent and the last job."""
    go = tmp_path / "go"
    with JobsAhead([_held_until(go)] + [_number(k) for k in range(1, 21)], fork=True) as ahead:
        assert ahead.pid is not None
        _inside_the_first_job(go)
        assert all(ahead.take(k, in_order=True) is None for k in range(1, 11))  # the parent made 1..10 itself
        go.touch()
        _all_made(ahead)
        assert [ahead.take(k) for k in range(21)] == [0] + [None] * 15 + [16, 17, 18, 19, 20]


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_once_the_count_is_done_the_child_goes_on_at_its_parents_priority_keeping_what_it_made(tmp_path):
    """count_done kills the niced child (a process may not lower its own nice), keeps its whole frames, never reads
    the frame the kill cut, and forks a child at the parent's priority for the jobs not made: the niced child made
    job 0 and was killed halfway through writing job 1's frame; the new one makes jobs 1 to 5, none twice."""
    if os.nice(0) >= 19:
        pytest.skip("this process already runs at the lowest priority")
    go, ours = tmp_path / "go", os.nice(0)
    made = tmp_path / "made"

    def job(k: int):
        def run() -> tuple[int, int]:
            if k == 1 and os.nice(0) > ours:  # the niced child: half a frame written, then held until killed
                fd = next(n for n in range(3, 1 << 16) if _open(n))  # the child holds its results' file alone
                with made.open("a") as f:
                    f.write(f"{k} ")
                os.write(fd, (100).to_bytes(8, "little") + (1).to_bytes(4, "little") + b"half")
                _held_until(go)()
            with made.open("a") as f:
                f.write(f"{k} ")
            return k, os.nice(0)

        return run

    with JobsAhead([job(k) for k in range(6)], fork=True) as ahead:
        assert ahead.pid is not None
        _inside_the_first_job(go)
        first = ahead.pid
        ahead.count_done()  # never waits for the niced child to die
        assert ahead.pid not in (None, first) and ahead.nice == 0 and ahead.restarted == 5
        _all_made(ahead)
        got = [ahead.take(k) for k in range(6)]
    assert gone(first)  # reaped on leaving
    niced = min(19, ours + literals_ahead.NICE)
    assert got == [(0, niced)] + [(k, ours) for k in range(1, 6)]
    assert made.read_text().split() == ["0", "1", "1", "2", "3", "4", "5"]  # job 1 begun by each child, the rest once


def test_a_slot_left_empty_is_passed_over_by_the_child(tmp_path):
    """A job given as None keeps a place for work that needs what is built after the fork (the report's every-request
    table needs the count): the child forked before passes over it and makes the jobs after it."""
    with JobsAhead([_number(0), None, _number(2)], fork=True) as ahead:
        assert ahead.pid is not None
        _all_made(ahead)
        assert [ahead.take(k) for k in range(3)] == [0, None, 2]


def test_the_child_forked_again_at_the_counts_end_makes_the_slots_filled_then_in_their_place(tmp_path):
    """count_done fills the slots (`filled`) before it forks the child at the parent's priority, which makes them in
    the jobs' order, before the jobs after them: the work that needs the count is made by the one child that works
    beside the parent after it (no second child forked for it)."""
    if os.nice(0) >= 19:
        pytest.skip("this process already runs at the lowest priority")
    go, made = tmp_path / "go", tmp_path / "made"

    def job(k: int):
        def run() -> int:
            with made.open("a") as f:
                f.write(f"{k} ")
            return k

        return run

    with JobsAhead([_held_until(go), None, None, job(3)], fork=True) as ahead:
        assert ahead.pid is not None
        _inside_the_first_job(go)  # the niced child is inside job 0: it has made nothing
        assert ahead.count_done(filled={1: job(1), 2: job(2)})
        assert ahead.nice == 0 and ahead.restarted == 4
        go.touch()
        _all_made(ahead)
        assert [ahead.take(k) for k in range(4)] == [0, 1, 2, 3]
    assert made.read_text().split() == ["1", "2", "3"]


# A command that forks its jobs' child and is then killed (no `with` to reap the child): argv's first is the jobs' count.
KILLED_PARENT = """
import sys, time
from foldscope.core.forensics.literals_ahead import JobsAhead
ahead = JobsAhead([lambda: time.sleep(0.1) for _ in range(int(sys.argv[1]))], fork=True)
print(ahead.pid, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_child_whose_parent_is_killed_stops_before_its_next_job():
    """The report's and compactions' child makes jobs nobody will read once its command is killed (SIGKILL, no `with`):
    it stops within a job, not after the rest (here 60 jobs of 0.1 s)."""
    import subprocess

    run = subprocess.Popen([sys.executable, "-c", KILLED_PARENT, "60"], stdout=subprocess.PIPE, text=True)
    assert run.stdout is not None
    child = int(run.stdout.readline())
    time.sleep(0.3)
    assert alive(child)
    run.kill()
    run.wait()
    end = time.monotonic() + 2.0  # well within the 5 s of jobs left
    while alive(child) and time.monotonic() < end:
        time.sleep(0.02)
    assert not alive(child)


def _asked_then_forked(monkeypatch, spare: bool = False) -> list[object]:
    """What happens, in order, when a child is forked (the fork fails at once: the jobs are made in-line) and when
    the count's question for a counting child is asked (backend.hint), with or without a child the read started."""
    from foldscope.core.request.counting import backend

    events: list[object] = []

    def fork():
        events.append("fork")
        raise OSError("no fork in this test")

    monkeypatch.setattr(literals_ahead.os, "fork", fork)
    monkeypatch.setattr(backend, "hint", lambda path: events.append(("asked", str(path))) or False)
    monkeypatch.setattr(backend, "has_spare", lambda: spare)
    return events


def test_a_child_forked_before_a_count_asks_for_the_counting_child_first(monkeypatch, tmp_path):
    """The count asks whether a core is free; asked after this module's child is forked, it would find that core
    taken, so the question is asked before the fork (counting_child_first), and only then."""
    events = _asked_then_forked(monkeypatch)
    with JobsAhead([lambda: 1], fork=True, counted_after=tmp_path / "s.jsonl") as jobs:
        assert jobs.take(0) is None  # made in-line: the fork failed
    assert events == [("asked", str(tmp_path / "s.jsonl")), "fork"]
    events.clear()
    JobsAhead([lambda: 1], fork=True).stop()  # no count after it (the report's every-request table): nothing asked
    assert events == ["fork"]


def test_a_counting_child_the_read_started_is_not_asked_for_again(monkeypatch, tmp_path):
    events = _asked_then_forked(monkeypatch, spare=True)
    JobsAhead([lambda: 1], fork=True, counted_after=tmp_path / "s.jsonl").stop()
    assert events == ["fork"]


def test_compactions_and_the_report_ask_for_the_counting_child_before_their_fork(generated, monkeypatch, tmp_path):
    from foldscope.core.readout.report import write_report

    events = _asked_then_forked(monkeypatch)
    monkeypatch.setattr(literals_ahead, "may_fork", lambda: True)
    path = generated.source
    compaction_report(load_session(path))
    assert events[:2] == [("asked", str(path)), "fork"]
    events.clear()
    write_report(load_session(path), tmp_path / "r.html")
    assert events[:2] == [("asked", str(path)), "fork"]


def test_the_compaction_report_collects_its_checks_after_working_out_everything_else(generated, monkeypatch):
    """A child that fell behind gets the report's own work (fetched again, what left, payback) to catch up in, where
    the parent would otherwise make its checks at once; the report is the one made in-line."""
    from foldscope.core.forensics import compactions
    from foldscope.core.forensics.cache_report import counted_cache_report

    happened: list[str] = []
    real_refetched, real_collect = compactions.refetched, LiteralChecks.collect

    def refetched(*args, **kwargs):
        happened.append("refetched")
        return real_refetched(*args, **kwargs)

    def collect(self, keys=None):
        happened.append("collect")
        return real_collect(self, keys)

    monkeypatch.setattr(compactions, "refetched", refetched)
    monkeypatch.setattr(LiteralChecks, "collect", collect)
    cache = counted_cache_report(generated)
    with literal_checks(generated, fork=False) as checks:
        got = compaction_report(generated, cache=cache, literals=checks).as_dict()
    assert happened == ["refetched"] * len(find_compactions(generated)) + ["collect"]
    assert checks.made_here == len(find_compactions(generated))
    assert got == compaction_report(generated, cache=cache).as_dict()
