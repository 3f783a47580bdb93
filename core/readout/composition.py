"""What a request is made of: its count split by category, by tool and target, and the content it carries twice.

Every figure is one of the parts the Measure (core.request.measure) cuts a request's count into: system,
tools, the unseen head a Claude Code, Codex or pi file does not hold, each message's blocks, and the framing
(the JSON between them); so the categories add up to the request's count exactly, as `foldscope requests`
reports it (`counted`). The estimate is that count times the scale; the free space (`free_window`) is what the model's
context window leaves past the request's predicted input, the one figure every screen calls free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from foldscope.core.model.one_line import one_line
from foldscope.core.model.session import FullRecord, Message, Session, canonical_json
from foldscope.core.readout.document import is_note
from foldscope.core.readout.free_window import free_window, over_window
from foldscope.core.readout.head_split import NOT_SPLIT, HeadPart, HeadSources, sources_for
from foldscope.core.request.count import estimate
from foldscope.core.request.measure import Composition as Parts
from foldscope.core.request.measure import Measure

# The categories, in the order the bar and the table show them. Results are one category per tool.
HEAD, UNSEEN, INSTRUCTIONS, ASSISTANT, THINKING, CALLS, NOTES, COPIES, FRAMING = (
    "system and tools",
    "unseen head",
    "instructions",
    "assistant text",
    "thinking",
    "tool calls",
    "notes",
    "clipped copies",
    "framing",
)
RESULTS = "results"  # shown as "results: Read", "results: Bash", ...
# The argument that names what a call works on, first match wins: a path, else a command, else a query.
TARGET_KEYS = ("file_path", "path", "notebook_path", "filename", "command", "cmd", "pattern", "url", "query", "description", "prompt")
PATH_KEYS = frozenset({"file_path", "path", "notebook_path", "filename"})
TARGET_CHARS = 120


@dataclass(frozen=True)
class Category:
    """One category of the request: its tokens (a part of the count) and how many blocks carry it."""

    name: str
    tokens: int
    blocks: int
    note: str = ""


@dataclass(frozen=True)
class Group:
    """Blocks of one kind about one target: "results Read src/app.py, 7 times, 42,118 tokens"."""

    category: str
    tool: str
    target: str
    times: int
    tokens: int
    indexes: tuple[int, ...]  # full-record indexes, oldest first (empty for the head and the unseen head)

    @property
    def label(self) -> str:
        what = f"{self.tool} {self.target}".strip()
        return f"{self.category}: {what}" if what else self.category


@dataclass(frozen=True)
class Repeat:
    """Content the request carries more than once, and what the copies past the newest cost."""

    why: str  # "same content" or "same file read again"
    label: str
    times: int
    tokens: int  # every copy together
    repeat_tokens: int  # all but the newest copy: what carrying it once would save
    indexes: tuple[int, ...]


@dataclass(frozen=True)
class Composition:
    """A request's count split up; `size` is the count (the parts' sum), `estimate` the count times the scale,
    `predicted` its predicted input (what the free window is measured from)."""

    request: int | None  # the request's index in the trace; None: the next request, from the active view now
    size: int
    estimate: int
    scale: float
    unseen_head: int
    window: int | None = None  # the model's context window, when known (core.readout.agent_limits)
    window_source: str = ""
    parts: tuple[Category, ...] = ()
    groups: tuple[Group, ...] = ()  # every block in one group; their tokens add up to size
    repeats: tuple[Repeat, ...] = ()
    thinking_in_file: int = 0  # thinking the file keeps that no request carries (the API drops it)
    predicted: int = 0  # the request's predicted input (core.request.predict); 0: not predicted
    head_parts: tuple[HeadPart, ...] = ()  # the unseen head split (core.readout.head_split): adds up to it

    @property
    def free(self) -> int | None:
        return free_window(self.window, self.predicted)

    @property
    def over(self) -> int | None:
        """How far the predicted input is past the window (core.readout.free_window.over_window); None when it fits."""
        return over_window(self.window, self.predicted)

    @property
    def own_count(self) -> int:
        """foldscope's own count of what the file holds: the parts less the unseen head (estimated from reports)."""
        return self.size - self.unseen_head

    @property
    def carried_twice(self) -> int:
        """What the content carried more than once costs past its newest copy (the same content, not a file read again)."""
        return sum(r.repeat_tokens for r in self.repeats if r.why == "same content")

    def top(self, n: int | None = None) -> list[Group]:
        """The largest groups, tokens first (ties: oldest first)."""
        ranked = sorted(self.groups, key=lambda g: (-g.tokens, g.indexes[:1] or (-1,)))
        return ranked if n is None else ranked[:n]

    def as_dict(self, top: int | None = 20) -> dict[str, Any]:
        return {
            "request": self.request,
            "size": self.size,
            "counted": self.own_count,
            "estimate": self.estimate,
            "scale": round(self.scale, 6),
            "predicted": self.predicted or None,
            "unseen_head": self.unseen_head,
            "window": self.window,
            "window_source": self.window_source,
            "free": self.free,
            **({"over_by": self.over} if self.over is not None else {}),  # the free figure's 0 hides how far past
            "parts": [{"name": c.name, "tokens": c.tokens, "blocks": c.blocks, **({"note": c.note} if c.note else {})} for c in self.parts],
            "top": [
                {
                    "label": g.label,
                    "category": g.category,
                    "tool": g.tool,
                    "target": g.target,
                    "times": g.times,
                    "tokens": g.tokens,
                    "indexes": list(g.indexes),
                }
                for g in self.top(top)
            ],
            "repeats": [
                {
                    "why": r.why,
                    "label": r.label,
                    "times": r.times,
                    "tokens": r.tokens,
                    "repeat_tokens": r.repeat_tokens,
                    "indexes": list(r.indexes),
                }
                for r in self.repeats
            ],
            "thinking_in_file": self.thinking_in_file,
            "unseen_head_parts": [p.as_dict() for p in self.head_parts],
        }


def category_of(message: Message) -> tuple[str, str]:
    """(category, tool) of one message of a request."""
    m = message
    if m.kind == "system":
        return HEAD, ""
    if m.is_clipped_copy:
        return COPIES, str(m.content.get("function", ""))
    if is_note(m):
        return NOTES, ""
    if m.kind == "action_response":
        return RESULTS, str(m.content.get("function", "")) or "(no tool)"
    if m.kind == "action_request":
        return CALLS, str(m.content.get("function", ""))
    if m.kind == "instruction":
        return INSTRUCTIONS, ""
    return ASSISTANT, ""


def target_of(message: Message) -> tuple[str, str]:
    """(argument key, value) naming what a call or result works on ("file_path", "src/app.py"); ("", "") if none."""
    args = message.content.get("arguments")
    if not isinstance(args, dict):
        return "", ""
    for key in TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return key, one_line(value, TARGET_CHARS)
    return "", ""


class MessageFacts:
    """Each message's category, tool, total's name and thinking characters, worked out once for a run of
    compositions: the report composes every request, and each view holds most of the one before."""

    def __init__(self, remember: bool = True) -> None:
        # Without `remember` each message is worked out when asked and nothing is kept: for a caller whose requests
        # go on from the one before (it asks only of what changed), the facts of every message would be memory only.
        self.remember = remember
        self._by_id: dict[str, tuple[Message, tuple[str, str, str, int]]] = {}
        # The last request's (message, tokens) pairs, its categories' [tokens, messages] in order of first appearance,
        # its characters of thinking, and each of its messages' total's name and thinking: the next request's totals go
        # on from them (_category_totals).
        self.last: tuple[tuple[tuple[Message, int], ...], dict[str, list[int]], int, list[tuple[str, int]]] | None = None

    def of(self, message: Message) -> tuple[str, str, str, int]:
        """(category, tool, the name its tokens add up under, characters of thinking the file keeps with it)."""
        got = self._by_id.get(message.id)
        if got is not None and got[0] is message:  # the same message; a copy under its id is worked out anew
            return got[1]
        category, tool = category_of(message)
        name = f"{RESULTS}: {tool}" if category == RESULTS else category
        thinking = len(str(message.metadata.get("thinking", ""))) if message.kind == "assistant" else 0
        facts = (category, tool, name, thinking)
        if self.remember:
            self._by_id[message.id] = (message, facts)
        return facts


def _content_key(message: Message) -> str:
    body = message.content.get("output") if message.kind == "action_response" else message.text
    text = body if isinstance(body, str) else canonical_json(body)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compose(
    parts: Parts,
    session: Session,
    *,
    scale: float = 1.0,
    request: int | None = None,
    window: int | None = None,
    window_source: str = "",
    estimate_size: int | None = None,
    predicted: int = 0,
    head: HeadSources | None = None,
    facts: MessageFacts | None = None,
    details: bool = True,
    summed: Summed | None = None,
) -> Composition:
    """Split a request's parts (core.request.measure's, adding up to its count) by category, tool and target, repeats.

    `facts`: the messages' categories kept from other compositions of the session (a new one when None). Without
    `details` only the categories are made (the report's bar per request): no groups, no repeats. `summed`: the
    categories summed already (summed_figures', when the parts were heard), so `parts.messages` is not read."""
    record = session.record
    facts = MessageFacts() if facts is None else facts
    head_tokens = parts.system + parts.tools
    if summed is None:
        size = parts.total
        totals, thinking = _category_totals(parts, facts)
    else:
        # a copy of the dict, not of its [tokens, messages]: only keys are added here (_add_unseen_head), none changed
        totals, thinking = dict(summed[0]), summed[1]
        size = parts.unseen_head + parts.framing + sum(total[0] for total in totals.values())  # the head's first
    grouped, by_content, by_path = _groups(parts, record, facts) if details else ({(HEAD, "", ""): [head_tokens, []]}, {}, {})
    head_parts = (head or HeadSources()).split(parts.unseen_head)
    split = _add_unseen_head(parts, head_parts, totals, grouped)
    categories = _categories(parts, totals, thinking, head_parts, split)
    groups = (
        Group(category, tool, target, max(len(indexes), 1), tokens, tuple(sorted(indexes)))
        for (category, tool, target), (tokens, indexes) in (grouped.items() if details else ())
        if tokens or indexes
    )
    return Composition(
        request,
        size,
        estimate(size, scale) if estimate_size is None else estimate_size,
        scale,
        parts.unseen_head,
        window,
        window_source,
        parts=categories,
        groups=tuple(groups),
        repeats=tuple(_repeats(by_content, by_path)),
        thinking_in_file=thinking,
        predicted=predicted,
        head_parts=tuple(head_parts),
    )


_RESULTS_OF, _UNSEEN_OF = f"{RESULTS}: ", f"{UNSEEN}:"
_BEFORE_RESULTS = (INSTRUCTIONS, ASSISTANT, THINKING, CALLS)
_AFTER_RESULTS = (NOTES, COPIES, FRAMING)


def _minus_tokens(figure: tuple[str, int]) -> int:
    return -figure[1]


def _kinds(names: tuple[str, ...]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Categories' names in the bar's order, by where they go: the unseen head's parts, the kinds before the results,
    the results by tool (to be sorted, largest first) and the kinds after them (_categories; bar_figures keeps these a
    run of names, which a session's requests share)."""
    unseen: list[str] = []
    results: list[str] = []
    for n in names:
        if n.startswith(_RESULTS_OF):
            results.append(n)
        elif n == UNSEEN or n == NOT_SPLIT or n.startswith(_UNSEEN_OF):
            unseen.append(n)
    return unseen, [n for n in _BEFORE_RESULTS if n == THINKING or n in names], results, [n for n in _AFTER_RESULTS if n in names]


def bar_figures(
    parts: Parts, summed: Summed, head_parts: list[HeadPart], kinds: dict[tuple[str, ...], tuple]
) -> tuple[list[tuple[str, int]], int]:
    """Each category's name and tokens in the bar's order, and the request's size: what compose(parts, details=False,
    summed=summed) gives in its parts and size, with no Category, note or Composition made (the report's every-request
    table draws a bar a request). `head_parts`: the unseen head split (HeadSources.split); `kinds`: _kinds of each run
    of names, kept by the caller."""
    totals = dict(summed[0])
    size = parts.unseen_head + parts.framing + sum(total[0] for total in totals.values())  # the head's first
    _add_unseen_head(parts, head_parts, totals, {})
    names = tuple(totals)
    got = kinds.get(names)
    if got is None:
        got = kinds[names] = _kinds(names)
    unseen, before, results, after = got
    out: list[tuple[str, int]] = []
    head = totals.get(HEAD)
    if head is not None and head[0]:
        out.append((HEAD, head[0]))
    out += ((n, totals[n][0]) for n in unseen)
    for name in before:
        if name != THINKING:
            out.append((name, totals[name][0]))
        elif summed[1]:  # the characters of thinking the file keeps: shown, with no tokens (not sent)
            out.append((THINKING, 0))
    out += sorted(((n, totals[n][0]) for n in results), key=_minus_tokens)
    out += ((n, totals[n][0]) for n in after)
    return out, size


def _categories(parts: Parts, totals: dict[str, list[int]], thinking: int, head_parts: list[HeadPart], split: bool) -> tuple[Category, ...]:
    """The categories in the bar's order, each with its note: the head, the unseen head's parts, the messages' kinds,
    thinking (kept by the file, not sent), the results by tool (largest first), notes, copies, framing. Each name's note
    is worked out only when the name is shown (the report composes every request of a session)."""
    unseen, _, results, _ = _kinds(tuple(totals))
    results = sorted(results, key=lambda n: -totals[n][0])
    categories: list[Category] = []
    head = totals.get(HEAD)
    if head is not None and head[0]:
        categories.append(
            Category(HEAD, head[0], head[1], f"system {parts.system:,}, tools {parts.tools:,}" if parts.system + parts.tools else "")
        )
    if unseen:
        notes = {NOT_SPLIT if p.name == NOT_SPLIT else f"{UNSEEN}: {p.name}": p.said for p in head_parts}
        if head_parts and not split:
            notes[UNSEEN] = f"not split: {head_parts[0].source}"
        categories += (Category(n, totals[n][0], totals[n][1], notes.get(n, "")) for n in unseen)
    for name in _BEFORE_RESULTS:
        if name == THINKING:
            if thinking:
                categories.append(
                    Category(
                        THINKING,
                        0,
                        0,
                        f"not sent: the file keeps {thinking:,} characters of thinking, which the API drops from later requests",
                    )
                )
        elif (total := totals.get(name)) is not None:
            categories.append(Category(name, total[0], total[1]))
    categories += (Category(n, totals[n][0], totals[n][1]) for n in results)
    for name in _AFTER_RESULTS:
        if (total := totals.get(name)) is not None:
            categories.append(Category(name, total[0], total[1], "the JSON around and between the blocks" if name == FRAMING else ""))
    return tuple(categories)


Summed = tuple[dict[str, list[int]], int]  # each category's [tokens, messages] (the head's first), thinking characters


def summed_figures(parts: Parts, facts: MessageFacts) -> tuple[tuple[str, ...], list[int], int]:
    """A request's categories summed (compose's first step), for a caller that hears parts it cannot keep, as
    figures: the categories' names in order (the head's first), then their [tokens, messages] one after the other in
    one list, and the characters of thinking; read from the running sums, with no copy of each. The report's bars
    (core.readout.report_bars) now sum by block as they hear each request, and are tested against this."""
    cats, thinking = _going_on(parts, facts)
    return (HEAD, *cats), [parts.system + parts.tools, 0, *chain.from_iterable(cats.values())], thinking


def _category_totals(parts: Parts, facts: MessageFacts) -> tuple[dict[str, list[int]], int]:
    """Each category's [tokens, messages] (the head's first), and the characters of thinking the messages hold
    (_going_on's, copied: the caller may change them)."""
    cats, thinking = _going_on(parts, facts)
    totals: dict[str, list[int]] = {HEAD: [parts.system + parts.tools, 0]}
    totals.update((name, list(total)) for name, total in cats.items())
    return totals, thinking


def _going_on(parts: Parts, facts: MessageFacts) -> tuple[dict[str, list[int]], int]:
    """Each category's [tokens, messages], the head aside, and the characters of thinking the messages hold: the
    running sums `facts` keeps, not to be changed by the caller.

    Gone on from the request `facts` last totalled: its messages after the start the two share (each with the same
    tokens) are taken out and this one's added, so a run of requests whose views grow costs what changed. A category
    left with no message is dropped before the new ones join, which keeps the order of first appearance."""
    messages = parts.messages
    last = facts.last
    facts.last = None  # taken over and changed in place below: a failure half way starts the next request afresh
    if last is None:
        before: tuple[tuple[Message, int], ...] = ()
        cats: dict[str, list[int]] = {}
        thinking = 0
        named: list[tuple[str, int]] = []
    else:
        before, cats, thinking, named = last
    shared = _same_start(messages, before)
    # what leaves is read from what each message added when it joined (its name and thinking), not worked out again
    for (_, tokens), (name, chars) in zip(before[shared:], named[shared:]):
        gone = cats[name]
        gone[0] -= tokens
        gone[1] -= 1
        thinking -= chars
    if len(before) > shared:
        del named[shared:]
        cats = {name: kept for name, kept in cats.items() if kept[1]}
    for m, tokens in messages[shared:]:
        _, _, name, chars = facts.of(m)
        named.append((name, chars))
        total = cats.get(name)
        if total is None:
            cats[name] = [tokens, 1]
        else:
            total[0] += tokens
            total[1] += 1
        thinking += chars
    facts.last = (messages, cats, thinking, named)
    return cats, thinking


def _same_start(a: Sequence, b: Sequence) -> int:
    """How many leading items a and b share (compared a stretch at a time, in C: most views grow at their end)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


Groups = dict[tuple[str, str, str], list]


def _groups(parts: Parts, record: FullRecord, facts: MessageFacts) -> tuple[Groups, dict[str, list], dict[tuple[str, str], list]]:
    """[tokens, indexes] by (category, tool, target) or by message (the head's first); the messages by content, and
    the files read by path, that the repeats are found in."""
    grouped: Groups = {}
    by_content: dict[str, list] = {}
    by_path: dict[tuple[str, str], list] = {}
    grouped[(HEAD, "", "")] = [parts.system + parts.tools, []]
    for m, tokens in parts.messages:
        category, tool, _, _ = facts.of(m)
        index = record.index_of(m.id) if m.id in record else None
        if category in (RESULTS, CALLS, COPIES):
            key = (category, tool, target_of(m)[1])
        else:
            key = (category, "", f"#{index}")
        slot = grouped.setdefault(key, [0, []])
        slot[0] += tokens
        if index is not None:
            slot[1].append(index)
        if index is not None and category != HEAD and tokens:
            by_content.setdefault(_content_key(m), []).append((index, tokens, category, tool, m))
            if category in (RESULTS, COPIES):
                arg, target = target_of(m)
                if arg in PATH_KEYS:
                    by_path.setdefault((tool, target), []).append((index, tokens, m))
    return grouped, by_content, by_path


def _add_unseen_head(parts: Parts, head_parts: list[HeadPart], totals: dict[str, list[int]], grouped: Groups) -> bool:
    """The unseen head's parts (or its one block, when it is not split) and the framing, added to the categories and
    groups; whether the head is split."""
    split = any(p.name != NOT_SPLIT for p in head_parts)
    for part in head_parts if split else []:
        name = NOT_SPLIT if part.name == NOT_SPLIT else f"{UNSEEN}: {part.name}"
        totals[name] = [part.tokens, 1]
        grouped[(name, "", "")] = [part.tokens, []]
    if parts.unseen_head and not split:
        totals[UNSEEN] = [parts.unseen_head, 1]
        grouped[(UNSEEN, "", "")] = [parts.unseen_head, []]
    if parts.framing:
        totals[FRAMING] = [parts.framing, 0]
        grouped[(FRAMING, "", "")] = [parts.framing, []]
    return split


def _repeats(by_content: dict[str, list], by_path: dict[tuple[str, str], list]) -> list[Repeat]:
    """Identical content carried twice or more, and a file read again with other content, largest cost first."""
    out: list[Repeat] = []
    same: set[frozenset[int]] = set()
    for copies in by_content.values():
        if len(copies) < 2:
            continue
        copies.sort()
        index, _, category, tool, m = copies[-1]
        target = target_of(m)[1] if category in (RESULTS, COPIES, CALLS) else ""
        what = f"{category}: {tool} {target}".strip() if tool else f"{category}: #{copies[0][0]}"
        total = sum(c[1] for c in copies)
        out.append(Repeat("same content", what, len(copies), total, total - copies[-1][1], tuple(c[0] for c in copies)))
        same.add(frozenset(c[0] for c in copies))
    for (tool, target), reads in by_path.items():
        if len(reads) < 2 or frozenset(r[0] for r in reads) in same:
            continue
        reads.sort()
        total = sum(r[1] for r in reads)
        out.append(
            Repeat(
                "same file read again",
                f"{RESULTS}: {tool} {target}".strip(),
                len(reads),
                total,
                total - reads[-1][1],
                tuple(r[0] for r in reads),
            )
        )
    out.sort(key=lambda r: (-r.repeat_tokens, r.indexes))
    return out


def request_composition(
    measure: Measure,
    at_request: int | None,
    *,
    window: int | None = None,
    window_source: str = "",
    predicted: int | None = None,
    head: HeadSources | None = None,
    facts: MessageFacts | None = None,
    details: bool = True,
    heard: tuple[Parts, Summed] | None = None,
) -> Composition:
    """The composition of request `at_request` of the trace (None: the next request, from the active view now),
    from the Measure every screen sizes requests with: its parts add up to the count it reports. `predicted`: the
    next request's predicted input when the caller holds a newer one than the trace's (the GUI's, after an edit).
    `head`: what names the unseen head's parts (default: the session's --head file, else this machine's).
    `facts` and `details` as compose's: a caller composing many requests of one session shares one MessageFacts.
    `heard`: the request's parts (without their messages) and categories as the trace's count made them, so the
    request is not measured again (core.readout.report_bars)."""
    session = measure.session
    head = sources_for(session) if head is None else head
    if at_request is None:
        messages = measure.messages(session.view)
        parts = measure.parts(messages)
        return compose(
            parts,
            session,
            scale=measure.scale,
            request=None,
            window=window,
            window_source=window_source,
            estimate_size=measure.estimate(messages),
            predicted=measure.next_predicted if predicted is None else predicted,
            head=head,
            facts=facts,
            details=details,
        )
    rows = measure.trace.rows
    if not 0 <= at_request < len(rows):
        raise IndexError(f"request {at_request} is not in the trace (it has {len(rows)} requests)")
    row = rows[at_request]
    return compose(
        measure.request_parts(at_request) if heard is None else heard[0],
        session,
        scale=row.scale,
        request=at_request,
        window=window,
        window_source=window_source,
        estimate_size=row.estimate,
        predicted=row.predicted,
        head=head,
        facts=facts,
        details=details,
        summed=None if heard is None else heard[1],
    )
