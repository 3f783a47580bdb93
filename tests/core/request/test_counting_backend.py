"""The Counter owns its counting backend (core.request.counting.backend) and the trace's Measure starts and stops it."""

from __future__ import annotations

import pytest

from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from foldscope.core.request.count import Counter
from foldscope.core.request.counting.backend import Backend
from foldscope.core.request.trace_measure import measure_trace


def small_session() -> Session:
    msgs = [Message("s", "system", 0, {"system_message": "be brief"}), Message("u", "instruction", 1, {"instruction": "hello"})]
    msgs.append(Message("a", "assistant", 2, {"assistant_response": "hi"}))
    return Session(FullRecord(msgs), [m.id for m in msgs], trace=[Request(0, ("s", "u", "a"), "a", Usage(input=12))])


class Watched(Backend):
    """A backend noting what the measure asks of it."""

    def __init__(self) -> None:
        self.asked: list[tuple] = []

    def start(self, counter, record, policy, key, thinking=False):
        started = super().start(counter, record, policy, key, thinking)
        self.asked.append(("start", counter, len(record), started))
        return started

    def stop(self, counter, started):
        self.asked.append(("stop", counter, started))
        super().stop(counter, started)


def test_a_counter_made_without_a_backend_owns_one_of_its_own():
    one, other = Counter(), Counter()
    assert isinstance(one.backend, Backend) and one.backend is not other.backend


def test_the_measure_starts_the_counters_backend_once_and_stops_it_when_done():
    backend = Watched()
    counter = Counter(backend=backend)
    measure_trace(small_session(), counter=counter)
    assert backend.asked == [("start", counter, 3, None), ("stop", counter, None)]  # too small a record for a child


def test_the_measure_stops_the_backend_when_the_count_fails(monkeypatch):
    backend = Watched()
    counter = Counter(backend=backend)

    def broken(*args, **kwargs):
        raise RuntimeError("a count failed")

    monkeypatch.setattr(counter, "measure", broken)
    with pytest.raises(RuntimeError):
        measure_trace(small_session(), counter=counter)
    assert [what for what, *_ in backend.asked] == ["start", "stop"]


@pytest.fixture
def hints(monkeypatch) -> list[str]:
    """Every path given to the backend as a hint, in order (no child is started for them)."""
    from foldscope.core.request.counting import backend

    given: list[str] = []
    monkeypatch.setattr(backend, "hint", lambda path, forked=False: given.append(str(path)) or False)
    return given


def test_a_command_reading_a_session_gives_its_path_as_a_hint_before_the_read(hints, monkeypatch):
    from foldscope.core import formats
    from foldscope.core.cli.options import read_session
    from foldscope.core.formats.demo import demo_path

    real = formats.load_session
    monkeypatch.setattr(formats, "load_session", lambda *a, **k: (hints.append("read"), real(*a, **k))[1])
    read_session(demo_path())
    assert hints == [str(demo_path()), "read"]


def test_open_session_and_the_guis_load_give_the_files_path_as_a_hint(hints, tmp_path):
    from foldscope.core.cli.library_open import open_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout.opening import open_document

    open_session(str(demo_path()), None, Counter())
    open_document(demo_path(), str(tmp_path / "library.db"))
    assert hints == [str(demo_path())] * 2
