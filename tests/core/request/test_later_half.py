"""A small input's later half counted by a forked child gives the counts the measure makes in-line, and the child is
reaped whether it answered or not (core.request.counting.later_half)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

FILE = "claude_code/extracted-dd381a75.jsonl"
# A fresh process, as `inspect` of a small file is: the small path counts, no encoder is built. It prints each
# request's count, how many bodies the child counted, and whether every child it forked was reaped.
MEASURE = """
import json, os, sys
from foldscope.core.request import tokens
from foldscope.core.request.counting import later_half
from foldscope.core.formats import load_session
from foldscope.core.request.count import Counter

seen = {"ahead": 0, "pids": []}
close = later_half.LaterHalf.close
def spy(self):
    seen["ahead"] = max(seen["ahead"], self.counted_ahead)
    if self._pid:
        seen["pids"].append(self._pid)
    close(self)
later_half.LaterHalf.close = spy
later_half.WAIT_FOR_ANSWER = sys.argv[2] != "slow"  # so that the child's counts are taken whatever the machine's load
if sys.argv[2] == "dies":  # the child ends before it answers
    later_half.LaterHalf._serve = lambda self, *args: os._exit(3)
if sys.argv[2] == "slow":  # the child answers long after the measure needs its half (a busy machine)
    import time
    serve = later_half.LaterHalf._serve
    def slow(self, *args):
        time.sleep(30)
        serve(self, *args)
    later_half.LaterHalf._serve = slow
import time
started = time.monotonic()
tokens.expect(sys.argv[1])
session = load_session(sys.argv[1])
from foldscope.core.cli.basic import summarise
result = summarise(session, counter=Counter(None))
reaped = []
for pid in seen["pids"]:
    try:
        os.waitpid(pid, os.WNOHANG)
        reaped.append(False)
    except ChildProcessError:
        reaped.append(True)
took = time.monotonic() - started
print(json.dumps({"result": result, "ahead": seen["ahead"], "reaped": reaped, "built": tokens._encoding is not None, "took": took}))
"""


def _measured(path, how: str, local: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}
    if local:
        env["FOLDSCOPE_COUNTING"] = "local"
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), how], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_later_half_counted_by_a_forked_child_gives_the_counts_made_in_line(corpus_dev):
    path = corpus_dev / FILE
    in_line = _measured(path, "answers", local=True)
    forked = _measured(path, "answers")
    assert in_line["ahead"] == 0 and forked["ahead"] > 50  # the child counted bodies, and the switch kept it off
    assert forked["result"] == in_line["result"]
    assert forked["reaped"] == [True] and not forked["built"]


def test_a_child_that_dies_before_answering_leaves_its_half_to_the_measure_and_is_reaped(corpus_dev):
    path = corpus_dev / FILE
    in_line = _measured(path, "answers", local=True)
    died = _measured(path, "dies")
    assert died["ahead"] == 0 and died["result"] == in_line["result"]
    assert died["reaped"] == [True]


def test_no_child_is_forked_where_an_encoder_counts_or_a_body_length_is_wanted(corpus_dev, monkeypatch):
    from foldscope.core.formats import load_session
    from foldscope.core.request import small_count, tokens
    from foldscope.core.request.count import Counter
    from foldscope.core.request.counting import later_half

    record = load_session(corpus_dev / FILE).record
    monkeypatch.setattr(tokens, "_encoding", None)  # as a process that has counted only by the small path
    monkeypatch.setattr(small_count, "_spent", 0)
    monkeypatch.setattr(small_count, "BUDGET_CHARS", tokens.SMALL_INPUT_CHARS)
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    # As a command's fresh process: in the whole suite an earlier test's thread or tokenizer helper may still be about.
    monkeypatch.setattr(later_half, "one_thread", lambda: True)
    monkeypatch.setattr(tokens, "helping", lambda: False)
    assert later_half.wanted(Counter(None), record)
    measured = Counter(None)
    measured.lengths = {}  # the prefix meter's: a body counted by the child would have no length
    assert not later_half.wanted(measured, record)
    monkeypatch.setattr(tokens, "_encoding", object())  # an encoder built: it counts, not the small path
    assert not later_half.wanted(Counter(None), record)
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")
    assert not later_half.wanted(Counter(None), record)


def test_the_measure_does_not_wait_for_a_slow_child_and_counts_its_half_itself(corpus_dev):
    path = corpus_dev / FILE
    in_line = _measured(path, "answers", local=True)
    slow = _measured(path, "slow")
    assert slow["result"] == in_line["result"] and slow["ahead"] == 0  # none of the child's counts: it had not answered
    assert slow["took"] < 8 and slow["reaped"] == [True]  # the child sleeps 30 s before it counts (a wait gives up at 10 s)


def test_no_child_is_forked_for_a_record_with_more_text_than_the_small_path_may_count(corpus_dev, monkeypatch):
    from foldscope.core.formats import load_session
    from foldscope.core.request import small_count, tokens
    from foldscope.core.request.count import Counter
    from foldscope.core.request.counting import later_half

    record = load_session(corpus_dev / FILE).record
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(small_count, "_spent", 0)
    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(later_half, "one_thread", lambda: True)
    monkeypatch.setattr(tokens, "helping", lambda: False)
    text = sum(later_half.text_chars(record))
    monkeypatch.setattr(small_count, "BUDGET_CHARS", text)
    assert later_half.wanted(Counter(None), record)  # the whole record within the budget: a small input
    # The default budget (a command reading a large file allows no more): the record's text is past it, so its later
    # half is counting ahead's, never a fork's that would build an encoder beside the measure's.
    monkeypatch.setattr(small_count, "BUDGET_CHARS", text - 1)
    assert not later_half.wanted(Counter(None), record)
