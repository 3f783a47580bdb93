"""Prefix share with its cause: how much of a request the next repeats from its start, and where and why they part."""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count
from typing import Any

from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import grown, since
from foldscope.core.request.compile import (
    IncludedRound,
    Plan,
    block_key,
    canonical,
    make_plan,
    payload_bytes,
    payload_from_plan,
    payload_text,
    render_block,
    request_head,
    short_key,
)
from foldscope.core.request.count_step import body_bytes, json_string, type_glue
from foldscope.core.request.marks import strip_marks
from foldscope.core.request.plan import instruction_text

# Why the later request departs from the earlier one's bytes.
CAUSES = ("none", "append", "fold", "restore", "policy", "stable", "rewrite")


OPENING = '{"content":['  # before the first block: the first turn opens


def turn_glue(role: str) -> str:
    """Between two blocks of different roles: the earlier turn (of `role`) closes, the next opens."""
    return f'],"role":"{role}"}},{{"content":['


@dataclass(frozen=True)
class Compiled:
    """One compiled request with what its divergence needs: the plan, the payload, its bytes (marks set aside) and view."""

    view: tuple[str, ...]
    plan: Plan
    payload: dict[str, Any]
    data: bytes
    policy_key: tuple


def compile_for_prefix(
    messages: Sequence[Message],
    *,
    record: FullRecord | None,
    policy: Any = None,
    tools: list | None = None,
    first_round: IncludedRound | None = None,
) -> Compiled:
    plan = make_plan(messages, record=record, policy=policy, tools=tools, first_round=first_round)
    payload = payload_from_plan(plan, record=record, policy=policy, tools=tools, first_round=first_round)
    key = (None, None) if policy is None else (policy.tool_result_max_chars, policy.caching)
    # Marks are set aside: they ask the provider to cache, they are not content it caches, and the moving
    # tail's mark would otherwise count every request as rewritten at the previous one's last block.
    data = payload_bytes(strip_marks(payload) if plan.caching else payload)
    return Compiled(tuple(m.id for m in messages), plan, payload, data, key)


@dataclass(frozen=True)
class Divergence:
    """Where request B first differs from the earlier request A, read on their payloads with marks set aside.

    `share` is the fraction of A's bytes B repeats from its start; `message` the position in B's
    `messages` of the first message that differs (None when the stable segment differs or nothing
    does); `index` the full-record index of the first view message in the block that differs;
    `cause` one of CAUSES.
    """

    share: float
    message: int | None
    index: int | None
    cause: str

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "index": self.index, "cause": self.cause}


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings, comparing in halving blocks (C-speed compares)."""
    n = min(len(a), len(b))
    lo, step = 0, 1 << 16
    while lo < n:
        hi = min(n, lo + step)
        if a[lo:hi] == b[lo:hi]:
            lo = hi
            continue
        if hi - lo <= 64:
            while lo < hi and a[lo] == b[lo]:
                lo += 1
            return lo
        step = max(64, (hi - lo) // 2)
    return n


def divergence(a: Compiled, b: Compiled, record: FullRecord) -> Divergence:
    share = round(common_prefix_len(a.data, b.data) / len(a.data), 4) if a.data else 0.0
    if a.data == b.data:
        return Divergence(share, None, None, "none")
    if a.policy_key != b.policy_key:
        cause = "policy"
    elif any(strip_marks(a.payload.get(k)) != strip_marks(b.payload.get(k)) for k in ("tools", "system")):
        return Divergence(share, None, None, "stable")
    else:
        cause = _cause(a.view, b.view, record)
    am, bm = strip_marks(a.payload["messages"]), strip_marks(b.payload["messages"])
    i = next((k for k in range(min(len(am), len(bm))) if am[k] != bm[k]), min(len(am), len(bm)))
    if i < len(bm):
        index = _first_index(b, bm, am, i, record)
    else:
        index = _first_index(a, am, bm, i, record) if i < len(am) else None
    return Divergence(share, i, index, cause)


def _cause(before: Sequence[str], after: Sequence[str], record: FullRecord) -> str:
    if len(after) >= len(before) and common_start(after, before, equal=True) == len(before):
        return "append"
    was = set(before)
    added = [record.get(m) for m in after if m not in was and m in record]
    if any(m.kind == "note" or m.is_clipped_copy for m in added):
        return "fold"
    newest = max((record.index_of(m) for m in before if m in record), default=-1)
    if any(record.index_of(m.id) < newest for m in added):
        return "restore"
    return "rewrite"


def _first_index(source: Compiled, mine: list, other: list, i: int, record: FullRecord) -> int | None:
    """The record index of the first view message in `source`'s first block of message i that `other` lacks."""
    blocks = source.plan.turns[i][1]
    theirs = other[i]["content"] if i < len(other) else []
    b = next((k for k, block in enumerate(mine[i]["content"]) if k >= len(theirs) or theirs[k] != block), len(blocks) - 1)
    first = blocks[b].message
    return record.index_of(first.id) if first.id in record else None


@dataclass
class Shape:
    """A measured request as the prefix share reads it: its blocks and the byte end of each segment.

    Segment i is the punctuation before block i and the block as the payload carries it, marks set
    aside; the head (tools, system, up to `"messages":[`) comes before segment 0, the trailer after
    the last. Identical leading blocks are taken from the request before, so a request costs what changed.
    """

    view: Sequence[str]
    policy_key: tuple
    head: str
    flat: Sequence
    roles: Sequence[str]
    turns: Sequence[int]  # each block's turn, in the payload's `messages` (Shared: kept from the shape before)
    ends: Sequence[int]  # bytes of segments 0..i
    first_round: IncludedRound | None = None  # what its results compiled under
    shared: int = 0  # leading blocks that are the same objects as the previous shape's (read when it was made)
    serial: int = -1  # the serial of the counter's layout it was read from (core.request.count_step.Laid)

    @property
    def trailer(self) -> str:
        return f'],"role":"{self.roles[-1]}"}}]}}' if self.flat else "]}"

    @property
    def size(self) -> int:
        return len(self.head.encode("utf-8", "surrogatepass")) + (self.ends[-1] if self.ends else 0) + len(self.trailer)

    def glue(self, i: int) -> str:
        if i == 0:
            return OPENING
        return "," if self.roles[i] == self.roles[i - 1] else turn_glue(self.roles[i - 1])


# A message's text this long, whose length the counter did not note (a session reopened from the library: its counts
# are seeded, their lengths are not), is measured a slice at a time (text_body_bytes): its block rendered whole, the
# block's JSON and that JSON's UTF-8 were held beside the text, three times one huge message.
HUGE_TEXT = 1 << 20
SLICE = 1 << 20


def text_body_bytes(m: Message) -> int | None:
    """The UTF-8 length of count_step.text_body(m) (the counter's body of a message's text alone), measured a slice of
    the text at a time: JSON escapes one character at a time, so the slices' lengths add up to the whole's. None for
    a text UTF-8 cannot hold (a lone surrogate), which the meter renders itself."""
    text = instruction_text(m) if m.kind == "instruction" else m.text
    size = len('text":"') + len('","')
    for at in range(0, len(text), SLICE):
        part = body_bytes(json_string(text[at : at + SLICE])[1:-1])
        if part is None:
            return None
        size += part
    return size


class PrefixMeter:
    """Each request's prefix share with the one before, from per-block segments: byte-exact equal to
    `divergence` on the compiled payloads (tests/core/test_prefix_share.py), at the cost of what changed."""

    def __init__(
        self,
        record: FullRecord,
        policy: Any = None,
        tools: list | None = None,
        first_round: IncludedRound | None = None,
        lengths: dict[Any, int] | None = None,
    ) -> None:
        self.record, self.policy, self.tools, self.first_round = record, policy, tools, first_round
        self.policy_key = (None, None) if policy is None else (policy.tool_result_max_chars, policy.caching)
        self._lengths: dict[Any, int] = {}  # a block's bytes by its memo key, or a marked one's by its key unmarked (_length)
        # The bodies' UTF-8 lengths by memo key the counter noted as it rendered them under this policy (Counter.lengths):
        # a block's bytes are '{"', its body and its type (core.request.count_step.body_of), so none is rendered twice.
        self._counted = lengths
        self._head: tuple[Any, str] = (None, "")  # the last layout's system messages and the head they render (marks aside)
        self.previous: Shape | None = None
        self.before: Shape | None = None  # the shape before the previous one (the last step compared the two)

    def step(self, view: Sequence[str], laid: Any, first_round: IncludedRound | None = None) -> Divergence | None:
        """Where the previous request parts from this one (None for the first). `view` is this request's
        message ids, `laid` its core.request.count_step.Laid (Measurement.laid) under the meter's record, policy, tools."""
        shape = self._shape(view, laid, first_round)
        self.before, self.previous = self.previous, shape
        return None if self.before is None else self._divergence(self.before, shape)

    def parted(self) -> tuple[Divergence, Place] | None:
        """The last step's request against the one before it: where it parts (`divergence`) and the exact place
        (`place`), each as on their compiled payloads, from their shapes; None after the first step. A request
        costs what changed: the cache causes' pass asks this where a request does not only add to the one before,
        instead of compiling both whole."""
        a, b = self.before, self.previous
        if a is None or b is None:
            return None
        return self._divergence(a, b), self._place(a, b, self._shared(a, b)[0])

    def _text(self, spec, first_round: IncludedRound | None) -> str:
        spec = spec.marked(None) if spec.mark is not None else spec
        return canonical(render_block(spec, self.record, self.policy, first_round))

    def _key(self, spec, first_round: IncludedRound | None) -> tuple:
        """Everything the block's bytes depend on, its mark set aside (equal keys, equal bytes)."""
        key = block_key(spec, self.record, self.policy, first_round)
        return key[:3] + key[4:]

    def _length(self, spec, first_round: IncludedRound | None, key: Any) -> int:
        """A block's bytes: '{"', its body and its type. `key` is its memo key in the counter's layout (Laid.keys), by
        which the counter noted its body's length as it rendered it (Counter.lengths): an unmarked block, nearly every
        one, is kept by it with no key made again; a marked one by its key with the mark set aside (the same bytes)."""
        counted = key
        if spec.mark is not None:
            key = self._key(spec, first_round)
            counted = short_key(key[:3] + (None,) + key[3:])  # the unmarked block's memo key
        n = self._lengths.get(key)
        if n is None:
            body = self._counted.get(counted) if self._counted is not None else None
            if body is None and type(counted) is Message and len(counted.text) >= HUGE_TEXT:
                body = text_body_bytes(counted)  # one message's text alone (memo_key), measured a slice at a time
            if body is not None:
                n = 2 + body + len(type_glue(spec))
            else:
                n = len(self._text(spec, first_round).encode("utf-8", "surrogatepass"))
            self._lengths[key] = n
        return n

    def _shape(self, view: Sequence[str], laid: Any, first_round: IncludedRound | None) -> Shape:
        if self._head[0] is not laid.system:  # a layout extended from another keeps its system messages' tuple
            self._head = (laid.system, request_head(Plan(laid.system, ()), self.tools) + 'messages":[')
        head = self._head[1]
        flat, roles = laid.flat, laid.roles
        prev = self.previous
        j = same = 0
        if prev is not None:
            n = min(len(prev.flat), len(flat))
            # A layout extended from the previous one kept its first `kept` blocks as the same objects: the scan
            # for the first different block starts there, so a request costs what changed.
            k = min(laid.kept, n) if laid.since == prev.serial and prev.serial >= 0 else 0
            j = next(compress(count(k), map(operator.is_not, prev.flat[k:n], flat[k:n])), n)
        same = j
        if prev is not None and prev.first_round != first_round:
            j = 0  # the results may compile under another bound
        # The turns and ends of the blocks kept from the previous shape are its own (shared, not copied).
        kept_turns = prev.turns if j and prev is not None else None
        kept_ends = prev.ends if j and prev is not None else None
        turn = kept_turns[j - 1] if kept_turns is not None else 0
        end = kept_ends[j - 1] if kept_ends is not None else 0
        turns: list[int] = []
        ends: list[int] = []
        before = roles[j - 1] if j else None
        length = self._length
        for i, (spec, role, key) in enumerate(zip(since(flat, j), since(roles, j), since(laid.keys, j)), j):
            if i == 0:
                turn, glue = 0, len(OPENING)
            elif role == before:
                glue = 1
            else:
                turn += 1
                glue = len(turn_glue(str(before)))
            end += glue + length(spec, first_round, key)
            turns.append(turn)
            ends.append(end)
            before = role
        # Made once, with its turns and ends (not made empty and filled: two Shareds a request for nothing).
        return Shape(
            view, self.policy_key, head, flat, roles, grown(kept_turns, j, turns), grown(kept_ends, j, ends), first_round, same, laid.serial
        )

    def _segment(self, s: Shape, i: int) -> bytes | None:
        if i < len(s.flat):
            return (s.glue(i) + self._text(s.flat[i], s.first_round)).encode("utf-8", "surrogatepass")
        return s.trailer.encode("utf-8", "surrogatepass") if i == len(s.flat) else None

    @staticmethod
    def _segment_size(s: Shape, i: int) -> int | None:
        """_segment's length in bytes, from the shape's running ends: nothing rendered."""
        if i < len(s.flat):
            return s.ends[i] - (s.ends[i - 1] if i else 0)
        return len(s.trailer.encode("utf-8", "surrogatepass")) if i == len(s.flat) else None

    def _first_different(self, a: Shape, b: Shape) -> tuple[int, int, int | None]:
        """The first block whose bytes differ (past both ends when none does), the bytes before it, and the turn
        that opened with another role while its bytes were still the same (None when none did)."""
        n = min(len(a.flat), len(b.flat))
        same_round = a.first_round == b.first_round
        i = b.shared if same_round else 0  # b was shaped after a: its shared start is theirs
        other_role = None
        while i <= max(len(a.flat), len(b.flat)):
            # Equal blocks in the same place of their turn are equal segments; only others are rendered.
            if (
                i < n
                and (i == 0 or a.roles[i - 1] == b.roles[i - 1])
                and a.roles[i] == b.roles[i]
                and same_round
                and (a.flat[i] is b.flat[i] or self._key(a.flat[i], a.first_round) == self._key(b.flat[i], b.first_round))
            ):
                i += 1
                continue
            # Segments of other lengths differ (an append's first new block against the earlier request's close):
            # known from the shapes' ends, with neither block rendered.
            if self._segment_size(a, i) != self._segment_size(b, i):
                break
            sa, sb = self._segment(a, i), self._segment(b, i)
            if sa != sb:
                break
            if i < n and a.roles[i] != b.roles[i] and other_role is None:
                other_role = b.turns[i]  # the same bytes so far; the role is said when the turn closes
            i += 1
        return i, a.ends[i - 1] if 0 < i <= len(a.flat) else 0, other_role

    def _shared(self, a: Shape, b: Shape) -> tuple[int, int, int | None]:
        """The bytes the two payloads share from the start, with _first_different's block and turn."""
        j, before, other_role = self._first_different(a, b)
        if a.head == b.head:
            shared = len(a.head.encode("utf-8", "surrogatepass")) + before
            if j > len(a.flat) and j > len(b.flat):
                shared = a.size  # the same bytes
            else:
                shared += self._stream_prefix(a, b, j)
        else:
            shared = self._stream_prefix(a, b, -1)
        return shared, j, other_role

    def _divergence(self, a: Shape, b: Shape) -> Divergence:
        shared, j, other_role = self._shared(a, b)
        size = a.size
        share = round(shared / size, 4) if size else 0.0
        if shared == size == b.size:
            return Divergence(share, None, None, "none")
        if a.policy_key != b.policy_key:
            cause = "policy"
        elif a.head != b.head:
            return Divergence(share, None, None, "stable")
        else:
            cause = _cause(a.view, b.view, self.record)
        ta = a.turns[j] if j < len(a.flat) else (a.turns[-1] + 1 if a.flat else 0)
        tb = b.turns[j] if j < len(b.flat) else (b.turns[-1] + 1 if b.flat else 0)
        i = min(ta, tb)
        nb = b.turns[-1] + 1 if b.flat else 0
        if other_role is not None and other_role < i:
            # Both turns closed at j with their blocks alike: the turn that differs is the one of another role,
            # at its last block (as `divergence` names a message whose blocks are alike).
            i, block = other_role, b.flat[j - 1]
        elif i < nb:
            block = b.flat[j] if j < len(b.flat) and b.turns[j] == i else b.flat[min(j, len(b.flat)) - 1]
        elif j < len(a.flat):
            block = a.flat[j]
        else:
            return Divergence(share, i, None, cause)
        first = block.message
        return Divergence(share, i, self.record.index_of(first.id) if first.id in self.record else None, cause)

    def _place(self, a: Shape, b: Shape, byte: int) -> Place:
        """`place` on the two compiled payloads, from the shapes, `byte` the bytes they share from the start: only
        the message holding that byte is rendered."""
        head = b.head.encode("utf-8", "surrogatepass")
        if byte < len(head) or not b.flat:  # in the stable segment (a's first `byte` bytes are b's)
            data = head + (b.trailer.encode("utf-8", "surrogatepass") if not b.flat else b"")
            return Place(byte, None, None, None, len(data[:byte].decode("utf-8", "ignore")), 0)
        rel, n = byte - len(head), len(b.flat)
        i = bisect_right(b.ends, rel)  # the segment holding the byte (n: the trailer)
        start = b.ends[i - 1] if i else 0
        if i == n:
            if rel - start >= len(b.trailer) - len("]}"):  # past the last message
                return Place(byte, b.turns[-1] + 1, None, None, 0, 0)
            turn = b.turns[-1]
        else:
            # A turn's glue closes the turn before (`],"role":"..."}`); the comma and `{"content":[` after it are
            # the next turn's, as `place` reads a byte on the comma before a message as the message after it.
            glue = b.glue(i)
            closing = len(glue) - len(',{"content":[') if i and b.roles[i] != b.roles[i - 1] else 0
            turn = b.turns[i] - 1 if rel - start < closing else b.turns[i]
        first = min(i, n - 1)
        while first and b.turns[first - 1] >= turn:
            first -= 1
        while b.turns[first] < turn:
            first += 1
        last = first
        while last + 1 < n and b.turns[last + 1] == turn:
            last += 1
        opening = '{"content":['
        begins = (b.ends[first - 1] if first else 0) + len(b.glue(first)) - len(opening)  # the message's first byte
        specs = [b.flat[k] for k in range(first, last + 1)]
        texts = [self._text(spec, b.first_round) for spec in specs]
        text = opening + ",".join(texts) + f'],"role":"{b.roles[first]}"}}'
        char = len(text.encode("utf-8", "surrogatepass")[: max(0, rel - begins)].decode("utf-8", "ignore"))
        k, b_at = _locate(texts, char, len(opening)) or (len(texts) - 1, len(opening) + sum(len(t) + 1 for t in texts[:-1]))
        message = specs[k].message
        index = self.record.index_of(message.id) if message.id in self.record else None
        return Place(byte, turn, k, index, char, max(0, min(len(texts[k]), char - b_at)), texts[k])

    def _stream_prefix(self, a: Shape, b: Shape, start: int) -> int:
        """Common bytes of the two payloads' streams from segment `start` (-1: the head) on, read lazily."""

        def stream(s: Shape):
            if start < 0:
                yield s.head.encode("utf-8", "surrogatepass")
            i = max(start, 0)
            while i < len(s.flat):
                # The glue apart from the block's text: where the two part inside the glue (an append's first new
                # block against the earlier close), the text is never rendered.
                yield s.glue(i).encode("utf-8", "surrogatepass")
                yield self._text(s.flat[i], s.first_round).encode("utf-8", "surrogatepass")
                i += 1
            if i == len(s.flat):
                yield s.trailer.encode("utf-8", "surrogatepass")

        ia, ib = filter(None, stream(a)), filter(None, stream(b))  # an empty piece is no end of the stream
        pa = pb = b""
        shared = 0
        while True:
            if not pa:
                pa = next(ia, b"")
            if not pb:
                pb = next(ib, b"")
            if not pa or not pb:
                return shared
            n = min(len(pa), len(pb))
            c = common_prefix_len(pa[:n], pb[:n])
            shared += c
            if c < n:
                return shared
            pa, pb = pa[n:], pb[n:]


@dataclass(frozen=True)
class Place:
    """The exact place where request B's bytes first differ from the earlier request A's (marks set aside).

    `byte`: the bytes the two payloads share from the start. `message` is the position in B's `messages` of
    the message holding the first differing byte (None when it lies in the stable segment, system and tools),
    `block` the content block within it and `index` the full-record index of that block's first message;
    `char` the characters of that message (its compact JSON, as compared) both requests share before they
    part, `block_char` the same within the block. The request panel and the Cost panel both say this place.
    """

    byte: int
    message: int | None
    block: int | None
    index: int | None
    char: int
    block_char: int
    block_text: str = ""  # the block's compact JSON (for the tokens before the place)


def place(a: Compiled, b: Compiled, record: FullRecord | None) -> Place:
    """Where B's bytes first part from A's: the message and character (see Place)."""
    byte = common_prefix_len(a.data, b.data)
    payload = strip_marks(b.payload) if b.plan.caching else b.payload
    head = payload_text({k: payload[k] for k in ("tools", "system") if k in payload})
    start = len(head.encode("utf-8", "surrogatepass")) - 1 + (len(',"messages":[') if head != "{}" else len('"messages":['))
    messages = payload.get("messages", [])
    if byte < start or not messages:
        return Place(byte, None, None, None, len(a.data[:byte].decode("utf-8", "ignore")), 0)
    # A byte on the comma before a message, or past B's last, belongs to the message after it (an append starts there).
    found = _locate([canonical(m).encode("utf-8", "surrogatepass") for m in messages], byte, start)
    if found is None:
        return Place(byte, len(messages), None, None, 0, 0)
    m, at = found
    text = canonical(messages[m])
    char = len(text.encode("utf-8", "surrogatepass")[: max(0, byte - at)].decode("utf-8", "ignore"))
    blocks = messages[m].get("content", [])
    texts = [canonical(block) for block in blocks] if isinstance(blocks, list) else []
    opening = len('{"content":[')
    # Past the blocks (the message's role differs): the last block, all of it shared.
    k, b_at = _locate(texts, char, opening) or (max(0, len(texts) - 1), opening + sum(len(t) + 1 for t in texts[:-1]))
    specs = b.plan.turns[m][1] if m < len(b.plan.turns) else ()
    k = min(k, len(specs) - 1) if specs else 0
    first = specs[k].message if specs else None
    index = record.index_of(first.id) if first is not None and record is not None and first.id in record else None
    block_text = texts[k] if k < len(texts) else ""
    return Place(byte, m, k, index, char, max(0, min(len(block_text), char - b_at)), block_text)


def _locate(parts: Sequence[Any], offset: int, start: int) -> tuple[int, int] | None:
    """(which of `parts`, laid from `start` one separator apart, holds `offset`, where it starts); None past them."""
    at = start
    for i, part in enumerate(parts):
        if offset < at + len(part):
            return i, at
        at += len(part) + 1
    return None
