"""Exact, incremental o200k_base counting of compiled requests: per-message segments, memoised.

The counted text (core.request.compile.counted_text) is cut into pieces at places that are always
boundaries of o200k's pre-tokenizer, so the tokens of the whole text are the tokens of the pieces
laid end to end. Every cut falls right before the first letter of a JSON key that follows `{"` or
`,"`: the punctuation run before it (`"},{"`, `","`, ...) is one pre-token that the greedy
` ?[^\\s\\p{L}\\p{N}]+` branch takes whole, it always ends in `"` (so no letter branch can start
on it), and nothing on either side is whitespace (so the `\\s+(?!\\S)` look-ahead never differs).
A block `{"...","type":"T"}` is cut twice: before its first key (its *body*, which depends only
on its message, its call id and the policy) and before `type` (its *glue*: `type":"T"}` and the
punctuation up to the next block, a handful of distinct strings). tests/core/test_count.py proves
the sum equals counting the whole text over random views and edits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from foldscope.core.formats.images import image_tokens
from foldscope.core.model import shared_start as _shared
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import Headed
from foldscope.core.model.unseen_text import UNSEEN_TEXT
from foldscope.core.request import tokens
from foldscope.core.request.compile import (
    IncludedRound,
    full_key,
    make_plan,
    memo_key,
    memo_keys,
    plain_key,
    short_key,
)
from foldscope.core.request.count_copy import one_replaced, places
from foldscope.core.request.count_memo import BodiesMemo
from foldscope.core.request.count_reference import fill_whole, whole_layout
from foldscope.core.request.count_splice import Splice, spliced
from foldscope.core.request.count_step import (
    Ahead,
    BodyParts,
    Laid,
    body_bytes,
    body_of,
    call_body,
    glue_of,
    images_of,
    lay_out,
    plain_body,
    shared,
    text_digest,
    text_key,
)
from foldscope.core.request.count_texts import PARALLEL_CHARS, Tokenising, is_head  # noqa: F401 - PARALLEL_CHARS: its old home
from foldscope.core.request.counting.backend import Backend
from foldscope.core.request.measurement import (  # noqa: F401 - Part and Measurement re-exported: the counter's results
    Measurement,
    Part,
    carried_top,
    kept_top,
    kept_total,
    new_part,
)
from foldscope.core.request.passages import Passages
from foldscope.core.request.plan import TEXT, TOOL_USE
from foldscope.core.request.unseen_text import unseen_tokens

if TYPE_CHECKING:
    from foldscope.core.model.policy import Policy


_ceil = math.ceil


def estimate(counted: int, scale: float) -> int:
    """The estimate: counted tokens times the scale, rounded up (rounded first so 1000 x 1.37 is 1370)."""
    x = counted * scale
    up = _ceil(x)
    # Rounding to six places moves the ceiling only where x is at most 5e-7 over a whole number; round(x, 6) writes x
    # out in decimal (about 2,700 instructions, asked for a strategy's every block), so it is left to a product within
    # 1e-6 over one (up - x is exact from x = 1 on; below, its rounding can only move 1e-6 itself, where both ways
    # agree; tests/core/request/test_count.py).
    if up - x < 0.999999:
        return up
    return _ceil(round(x, 6))


def policy_key(policy: Policy | None) -> tuple:
    """The parts of a policy that change how a message renders: the result bound and caching (its marks).
    Each block's own memo key (core.request.compile.block_key) adds what its projection depends on."""
    if policy is None:
        return (None, False)
    return (policy.tool_result_max_chars, policy.caching)


class Counter(Tokenising):
    """Counts compiled requests exactly, memoising each message's segment by identity and policy.

    Messages are immutable, so a segment's count is fixed by the message object, how it renders
    (text, tool_use or tool_result with its call id) and the policy's rendering inputs. Counting a
    view that differs from a counted one by k messages tokenises about k messages, and a view that
    shares its start with a recently measured one is planned and laid out only from where they part
    (core.request.count_step). A view that differs from a recently measured one by one result replaced with a
    copy of the same original (the clip's candidates) costs that result's block: every other block keeps
    its key, glue and part, and the running counts shift by the difference (core.request.count_copy.one_replaced). A
    view that differs from one by a few messages in its middle (an edit, another kind, a message removed or put in)
    re-plans only the runs around them and keeps every block after them (core.request.count_splice).
    """

    KEEP = 4  # recently measured views kept to lay new ones out from

    def __init__(self, threads: int | None = None, backend: Backend | None = None) -> None:
        # Each block body's tokens, by policy key, then by the block's memo key (core.request.compile.memo_key: the
        # message itself for a text block of one message, else its block_key); memo() gives them as (block_key,
        # policy key) pairs, the form a library keeps. Keyed so, a file of a million tiny prompts keeps no tuple a block.
        self._bodies: dict[tuple, dict[Any, int]] = {}
        self._other: dict[Any, int] = {}  # seeded keys of no block's shape, given back by memo() as they came
        self._glue: dict[str, int] = {}
        self._glue_by_kind: dict[tuple, int] = {}  # (tag, role, next role) -> the glue's tokens
        self._heads: dict[str, int] = {}
        self._images: dict[Any, int] = {}  # a block's image tokens by its memo key, until its body is counted
        self._texts: dict[bytes, int] = {}  # plain texts counted apart (a response's thinking), by their SHA-256
        self._recent: list[Laid] = []
        # The last head's part with the head and system it was counted for (their objects): the next layout's head is
        # that same tuple unless the system, tools or stable mark changed (count_step.lay_out), and its part the same.
        self._head_part: tuple | None = None
        self._sizes: list[int] = []  # each recent view's length, asked once when kept (a Shared's len is a Python call)
        self._serial = 0
        # One thread by default: on this 2-core machine, shared with other work, tiktoken's thread
        # pool measured slower than counting the segments one after another (docs/performance.md).
        self.threads = threads or 1
        # Characters of the new bodies this counter has had to count, for tests and benchmarks (a long body's passages
        # found in the memo included: core.request.passages keeps its own tally, Passages.found_chars).
        self.tokenised_chars = 0
        self._passages = Passages(tokens.by_passages())  # long texts' passages counted already (core.request.passages)
        # Where its counts are made: in-line, or with a child counting ahead while a trace is measured, which the
        # Measure starts and stops (core.request.counting.backend); the block bodies that child counted are in `ahead`.
        self.backend = backend if backend is not None else Backend()
        self.ahead: Ahead | None = None
        # While a trace's prefix meter runs (core.request.trace_measure.measure_trace): each unmarked body's UTF-8 length, by
        # policy key and memo key, as it is rendered to be counted, so the meter need not render the block again.
        self.lengths: dict[tuple, dict[Any, int]] | None = None
        # The tokens per character a message's unseen parts count at (core.request.unseen_text): the session's, set by
        # its Measure and trace (core.request.trace.unseen_rate); None counts a marker as its own text.
        self.unseen_rate: float | None = None

    def use_unseen_rate(self, rate: float | None) -> None:
        """Count unseen parts at `rate` tokens a character from now on. The bodies counted at another rate counted
        their unseen parts so, and are forgotten (a followed file's rate moves as its reports come)."""
        if rate == self.unseen_rate:
            return
        self._head_part = None  # its system messages' unseen parts count at the new rate
        if self.unseen_rate is not None:
            self.clear()
        self.unseen_rate = rate

    def _extra(self, spec) -> int:
        """What a block counts beyond its text: its images, and its message's unseen parts at the unseen rate."""
        n = images_of(spec)
        rate = self.unseen_rate
        m = spec.message
        if rate is not None and UNSEEN_TEXT in m.metadata:
            n += unseen_tokens(m, rate)
        return n

    def note_extra(self, key: Any, spec) -> None:
        """Note what a new block (its memo key `key`) counts beyond its text (_extra), added when its body is counted."""
        self._images[key] = self._extra(spec)

    def system_extra(self, system: Sequence[Message]) -> int:
        """What the request head's system messages count beyond their text: their unseen parts at the unseen rate."""
        rate = self.unseen_rate
        if rate is None:
            return 0
        return sum(unseen_tokens(m, rate) for m in system if UNSEEN_TEXT in m.metadata)

    def bodies_counted(self) -> int:
        """How many block bodies this counter has counted (its memo's size)."""
        return sum(len(memo) for memo in self._bodies.values())

    def is_counted(self, key: Any) -> bool:
        """Whether a block body's memo key (or a plain text's text_key) is counted already."""
        if key[0] == "text":
            return key[1] in self._texts  # _texts is keyed by the bare digest
        memo = self._bodies.get(key[1]) if len(key) == 2 else None
        return memo is not None and short_key(key[0]) in memo

    def _memo(self, pk: tuple) -> dict[Any, int]:
        """The block bodies counted under one policy key, by memo key."""
        memo = self._bodies.get(pk)
        if memo is None:
            memo = self._bodies[pk] = {}
        return memo

    def count(
        self,
        messages: Sequence[Message],
        *,
        record: FullRecord | None = None,
        policy: Policy | None = None,
        tools: list | None = None,
        first_round: IncludedRound | None = None,
    ) -> int:
        """The exact o200k_base token count of the compiled request's counted text."""
        return self.measure(messages, record=record, policy=policy, tools=tools, first_round=first_round).count

    def measure(
        self,
        messages: Sequence[Message],
        *,
        record: FullRecord | None = None,
        policy: Policy | None = None,
        tools: list | None = None,
        first_round: IncludedRound | None = None,
        marks: bool = True,
    ) -> Measurement:
        """The count and each message's part of it (`marks=False`: as compiled without cache marks)."""
        caching = policy is not None and policy.caching  # a property: asked once a request, not four times
        inputs = (id(record), record, policy_key(policy), caching if policy else None, id(tools), first_round if caching else None, marks)
        size = len(messages)
        recent, sizes = self._recent, self._sizes
        for i in range(len(recent) - 1, -1, -1):
            if sizes[i] != size:
                continue  # one_replaced's first test, asked here: nearly every request adds to the one before
            state = recent[i]
            found = one_replaced(state, messages, inputs, record, inputs[5])
            if found is not None:
                return self._replaced(state, messages, found, record, policy, first_round)
        # The recent view this one shares the longest start with (the same objects, rendered alike): the longest first,
        # of two as long the one kept first (a stable sort by length, as before).
        base, p, based = None, 0, 0  # based: base's length (a Shared's len is a Python call)
        for i in sorted(range(len(recent)), key=sizes.__getitem__, reverse=True):
            if sizes[i] <= p:
                break  # no shorter view can share more
            state = recent[i]
            n = shared(state, messages, inputs)
            if n > p:
                base, p, based = state, n, sizes[i]
        plain = plain_key(policy, first_round)
        self._serial += 1

        def keys_of(rec, specs):
            return memo_keys(specs, rec, policy, first_round, plain)

        if base is not None and p < based and p < size:  # parts from base: perhaps only a few messages differ
            splice = spliced(
                base, messages, p, inputs, self._serial, record=record, tools=tools, first_round=first_round,
                caching=caching, keys_of=keys_of,
            )  # fmt: skip
            if splice is not None:
                return self._spliced(base, splice, record, policy, first_round)
        laid = lay_out(
            messages,
            base,
            p,
            inputs,
            self._serial,
            record=record,
            policy=policy,
            tools=tools,
            first_round=first_round,
            marks=marks,
            keys_of=keys_of,
        )
        self._count_laid(laid, record, policy, first_round)
        if base is not None and laid.since == base.serial:
            if base.top is not None:  # carried_top's answer otherwise: None, worked out when asked
                laid.top = carried_top(base, laid.kept)
            if p == based == size:
                laid.refs = base.refs  # the same messages: the same references (core.request.count_splice)
        kept = laid.kept + 1 if base is not None and base.head == laid.head else 0
        return self._remembered(laid, kept, size)

    def _remembered(self, laid: Laid, kept: int, size: int | None = None) -> Measurement:
        """Keep `laid` among the recent layouts and measure it: the head (system and tools) plus its blocks."""
        recent, sizes = self._recent, self._sizes
        if len(recent) >= self.KEEP:  # the oldest let go when KEEP are kept; each view's length kept beside it
            del recent[0], sizes[0]
        recent.append(laid)
        sizes.append(len(laid.messages) if size is None else size)
        last = self._head_part
        if last is not None and last[0] is laid.head and last[1] is laid.system:
            head = last[2]  # the head laid out from the last one's (nearly every request): its part as it was
        else:
            head_key, _, head_glue = laid.head
            head_owner = laid.system[0] if laid.system else None
            head = new_part(head_owner, "system", self._lookup(head_key, head_glue) + self.system_extra(laid.system))
            self._head_part = (laid.head, laid.system, head)
        return Measurement(head.tokens + laid.total, Headed(head, laid.parts), laid.serial, laid.since, kept, laid)

    def _replaced(self, base: Laid, messages: Sequence[Message], found: tuple, record, policy, first_round) -> Measurement:
        """A view that differs from `base` by one result's copy (core.request.count_copy.one_replaced): every block but
        the copy's keeps its key, glue and part; the copy's block is counted, and the running counts shift."""
        i, si, fi, spec = found
        key = memo_key(spec, record, policy, first_round)
        bodies = self._memo(policy_key(policy))
        if key not in bodies:
            self.note_extra(key, spec)
            self._tokenise([key], [body_of(spec, record, policy, first_round)], bodies)
        old_part = base.parts[fi]
        glue_tokens = old_part.tokens - bodies[base.keys[fi]]
        part = Part(spec.message, spec.message.kind, bodies[key] + glue_tokens)
        delta = part.tokens - old_part.tokens
        self._serial += 1
        old = base.messages[i]
        view = base.messages.replaced(i, messages[i])
        seq = base.seq.replaced(si, view[i])
        flat = base.flat.replaced(fi, spec)
        keys = base.keys.replaced(fi, key)
        parts = base.parts.replaced(fi, part)
        c = fi >> _shared.SHIFT  # the whole chunks from fi's on hold it in their totals
        cum = base.cum.grown(c, [t + delta for t in base.cum.since(c)]) if delta else base.cum
        where = dict(places(base))
        del where[id(old)]
        where[id(view[i])] = (si, fi)
        # Every other field as base's: the same system, runs, roles, marks and head.
        laid = replace(base, serial=self._serial, messages=view, seq=seq, flat=flat, keys=keys, parts=parts, cum=cum, kept=fi)
        laid.since, laid.where, laid.total, laid.kept_tokens, laid.refs = base.serial, where, base.total + delta, None, None
        laid.top = carried_top(base, fi)
        return self._remembered(laid, fi + 1)

    def _spliced(self, base: Laid, found: Splice, record, policy, first_round) -> Measurement:
        """A view laid out from `base` by a splice (core.request.count_splice): the region's blocks counted (and the
        block before it, whose glue may change), then base's parts from the right cut on, the running counts shifted."""
        laid = found.laid
        self._count_laid(laid, record, policy, first_round, found.count)
        found.close()
        laid.top = carried_top(base, laid.kept)
        return self._remembered(laid, laid.kept + 1)

    def _count_laid(self, laid: Laid, record, policy, first_round, n: int | None = None) -> None:
        """Count the blocks from laid.kept on (`n` of them, else all): tokenise new bodies, then fill parts and running counts."""
        start = laid.kept
        fresh = laid.fresh
        if fresh is not None and n is None:  # the lists lay_out made them from: not read back out of the Shareds
            flat, keys, roles = fresh
            laid.fresh = None
        else:
            # The blocks to count as plain lists, indexed from `start`: reading a Shared item by item costs a call each.
            # The role of the block after the n closes the last one's glue.
            flat, keys = list(islice(laid.flat.since(start), n)), list(islice(laid.keys.since(start), n))
            roles = list(islice(laid.roles.since(start), None if n is None else n + 1))
        bodies = self._memo(laid.inputs[2])
        new_keys, texts, ready = self._new_bodies(laid, flat, keys, bodies, record, policy, first_round)
        self._tokenise(new_keys, texts, bodies)
        for key, made in ready.items():
            bodies[key] = made + self._images.pop(key, 0)
        self._fill_parts(laid, flat, keys, roles, bodies)

    def _new_bodies(self, laid: Laid, flat: list, keys: list, bodies: dict, record, policy, first_round) -> tuple[list, list, dict]:
        """The memo keys and texts to tokenise for laid's blocks from laid.kept on (its head's too), in two lists, and the
        bodies counted ahead on the other core (core.request.counting.ahead) by memo key; each new block's images noted
        (_images)."""
        new: dict[Any, str] = {}
        ready: dict[Any, int] = {}
        ahead = self.ahead
        head_key, head_text, _ = laid.head
        pk = laid.inputs[2]
        if head_key[1] not in self._heads:
            new[head_key] = head_text
        lengths = self.lengths.setdefault(pk, {}) if self.lengths is not None else None
        rate = self.unseen_rate
        # A cold count's memo is empty: every block is new, and none of their keys is hashed here to be told so.
        todo = [(key, spec) for key, spec in zip(keys, flat) if key not in bodies] if bodies else list(zip(keys, flat))
        if ahead is None and lengths is None and rate is None:
            # A cold count's thousand bodies (bench_count): what the loop below does for them, in one pass with nothing
            # else to ask, into lists (a key twice is rendered twice). Images are on few messages and never on a
            # call's block (images_of).
            images = self._images
            todo_keys = list(new)
            texts: list = list(new.values())
            for key, spec in todo:
                m, tag, mark = spec.message, spec.tag, spec.mark
                if tag != TOOL_USE:
                    rendered = plain_body(m) if tag == TEXT and mark is None else body_of(spec, record, policy, first_round)
                    if "images" in m.metadata and (n := image_tokens(m)):
                        images[key] = n
                else:  # body_of's answer for a call, without its call; no images on a call's block
                    cid = spec.call_id if mark is None else None
                    rendered = call_body(m.content, cid) if type(cid) is str else body_of(spec, record, policy, first_round)
                if type(rendered) is BodyParts:  # a huge text's body in parts (plain_body)
                    ready[key] = self._parts_count(rendered)[0]
                else:
                    todo_keys.append(key)
                    texts.append(rendered)
            return todo_keys, texts, ready
        for key, spec in todo:
            if key in new or key in ready:
                continue
            plain = ahead is None and spec.tag == TEXT and spec.mark is None
            if plain:
                # The commonest block, one message's text (a million on a file of tiny prompts): images_of's answer
                # for it without its call.
                m = spec.message
                pictured = image_tokens(m) if "images" in m.metadata else 0
                if rate is not None and UNSEEN_TEXT in m.metadata:
                    pictured += unseen_tokens(m, rate)
            else:
                pictured = self._extra(spec)
            if pictured:  # _tokenise adds them (and unseen parts) to the body's count (none, nearly always)
                self._images[key] = pictured
            body: str | BodyParts
            if plain:
                body = plain_body(spec.message)  # body_of's answer for it, without its call (or in parts)
            elif ahead is not None:
                whole = (full_key(key), pk)  # as counting ahead keys it
                made = ahead.take(whole)
                if made is not None:  # counted ahead, on the other core (core.request.counting.ahead)
                    ready[key] = made
                    continue
                body = ahead.body(whole) or (
                    plain_body(spec.message) if spec.tag == TEXT and spec.mark is None else body_of(spec, record, policy, first_round)
                )
            else:
                body = body_of(spec, record, policy, first_round)
            if isinstance(body, BodyParts):  # a huge text's body in parts, never whole (count_step.BodyParts)
                ready[key], size = self._parts_count(body, body_bytes if lengths is not None else None)
                if lengths is not None and size is not None:
                    lengths[key] = size
                continue
            new[key] = body
            if lengths is not None and spec.mark is None:
                size = body_bytes(body)
                if size is not None:
                    lengths[key] = size
        return list(new), list(new.values()), ready

    def _fill_parts(self, laid: Laid, flat: list, keys: list, roles: list, bodies: dict) -> None:
        """laid's parts from laid.kept on (each block's body and glue tokens), its running counts and its total."""
        start = laid.kept
        parts: list[Part] = []
        cum: list[int] = []
        total = laid.kept_tokens if laid.kept_tokens is not None else kept_total(laid)  # kept_total's first answer, in-line
        # A chunk's total is kept when block `edge` (its last) is counted (Laid.cum: one a chunk, not one a block).
        edge = ((start >> _shared.SHIFT) + 1 << _shared.SHIFT) - start - 1
        glues = self._glue
        by_kind = self._glue_by_kind
        nexts = roles[1:]
        nexts.append(None)
        for i, (spec, key, role, next_role) in enumerate(zip(flat, keys, roles, nexts)):
            kind = (spec.tag, role, next_role)
            g = by_kind.get(kind)
            if g is None:
                glue = glue_of(spec, role, next_role)
                g = glues.get(glue)
                if g is None:
                    g = glues[glue] = tokens.count_short(glue)
                by_kind[kind] = g
            t = bodies[key] + g
            total += t
            message = spec.message
            parts.append(Part(message, message.kind, t))
            if i == edge:
                cum.append(total)
                edge += _shared.CHUNK
        laid.parts = laid.parts.grown(start, parts)
        laid.cum = laid.cum.grown(start >> _shared.SHIFT, cum)
        laid.total = total

    def body_tokens(self, measurement: Measurement, start: int = 0) -> list[int]:
        """Each block's own tokens in a measurement this counter laid out (its part less the punctuation after it),
        from block `start` on."""
        laid = measurement.laid
        if laid is None:
            raise ValueError("body_tokens needs a measurement from Counter.measure")
        bodies = self._memo(laid.inputs[2])
        return [bodies[key] for key in _shared.since(laid.keys, start)]

    def measure_whole(
        self,
        messages: Sequence[Message],
        *,
        record: FullRecord | None = None,
        policy: Policy | None = None,
        tools: list | None = None,
        first_round: IncludedRound | None = None,
        marks: bool = True,
    ) -> Measurement:
        """The same measurement from the whole plan (core.request.compile.make_plan), never extending: the reference."""
        plan = make_plan(messages, record=record, policy=policy, tools=tools, first_round=first_round, marks=marks)
        bodies = self._memo(policy_key(policy))
        layout = whole_layout(self, plan, bodies, record, policy, tools, first_round)
        fill_whole(self, layout, bodies)
        head_owner = plan.system[0] if plan.system else None
        parts: list[Part] = []
        for key, _, glue, message in layout:
            n = self._lookup(key, glue, bodies)
            parts.append(
                Part(message, message.kind, n) if message is not None else Part(head_owner, "system", n + self.system_extra(plan.system))
            )
        return Measurement(sum(p.tokens for p in parts), tuple(parts))

    def pieces(
        self,
        messages: Sequence[Message],
        *,
        record: FullRecord | None = None,
        policy: Policy | None = None,
        tools: list | None = None,
        first_round: IncludedRound | None = None,
    ) -> list[str]:
        """The counted text cut into the pieces this counter counts separately (for tests)."""
        plan = make_plan(messages, record=record, policy=policy, tools=tools, first_round=first_round)
        out: list[str] = []
        bodies = self._memo(policy_key(policy))
        for _, body, glue, _ in whole_layout(self, plan, bodies, record, policy, tools, first_round, every_body=True):
            out.extend(p for p in (body, glue) if p)
        return out

    def _lookup(self, key, glue: str, bodies: dict[Any, int] | None = None) -> int:
        """A head's tokens, or a block body's from `bodies` (the memo of its policy key), with its glue's."""
        n = self._heads[key[1]] if bodies is None or is_head(key) else bodies[key]
        if glue:
            g = self._glue.get(glue)
            if g is None:
                g = self._glue[glue] = tokens.count_short(glue)
            n += g
        return n

    def count_text(self, text: str) -> int:
        """tokens.count_text, memoised by the text's SHA-256 (kept in the memo, so a reopened session counts none again)."""
        # A thinking text sent ahead was hashed there (its key): taken, not hashed again.
        key = (self.ahead.digest(text) if self.ahead is not None else None) or text_digest(text)
        n = self._texts.get(key)
        if n is None and self.ahead is not None:
            n = self.ahead.take(text_key(key))
            if n is not None:
                self._texts[key] = n
        if n is None:
            self.tokenised_chars += len(text)
            n = self._texts[key] = tokens.count_text(text)
        return n

    def count_ahead(self, texts: Sequence[str]) -> None:
        """`texts` counted by the child counting ahead for this counter while its measure runs (CountsAhead.counts_of),
        kept as count_text keeps them, so count_text finds them later and this process builds no encoder for them
        alone (the report's compaction summaries); none where no such child answers (count_text counts them then)."""
        counts_of = getattr(self.ahead, "counts_of", None)
        if counts_of is None:
            return
        texts = list(dict.fromkeys(texts))
        for text, n in zip(texts, counts_of(texts)):
            if n is not None:
                self._texts.setdefault(text_digest(text), n)

    def memo(self) -> tuple[Mapping, dict, dict, dict]:
        """What this counter has counted: each block body's tokens by (block_key, policy key) (BodiesMemo), each
        glue's and each head's by its text, each plain text's by its SHA-256 (copies). A library keeps them
        (core.store.snapshot) so a reopened session is not counted again."""
        bodies = BodiesMemo({pk: dict(memo) for pk, memo in self._bodies.items()}, dict(self._other))
        return bodies, dict(self._glue), dict(self._heads), dict(self._texts)

    def seed(self, bodies: dict, glue: dict, heads: dict, texts: dict | None = None) -> None:
        """Take counts made before (memo's parts) as if counted here; what is already counted is kept.
        Only sound for keys whose messages render as those counted did, under the same tokenizer and code."""
        for key, count in bodies.items():
            if type(key) is tuple and len(key) == 2 and type(key[0]) is tuple and key[0] and type(key[1]) is tuple:
                self._memo(key[1]).setdefault(short_key(key[0]), count)
            else:
                self._other.setdefault(key, count)
        for mine, given in ((self._glue, glue), (self._heads, heads), (self._texts, texts or {})):
            for key, count in given.items():
                mine.setdefault(key, count)

    def clear(self) -> None:
        self._head_part = None
        self._recent.clear()
        self._sizes.clear()
        self._bodies.clear()
        self._other.clear()
        self._glue.clear()
        self._glue_by_kind.clear()
        self._heads.clear()
        self._images.clear()


def count_text(text: str) -> int:
    """The whole-text count the pieces must add up to."""
    return tokens.count_text(text)
