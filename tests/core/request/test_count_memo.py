"""Counter.memo(): the bodies read from copies of the counter's dicts, each (block_key, policy key) pair made as read."""

from __future__ import annotations

import tracemalloc

from foldscope.core.formats import load_session
from foldscope.core.readout.opening import build_document
from foldscope.core.request.compile import full_key
from foldscope.core.store import snapshot_memo

FILE = "claude_code/session-196820da.jsonl"


def counted(corpus_dev):
    session = load_session(corpus_dev / FILE)
    document = build_document(session, str(corpus_dev / FILE))
    assert document.counter is not None
    return session, document.counter


def as_one_dict(counter) -> dict:
    """The bodies as memo() gave them before: one dict, a key tuple an entry, then the keys of no block's shape."""
    bodies = {(full_key(key), pk): n for pk, memo in counter._bodies.items() for key, n in memo.items()}
    bodies.update(counter._other)
    return bodies


def test_the_memos_bodies_are_the_one_dict_they_were_in_its_order_and_pickle_to_the_same_bytes(corpus_dev):
    session, counter = counted(corpus_dev)
    bodies, glue, heads, texts = counter.memo()
    old = as_one_dict(counter)
    assert len(old) > 100  # enough bodies to say something
    assert list(bodies.items()) == list(old.items()) and len(bodies) == len(old) and bodies == old
    assert all(bodies[key] == n for key, n in old.items()) and (("no", "such"), ()) not in bodies
    memo = (bodies, glue, heads, texts)
    assert snapshot_memo.dump_memo(memo, session.record) == snapshot_memo.dump_memo((old, glue, heads, texts), session.record)


def test_a_memo_taken_stays_as_it_was_while_the_counter_counts_on(corpus_dev):
    """The window's store pickles the memo after the counted document is shown, while the window may count an
    edit with the same counter: the memo is what was counted when it was taken."""
    session, counter = counted(corpus_dev)
    bodies = counter.memo()[0]
    before = list(bodies.items())
    memo = next(iter(counter._bodies.values()))
    memo[("a body counted since", "text", None, None)] = 7  # the counter's own dict grows after the memo was taken
    assert list(bodies.items()) == before


def test_taking_the_memo_makes_no_key_tuple_a_body():
    """memo() made a dict of (block_key, policy key) pairs, two tuples an entry (3.4 MiB at 50,000 messages, held from
    the counted document until the memo was pickled, at the window's peak): it copies the counter's dicts, each
    pair made as it is read. Python's allocations for it over 6,000 bodies (past the tuples' free lists) stay under
    80 bytes a body (110 with the pairs)."""
    from foldscope.core.request.count import Counter
    from tests.core.forensics.traces import Trace, rounds

    t = Trace()
    messages = rounds(t, 2000, chars=40)
    counter = Counter()
    counter.measure(messages, record=t.session().record)
    n = counter.bodies_counted()
    tracemalloc.start()
    try:
        memo = counter.memo()
        made, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(memo[0]) == n > 6000
    assert made < 80 * n, f"{made / n:.0f} bytes a body"
