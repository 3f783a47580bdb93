"""What each fold stage may take from the active view, and the notes that stand in for what it took.

Pure functions over a view (a list of Messages): what is kept (the head, the task instruction,
undelivered messages and the calls they answer, protected messages), the spans `tool_io` and `all`
fold with a kept tail, call/result pairing kept whole, and the note with its call list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.fold.clip import original_of
from foldscope.core.fold.delivery import is_delivered
from foldscope.core.fold.summarise import call_line, output_chars, short_arguments
from foldscope.core.model.session import FullRecord, Message

NOTE_PREFIX = "[CONTEXT COMPACTION]"
NOTE_MAX_CHARS = 8_000
ASSISTANT_CLASS = "lionagi.protocols.messages.assistant_response.AssistantResponse"
_NOTE_HEAD = (
    "The host folded {n} earlier messages to keep the next request under the input ceiling of {ceiling:,} "
    "tokens. Nothing was deleted: the full record keeps them, restore brings them back, and read_result "
    "reads a tool result's original in ranges by its index."
)

_COMPACT_HEAD = (
    "{n} earlier messages were compacted. Nothing was deleted: the full record keeps them, restore brings "
    "them back, and read_result reads a tool result's original in ranges by its index."
)


def chronology_key(message: Message, record: FullRecord) -> int:
    """Where a message belongs in time: a copy's original index, a note's first replaced index, else its own."""
    if message.is_clipped_copy:
        original = original_of(message, record)
        if original is not message:
            return record.index_of(original.id)
    if message.kind == "note":
        first = message.metadata.get("context_first_index")
        if isinstance(first, int) and not isinstance(first, bool) and 0 <= first < len(record):
            return first
    return record.index_of(message.id)


@dataclass
class ViewFacts:
    """What a stage needs to know about the view: who stands for which result, who answers whom, what stays."""

    head: str | None
    task: str | None
    keep: set[str] = field(default_factory=set)
    delivered: set[str] = field(default_factory=set)
    call_of: dict[str, str] = field(default_factory=dict)  # view result id -> view call id
    result_of: dict[str, str] = field(default_factory=dict)  # view call id -> view result id


def view_facts(view: Sequence[Message], record: FullRecord, delivered: set[str], protected: Iterable[str] = ()) -> ViewFacts:
    # One pass sorts the view's calls and results (each fold pass asks this of a whole view, some hundreds of messages:
    # a pass a question, each message's kind asked again, cost more than the answers).
    head = view[0].id if view else None
    task = None
    calls_by_original: dict[str, str] = {}
    request_ids: set[str] = set()
    results: list[Message] = []
    for m in view:
        kind = m.kind
        if kind == "action_response":
            results.append(m)
        elif kind == "action_request":
            request_ids.add(m.id)
            answered = m.content.get("action_response_id")
            if isinstance(answered, str):
                calls_by_original[answered] = m.id
        elif kind == "instruction" and task is None:
            task = m.id
    facts = ViewFacts(head, task, delivered=delivered)
    call_of, result_of = facts.call_of, facts.result_of
    for m in results:
        original = original_of(m, record)
        call = calls_by_original.get(original.id)
        if call is None:
            linked = original.content.get("action_request_id")
            if isinstance(linked, str) and linked in request_ids:
                call = linked
        if call is not None:
            call_of[m.id] = call
            result_of[call] = m.id
    keep = {i for i in (head, task) if i is not None} | set(protected)
    for m in view:  # a message delivered by its own id (nearly every one) is asked nothing more
        if m.id not in delivered and m.kind != "note" and not is_delivered(m, delivered, record):
            keep.add(m.id)
            if m.id in call_of:
                keep.add(call_of[m.id])
    facts.keep = keep
    return facts


def tool_io_span(view: Sequence[Message], facts: ViewFacts, tail: int, start: int = 0) -> list[str]:
    """Delivered calls and results from position `start` to before the newest `tail` active messages, kept ones excepted."""
    end = len(view) - tail
    chosen = [m.id for m in view[start : max(end, 0)] if m.kind in ("action_request", "action_response") and m.id not in facts.keep]
    return keep_pairs(chosen, facts)


def all_span(view: Sequence[Message], facts: ViewFacts, tail: int, start: int = 0) -> list[str]:
    """Everything from position `start` to before the tail except the head, the task instruction and kept messages."""
    end = len(view) - tail
    chosen = [m.id for m in view[start : max(end, 0)] if m.id not in facts.keep]
    return keep_pairs(chosen, facts)


def keep_pairs(chosen: list[str], facts: ViewFacts) -> list[str]:
    """Drop from `chosen` any result whose call stays in view: every call in a request keeps its result."""
    taken = set(chosen)
    return [mid for mid in chosen if not (mid in facts.call_of and facts.call_of[mid] not in taken)]


def replace_with_note(view: Sequence[Message], folded: Sequence[str], note: Message) -> list[Message]:
    """The view with `folded` taken out and the note at the place of the first of them."""
    taken = set(folded)
    out: list[Message] = []
    placed = False
    for m in view:
        if m.id in taken:
            if not placed:
                out.append(note)
                placed = True
            continue
        out.append(m)
    return out


def call_entry(result: Message, record: FullRecord) -> dict[str, Any]:
    """A folded result as a note lists it: function, arguments, the original's output size and index."""
    original = original_of(result, record)
    return {
        "function": original.content.get("function"),
        "arguments": short_arguments(original.content.get("arguments", {})),
        "output_chars": output_chars(original.content.get("output")),
        "index": record.index_of(original.id),
    }


def folded_calls(messages: Iterable[Message], record: FullRecord) -> list[dict[str, Any]]:
    return [call_entry(m, record) for m in messages if m.kind == "action_response"]


def carried_calls(messages: Iterable[Message], record: FullRecord, note_calls: dict[str, list]) -> list[dict[str, Any]]:
    """The calls behind a span in order: its own results and the lists of the notes it folds."""
    calls: list[dict[str, Any]] = []
    for m in messages:
        if m.kind == "note":
            calls.extend(note_calls.get(m.id, []))
        elif m.kind == "action_response":
            calls.append(call_entry(m, record))
    return calls


def note_text(
    folded: int, ceiling: int | None, calls: Sequence[dict[str, Any]], summary: str | None = None, summary_lists_calls: bool = False
) -> str:
    """A fold note: what was folded and how to get it back, the summary, then the call list; at most 8,000 chars."""
    head = _NOTE_HEAD.format(n=folded, ceiling=ceiling) if ceiling else _COMPACT_HEAD.format(n=folded)
    text = f"{NOTE_PREFIX} {head}"
    if summary:
        text += f"\n\nSummary of the folded span:\n{summary}"
    if calls and not summary_lists_calls:
        text += f"\n\nTool calls folded ({len(calls)}; function, arguments, output size, index):"
        for i, call in enumerate(calls):
            line = "\n- " + call_line(call)
            tail = f"\n- ... {len(calls) - i} more calls, listed in the fold record"
            if len(text) + len(line) + len(tail) > NOTE_MAX_CHARS:
                text += tail
                break
            text += line
    return text[:NOTE_MAX_CHARS]


def make_note(
    text: str,
    replaced: Sequence[Message],
    record: FullRecord,
    stage: str,
    new_id: Callable[[], str],
    created_at: float | None,
    digest: str | None,
) -> Message:
    """A note message recording the first replaced index, what it replaced (by index) and their digest (None: a
    replay's note, which records none: core.fold.fold.Fold's `digests`)."""
    metadata: dict[str, Any] = {
        "lion_class": ASSISTANT_CLASS,
        "context_first_index": chronology_key(replaced[0], record),
        "context_replaced": record.indexes_of([m.id for m in replaced]),
        "context_replaced_sha256": digest,
        "context_fold_stage": stage,
    }
    if digest is None:
        del metadata["context_replaced_sha256"]
    return Message(id=new_id(), kind="note", created_at=created_at, content={"assistant_response": text}, metadata=metadata)
