"""The record's start counted by a child forked during the read gives the replay made with none, a child that dies
or never answers leaves it all to the measure and is reaped, and a count is taken only for the parent's own message
objects (core.request.counting.during_read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.counting import during_read

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

# A fresh process, as the command is: the CLI's replay of one file with a child forked at each of FRACTIONS of the read
# (given as "0.3,0.8"; no file too small for it), their answers waited for whatever the load; it prints the JSON and, on
# stderr's last line, how many counts were seeded and whether each child was reaped.
REPLAY = """
import io, json, os, sys
from foldscope.core.request.counting import during_read
during_read.MIN_BYTES = 0
during_read.FRACTIONS = tuple(map(float, sys.argv[2].split(",")))
during_read.WAIT_SECONDS = 120.0
seen = {"seeded": 0, "pids": []}
seed = during_read.DuringRead.seed
def spy(self, counter, record):
    seen["pids"].extend(child.pid for child in self._children)
    seen["seeded"] = seed(self, counter, record)
    return seen["seeded"]
during_read.DuringRead.seed = spy
if sys.argv[3] == "dies":  # the child ends before it answers
    during_read.answer = lambda session, policy, start: os._exit(3)
if sys.argv[3] == "slow":  # the child counts long after the measure starts (a busy machine)
    during_read.WAIT_SECONDS = 0.5
    answer = during_read.answer
    def slow(session, policy, start):
        import time
        time.sleep(60)
        yield from answer(session, policy, start)
    during_read.answer = slow
if sys.argv[3] == "partial":  # the child is stopped after its first windows' counts
    during_read.CHUNK_WINDOWS = 1
    answer = during_read.answer
    def partial(session, policy, start):
        yield next(answer(session, policy, start))
        os._exit(3)
    during_read.answer = partial
if sys.argv[3] == "encoder":  # the child notes whether it holds an encoder when it starts counting
    answer = during_read.answer
    def noted(session, policy, start):
        from foldscope.core.request import tokens
        with open(sys.argv[1] + ".encoder", "w") as note:
            note.write(json.dumps(tokens.encoder_built()))
        yield from answer(session, policy, start)
    during_read.answer = noted
if sys.argv[3] == "starts":  # windows of 32 messages; each child notes where it counts from, what it held at its
    # fork (the parent's record then) and how much it read
    from foldscope.core.request.counting import ahead
    ahead.WINDOW = 32
    answer = during_read.answer
    def starts(session, policy, start):
        with open(sys.argv[1] + ".starts", "a") as note:
            note.write(json.dumps([start, len(during_read._held_places), len(session.record)]) + "\\n")
        yield from answer(session, policy, start)
    during_read.answer = starts
if sys.argv[3] == "spare":  # the measure's counting child wanted (text enough, a free core): how it was started
    from foldscope.core.request.counting import ahead, backend, child
    ahead.START_CHARS = 0
    backend.free_core = lambda: True
    spawn, fork = child.spawn, child.fork
    def spawned():
        seen.setdefault("spawned", 0)
        seen["spawned"] += 1
        return spawn()
    def forked():
        from foldscope.core.request import tokens
        seen.setdefault("forked", []).append(tokens.encoder_built())
        started = fork()
        seen["pids"].append(started.process.pid)
        return started
    child.spawn, child.fork = spawned, forked
from foldscope.core.cli.main import main
out, sys.stdout = sys.stdout, io.StringIO()
try:
    main(["replay", sys.argv[1], "--json", "--per-request", "--workers", "2", *sys.argv[4:]])
except SystemExit:
    pass
printed, sys.stdout = sys.stdout.getvalue(), out
reaped = []
for pid in seen["pids"]:
    try:
        os.waitpid(pid, os.WNOHANG)
        reaped.append(False)
    except ChildProcessError:
        reaped.append(True)
print(printed)
print(json.dumps({"seeded": seen["seeded"], "reaped": reaped, "spawned": seen.get("spawned", 0), "forked": seen.get("forked", [])}), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A generated Claude Code session that repeats nothing (bench/fresh_session.py)."""
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 600)
    return path


def _replayed(path: Path, fraction: float | str, how: str, *flags: str, local: bool = False) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}
    if local:
        env["FOLDSCOPE_COUNTING"] = "local"  # no child at all: every count in-line, every strategy here
    done = subprocess.run(
        [sys.executable, "-c", REPLAY, str(path), str(fraction), how, *flags], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("flags", [(), ("--ceiling", "30000"), ("--result-max", "2000")], ids=["default", "ceiling", "result bound"])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_the_record_start_counted_during_the_read_gives_the_replay_made_with_no_child(generated, fraction, flags):
    in_line, none = _replayed(generated, fraction, "answers", *flags, local=True)
    forked, seen = _replayed(generated, fraction, "answers", *flags)
    assert none["seeded"] == 0 and seen["seeded"] > 20  # the child counted bodies, and the switch kept it off
    assert seen["reaped"] == [True]
    assert forked == in_line


def test_under_caching_the_child_counts_nothing_and_the_replay_is_the_same(generated):
    # the measure keys its results by the first round it decides, which the child's part of the file may not
    in_line, _ = _replayed(generated, 0.5, "answers", "--caching", local=True)
    forked, seen = _replayed(generated, 0.5, "answers", "--caching")
    assert seen["seeded"] == 0 and seen["reaped"] == [True]
    assert forked == in_line


@pytest.mark.parametrize("how", ["dies", "slow"])
def test_a_child_that_dies_or_is_late_leaves_all_to_the_measure_and_is_reaped(generated, how):
    in_line, _ = _replayed(generated, 0.5, "answers", local=True)
    forked, seen = _replayed(generated, 0.5, how)
    assert seen["seeded"] == 0 and seen["reaped"] == [True]
    assert forked == in_line


def test_a_child_stopped_partway_gives_the_counts_it_wrote_and_the_measure_counts_the_rest(generated):
    in_line, _ = _replayed(generated, 0.9, "answers", local=True)
    _, whole = _replayed(generated, 0.9, "answers")
    forked, seen = _replayed(generated, 0.9, "partial")
    assert 0 < seen["seeded"] < whole["seeded"] and seen["reaped"] == [True]
    assert forked == in_line


def test_the_child_counts_with_the_encoder_the_parent_built_before_the_fork(generated, tmp_path):
    # the parent builds one for its measure or its strategies anyway: built before the fork, the child need not build its own
    path = tmp_path / "s.jsonl"
    path.write_bytes(generated.read_bytes())
    in_line, _ = _replayed(path, 0.5, "answers", local=True)
    forked, seen = _replayed(path, 0.5, "encoder")
    assert json.loads((tmp_path / "s.jsonl.encoder").read_text()) is True
    assert seen["seeded"] > 20 and forked == in_line


def test_a_second_child_counts_more_of_the_record_and_the_replay_is_the_one_made_with_no_child(generated):
    in_line, _ = _replayed(generated, 0.3, "answers", "--ceiling", "30000", local=True)
    _, first = _replayed(generated, 0.3, "answers", "--ceiling", "30000")
    forked, seen = _replayed(generated, "0.3,0.8", "answers", "--ceiling", "30000")
    assert seen["seeded"] > first["seeded"] > 20 and seen["reaped"] == [True, True]
    assert forked == in_line


def test_a_later_child_counts_on_from_the_last_whole_window_the_child_before_it_read(generated, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(generated.read_bytes())
    in_line, _ = _replayed(path, 0.5, "answers", local=True)
    forked, seen = _replayed(path, "0.3,0.8", "starts")
    notes = sorted(json.loads(line) for line in (tmp_path / "s.jsonl.starts").read_text().splitlines())
    (first, first_held, first_read), (second, _, second_read) = notes
    assert first == 0 and second == first_held // 32 * 32 > 0 and second_read > first_read
    assert seen["reaped"] == [True, True] and forked == in_line


def test_the_measures_counting_child_is_forked_at_the_reads_fork_with_the_encoder_built_not_spawned(generated):
    # a spawned child starts an interpreter and builds its own encoder (about 0.7 s of CPU) on the core the read's
    # child counts on; forked there, it holds the parent's
    in_line, _ = _replayed(generated, 0.3, "answers", local=True)
    forked, seen = _replayed(generated, 0.3, "spare")
    assert seen["spawned"] == 0 and seen["forked"] == [True]
    assert seen["seeded"] > 20 and seen["reaped"] == [True, True]  # the read's child, then the measure's
    assert forked == in_line


def _message(mid: str, text: str) -> Message:
    return Message(mid, "instruction", None, {"instruction": text})


def test_a_count_is_taken_only_for_the_parents_own_message_object():
    kept, remade = _message("a", "one"), _message("b", "two")
    record = FullRecord([kept, remade])
    answered = [
        ((kept, "text", None, None), 3),
        ((_message("b", "two"), "text", None, None), 4),  # the same id and text, another object: the parent's read made it again
        ((_message("c", "three"), "text", None, None), 5),  # a message the parent's record does not hold
        ((remade, "tool_result", "call", None, ((kept, 0, None),), 1), 6),
        ((remade, "tool_result", "call", None, ((_message("a", "one"), 0, None),), 1), 7),  # its original another object
    ]
    counts = during_read.counts_taken(during_read._dumps([((key, (None, False)), n) for key, n in answered]), record)
    assert counts == {
        ((kept, "text", None, None), (None, False)): 3,
        ((remade, "tool_result", "call", None, ((kept, 0, None),), 1), (None, False)): 6,
    }


def test_a_message_the_child_made_after_the_fork_is_never_taken(monkeypatch):
    # The child's read ends at the cut and closes the open response: that message is new in the child, and the parent,
    # reading on, may make its own of the same id at the same place (both heaps went on from the fork's state). Only
    # the messages held at the fork are named by their place; the parent holds them alive until it takes the counts.
    held, made_after = _message("a", "one"), _message("b", "half a response")
    record = FullRecord([held, made_after])  # the parent's: here the very objects, as an unlucky heap would have them
    monkeypatch.setattr(during_read, "_held_places", frozenset({id(held)}))
    answered = [((held, "text", None, None), 3), ((made_after, "text", None, None), 9)]
    counts = during_read.counts_taken(during_read._dumps([((key, (None, False)), n) for key, n in answered]), record)
    assert counts == {((held, "text", None, None), (None, False)): 3}


def test_no_child_where_the_switch_keeps_counting_here_or_the_file_is_small(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n" * 10)
    monkeypatch.setattr(during_read, "MIN_BYTES", 0)
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    # The whole suite runs Qt's application and threads in this process, which rightly forbid a fork: the test asks
    # the switch and the size, so the process is taken for one thread here, and once as what it is.
    monkeypatch.setattr(during_read, "one_thread", lambda: True)
    assert during_read.wanted(path)
    monkeypatch.setattr(during_read, "one_thread", lambda: False)
    assert not during_read.wanted(path)
    monkeypatch.setattr(during_read, "one_thread", lambda: True)
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")
    assert not during_read.wanted(path)
    monkeypatch.delenv("FOLDSCOPE_COUNTING")
    monkeypatch.setattr(during_read, "MIN_BYTES", 1 << 20)
    assert not during_read.wanted(path)


def test_a_cut_whose_fork_fails_still_forks_the_counting_child_and_arms_the_next_cut(monkeypatch, tmp_path):
    """No process to be had at a cut (os.fork raising): the read goes on in the parent, the measure's counting child is
    still forked there with the encoder (core.request.counting.read_children), and the next cut is armed."""
    from types import SimpleNamespace

    from foldscope.core.formats import stream_lines
    from foldscope.core.request.counting import read_children
    from tests.core.replay_sessions import tool_session

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * 10_000)
    counting_children: list[bool] = []
    monkeypatch.setattr(read_children, "counting_child", lambda: counting_children.append(True))
    monkeypatch.setattr(during_read.tokens, "local_encoding", lambda: None)
    monkeypatch.setattr(stream_lines, "split_at", None)
    # Whatever threads earlier tests left running, this read is taken as the only one: the rule here is the failed fork's.
    monkeypatch.setattr(read_children, "one_thread", lambda: True)

    def no_fork() -> int:
        raise OSError(11, "no process to be had")

    monkeypatch.setattr(os, "fork", no_fork)
    early = during_read.DuringRead(path, lambda session: None)
    early.arm()
    first_cut, fork = stream_lines.split_at
    assert fork(SimpleNamespace(record=tool_session(2).record)) is False  # the parent reads on
    assert counting_children == [True]
    assert stream_lines.split_at is not None and stream_lines.split_at[0] > first_cut, "the next cut was not armed"
    assert early._children == []
