"""Long texts counted passage by passage (core.request.passages): the passages join to the text, their counts add up
to tiktoken's count of the whole, and a passage counted once is not tokenised again."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.launch import session_policy
from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from foldscope.core.request import passages
from foldscope.core.request.count import Counter
from foldscope.core.request.passages import Passages, cut
from foldscope.core.request.tokens import encoding
from foldscope.core.request.trace_measure import measure_trace
from tests.core.fold_sessions import text_of


def tokens(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def count_all(texts: list[str]) -> list[int]:
    return [tokens(t) for t in texts]


@pytest.fixture
def by_passages(monkeypatch):
    """Counting as with tiktoken, where long texts are counted by passages (quicktok counts them whole)."""
    from foldscope.core.request import tokens as tokens_module

    monkeypatch.setattr(tokens_module, "BACKEND", tokens_module.SLOW)


@pytest.fixture
def everywhere(monkeypatch):
    """Cut at every place the rule allows: no length between cuts, no line skipped."""
    monkeypatch.setattr(passages, "MIN_PASSAGE", 0)
    monkeypatch.setattr(passages, "EVERY", 0)


# What lies about an escaped newline decides whether a cut there is safe: letters of every case and of none (some
# that o200k merges with the `n` before them), marks that join a letter, the `'` of a contraction, digits, whitespace
# of each kind, punctuation, escapes, CJK.
PIECES = [
    "\\n",
    "\\\\n",
    "\\n\\n",
    "n",
    "N",
    "'",
    "'s",
    "'S",
    "'ll",
    "'re",
    "'ve",
    "a",
    "e",
    "t",
    "ing",
    "eing",
    "tx",
    "Zq",
    "é",
    "e\u0301",
    "\u0301",
    "\u02b0",
    "\u01c5",
    "日本",
    "١٢",
    "123",
    "4",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\\t",
    "-",
    "#",
    '"',
    '\\"',
    "{",
    "}",
    "→",
    "/",
    "\u00a0",
    "\u3000",
    ".",
    "_",
    "x'",
    "\\u00e9",
]
texts_about_newlines = st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=60).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts_about_newlines)
def test_a_texts_passages_join_to_it_and_their_counts_add_up_to_its_count(everywhere, text):
    parts = cut(text)
    assert "".join(parts) == text
    assert all(parts)
    assert sum(tokens(p) for p in parts) == tokens(text)


@pytest.mark.parametrize("after", ["eing", "tx", "'remore"])
def test_a_cut_never_comes_before_a_letter_or_a_contraction_which_would_change_the_count(everywhere, after):
    """Each of these texts counts differently cut between the escaped newline and what follows it, so the rule must
    not cut there: a letter o200k merges with the `n`, or the `'` of a contraction."""
    text = "word\\n" + after
    assert tokens("word\\n") + tokens(after) != tokens(text)
    assert cut(text) == [text]


@pytest.mark.parametrize("after", ["s", "'s", "'", "\u0301", "\u02b0", "é"])
def test_a_cut_never_comes_before_what_a_letter_branch_could_go_on_with(everywhere, after):
    """Where the rule cuts, whatever the count would do: never before a letter of any script, a combining mark or
    a `'` (none of these texts happens to count differently cut, but other texts like them do, as above)."""
    text = "word\\n" + after + "more"
    assert cut(text) == [text]


@pytest.mark.parametrize("after", [" ", "\\", "-", "1", "#", "{", "\t"])
def test_a_cut_comes_after_an_escaped_newline_before_ascii_that_is_not_a_letter(everywhere, after):
    text = "word\\n" + after + "more"
    assert cut(text)[0] == "word\\n"


def test_real_recorded_lines_count_the_same_cut_everywhere_the_rule_allows(everywhere, corpus_dev):
    """Every line of every dev corpus file (JSON text, as the counted requests are) cut at every allowed place."""
    lines = [line for path in sorted(corpus_dev.rglob("*.jsonl")) for line in path.read_text("utf-8").splitlines()]
    lines += [path.read_text("utf-8") for path in sorted(corpus_dev.rglob("*.json"))]
    cuts = 0
    for line in lines:
        parts = cut(line)
        cuts += len(parts) - 1
        assert sum(tokens(p) for p in parts) == tokens(line), line[:200]
    assert cuts > 10_000  # the files hold many escaped newlines: the rule was put to the test


def test_the_same_lines_in_two_texts_are_cut_alike_wherever_each_starts():
    body = "".join(f"    line {k} of the file: value = {k * 7}\\n" for k in range(400))
    first, second = cut('content":"' + body + '","'), cut('text":"Tool result of Read:\\n' + body[1200:] + '","')
    shared = set(first) & set(second)
    assert sum(map(len, shared)) > 0.8 * (len(body) - 1200)


def test_a_passage_counted_once_is_not_tokenised_again():
    body = "".join(f"  {k}\u2192def step_{k}(self):\\n        return {k}\\n" for k in range(300))
    given: list[list[str]] = []

    def counting(texts: list[str]) -> list[int]:
        given.append(texts)
        return count_all(texts)

    memo = Passages()
    first = memo.counts(['content":"' + body + '","'], counting)
    again = memo.counts(['content":"Read again:\\n' + body + '","', "a short text"], counting)
    assert first == [tokens('content":"' + body + '","')]
    assert again == [tokens('content":"Read again:\\n' + body + '","'), tokens("a short text")]
    assert sum(map(len, given[1])) < 0.1 * len(body)  # the second read: its first and last passages, the short text
    assert memo.found_chars > 0.9 * len(body)


def recorded() -> tuple[list[str], Callable[[list[str]], list[int]]]:
    """A count_all that keeps every text it is handed, in order, and that list."""
    given: list[str] = []

    def counting(texts: list[str]) -> list[int]:
        given.extend(texts)
        return count_all(texts)

    return given, counting


def unique_text(seed: int) -> str:
    """A long text no other seed's shares a passage with; its lines start with a space, so a cut may come before any."""
    return 'content":"' + "".join(f" {seed}.{k}: {text_of(30 + k % 7, seed=seed * 1000 + k)}\\n" for k in range(40)) + '","'


def test_a_memo_that_finds_little_stops_cutting_and_watches_again_later(monkeypatch):
    monkeypatch.setattr(passages, "PROBE_CHARS", 20_000)
    monkeypatch.setattr(passages, "RESTING", 2)
    memo = Passages()
    given, counting = recorded()
    first = [unique_text(seed) for seed in range(30)]
    assert memo.counts(first, counting) == count_all(first)
    whole = [k for k, text in enumerate(first) if text in given]  # handed over as they came: not cut
    assert 0 < whole[0] and whole == list(range(whole[0], 30))  # cut while watched, found nothing, so it rests
    assert sum(map(len, first[: whole[0]])) >= 20_000 > sum(map(len, first[: whole[0] - 1]))
    rested = 0
    for seed in range(100, 140):  # new texts, one at a time: whole while it rests, then cut again
        given.clear()
        text = unique_text(seed)
        assert memo.counts([text], counting) == count_all([text])
        if given != [text]:
            break
        rested += 1
    assert 0 < rested < 30 and len(given) > 1
    given.clear()
    assert memo.counts(first[:3], counting) == count_all(first[:3])  # watched again, the first probe's passages found
    assert not any(text in given for text in first[:3]) and sum(map(len, given)) < len(first[0])


def test_each_stretch_is_judged_on_its_own_so_a_memo_that_stops_finding_soon_rests(monkeypatch):
    """After a long stretch found again and again, texts that find nothing start a rest within two stretches."""
    monkeypatch.setattr(passages, "PROBE_CHARS", 20_000)
    memo = Passages()
    given, counting = recorded()

    again = [unique_text(seed) for seed in range(3)]
    for _ in range(60):  # about 300k characters, nearly all found
        memo.counts(again, counting)
    given.clear()
    fresh = [unique_text(seed) for seed in range(100, 140)]
    memo.counts(fresh, counting)
    cut_first = next(k for k, t in enumerate(fresh) if t in given)  # the first text counted whole: resting
    assert sum(map(len, fresh[:cut_first])) <= 2 * 20_000 + len(fresh[0])


def test_the_memo_forgets_when_it_holds_too_much(monkeypatch):
    monkeypatch.setattr(passages, "HELD_CHARS", 5_000)
    memo = Passages()
    body = 'content":"' + "".join(f"  item {k}: {text_of(40, seed=k)}\\n" for k in range(200)) + '","'
    assert memo.counts([body], count_all) == [tokens(body)]
    assert memo._counts == {} and memo._held == 0
    assert memo.counts([body], count_all) == [tokens(body)]


def test_a_measure_counts_the_same_with_passages_as_without_on_a_session_that_reads_its_files_again(by_passages, monkeypatch):
    """A session whose tool results read the same file again and again, in overlapping halves: every request's count
    is the one counting whole texts gives, and the counter found most of the later reads' passages in its memo."""
    lines = "".join(f"{k:>6}\u2192    x_{k} = compute({k}{', y' * (k % 3)})\n" for k in range(600))
    halves = (lines[: len(lines) * 2 // 3], lines[len(lines) // 3 :])
    msgs = [
        Message("s", "system", 0, {"system_message": "You are a coding agent."}),
        Message("u", "instruction", 1, {"instruction": "Read the file until you know it."}),
    ]
    trace: list[Request] = []
    for k in range(12):
        cid = f"toolu_{k}"
        msgs.append(
            Message(cid, "action_request", 2 + 2 * k, {"function": "Read", "arguments": {"path": "src/x.py"}}, metadata={"call_id": cid})
        )
        trace.append(Request(len(trace), tuple(m.id for m in msgs), cid, Usage(input=100 + k)))
        msgs.append(
            Message(
                f"r{k}",
                "action_response",
                3 + 2 * k,
                {"function": "Read", "arguments": {"path": "src/x.py"}, "output": halves[k % 2], "action_request_id": cid},
                metadata={"call_id": cid},
            )
        )
    session = Session(FullRecord(msgs), [m.id for m in msgs], trace=trace)
    policy = session_policy(session)
    counter = Counter()
    with_passages = [row.count_with_head for row in measure_trace(session, policy, counter=counter).rows]
    monkeypatch.setattr(passages, "PASSAGES_FROM", 1 << 40)
    without = [row.count_with_head for row in measure_trace(session, policy, counter=Counter()).rows]
    assert with_passages == without
    assert counter._passages.found_chars > len(lines) // 2


def repeated_reads() -> list[str]:
    """Three reads of one file, overlapping, and a short text: what a counting child's batch holds."""
    body = "".join(f"{k:>6}\u2192    total += weights[{k}{', k' * (k % 3)}]\\n" for k in range(500))
    return ['content":"' + body + '","', 'content":"' + body[900:] + '","', "short", 'text":"' + body[:5000] + '","']


def test_the_counting_child_answers_each_texts_count():
    """A real child, through its pipes: the counts are tiktoken's of each text whole."""
    from foldscope.core.request.counting import child as counting_child
    from foldscope.core.request.counting.child import receive, send

    child = counting_child.spawn()
    assert child is not None
    texts = repeated_reads()
    try:
        with open(child.down, "wb", closefd=False) as down, open(child.up, "rb", closefd=False) as up:
            send(down, ("counts", texts))
            down.flush()
            assert receive(up) == count_all(texts)
    finally:
        counting_child.stop(child)


def test_the_counting_child_counts_by_passages(by_passages, monkeypatch):
    """The child's loop (core.request.counting.child.serve), run here on a thread: its memo finds the later reads' passages."""
    import os
    import threading

    from foldscope.core.request.counting import child

    made: list[Passages] = []

    class Watched(Passages):
        def __init__(self, cutting: bool = True) -> None:
            super().__init__(cutting)
            made.append(self)

    monkeypatch.setattr(child, "Passages", Watched)
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    serving = threading.Thread(target=child.serve, args=(down_r, up_w), daemon=True)
    serving.start()
    texts = repeated_reads()
    with os.fdopen(down_w, "wb") as down, os.fdopen(up_r, "rb") as up:
        for batch in (texts[:1], texts[1:]):  # the first read, then the others
            child.send(down, ("counts", batch))
            down.flush()
            assert child.receive(up) == count_all(batch)
    serving.join(timeout=60)
    assert not serving.is_alive()
    assert len(made) == 1 and made[0].found_chars > len(texts[1]) // 2


def test_a_batch_the_child_never_took_is_counted_here_by_passages(by_passages):
    """CountsAhead._count_here: the measure's own count of a waiting batch, by passages, each key its text's count."""
    from foldscope.core.request.counting import ahead

    counting = ahead.CountsAhead(FullRecord([]), None, ())
    texts = repeated_reads()
    for first, last in ((0, 1), (1, len(texts))):  # the first read, then the others
        batch = ahead._Batch()
        batch.keys, batch.texts = [("k", i) for i in range(first, last)], texts[first:last]
        counting._count_here(batch)
        assert batch.done.is_set()
    assert [counting._counts[("k", i)] for i in range(len(texts))] == count_all(texts)
    assert counting._passages.found_chars > len(texts[1]) // 2


def test_json_escaped_text_cut_at_its_newlines_counts_as_the_whole():
    """What the counter cuts in practice: a body's JSON, escaped as canonical() writes it, with the real constants."""
    source = "\n".join(f"def f_{k}(x):\n    return x * {k}  # it's {k}\n" for k in range(200))
    text = 'content":' + json.dumps(source, ensure_ascii=False) + ',"'
    parts = cut(text)
    assert len(parts) > 10
    assert sum(tokens(p) for p in parts) == tokens(text)


def test_with_quicktok_a_counter_counts_long_texts_whole():
    """quicktok tokenises a text in about the time cutting and looking up its passages takes: no passages."""
    from foldscope.core.request import tokens as tokens_module

    if tokens_module.BACKEND != tokens_module.FAST:
        pytest.skip(f"counted by tiktoken here: {tokens_module.WHY_SLOW}")
    texts = repeated_reads()
    counter = Counter()
    assert counter._passages.counts(texts, count_all) == count_all(texts)
    assert counter._passages.counts(texts, count_all) == count_all(texts)
    assert counter._passages.found_chars == 0 and not counter._passages._counts
