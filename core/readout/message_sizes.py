"""Each message's size as the full record, compiled as one request, carries it: the lists, the window map and
`inspect` show these, so one message and one record have one size on every screen.

A message's tokens are its blocks' part of that count, as the Composition panel splits a request (the framing
between blocks and the system and tools head stand apart), and the record's count is `inspect`'s `record_size`.
A call no result answers is left out of a request (docs/compile.md, "Pairing"); it has no part, and is sized
by its text alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text
from foldscope.core.request.unseen_text import unseen_tokens
from foldscope.core.request.vocabulary import TOKENIZER_ID

# What a stored per-message count means: a library keeps counts under this identity, so a count of another
# meaning (the text alone, an older compile) is never taken for one of these.
SIZES_ID = f"{TOKENIZER_ID}:record-part-2"  # 2: unseen parts count at the file's rate (core.request.unseen_text)


@dataclass(frozen=True)
class RecordSizes:
    """Each message's tokens in record order, and the full record's count (the head and framing included)."""

    tokens: list[int]
    total: int


def record_sizes(measure: Measure) -> RecordSizes:
    """The full record of the measure's session compiled as one request, split by message as the Composition
    panel splits a request (core.request.measure.Composition: each message's blocks; framing apart)."""
    record = measure.session.record
    composition = measure.parts(list(record), head=0, first_round=None)
    tokens: list[int | None] = [None] * len(record)
    for message, n in composition.messages:
        if message.id in record:
            i = record.index_of(message.id)
            tokens[i] = (tokens[i] or 0) + n
    rate = measure.counter.unseen_rate  # a message sized by its text counts its unseen parts as the count does
    sized = [_by_text(m, rate) if n is None else n for m, n in zip(record, tokens)]
    return RecordSizes(sized, composition.total)


def _by_text(message, rate) -> int:
    """A message no block carries, sized by its text (and its unseen parts at the count's rate). An empty text is 0
    tokens without asking the counter: at 50,000 messages 7,522 assistant turns of calls alone have one, 0.03 s of the
    window's CPU on its way to the counted timeline."""
    text = message.text
    return (count_text(text) if text else 0) + (unseen_tokens(message, rate) if rate is not None else 0)
