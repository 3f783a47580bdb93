"""A process forked on two pipes (core.request.counting.forked_on_pipes), as a counting child and the store's child are:
its work runs on its two ends and it exits with its status; no process to be had leaves no pipe open."""

from __future__ import annotations

import os
import select

import pytest

from foldscope.core.request import counting

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")


def test_the_forked_process_runs_its_work_on_its_two_ends_and_exits_with_its_status():
    def echo(down: int, up: int) -> None:
        os.write(up, os.read(down, 5)[::-1])

    pid, down, up = counting.forked_on_pipes(echo)
    os.write(down, b"hello")
    assert os.read(up, 5) == b"olleh"
    # Once the child is gone its answers' pipe ends: no write end of it is left open here.
    assert select.select([up], [], [], 60)[0] and os.read(up, 1) == b"", "an end of the answers' pipe left open"
    os.close(down)
    os.close(up)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def test_the_child_sees_its_requests_end_once_this_process_closes_its_end():
    """A child that kept its own write end of the requests' pipe would never read its end, and never end with this
    process (a counting child ends when this process does: core.request.counting.read_children)."""

    def until_end(down: int, up: int) -> None:
        data = b""
        while chunk := os.read(down, 5):
            data += chunk
        os.write(up, data[::-1])

    pid, down, up = counting.forked_on_pipes(until_end)
    try:
        os.write(down, b"hello")
        os.close(down)
        assert select.select([up], [], [], 20)[0], "the child never saw its requests end"
        assert os.read(up, 5) == b"olleh"
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    finally:
        os.close(up)
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass  # it ended and was reaped, as it should


def test_work_that_fails_exits_with_1_and_never_returns_into_the_callers_code():
    def broken(down: int, up: int) -> None:
        raise RuntimeError("the work failed")

    pid, down, up = counting.forked_on_pipes(broken)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1
    os.close(down)
    os.close(up)


def test_no_process_to_be_had_gives_none_and_leaves_no_pipe_open(monkeypatch):
    def no_fork() -> int:
        raise OSError(11, "no process to be had")

    monkeypatch.setattr(os, "fork", no_fork)
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here to list the open descriptors")
    before = os.listdir("/proc/self/fd")  # the listing's own descriptor is the lowest free one, the same both times
    assert counting.forked_on_pipes(lambda down, up: None) is None
    assert os.listdir("/proc/self/fd") == before
