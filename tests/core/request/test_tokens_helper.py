"""The forked tokenizer helper `inspect` uses: the same ids as the local encoding, and a clean fallback."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.request import tokens
from foldscope.core.request.counting import helper as forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper needs fork")
TEXTS = ["hello world", "", "def f(x):\n    return x  # ünïcode ✓\n" * 50, '{"type":"text"}', "<|endoftext|> as text"]


@pytest.fixture
def fresh(monkeypatch):
    """No encoding built yet in this process, so that start_helper forks; the helper stopped afterwards."""
    local = tokens._local()
    monkeypatch.setattr(tokens, "_encoding", None)
    yield local
    forked.stop_helper()


def test_the_helper_encodes_as_the_local_encoding(fresh):
    assert forked.start_helper()
    helper = tokens.encoding()
    assert helper is not fresh
    assert [helper.encode_ordinary(t) for t in TEXTS] == [fresh.encode_ordinary(t) for t in TEXTS]
    assert helper.encode_ordinary_batch(TEXTS, num_threads=2) == [fresh.encode_ordinary(t) for t in TEXTS]
    assert helper.decode(fresh.encode_ordinary("hello")) == "hello"  # anything else: the local encoding
    forked.stop_helper()
    assert tokens.encoding() is tokens._encoding


def test_the_helper_counts_as_the_length_of_the_local_ids_in_batches(fresh, monkeypatch):
    monkeypatch.setattr(tokens, "BATCH_CHARS", 40)  # several batches, one text longer than a batch alone
    expected = [len(fresh.encode_ordinary(t)) for t in TEXTS]
    assert forked.start_helper()
    assert tokens.count_ordinary_batch(TEXTS, num_threads=2) == expected
    forked.stop_helper()
    assert tokens.count_ordinary_batch(TEXTS, num_threads=2) == expected  # no helper: tiktoken's threads here


def test_a_dead_helper_counts_a_batch_locally(fresh):
    assert forked.start_helper()
    os.kill(tokens.encoding().pid, 9)
    assert tokens.count_ordinary_batch(TEXTS) == [len(fresh.encode_ordinary(t)) for t in TEXTS]
    assert tokens._helper is None


@given(st.lists(st.text(max_size=30), max_size=20), st.integers(min_value=1, max_value=40))
def test_batches_keep_every_text_in_order_and_within_the_size_unless_alone(texts, chars):
    runs = tokens._batches(texts, chars)
    assert [t for run in runs for t in run] == texts
    assert all(run for run in runs)
    assert all(len(run) == 1 or sum(map(len, run)) <= chars for run in runs)
    # as full as allowed: the next run's first text would not have fitted in this one
    assert all(sum(map(len, a)) + len(b[0]) > chars for a, b in zip(runs, runs[1:]))


def test_a_dead_helper_falls_back_to_the_local_encoding(fresh):
    assert forked.start_helper()
    helper = tokens.encoding()
    os.kill(helper.pid, 9)
    assert helper.encode_ordinary("hello world") == fresh.encode_ordinary("hello world")
    assert tokens._helper is None


def test_a_failing_build_in_the_helper_is_raised_here(fresh, monkeypatch):
    def broken(*args, **kwargs):
        raise tokens.TokenizerError("vocabulary hash mismatch")

    monkeypatch.setattr(tokens, "_build", broken)
    assert forked.start_helper()
    with pytest.raises(tokens.TokenizerError):
        tokens.count_text("hello")


def test_inspect_prints_the_same_with_and_without_the_helper(corpus_dev):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    command = [sys.executable, "-m", "foldscope.core.cli.main", "inspect", "--json", str(path)]
    outputs = []
    for env in ({**os.environ, "FOLDSCOPE_COUNTING": "local"}, {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}):
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]


def test_inspect_started_early_leaves_no_helper_running_after_a_usage_error(fresh, monkeypatch, tmp_path):
    from foldscope.core.cli import inspect_early

    start, started = forked.start_helper, []
    monkeypatch.setattr(forked, "start_helper", lambda: started.append(start()) or started[-1])
    large = tmp_path / "large.jsonl"  # a file large enough to want an encoder: the helper starts early
    large.write_bytes(b" " * (tokens.SMALL_INPUT_BYTES + 1))
    with pytest.raises(SystemExit):
        inspect_early.main(["inspect", "--no-such-flag", str(large)])
    assert started == [True] and not tokens.helping()


def test_inspect_of_a_small_file_starts_no_helper_early_and_one_of_a_large_file_does(fresh, monkeypatch, tmp_path):
    from foldscope.core.cli import inspect_early

    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(b" " * tokens.SMALL_INPUT_BYTES)
    large.write_bytes(b" " * (tokens.SMALL_INPUT_BYTES + 1))
    assert inspect_early._file_sizes(["inspect", "--db", str(large), str(small)]) == [tokens.SMALL_INPUT_BYTES]
    assert inspect_early._file_sizes(["inspect", "--json", str(large)]) == [tokens.SMALL_INPUT_BYTES + 1]


@pytest.mark.parametrize("letters", ["abcdefghijklmnopqrstuvwxyz", "中文字词语句段篇章"])
def test_a_huge_body_of_one_piece_goes_to_the_helper_as_its_text_and_ends_never_joined_here(fresh, letters):
    """inspect counts through its helper: one run of letters (or ideographs) is one piece, so its body is one part, and
    joined with the body's ends it was a copy of the whole message in this process. The text and the ends go down the
    pipe as they are (Helper.count_parts); the count is the body's."""
    import random
    import tracemalloc

    from foldscope.core.model.session import FullRecord, Message
    from foldscope.core.request import count_step
    from foldscope.core.request.count import Counter
    from foldscope.core.request.counting import child

    if tokens.windowed():
        pytest.skip("tiktoken counts: a long piece is merged in this process's windows, joined")
    text = "".join(random.Random(5).choices(letters, k=(12 << 20) // len(letters[0].encode())))
    msgs = [Message("s", "system", 0, {"system_message": "sys"}), Message("u", "instruction", 1, {"instruction": text})]
    expected = Counter().measure(msgs, record=FullRecord(msgs)).count  # this process's own encoding
    tokens._encoding = None
    assert forked.start_helper()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        counted = Counter().measure(msgs, record=FullRecord(msgs)).count
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert tokens.helping()  # counted by the helper, not by an encoding built here after it failed
    # A chunk at a time (its slice and its UTF-8: 5 MiB of ideographs), whatever the text's size; joined, a copy of it
    assert peak < 6 * child._CHUNK < sys.getsizeof(text), (peak, sys.getsizeof(text))
    assert counted == expected
    assert type(count_step.plain_body(msgs[1])) is count_step.BodyParts
