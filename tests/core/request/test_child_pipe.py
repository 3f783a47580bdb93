"""A message down a counting child's pipe comes out as it went in, a huge text sent apart without a whole copy of it
(core.request.counting.child.send and receive)."""

from __future__ import annotations

import io
import marshal
import os
import threading

import pytest

from foldscope.core.request import long_parts
from foldscope.core.request.counting import child
from tests.processes import alive


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


# A command that hands its counting child a long piece to count and is then killed: the child's pid, then "sent".
KILLED_WHILE_COUNTING = """
import os, random, sys, time
from foldscope.core.request import long_parts
from foldscope.core.request.counting import child
from tests.processes import alive
started = child.spawn()
print(started.process.pid, flush=True)
letters = random.Random(5).randbytes(40_000_000).translate(bytes(97 + b % 26 for b in range(256))).decode()
with os.fdopen(started.down, "wb") as pipe:
    child.send(pipe, ("counts", [letters]))
    print("sent", flush=True)
    time.sleep(60)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
@pytest.mark.parametrize("tokenizer", ["default", "tiktoken"])  # default: quicktok where it has a wheel
def test_a_counting_child_whose_parent_is_killed_stops_within_its_long_piece(tokenizer):
    """Its parent killed, no one will read the count: the child stops at the long piece's next progress report, not
    after the piece (40 M random letters: seconds of quicktok's merge; with tiktoken, whose merge is quadratic, hours
    unless the child merges it in windows as the parent would)."""
    import subprocess
    import sys
    import time

    env = {key: value for key, value in os.environ.items() if key != "FOLDSCOPE_TOKENIZER"}
    if tokenizer == "tiktoken":
        env["FOLDSCOPE_TOKENIZER"] = "tiktoken"
    run = subprocess.Popen([sys.executable, "-c", KILLED_WHILE_COUNTING], stdout=subprocess.PIPE, text=True, env=env)
    assert run.stdout is not None
    pid = int(run.stdout.readline())
    assert run.stdout.readline().strip() == "sent"
    time.sleep(1.0)  # the encoder built (about half a second) and the merge under way
    assert alive(pid)
    run.kill()
    run.wait()
    end = time.monotonic() + 1.5
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.02)
    assert not alive(pid)


def test_a_huge_text_comes_to_a_counting_child_in_parts_whose_counts_add_up_to_its_own(huge_from_100, monkeypatch):
    """The child takes a huge text as parts cut between two pieces (never the whole text, nor its UTF-8 and its str
    together): the parts are the text, and their counts add up to the text's count."""
    import random

    from foldscope.core.request import long_pieces
    from foldscope.core.request.tokens import count_text

    monkeypatch.setattr(long_pieces, "TEXT_PART", 50)
    rng = random.Random(15)
    words = ["the", "fold", "résumé", "中文", "x=1;", "(a)", "\n", "  ", "'s", "42", "\t", "é"]
    texts = ["".join(rng.choice(words) + rng.choice(" .,") for _ in range(rng.randint(30, 400))) for _ in range(40)]
    texts.append("q" * 500)  # one piece: one part
    stream = io.BytesIO()
    child.send(stream, ("counts", ["short", *texts]))
    stream.seek(0)
    kind, received = child.receive(stream, parts=True)
    assert kind == "counts" and received[0] == "short"
    assert ["".join(map(child.whole, parts)) for parts in received[1:]] == texts
    assert any(len(parts) > 2 for parts in received[1:]) and len(received[-1]) == 1
    assert child._summed(received, lambda flat: [count_text(t) for t in flat]) == [count_text(t) for t in ["short", *texts]]


def test_a_part_longer_than_a_chunk_comes_as_chunks_cut_between_characters(huge_from_100):
    """A part over _CHUNK bytes (one piece of 50 MB is one part) is decoded a chunk at a time, never its whole UTF-8
    beside its str: each chunk at most _CHUNK bytes, cut before a character's first byte, the chunks the part."""
    text = "é\u4e2d\U0001f600a\ud800" * 60
    stream = io.BytesIO()
    child.send(stream, ("counts", [text]))
    stream.seek(0)
    kind, [[part]] = child.receive(stream, parts=True)
    assert isinstance(part, long_parts.Parts) and len(part.chunks) > 50
    assert all(len(chunk.encode("utf-8", "surrogatepass")) <= child._CHUNK for chunk in part.chunks)
    assert part.join() == text and len(part) == len(text)


def test_a_text_given_as_its_chunks_goes_down_as_one_part_never_joined(huge_from_100, monkeypatch):
    """A one-piece body sent as its opening, text and close (Helper.count_parts) goes down as one text of one part,
    written from the chunks as they are: joined, it was a copy of the whole message in the sender."""
    chunks = ['text":"', "é\u4e2d\U0001f600a\ud800" * 30, "q" * 150, '","']
    monkeypatch.setattr(long_parts.Parts, "join", lambda self: pytest.fail("joined by the sender"))
    stream = io.BytesIO()
    child.send(stream, ("counts", ["short", long_parts.Parts(chunks), "x" * 120]))
    monkeypatch.undo()
    stream.seek(0)
    kind, received = child.receive(stream, parts=True)
    assert kind == "counts" and received[0] == "short" and len(received[1]) == 1
    assert child.whole(received[1][0]) == "".join(chunks) and "".join(map(child.whole, received[2])) == "x" * 120
    stream.seek(0)
    assert child.receive(stream) == ("counts", ["short", "".join(chunks), "x" * 120])


def _cjk_sentences(chars: int) -> str:
    import random

    rng = random.Random(23)
    return "".join(chr(rng.randrange(0x4E00, 0x9FA6)) + ("，" if rng.random() < 0.1 else "") for _ in range(chars))


def test_a_long_text_not_ascii_goes_down_as_its_utf8_and_is_counted_as_it_is_counted_whole(monkeypatch):
    """A part of a huge body that is not ASCII and holds no long piece goes down a "counts" message as its UTF-8, which
    the child counts as those bytes (it neither decodes nor encodes it again); ASCII, a long piece, a lone surrogate, a
    text too short or too long to be counted in one call stay a str. Received by anyone else, the message is as sent."""
    from foldscope.core.request import long_pieces, tokens
    from foldscope.core.request.tokens import count_text

    if tokens.BACKEND != tokens.FAST:
        pytest.skip("tiktoken's child counts a str")
    monkeypatch.setattr(child, "UTF8_TEXT", 1000)
    monkeypatch.setattr(long_pieces, "TEXT_PART", 50_000)
    sentences = _cjk_sentences(3000)
    one_piece = "中文" * 40_000  # a long piece: merged in windows, as a str
    kept = ["short 中文", sentences[:500], "x" * 3000, sentences[:3000] + "\ud800", one_piece, _cjk_sentences(101_000)]
    texts = [sentences, *kept]
    marshalled: list[object] = []
    real = marshal.dumps
    monkeypatch.setattr(child.marshal, "dumps", lambda value: marshalled.append(value) or real(value))
    stream = io.BytesIO()
    child.send(stream, ("counts", texts))
    assert marshalled[0] == ("counts", [None, *kept])  # its UTF-8 apart (the next test)
    assert child.receive(io.BytesIO(stream.getvalue())) == ("counts", texts)
    kind, received = child.receive(io.BytesIO(stream.getvalue()), parts=True)
    assert received[0] == sentences.encode() and received[1:] == kept
    counted: list[bytes] = []
    enc = tokens.local_encoding()
    count_utf8 = lambda data: counted.append(data) or enc.count_whole(data)  # noqa: E731
    counts = child._summed(received, lambda flat: [count_text(t) for t in flat], lambda parts: 0, count_utf8)
    assert counted == [sentences.encode()] and counts == [count_text(t) for t in texts]


def test_a_childs_texts_go_down_as_str_where_it_counts_with_tiktoken(monkeypatch):
    from foldscope.core.request import tokens

    monkeypatch.setattr(child, "UTF8_TEXT", 1000)
    monkeypatch.setattr(tokens, "BACKEND", tokens.SLOW)
    value = ("counts", [_cjk_sentences(1500)])
    stream = io.BytesIO()
    child.send(stream, value)
    assert child.receive(io.BytesIO(stream.getvalue()), parts=True) == value


def test_a_text_sent_as_its_utf8_goes_down_apart_as_those_bytes_never_marshalled(monkeypatch):
    """The UTF-8 the parent made of a part (_as_utf8) is written to the pipe as it is after the message, not copied into
    marshal's growing buffer (and copied out again by the child's loads): the stream holds those bytes whole, and the
    child gets them as bytes (anyone else as the text), the stream still framed after them."""
    from foldscope.core.request import long_pieces, tokens

    if tokens.BACKEND != tokens.FAST:
        pytest.skip("tiktoken's child counts a str")
    monkeypatch.setattr(child, "UTF8_TEXT", 1000)
    monkeypatch.setattr(long_pieces, "TEXT_PART", 50_000)
    first, second = _cjk_sentences(2000), _cjk_sentences(3000)[::-1]
    marshalled: list[object] = []
    real = marshal.dumps
    monkeypatch.setattr(child.marshal, "dumps", lambda value: marshalled.append(value) or real(value))
    stream = io.BytesIO()
    child.send(stream, ("counts", [first, "short", second]))
    child.send(stream, ("counts", ["after"]))
    assert marshalled[0] == ("counts", [None, "short", None])
    data = stream.getvalue()
    for text in (first, second):
        utf8 = text.encode()
        assert data.count(utf8) == 1 and data[data.index(utf8) - 8 : data.index(utf8)] == len(utf8).to_bytes(8, "little")
    received = io.BytesIO(data)
    assert child.receive(received, parts=True) == ("counts", [first.encode(), "short", second.encode()])
    assert child.receive(received, parts=True) == ("counts", ["after"])
    assert child.receive(io.BytesIO(data)) == ("counts", [first, "short", second])
