"""The counting child's side: the process that builds the encoding and counts the texts its parent sends down a pipe."""

from __future__ import annotations

import marshal
import os
import sys
from typing import Any, BinaryIO

from foldscope.core.request import tokens
from foldscope.core.request.passages import Passages

# How a child is started as a fresh interpreter (core.request.counting.ahead): `python -m MODULE DOWN UP`.
MODULE = "foldscope.core.request.counting.child"


def send(stream: BinaryIO, value: Any) -> None:
    """One message down a pipe: its length (8 bytes, little-endian), then the value in marshal form (data only)."""
    data = marshal.dumps(value)
    stream.write(len(data).to_bytes(8, "little") + data)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
