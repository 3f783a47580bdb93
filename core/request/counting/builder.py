"""The encoder's builder: a process forked as a long replay starts, which builds quicktok's encoder on the other core
while the replay reads, then forks a counting child with it for each process of the replay that asks (start, served).

quicktok's constructor holds the GIL for 0.8 s of CPU, and the replay's parent built it at the read's first cut for
the read's children, the measure's counting child and the strategies to inherit: no child existed yet, so the second
core idled through it (docs/performance.md, replay25). With the builder the parent never builds one: each process that
counts (the parent, each read child, each strategy's child, the measure's counting child) counts through a child of
the builder's, forked with the encoder built, on pipes of its own. A child is asked for by sending the builder the
ends it is to serve on (SCM_RIGHTS over a socket every process of the replay shares, one message a child, so two
processes asking at once never mix); its pid comes back on a third pipe, read only where it is to be killed. Where
anything fails, a process counts as before: the tokenizer's helper falls back to its own encoder, the same counts.
"""

from __future__ import annotations

import os
import socket

from foldscope.core.request import tokens
from foldscope.core.request.counting import child

_builder: Builder | None = None
CLOSE_SECONDS = 2.0  # the longest stop waits for the builder to end


def start() -> bool:
    """Fork the builder, which starts building the encoder at once, and have this process count through a child of its
    own (served_here). Only where a fork is safe (the caller runs one thread) and the socket's kind exists. True when
    it runs."""
    global _builder
    if _builder is not None or tokens.encoder_built() or not hasattr(socket, "send_fds") or not hasattr(socket, "SOCK_SEQPACKET"):
        return _builder is not None
    try:
        _builder = Builder()
    except OSError:
        return False
    import atexit

    atexit.register(stop)
    served_here()
    return True


def running() -> bool:
    """Whether a builder serves this process's replay (forked children inherit it)."""
    return _builder is not None


def served() -> child.Child | None:
    """A counting child the builder forks for this process, serving it on two pipes of its own; None without a builder
    or when it cannot be asked. It counts from when the encoder is built: a first answer waits for the build."""
    return _builder.child() if _builder is not None else None


def served_here() -> bool:
    """Have this process count through a child of the builder's (the tokenizer's helper on its pipes), in place of any
    helper it inherited (its pipes are another process's). True when one serves it."""
    from foldscope.core.request.counting import helper

    tokens.forget_helper()
    started = served()
    if started is None:
        return False
    tokens._helper = helper.Helper(started)
    return True


def stop() -> None:
    """This process's helper stopped, and the builder told to end and waited for (it waits for its children, which end
    as their pipes close): so their CPU is this process's children's, as a forked child's is."""
    global _builder
    builder, _builder = _builder, None
    if builder is None:
        return
    from foldscope.core.request.counting import helper

    helper.stop_helper()
    builder.close()


def _in_forked_child() -> None:
    global _builder
    if _builder is not None:
        _builder = _builder.inherited()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)


class Served:
    """A counting child the builder forked, as child.Process: its pid read from the builder's answer when first asked
    (the builder answers once it has forked it: after its build); it is the builder's to reap, not this process's."""

    def __init__(self, answer: int) -> None:
        self._answer: int | None = answer
        self._pid = 0
        self.returncode: int | None = None

    @property
    def pid(self) -> int:
        if self._answer is not None:
            answer, self._answer = self._answer, None
            try:
                with os.fdopen(answer, "rb") as stream:
                    data = stream.read(8)
            except OSError:
                data = b""
            self._pid = int.from_bytes(data, "little") if len(data) == 8 else 0
        return self._pid

    def kill(self) -> None:
        if self.returncode is None and self.pid:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        self.returncode = -9

    def poll(self) -> int | None:
        return self.returncode

    def wait(self) -> int:
        self.returncode = -9 if self.returncode is None else self.returncode
        return self.returncode

    def close(self) -> None:
        """Let go of the builder's answer unread (a child closed by its pipes alone)."""
        if self._answer is not None:
            os.close(self._answer)
            self._answer = None


class Builder:
    """The builder as the replay's processes see it: its pid (in the process that forked it) and the socket's end
    every process of the replay asks on."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = os.fork()
        except OSError:
            mine.close()
            theirs.close()
            raise
        if pid == 0:
            status = 1
            try:
                mine.close()
                _build_and_serve(theirs)
                status = 0
            finally:
                os._exit(status)
        theirs.close()
        self.pid: int | None = pid
        self._socket = mine

    def inherited(self) -> Builder:
        """This builder as a forked child of its owner holds it: it may ask, never wait for it."""
        copy = Builder.__new__(Builder)
        copy.pid, copy._socket = None, self._socket
        return copy

    def child(self) -> child.Child | None:
        """Ask for a counting child on two new pipes (see the module's docstring)."""
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        answer_r, answer_w = os.pipe()
        try:
            niceness = os.nice(0)  # the asker's: a niced strategy's counting is niced as the strategy is
            socket.send_fds(self._socket, [str(niceness).encode()], [down_r, up_w, answer_w])
        except OSError:
            for fd in (down_w, up_r, answer_r):
                os.close(fd)
            return None
        finally:
            for fd in (down_r, up_w, answer_w):
                os.close(fd)
        return child.Child(Served(answer_r), down_w, up_r)

    def close(self) -> None:
        """Tell it to end and wait for it (it waits for its children first, so their CPU is this process's children's):
        at most CLOSE_SECONDS, as a child whose asker has not let go (a run stopped partway) would keep it for ever;
        then it is stopped, and such a child ends when its asker does."""
        import time

        self._socket.close()
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        deadline = time.monotonic() + CLOSE_SECONDS
        try:
            while not os.waitpid(pid, os.WNOHANG)[0]:
                if time.monotonic() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    return
                time.sleep(0.005)
        except (ChildProcessError, ProcessLookupError):
            pass


def _build_and_serve(requests: socket.socket) -> None:
    """The builder's life: build the encoder, then fork a counting child for each request until every process that
    could ask has closed its end; then wait for its children, which end as their askers close their pipes."""
    tokens.local_encoding()  # a failure here fails each child's build the same way: its asker then builds, and raises
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(requests, 32, 3)
        except OSError:
            break
        if not message and not fds:
            break  # every asker's end closed
        if len(fds) == 3:
            _fork_served(requests, int(message or b"0"), *fds)
        for fd in fds:
            os.close(fd)
        _reap(os.WNOHANG)
    requests.close()
    _reap(0)


def _fork_served(requests: socket.socket, niceness: int, down: int, up: int, answer: int) -> None:
    try:
        pid = os.fork()
    except OSError:
        return  # the asker's pipes close unserved: it counts with its own encoder
    if pid == 0:
        status = 1
        try:
            os.close(answer)
            requests.close()  # the builder's alone: a child holding it would keep asks coming to no one once it is gone
            child.serve(down, up)
            status = 0
        finally:
            os._exit(status)
    try:
        if niceness > os.nice(0):  # set before the asker hears of it, so it never sees the child at the builder's
            os.setpriority(os.PRIO_PROCESS, pid, niceness)
        os.write(answer, pid.to_bytes(8, "little"))
    except OSError:
        pass


def _reap(flags: int) -> None:
    """Reap the children that have ended (flags WNOHANG), or all of them, each as it ends (flags 0)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, flags)
        except ChildProcessError:
            return
        if pid == 0:
            return
