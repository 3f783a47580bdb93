"""The tokenizer's forked helper: a child forked before a one-shot command reads its file, which builds the encoding
on the other core meanwhile and then counts what the command sends it (core.request.tokens asks it while it runs)."""

from __future__ import annotations

import os
from typing import Any

from foldscope.core.request import tokens
from foldscope.core.request.counting import children_allowed
from foldscope.core.request.counting.child import fork, receive, send


def start_helper() -> bool:
    """Start building the encoding in a forked child process, for a one-shot command to read its file meanwhile.

    Building it costs about 0.2 s of work that holds the GIL (parsing the ranks, then tiktoken's own
    construction in Rust), so no thread can overlap it; a child process on the other core can. Until
    then tokens.encoding() returns the helper, which encodes through a pipe (encode_ordinary and
    encode_ordinary_batch, the ids exactly as the Encoding gives them) and builds the encoding here
    for anything else, or when the child is gone (whose failure, e.g. a bad vocabulary, is then
    raised here by the same build). Only for a process that runs one command and exits: never the
    GUI. No-op where fork is missing, once the encoding exists, or with FOLDSCOPE_COUNTING=local (core.request.counting).
    Returns whether a helper runs.
    """
    if tokens._helper is not None or tokens._encoding is not None or not hasattr(os, "fork") or not children_allowed():
        return tokens._helper is not None
    try:
        tokens._helper = Helper()
    except OSError:
        tokens._helper = None
    return tokens._helper is not None


def helping() -> bool:
    """Whether a helper builds or holds the encoding for this process."""
    return tokens._helper is not None


def stop_helper() -> None:
    """Stop and reap the helper, if one runs: from then on this process counts with its own encoding."""
    helper, tokens._helper = tokens._helper, None
    if helper is not None:
        helper.close()


class Helper:
    """The parent's end of a forked child that builds the encoding and encodes what it is sent (start_helper)."""

    def __init__(self) -> None:
        import atexit

        started = fork()  # the counting child's loop, forked before this process has built the encoding
        if started is None:
            raise OSError("no process could be forked for the tokenizer's helper")
        down, up = os.fdopen(started.down, "wb"), os.fdopen(started.up, "rb")  # requests down, answers up
        self.pid, self._down, self._up = started.process.pid, down, up
        atexit.register(stop_helper)

    def _ask(self, request: tuple) -> Any:
        """The child's answer, or None when it is gone (it is then closed, and tokens.encoding() builds locally)."""
        try:
            send(self._down, request)
            return receive(self._up)
        except (OSError, EOFError, ValueError):
            stop_helper()
            return None

    def encode_ordinary(self, text: str) -> list[int]:
        ids = self._ask(("one", text))
        return ids if ids is not None else tokens.local_encoding().encode_ordinary(text)

    def encode_ordinary_batch(self, texts: list[str], *, num_threads: int = 8) -> list[list[int]]:
        ids = self._ask(("batch", list(texts)))
        return ids if ids is not None else tokens.local_encoding().encode_ordinary_batch(texts, num_threads=num_threads)

    def count(self, text: str) -> int:
        """One text's count, by the child (tokens.counter())."""
        answer = self._ask(("counts", [text]))
        if answer is not None:
            return answer[0]
        local = tokens.local_encoding()  # built here: a failure of the child's build is raised by the same build
        return local.count(text) if hasattr(type(local), "count") else len(local.encode_ordinary(text))

    def count_parts(self, chunks: list[str]) -> int | None:
        """The count of the text `chunks` make, by the child, sent as one text (child.send) and never joined here; None
        when the child is gone."""
        from foldscope.core.request.long_parts import Parts

        answer = self._ask(("counts", [Parts(chunks)]))
        return answer[0] if answer is not None else None

    def count_ordinary_batch(self, texts: list[str]) -> list[int] | None:
        """The token count of each text, counted by the child: only counts cross the pipe, never the ids."""
        return self._ask(("counts", texts))

    def __getattr__(self, name: str) -> Any:
        return getattr(tokens.local_encoding(), name)

    def close(self) -> None:
        import signal

        for stream in (self._down, self._up):
            try:
                stream.close()
            except OSError:
                pass
        try:
            os.kill(self.pid, signal.SIGKILL)  # done with it, or not needed: it may still be building
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
