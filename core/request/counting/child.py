"""A counting child: the process that builds the encoding and counts the texts its parent sends down a pipe (serve,
its entry point main), and how a parent starts one as a fresh interpreter and stops it (spawn, stop)."""

from __future__ import annotations

import marshal
import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from foldscope.core.request import tokens
from foldscope.core.request.passages import Passages

if TYPE_CHECKING:
    import subprocess

# How a child is started as a fresh interpreter (core.request.counting.ahead): `python -m MODULE DOWN UP`.
MODULE = "foldscope.core.request.counting.child"


def send(stream: BinaryIO, value: Any) -> None:
    """One message down a pipe: its length (8 bytes, little-endian), then the value in marshal form (data only)."""
    data = marshal.dumps(value)
    stream.write(len(data).to_bytes(8, "little"))
    stream.write(data)  # apart: the two added would copy a huge message's text once more
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    """The next message send wrote (EOFError when the other end closed the pipe, even within a message)."""
    head = stream.read(8)
    if len(head) != 8:
        raise EOFError("the counting child's pipe is closed")
    size = int.from_bytes(head, "little")
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the counting child's pipe is closed")
    return marshal.loads(data)  # data only (lists of str and int), from our own parent or child


def serve(down: int, up: int) -> None:
    """A counting child's whole life: build the encoding, then answer what comes down `down` on `up` until the parent
    closes its end. The forked helper (core.request.counting.helper) and a spawned child (main) both run it."""
    requests, answers = os.fdopen(down, "rb"), os.fdopen(up, "wb")
    enc = tokens.local_encoding()  # a failure exits the child; the parent then builds, and raises, itself
    encode = enc.encode_ordinary
    count = tokens.counter()
    passages = Passages(tokens.by_passages())  # long texts' passages this child has counted (core.request.passages)

    def count_all(texts: list[str]) -> list[int]:
        return [count(text) for text in texts]  # each text's ids (if any are made) freed as soon as counted

    while True:
        try:
            kind, payload = receive(requests)
        except EOFError:
            return
        if kind == "one":
            send(answers, encode(payload))
        elif kind == "counts":
            send(answers, passages.counts(payload, count_all))
        else:
            send(answers, [encode(text) for text in payload])


def main(argv: list[str]) -> int:
    """The spawned child's entry point: serve the two pipe ends its parent handed it (their numbers in argv)."""
    serve(int(argv[0]), int(argv[1]))
    return 0


class Child(NamedTuple):
    """A counting child and this process's ends of its two pipes (what it reads from, what it answers on)."""

    process: subprocess.Popen
    down: int
    up: int


def spawn() -> Child | None:
    """Start a counting child: a fresh interpreter running this module (main), never a fork, which a process with
    threads cannot do safely. None when none can be started (no interpreter, or no way to hand it the pipes)."""
    import subprocess  # only where a child starts: the spawned child itself never needs it

    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", MODULE, str(down_r), str(up_w)],
            pass_fds=(down_r, up_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):
        for fd in (down_r, down_w, up_r, up_w):
            os.close(fd)
        return None
    os.close(down_r)
    os.close(up_w)
    return Child(process, down_w, up_r)


def stop(child: Child) -> None:
    """Stop a child no one counts with, and reap it."""
    for fd in (child.down, child.up):
        try:
            os.close(fd)
        except OSError:
            pass
    child.process.kill()
    child.process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
