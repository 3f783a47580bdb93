"""The report's page is the same whether a forked child made its literal checks and conversation or this process did."""

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from foldscope.core.forensics import literals_ahead
from foldscope.core.forensics.literals_ahead import JobsAhead
from foldscope.core.formats import load_session
from foldscope.core.readout.report import write_report
from foldscope.core.readout.report_transcript import conversation_segments, every_request_job_count
from tests.core.counting_child import counted_here_with_a_child
from tests.processes import gone

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform: the page is made in-line")
FOOTER = re.compile(rb"on \d{4}-\d\d-\d\d \d\d:\d\d UTC")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 1500)
    return path


def _page(path: Path, out: Path) -> bytes:
    write_report(load_session(path), out)
    return FOOTER.sub(b"on (the minute)", out.read_bytes())


def _forks(monkeypatch, kill: bool = False) -> list[int]:
    """The children JobsAhead forks (killed at once with `kill`), forked as in a command's fresh process: in the whole
    suite an earlier test's thread may still be winding down, and one_thread() would keep them in-line."""
    import foldscope.core.request.counting as counting

    monkeypatch.setattr(counting, "one_thread", lambda: True)
    started: list[int] = []
    real = JobsAhead._fork

    def fork(self):
        forked = real(self)
        if self.pid is not None:
            started.append(self.pid)
            if kill:
                os.kill(self.pid, signal.SIGKILL)
        return forked

    monkeypatch.setattr(JobsAhead, "_fork", fork)
    return started


def _in_line_page(path: Path, out: Path, monkeypatch) -> bytes:
    with monkeypatch.context() as m:
        m.setattr(literals_ahead, "may_fork", lambda: False)
        return _page(path, out)


def test_the_page_made_with_a_child_is_the_page_made_in_line_on_a_generated_session(generated, tmp_path, monkeypatch):
    started = _forks(monkeypatch)
    forked = _page(generated, tmp_path / "a.html")
    # before the count, then the same jobs' again at its end with the every-request table's (JobsAhead.count_done)
    # where a child counted, else the every-request table's alone
    assert len(started) == 2 and all(gone(pid) for pid in started)
    assert forked == _in_line_page(generated, tmp_path / "b.html", monkeypatch)
    assert b"compaction" in forked and forked.count(b"<li class=req>") > 100


def test_the_page_made_with_a_child_is_the_page_made_in_line_on_dev_corpus_files(corpus_dev, tmp_path, monkeypatch):
    started = _forks(monkeypatch)
    files = sorted((corpus_dev / "claude_code").glob("*.jsonl")) + sorted((corpus_dev / "codex").glob("*.jsonl"))
    for path in files:
        assert _page(path, tmp_path / "a.html") == _in_line_page(path, tmp_path / "b.html", monkeypatch), path.name
    assert started and all(gone(pid) for pid in started)


@pytest.mark.parametrize("counting_child", [False, True])
def test_a_child_killed_at_once_leaves_the_same_page(generated, tmp_path, monkeypatch, counting_child):
    """Every child killed as soon as it is forked: with a counting child, the checks' child forked again at the count's
    end (JobsAhead.count_done) with the every-request table's jobs, else the table's own child."""
    if counting_child:
        counted_here_with_a_child(monkeypatch)
    started = _forks(monkeypatch, kill=True)
    forked = _page(generated, tmp_path / "a.html")
    assert len(started) == 2 and all(gone(pid) for pid in started)
    assert forked == _in_line_page(generated, tmp_path / "b.html", monkeypatch)


def test_the_conversations_segments_cover_the_record_in_order_each_request_marked_once(generated, monkeypatch):
    import foldscope.core.readout.report_transcript as transcript

    monkeypatch.setattr(transcript, "MESSAGES_A_JOB", 2)  # long stretches between requests cut too
    session = load_session(generated)
    segments = conversation_segments(session)
    assert max(end - start for start, end, _ in segments) <= 2
    assert [s for s, _, _ in segments] == [0] + [e for _, e, _ in segments[:-1]]
    assert segments[-1][1] == len(session.record)
    marked = [k for _, _, k in segments if k is not None]
    answered = {r.response_id: k for k, r in enumerate(session.trace) if r.response_id}
    assert marked == sorted(answered.values())


def test_the_page_finds_the_compactions_cuts_the_conversation_and_reads_the_head_once(generated, tmp_path, monkeypatch):
    """What the page needs in two places is worked out once and shared: the compactions (the literal checks' spans and
    the compactions section), the conversation's segments (the child's jobs and the page) and the unseen head's
    names (the largest request's composition and every request's bar)."""
    from foldscope.core.forensics import compactions
    from foldscope.core.readout import composition, report, report_transcript

    calls: dict[str, int] = {}

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    counted(compactions, "find_compactions")
    for module in (report, report_transcript):
        counted(module, "conversation_segments")
    for module in (report, report_transcript, composition):
        counted(module, "sources_for")
    page = _in_line_page(generated, tmp_path / "a.html", monkeypatch)  # in-line: every job made in this process
    assert b"compaction" in page
    assert calls == {"find_compactions": 1, "conversation_segments": 1, "sources_for": 1}


def test_the_summaries_are_counted_by_the_counts_child_never_here_and_the_page_is_the_same(generated, tmp_path, monkeypatch):
    """The cost sections count each compaction's summary (the summariser modelled) after the count: the child
    counting ahead counts them as the last request is heard (core.request.count.Counter.count_ahead), so this process
    builds no encoder for them alone (issue 48: 0.5-0.7 s of the report's critical path at 50k)."""
    from foldscope.core.forensics.compactions import find_compactions

    summaries = {note.text for _, note in find_compactions(load_session(generated))}
    assert summaries
    expected = _in_line_page(generated, tmp_path / "b.html", monkeypatch)
    counted_here = counted_here_with_a_child(monkeypatch)
    page = _in_line_page(generated, tmp_path / "a.html", monkeypatch)  # the jobs in-line: the counts child alone forked
    assert page == expected
    assert not summaries & set(counted_here)


def _niced_child_holds(monkeypatch) -> None:
    """The niced checks' child makes no check (killed at the count's end or at the page's), so it has not made them
    all when the count is done, however fast the machine."""
    ours, real_parts = os.nice(0), literals_ahead.Span.parts

    def parts(self):
        while os.nice(0) > ours:
            time.sleep(0.01)
        return real_parts(self)

    monkeypatch.setattr(literals_ahead.Span, "parts", parts)


def test_the_checks_child_goes_on_at_the_pages_priority_with_the_every_request_table_once_the_count_is_done(
    generated, tmp_path, monkeypatch
):
    """Niced below the counting child while the count runs, the checks' child is forked again at the parent's own
    priority once the count is done (JobsAhead.count_done), with the every-request table's jobs in the places kept for
    them before the conversation's: one child beside the parent after the count, making what the page takes in the
    order it takes it, not a second child forked for the table (three processes on two cores); the page is the same."""
    if os.nice(0) >= 19:
        pytest.skip("this process already runs at the lowest priority")
    expected = _in_line_page(generated, tmp_path / "b.html", monkeypatch)
    counted_here_with_a_child(monkeypatch)
    _forks(monkeypatch)
    _niced_child_holds(monkeypatch)
    niced: list[tuple[int, int, int]] = []  # each fork's jobs, slots left empty and nice
    real = JobsAhead._fork

    def fork(self):
        niced.append((len(self.jobs), self.jobs.count(None), self.nice))
        return real(self)

    monkeypatch.setattr(JobsAhead, "_fork", fork)
    forked = _page(generated, tmp_path / "a.html")
    jobs, rows = niced[0][0], every_request_job_count(len(load_session(generated).trace))
    assert rows > 1 and niced == [(jobs, rows, literals_ahead.NICE), (jobs, 0, 0)]
    assert forked == expected


def test_where_no_child_counted_the_checks_child_stays_niced(generated, tmp_path, monkeypatch):
    """A count with no counting child had no core to spare: at the parent's priority the checks' child would take the
    parent's time, so it is not forked again; the page is the same."""
    if os.nice(0) >= 19:
        pytest.skip("this process already runs at the lowest priority")
    from foldscope.core.request.counting import backend

    monkeypatch.setattr(backend, "free_core", lambda: False)
    started = _forks(monkeypatch)
    _niced_child_holds(monkeypatch)
    niced: list[int] = []
    real = JobsAhead._fork

    def fork(self):
        niced.append(self.nice)
        return real(self)

    monkeypatch.setattr(JobsAhead, "_fork", fork)
    forked = _page(generated, tmp_path / "a.html")
    assert niced == [literals_ahead.NICE, literals_ahead.NICE] and all(gone(pid) for pid in started)
    assert forked == _in_line_page(generated, tmp_path / "b.html", monkeypatch)


def test_the_rows_the_checks_child_made_after_the_count_are_the_pages_none_made_here(generated, tmp_path, monkeypatch):
    """The page takes the every-request table's rows the checks' child, forked again once the count is done, made in
    their kept places (report._count_done): with that child done before the page is written, this process makes no
    row itself, and the page is the same."""
    from foldscope.core.readout import report, report_transcript

    expected = _in_line_page(generated, tmp_path / "b.html", monkeypatch)
    counted_here_with_a_child(monkeypatch)
    started = _forks(monkeypatch)
    here = os.getpid()
    rows_here: list[int] = []
    real_rows, real_write = report_transcript.every_request_rows, report.write_output

    def rows(*args, **kwargs):
        if os.getpid() == here:
            rows_here.append(args[5])
        return real_rows(*args, **kwargs)

    def write(*args, **kwargs):
        os.waitid(os.P_PID, started[-1], os.WEXITED | os.WNOWAIT)  # the last child done, not reaped (stop reaps it)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(report_transcript, "every_request_rows", rows)
    monkeypatch.setattr(report, "write_output", write)
    page = _page(generated, tmp_path / "a.html")
    assert len(started) == 2 and all(gone(pid) for pid in started)
    assert rows_here == [] and page == expected
