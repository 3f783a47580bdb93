"""The counter's incremental plan: a view that shares its start with a measured one re-plans only from where they part."""

# Changing a view from some message on (appending, folding or clipping late messages) leaves every run that ends
# before the last assistant run starting ahead of that message final (a user run's results pair with the run
# before it, an assistant run's calls with the run after it). So `lay_out` keeps those blocks, their memo keys,
# parts and running counts from the state it extends, re-plans the rest with core.request.plan.plan_runs, and
# places the cache marks over the whole from the anchors it carries. Where that would not be exact (a new system
# message, a pairing through a look-up that reads earlier runs, a mark moving inside the kept blocks, a copy
# whose original is neither in the re-planned part nor in the record) it plans the view whole. A view that
# replaces one result of a measured view with a copy of the same original (the clip's candidates) is not re-
# planned at all when that provably changes only the result's own block (core.request.count_copy.one_replaced): the
# counter swaps that block's key and part and shifts the running counts. tests/core/test_count.py proves the parts
# equal the whole plan's over random growing views and over chains of single-result replacements, under every policy.

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # the C string encoder json.dumps uses (ensure_ascii=False)
from operator import attrgetter
from typing import Any, Protocol

import msgspec

from foldscope.core.formats.images import image_tokens
from foldscope.core.model import shared_start as _shared
from foldscope.core.model.canonical import canonical_bytes
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import Shared
from foldscope.core.request import long_pieces
from foldscope.core.request.compile import IncludedRound, Plan, canonical, render_block, request_head, result_text, value_text
from foldscope.core.request.plan import (
    ROLE,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    BlockSpec,
    anchors,
    flat_marks,
    instruction_text,
    plan_flat,
)


@dataclass(slots=True)
class Laid:
    """One measured view as the counter keeps it, to extend: its blocks, their keys, parts and running counts."""

    serial: int
    inputs: tuple  # what rendering depends on besides the view, compared by identity or value
    # The per-block lists are Shared (core.model.shared_start): a layout extended from another shares its kept start.
    messages: Shared[Message]
    seq: Shared[Message]  # the non-system messages, in order
    system: tuple[Message, ...]
    aruns: Shared[tuple[int, int]]  # where re-planning may start: (seq position, flat position of its block)
    flat: Shared[BlockSpec]
    roles: Shared[str]
    keys: Shared  # each block's memo key
    # Each block's Part (head excluded). Until the counter fills them (core.request.count.Counter._fill_parts) only the
    # first `kept` are this view's: a layout extended from another holds that one's parts and running counts as they
    # are, and the counter grows both once from `kept`.
    parts: Shared
    # The running tokens (glue included) at the end of each whole chunk of blocks (core.model.shared_start.CHUNK): cum[c]
    # is the tokens of blocks 0 .. (c + 1) * CHUNK - 1. One a chunk, not one a block: a million running counts kept
    # as ints cost 40 MB on a file of tiny prompts; a count within a chunk adds that chunk's parts (kept_total).
    cum: Shared[int]
    notes: list[int]
    ends: list[int]
    members: list[int]
    marked: dict[int, tuple[str, str]]
    head: tuple  # (memo key, head text, head glue)
    stable: str | None
    kept: int  # leading blocks taken unchanged from the state this one extends
    since: int  # that state's serial (-1: planned whole)
    irregular: bool = False  # a pairing that a shorter view could decide otherwise (core.request.plan.plan_runs)
    # The three largest kept parts as (-tokens, index, part); None until asked for (Measurement.largest), since
    # replay never asks and working them out after a fold walks every kept part.
    top: list | None = None
    where: dict | None = field(default=None, repr=False)  # id(result) -> (seq position, flat position): count_copy.places
    total: int = 0  # the tokens of every block with its glue (the head's apart); the counter sets it
    # The tokens of the `kept` blocks, when lay_out had them cheaper than a walk over the kept blocks of their last
    # chunk (core.request.count.kept_total): the state's total less the few blocks it did not keep.
    kept_tokens: int | None = None
    # The view's references by id (core.request.count_splice.Refs), counted when a splice is first tried from it;
    # False: an id is in it twice, so none is.
    refs: Any = field(default=None, repr=False)
    # The blocks, keys and roles from `kept` on as lay_out made them, as lists, until the counter counts them
    # (core.request.count.Counter._count_laid), which read them back out of the Shareds otherwise.
    fresh: tuple | None = field(default=None, repr=False)


def type_glue(spec: BlockSpec) -> str:
    """The end of a block's counted text that its body leaves out: its type."""
    block_type = "tool_use" if spec.tag == "tool_use" else "tool_result" if spec.tag == "tool_result" else "text"
    return f'type":"{block_type}"}}'


def body_of(spec: BlockSpec, record: FullRecord | None, policy: Any, first_round: IncludedRound | None) -> str:
    """A block's body: its counted text from after the opening `{"` to before its type (type_glue), the
    segment the counter memoises by the block's key (core.request.compile.block_key)."""
    tag = spec.tag
    if spec.mark is None:
        # The commonest blocks, written key by key as canonical() writes their dicts (sorted keys, each value's own
        # canonical text, which is the same inside the block or alone): no dict, no walk over it, no slicing.
        if tag == TEXT:
            return text_body(spec.message)
        if tag == TOOL_RESULT and type(spec.call_id) is str:
            if policy is None or (policy.tool_result_max_chars is None and first_round is None):
                return result_body(spec.message, spec.call_id)
            return result_body(spec.message, spec.call_id, result_text(spec.message, record, policy, first_round))
        if tag == TOOL_USE and type(spec.call_id) is str:
            return call_body(spec.message.content, spec.call_id)
    block = render_block(spec, record, policy, first_round)
    if len(block) == 2 and block.get("type") == "text" and type(block.get("text")) is str:
        # The commonest block, a text and its type: the JSON of the one string, as canonical() writes it.
        return 'text":' + json_string(block["text"]) + ',"'
    text = canonical(block)
    glue = type_glue(spec)
    if not (text.startswith('{"') and text.endswith("," + '"' + glue)):
        raise AssertionError(f"block does not end with its type: {text[:80]}")
    return text[2 : len(text) - len(glue)]


def result_body(m: Message, call_id: str, text: str | None = None) -> str:
    """An unmarked tool_result block's body (body_of's): its output as stored (no result bound, the commonest result),
    else `text`, the output as the bound projects it (compile.result_text), written as canonical() writes the block."""
    error = ',"is_error":true' if m.metadata.get("is_error") is True else ""
    if text is None:
        output = m.content.get("output", "")  # no bound: result_text's answer without its three calls
        if type(output) is str:
            text = output
        else:
            data = canonical_bytes(output)
            if data is not None:  # its JSON text escaped as a JSON string: see quoted_json
                return f'content":"{quoted_json(data)}"{error},"tool_use_id":{json_string(call_id)},"'
            text = value_text(output, m)
    return f'content":{json_string(text)}{error},"tool_use_id":{json_string(call_id)},"'


_LEAVES = frozenset((str, bool, type(None)))
_STR = frozenset((str,))
_encode_sorted = msgspec.json.Encoder(order="sorted").encode  # canonical_json's own encoder (core.model.canonical)


def call_body(c: Mapping[str, Any], call_id: str) -> str:
    """A tool_use block's body (its message's content `c`): the block less its type as one canonical text, its keys
    sorting before `type`. Arguments of strings, booleans and nulls (most calls') are written by canonical_json's
    encoder straight, one call where writing the body key by key made three (docs/performance.md)."""
    args = c.get("arguments", {})
    name = c.get("function", "")
    if type(args) is dict and type(name) is str and _STR.issuperset(map(type, args)) and _LEAVES.issuperset(map(type, args.values())):
        try:  # what canonical_json does with such a value, without its walk over it
            return _encode_sorted({"id": call_id, "input": args, "name": name}).decode()[2:-1] + ',"'
        except UnicodeEncodeError:  # a lone surrogate: json's way, as canonical_json goes
            pass
    data = dict(args) if isinstance(args, Mapping) else {"arguments": args}
    return canonical({"id": call_id, "input": data, "name": str(name)})[2:-1] + ',"'


def text_body(m: Message) -> str:
    """The body of the commonest block, one message's text alone and unmarked: render_block's text as canonical()
    writes it, without the dict."""
    # joined, not added: `a + b + c` holds a second copy of a huge message's JSON while it adds the third part
    text = instruction_text(m) if m.kind == "instruction" else m.text
    if len(text) >= _HUGE and text.isascii() and not _escapes(text):  # its JSON is itself in quotes
        return "".join(('text":"', text, '","'))  # no JSON copy beside the text and the body (and msgspec's bytes)
    return "".join(('text":', json_string(text), ',"'))


def plain_body(m: Message) -> str | BodyParts:
    """text_body's answer; for a huge text, the body in parts whose counts add up to its count (BodyParts), never whole:
    made whole, the text, its JSON and the body joined from it were held at once (3.5 times a 50 MB message of code,
    with msgspec's bytes; twice a message of prose, whose JSON is itself in quotes)."""
    text = instruction_text(m) if m.kind == "instruction" else m.text
    if len(text) >= _HUGE:
        return body_parts(text, _escapes(text) if text.isascii() else _escapes_other(text))
    return "".join(('text":', json_string(text), ',"'))


class BodyParts:
    """The body of a text block holding `text` (text_body's), as parts cut where the text is cut between two pieces
    (long_pieces.cuts), each made as it is read and its text escaped apart (JSON escapes a character at a time; an
    ASCII text with nothing to escape, `escaped` False, is its own JSON): read once, a part is dropped once counted, so
    the body is never whole beside the text. Each such bound is one of the body's too: it stands between two characters
    only (a space, a digit or punctuation after printable ASCII, a letter or an ideograph), and escaping keeps the
    character before it printable ASCII if it was and its own class if a letter, and starts the one after it with
    itself or a backslash (punctuation): so each part's count is the body's count there, and their sum is the body's."""

    __slots__ = ("text", "escaped", "at")

    def __init__(self, text: str, escaped: bool = True) -> None:
        self.text, self.escaped = text, escaped
        self.at = long_pieces.cuts(text, long_pieces.TEXT_PART)

    def __len__(self) -> int:
        return len(self.at) - 1

    def unjoined(self) -> list[str] | None:
        """A body of one part (one piece, nothing escaped: a run of letters or ideographs) as its opening, its text and
        its close, for a count that reads them unjoined (core.request.long_parts.count); None for any other body."""
        if len(self.at) != 2 or self.escaped:
            return None
        return ['text":"', self.text, '","']

    def __iter__(self) -> Iterator[str]:
        text, at, last = self.text, self.at, len(self.at) - 2
        for k in range(last + 1):
            part = text[at[k] : at[k + 1]]
            if self.escaped:
                part = json_string(part)[1:-1]  # as json_string writes it, unquoted
            if k == 0 or k == last:  # joined in one go: a body of one piece's one part is the whole message
                part = "".join(('text":"' if k == 0 else "", part, '","' if k == last else ""))
            yield part


def body_parts(text: str, escaped: bool = True) -> BodyParts:
    """The body of a text block holding `text`, in parts (BodyParts); `escaped` False for an ASCII text JSON escapes
    nothing of (its parts are its own slices)."""
    return BodyParts(text, escaped)


_HUGE = 1 << 20
_ESCAPED = bytes(range(0x20)) + b'"\\'  # what JSON (msgspec, json) writes escaped in an ASCII text
_ESCAPED_TEXT = re.compile('[\x00-\x1f"\\\\]')  # and in any other (json's encode_basestring: nothing else)


def _escapes(text: str) -> bool:
    """Whether JSON escapes a character of the ASCII `text`: its bytes a megabyte at a time, each without those
    characters as long as itself (a fourth of a regular expression's search for them: 0.13 s of 50 MB)."""
    for at in range(0, len(text), _HUGE):
        data = text[at : at + _HUGE].encode("ascii")
        if len(data.translate(None, _ESCAPED)) != len(data):
            return True
    return False


def _escapes_other(text: str) -> bool:
    """_escapes for a text that is not ASCII: a printable one (no control character) only where it holds a quote or a
    backslash, found in 0.6 of the regular expression's time (20 MB of CJK sentences; docs/performance.md, huge23)."""
    return ('"' in text or "\\" in text) if text.isprintable() else _ESCAPED_TEXT.search(text) is not None


_encode = msgspec.json.Encoder().encode


def quoted_json(data: bytes) -> str:
    """The inside of json_string's text for the JSON text whose UTF-8 is `data` (a result's output written by
    canonical_bytes): such a text holds no control character (JSON writes them escaped), so a JSON string of it
    escapes its backslashes and quotes only, as msgspec and json's encoder both do. Two replaces on the bytes cost
    about half a second encode of the text (docs/performance.md, counter7)."""
    return data.replace(b"\\", b"\\\\").replace(b'"', b'\\"').decode()


def json_string(text: str) -> str:
    """A string's JSON text as canonical() writes it inside a block: msgspec's for an ASCII text (the same text,
    several times faster than json's encode_basestring on long texts), json's for any other."""
    if text.isascii():
        return _encode(text).decode()
    # msgspec reads a non-ASCII str through the UTF-8 copy CPython then keeps inside the str for its life: here the
    # session's own texts, so each counted result held its text twice (15.7 MB at 50,000 messages repeating nothing,
    # docs/performance.md). json's C encoder writes the same text without asking for one, as fast on such texts, and
    # writes a lone surrogate, which msgspec refuses.
    return encode_basestring(text)


def body_bytes(text: str) -> int | None:
    """A body's length in UTF-8 bytes, as the prefix meter measures its block (core.request.prefix); None for a text
    UTF-8 cannot hold (a lone surrogate), which the meter renders itself and refuses there."""
    if text.isascii():
        return len(text)
    try:  # a megabyte of characters at a time: a huge text's UTF-8 (3 bytes an ideograph) made whole was 1.5 times its str
        return sum(len(text[at : at + _HUGE].encode("utf-8")) for at in range(0, len(text), _HUGE))
    except UnicodeEncodeError:
        return None


def text_key(digest: bytes) -> tuple:
    """The key a plain text counted apart (Counter.count_text) goes by among block bodies' keys: its SHA-256."""
    return ("text", digest)


class Ahead(Protocol):
    """Counts made ahead of the counter's need (core.request.counting.ahead.CountsAhead), by body key or text_key."""

    def take(self, key: Any) -> int | None: ...

    def body(self, key: Any) -> str | None: ...

    def digest(self, text: str) -> bytes | None: ...


def glue_of(spec: BlockSpec, role: str, next_role: str | None) -> str:
    """The counted punctuation after a block: its type, and what closes or continues its turn."""
    glue = type_glue(spec)
    if next_role == role:
        return glue + ',{"'
    if next_role is not None:
        return glue + f'],"role":"{role}"}},{{"content":[{{"'
    return glue + f'],"role":"{role}"}}]}}'


def shared(base: Laid, messages: Sequence[Message], inputs: tuple) -> int:
    """How many leading messages the view shares with a measured one (the same objects); -1 if rendered otherwise."""
    if base.inputs != inputs:
        return -1
    return common_start(base.messages, messages)


_kind_of = attrgetter("kind")
_HEAD_GLUE = ('messages":[' + "]}", 'messages":[' + '{"content":[{"')  # a head's glue: no block, then some
_tokens_of = attrgetter("tokens")


def start_of(base: Laid, p: int) -> tuple[int, int, int] | None:
    """Where to re-plan a view sharing p leading messages with `base`: (q, seq position, flat position) of
    the last place to start (core.request.plan._laid_flat) before the shared part ends, where q
    is the shared part's length in seq; None when a system message is not in the shared part."""
    # The tail read from p (a Shared's since starts at p's chunk; islice would walk the p messages before it, for
    # every request of a trace), scanned in C: a step back to an early request scans a long tail, an append none.
    messages = base.messages
    if p < len(messages) and "system" in map(_kind_of, _shared.since(messages, p)):
        return None
    q = len(base.seq) - (len(base.messages) - p)
    i = base.aruns.bisect_left((q,)) - 1
    return (q, *base.aruns[i]) if i >= 0 else (q, 0, 0)


def closed_run(base: Laid, q: int, cut: int, first: Message | None) -> int | None:
    """The flat position of seq position q when re-planning may start there rather than at `cut` (start_of's):
    the shared part ends a user run at q and the view goes on with an assistant message (`first`); else None.

    The runs before q are then final. A run's blocks depend on its own messages, on which of its calls the next
    run's results answer (an assistant run) or which of its results answer the run before's calls (a user run),
    and on the originals of its copies. Here the last run kept is a user run closed by the new assistant run, and
    the run before it is the same in both views: the pairing between them stands. A new result pairs only with
    a call of the run right before its own, which is new too: one naming a kept call is left unpaired by both
    plans, and one paired through a call naming it (`action_response_id`) is irregular, for which lay_out plans
    the view whole as it does from start_of's place. Only the block before q changes, its glue (and while caching
    its mark), and the counter lays that one again. Without this each of a trace's requests re-planned the request
    before's last runs as well as its own: on a file of tiny prompts between rare answers, a thousand blocks a
    request (docs/performance.md)."""
    if q <= cut or first is None or ROLE[first.kind] != "assistant" or ROLE[base.seq[q - 1].kind] != "user":
        return None
    if q == len(base.seq):
        k = len(base.flat)
    else:  # base goes on past q: its assistant run starting there is listed among the places to start
        i = base.aruns.bisect_left((q,))
        if i == len(base.aruns) or base.aruns[i][0] != q:
            return None
        k = base.aruns[i][1]
    return k


def lay_out(
    messages: Sequence[Message],
    base: Laid | None,
    p: int,
    inputs: tuple,
    serial: int,
    *,
    record: FullRecord | None,
    policy: Any,
    tools: list | None,
    first_round: IncludedRound | None,
    marks: bool,
    keys_of: Callable[[Any, Iterable[BlockSpec]], list],
) -> Laid:
    """The view's blocks and keys, re-planned from where it parts from `base` (which shares its first `p` messages) when
    that is exact, else whole. Parts and counts are left for the counter to fill from index `kept` on (`parts`/`cum`
    hold the kept ones)."""
    caching = bool(inputs[3])  # policy.caching, as Counter.measure put it among the inputs (a property, asked once)
    ext = _extension(base, p, messages, record) if base is not None and not base.irregular else None
    new: list[Message]
    appended = False  # the view adds to base's and is re-planned from base's end (_extension's first case)
    if ext is None:
        base, new = None, []
        system = tuple(m for m in messages if m.kind == "system")
        tail = [m for m in messages if m.kind != "system"]
        seq = messages if not system and type(messages) is Shared else Shared(tail)  # a view of no system message is its seq
        cut, k = 0, 0
        by_id = {m.id: m for m in messages}
    else:
        assert base is not None  # an extension is found only from a base
        system = base.system
        seq, cut, k, by_id, tail, new = ext
        appended = tail is new
    tail_flat, tail_roles, new_aruns, irregular = plan_flat(tail, by_id, record, cut, k)
    if irregular and base is not None and cut > 0:
        return _whole(messages, inputs, serial, record, policy, tools, first_round, marks, keys_of)
    placed = None
    if caching and marks:
        placed = _placed_marks(base, tail_flat, k, first_round, any(m.text for m in system) or bool(tools))
        if placed is None:
            return _whole(messages, inputs, serial, record, policy, tools, first_round, marks, keys_of)
        tail_flat = placed[-1]
    flat = base.flat.grown(k, tail_flat) if base is not None else Shared(tail_flat)
    if placed is not None and placed[5] is not None:
        flat = flat.replaced(*placed[5])
    stable = placed[3] if placed is not None else None
    head_glue = _HEAD_GLUE[k > 0 or bool(tail_flat)]  # whether the view has a block (flat's length is k + the tail's)
    if base is not None and base.stable == stable:
        # the same system messages, tools (in `inputs`) and stable mark: the same head, not rendered (nor its tuple)
        head_t = base.head if base.head[2] == head_glue else (base.head[0], base.head[1], head_glue)
    else:
        head = request_head(Plan(system, (), caching, stable), tools)
        head_t = (("head", head), head, head_glue)
    # The block before the re-planned ones keeps its key but may change its glue: it is counted again.
    kept = max(k - 1, 0) if base is not None else 0
    fresh_flat = list(flat.since(kept))
    fresh_keys = keys_of(record, fresh_flat)
    keys = base.keys.grown(kept, fresh_keys) if base is not None else Shared(fresh_keys)
    if isinstance(messages, Shared):
        view = messages  # immutable: kept as it is
    elif base is not None:
        view = base.messages.grown(p, new)  # base shares the first p (the same objects)
    else:
        view = Shared(messages)
    if base is not None:
        at = len(base.aruns) if appended else base.aruns.bisect_left((cut,))  # appended: past every run base lists
        aruns, roles = base.aruns.grown(at, new_aruns), base.roles.grown(k, tail_roles)
        # base's parts and running counts as they are: the counter grows them once from `kept` (Counter._fill_parts)
        parts, cum, since, kept_tokens = base.parts, base.cum, base.serial, None
        if len(base.parts) - kept < (kept & _shared.MASK):
            # Fewer blocks left behind than kept in the last chunk (a request that adds to the one before): subtract those.
            kept_tokens = base.total - sum(map(_tokens_of, base.parts.since(kept)))
    else:
        aruns, roles, parts, cum, since, kept_tokens = Shared(new_aruns), Shared(tail_roles), Shared(), Shared(), -1, None
    notes, ends, members, _, marked, _, _ = placed if placed is not None else ([], [], [], None, {}, None, None)
    return Laid(
        serial, inputs, view, seq, system, aruns, flat, roles, keys, parts, cum, notes, ends, members, marked, head_t, stable, kept, since,
        irregular, kept_tokens=kept_tokens, fresh=(fresh_flat, fresh_keys, list(roles.since(kept))),
    )  # fmt: skip


def _extension(
    base: Laid, p: int, messages: Sequence[Message], record: FullRecord | None
) -> tuple[Shared[Message], int, int, dict, list[Message], list[Message]] | None:
    """Where a view sharing its first p messages with `base` is re-planned from: (its non-system messages, the seq
    and flat positions to re-plan from, the messages its plan may look up by id, the messages to plan, the view's
    messages past p); None when it must be planned whole (a system message among the new or dropped ones, a copy
    whose original is neither among those looked up nor in the record)."""
    if p == len(base.messages):  # nearly every request of a trace adds to the one before
        new = list(_shared.since(messages, p))
        kinds = list(map(_kind_of, new))
        if "system" in kinds:
            return None
        q = len(base.seq)
        if kinds and q and ROLE[kinds[0]] == "assistant" and ROLE[base.seq[q - 1].kind] == "user":
            # closed_run's case with nothing dropped: the new messages are the whole tail, re-planned from base's end
            # (start_of's place and the look-ups of base's last runs are not needed: a message of the tail is looked
            # up by its id only when a later one does not share it, unless it is a copy, which goes the long way).
            for m in new:
                if "clipped_from" in m.metadata:
                    break
            else:
                # a view of no system message is its own seq (lay_out keeps it so): no second list grown
                seq = messages if base.seq is base.messages and type(messages) is Shared else base.seq.grown(q, new)
                return seq, q, len(base.flat), {m.id: m for m in new}, new, new
    start = start_of(base, p)
    if start is None:
        return None
    new = list(_shared.since(messages, p))
    if "system" in map(_kind_of, new):
        return None
    q, cut, k = start
    seq = base.seq.grown(q, new)
    # The messages from start_of's place on, as its plan would look them up (a copy's original among them).
    by_id = {m.id: m for m in seq.since(cut)}
    at = closed_run(base, q, cut, new[0] if new else None)
    if at is not None:
        cut, k = q, at
    tail = list(seq.since(cut))
    for m in tail:
        if "clipped_from" in m.metadata:
            src = m.clipped_from
            if src is not None and src not in by_id and not (record is not None and src in record):
                return None
    return seq, cut, k, by_id, tail, new


def _placed_marks(base: Laid | None, tail_flat: list[BlockSpec], k: int, first_round: IncludedRound | None, stable_exists: bool):
    """The cache marks over a layout whose blocks from k on are `tail_flat` (re-planned) and before it base's:
    (notes, ends, members, stable mark, marked, the block before k with its mark moved or None, tail_flat marked), or
    None when a mark would move inside the kept blocks (the view is planned whole then)."""
    t_notes, t_ends, t_members = anchors(tail_flat, first_round, k)
    if base is not None:
        notes = [p for p in base.notes if p < k] + t_notes
        ends = [p for p in base.ends if p < k] + t_ends
        members = [p for p in base.members if p < k] + t_members
    else:
        notes, ends, members = t_notes, t_ends, t_members
    stable, marked = flat_marks(k + len(tail_flat), stable_exists, notes, ends, members)
    # The block before the re-planned ones is laid and counted again, so its mark may move: the moving tail's mark
    # leaves the last block of the request before. A mark moving further back plans whole.
    edge = k - 1
    remarked = None
    if base is not None:
        if {p: v for p, v in base.marked.items() if p < edge} != {p: v for p, v in marked.items() if p < edge}:
            return None
        if edge >= 0:
            mark = marked[edge][0] if edge in marked else None
            if base.flat[edge].mark != mark:
                remarked = (edge, base.flat[edge].marked(mark))
    tail_flat = [s.marked(marked[i][0]) if i in marked else s for i, s in enumerate(tail_flat, k)]
    return notes, ends, members, stable, marked, remarked, tail_flat


def _whole(messages, inputs, serial, record, policy, tools, first_round, marks, keys_of) -> Laid:
    return lay_out(
        messages, None, 0, inputs, serial, record=record, policy=policy, tools=tools, first_round=first_round, marks=marks, keys_of=keys_of
    )


def images_of(spec) -> int:
    """The image tokens a block carries: its message's images (core.formats.images), none on a tool call."""
    if spec.tag == "tool_use":
        return 0
    message = spec.message
    # Without an "images" entry image_tokens gives 0: asked first, one call where it makes four (an ABC isinstance
    # among them), on every block a view brings.
    return image_tokens(message) if "images" in message.metadata else 0


def text_digest(text: str) -> bytes:
    """A plain text's key in the counter's memo: its SHA-256 (a lone surrogate, half an emoji, as surrogatepass writes it)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
