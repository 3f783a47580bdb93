"""A message down a counting child's pipe comes out as it went in, a huge text sent apart without a whole copy of it
(core.request.counting.child.send and receive)."""

from __future__ import annotations

import io
import marshal
import os
import threading

import pytest

from foldscope.core.request.counting import child


@pytest.fixture
def huge_from_100(monkeypatch):
    """Texts of 100 characters and more are sent apart, in chunks of 7 characters: many chunks in a short text."""
    monkeypatch.setattr(child, "HUGE", 100)
    monkeypatch.setattr(child, "_CHUNK", 7)


MESSAGES = [
    ("counts", ["short", "x" * 100, "", "é\u4e2d\U0001f600" * 40, "a\ud800b" * 50, "tail"]),
    ("counts", ["only short", "texts"]),
    ("one", "y\udfff" * 300),
    ("one", "tiny"),
    ("batch", ["z" * 1000]),
    [1, 2, 3],
    ("counts", []),
]


@pytest.mark.parametrize("value", MESSAGES)
def test_a_message_comes_out_of_the_pipe_as_it_went_in(huge_from_100, value):
    down, up = os.pipe()

    def sender() -> None:
        with open(up, "wb") as writer:  # closed once sent: a receiver short of bytes meets the pipe's end, not a wait
            child.send(writer, value)
            child.send(writer, ("next", ["after"]))

    thread = threading.Thread(target=sender)
    thread.start()
    with open(down, "rb") as reader:
        assert child.receive(reader) == value
        assert child.receive(reader) == ("next", ["after"])  # the stream stays framed after texts sent apart
    thread.join()


def test_a_huge_text_is_never_marshalled_whole(huge_from_100, monkeypatch):
    """marshal's copy of a 50 MB text was the parent's peak: a huge text goes down in chunks instead."""
    marshalled: list[object] = []
    real = marshal.dumps
    monkeypatch.setattr(child.marshal, "dumps", lambda value: marshalled.append(value) or real(value))
    stream = io.BytesIO()
    child.send(stream, ("counts", ["small", "q" * 1000]))
    assert marshalled == [("counts", ["small", None])]
    stream.seek(0)
    assert child.receive(stream) == ("counts", ["small", "q" * 1000])


def test_a_pipe_closed_within_a_text_sent_apart_is_the_end_of_the_pipe(huge_from_100):
    stream = io.BytesIO()
    child.send(stream, ("counts", ["q" * 1000]))
    with pytest.raises(EOFError):
        child.receive(io.BytesIO(stream.getvalue()[:-10]))
