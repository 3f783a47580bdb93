"""The summariser interface for the `all` fold, and its default: a deterministic brief from the span itself.

The brief holds the span's opening instruction, each assistant message's first lines in order,
and the call list, bounded at 2,000 characters, as pi-fold's measured default. It needs no
model and no network. A model-backed summariser is optional and is only called when configured.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Protocol

from foldscope.core.model.canonical import dumps_length
from foldscope.core.model.one_line import one_line
from foldscope.core.model.session import Message

BRIEF_MAX_CHARS = 2_000
_INSTRUCTION_CHARS = 400
_LINE_CHARS = 200
_LINES_PER_ANSWER = 2
_ARG_CHARS = 160
_PATH_CHARS = 1_000
_PATH_LIST_CHARS = 4_000
# An argument whose name ends in one of these carries a path and is kept whole up to _PATH_CHARS.
_PATH_KEY_SUFFIXES = ("path", "paths", "file", "files", "dir", "dirs", "directory", "cwd", "root", "target", "pattern")


@dataclass(frozen=True)
class Summary:
    """A note's summary: its text, who wrote it ("host" or "model"), and a model request's usage."""

    text: str
    source: str = "host"
    usage: Mapping[str, int] | None = None  # the summary request's reported tokens; None when none was sent
    scale: float | None = None  # a scale the summary request's reported input raised, if any
    lists_calls: bool = True  # the text already carries the call list


class Summariser(Protocol):
    def summarise(self, span: Sequence[Message], calls: Sequence[Mapping[str, Any]]) -> Summary:
        """A summary of the folded span; `calls` are the tool calls it folds, carried notes' lists included."""
        ...


class BriefSummariser:
    """The default: a deterministic brief written from the span, no model call."""

    def __init__(self, max_chars: int = BRIEF_MAX_CHARS) -> None:
        self.max_chars = max_chars

    def summarise(self, span: Sequence[Message], calls: Sequence[Mapping[str, Any]]) -> Summary:
        return Summary(brief(span, calls, self.max_chars), source="host")


class CallableSummariser:
    """A model-backed summariser: `call(prompt) -> (text, usage)`; any failure falls back to the brief."""

    def __init__(self, call: Callable[[str], tuple[str, Mapping[str, int] | None]], budget_chars: int = 200_000) -> None:
        self.call = call
        self.budget_chars = budget_chars

    def summarise(self, span: Sequence[Message], calls: Sequence[Mapping[str, Any]]) -> Summary:
        texts, used = [], 0
        for message in span:
            room = self.budget_chars - used
            if room <= 0:
                break
            texts.append(message.text[:room])
            used += min(len(message.text), room)
        prompt = (
            "Write a concise, factual summary of the agent work below, which is being removed from the "
            "agent's context. Keep every file path, identifier, command and number it relies on.\n\n" + "\n---\n".join(texts)
        )
        try:
            text, usage = self.call(prompt)
        except Exception:  # noqa: BLE001 - the host-written brief stands in, as Amendment 1 says
            return Summary(brief(span, calls), source="host")
        if not isinstance(text, str) or not text.strip():
            return Summary(brief(span, calls), source="host", usage=usage)
        return Summary(text.strip()[:5_000], source="model", usage=usage, lists_calls=False)


def projected_span(span: Sequence[Message], record: Any = None, policy: Any = None) -> list[Message]:
    """The span as a summary may read it: under a result bound each tool result carries its projection
    (core.request.compile.result_output, the compiled body), never a whole hidden body (Amendment 3)."""
    bound = None if policy is None else policy.tool_result_max_chars
    if bound is None or record is None:
        return list(span)
    from dataclasses import replace

    from foldscope.core.request.compile import result_output

    out = []
    for m in span:
        if m.kind == "action_response":
            m = replace(m, content={**m.content, "output": result_output(m, record, policy)}, raw=None)
        out.append(m)
    return out


def brief(span: Sequence[Message], calls: Sequence[Mapping[str, Any]], max_chars: int = BRIEF_MAX_CHARS) -> str:
    """The span's opening instruction, each answer's first lines in order, then the calls; at most max_chars."""
    parts: list[str] = []
    opening = next((m for m in span if m.kind == "instruction"), None)
    if opening is not None:
        parts.append("Task: " + _clip_line(opening.text, _INSTRUCTION_CHARS))
    for message in span:
        if message.kind not in ("assistant", "note"):
            continue
        lines = first_lines(message.text, _LINES_PER_ANSWER)
        if message.kind == "note":
            lines = [ln for ln in lines if not ln.startswith("[CONTEXT COMPACTION]")][:1]
        parts.extend("- " + _clip_line(line, _LINE_CHARS) for line in lines)
    count = len(parts) + (1 + len(calls) if calls else 0)  # the lines of the brief written whole
    if calls:  # a note carries the lists of the notes it folds: write only the calls that can show
        parts.append(f"Calls ({len(calls)}):")
        size = sum(map(len, parts)) + len(parts) - 1
        for call in calls:
            if size > max_chars:
                break
            parts.append("- " + call_line(call))
            size += len(parts[-1]) + 1
    text = "\n".join(parts)
    if len(parts) == count and len(text) <= max_chars:
        return text
    cut = text[: max_chars - 40].rsplit("\n", 1)[0]
    rest = count - cut.count("\n") - 1  # the lines after the cut, written or not
    return f"{cut}\n- ... {rest} more lines"[:max_chars]


def first_lines(text: str, n: int) -> list[str]:
    """The first n lines of `text` that are not blank, stripped: `[ln.strip() for ln in text.splitlines() if
    ln.strip()][:n]`, read from a prefix that holds them. A brief shows an answer's first few lines, and an answer
    can run to thousands; an `all` fold's span holds hundreds of answers, each split and stripped whole before."""
    size = 1024
    while size < len(text):
        lines = text[:size].splitlines()
        # Each line but the prefix's last ends at a line break inside the prefix (a break of two characters, \r\n,
        # is read whole there, as both lie inside), so it is the whole text's line; the last may be cut short.
        found = [stripped for line in lines[:-1] if (stripped := line.strip())]
        if len(found) >= n:
            return found[:n]
        size *= 4
    return [stripped for line in text.splitlines() if (stripped := line.strip())][:n]


def call_line(call: Mapping[str, Any]) -> str:
    """One call of a note's list: function, arguments, output size and the original's index."""
    where = f", index {call['index']}" if call.get("index") is not None else ""
    return f"{call.get('function')} {call.get('arguments')} ({call.get('output_chars', 0):,} chars{where})"


def _clip_line(text: str, limit: int) -> str:
    return one_line(text, limit)


def short_arguments(arguments: Any) -> str:
    """A call's arguments for a note: a path-like argument whole up to 1,000 characters, others clipped to 160."""
    if type(arguments) is not dict and not isinstance(arguments, Mapping):  # a dict, nearly always: no ABC check
        return _json(_clip(arguments, _ARG_CHARS))
    shown = {key: _clip_path(v) if _is_path_key(key) else _clip(v, _ARG_CHARS) for key, v in arguments.items()}
    return _json(shown)


# json.dumps(value, ensure_ascii=False, default=str), whose arguments not being the defaults made it build a JSONEncoder
# every call (a fold's note lists every call it folds, each argument dumped): the one encoder, made once, gives the same text.
_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode
_string = encode_basestring  # a str as that encoder writes it, quoted and escaped, non-ASCII as it is


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    if type(value) is dict:
        # A call's arguments are mostly a flat dict of strings (a command, a path): written here as the encoder
        # writes one, for a third of its cost, which is the encoder's own setup a call; anything else is its.
        try:
            return "{" + ", ".join([_string(k) + ": " + _string(v) for k, v in value.items()]) + "}"
        except TypeError:  # a key or a value that is not a str
            pass
    return _dumps(value)


def _clip(value: Any, limit: int) -> Any:
    text = value if isinstance(value, str) else _dumps(value)
    return value if len(text) <= limit else f"{text[:limit]}... ({len(text):,} chars)"


def _is_path_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower().endswith(_PATH_KEY_SUFFIXES)


def _clip_path(value: Any) -> Any:
    if not isinstance(value, list):
        return _clip(value, _PATH_CHARS)
    kept: list[Any] = []
    used = 0
    for item in value:
        item = _clip(item, _PATH_CHARS)
        used += len(item) if isinstance(item, str) else len(_json(item))
        if used > _PATH_LIST_CHARS:
            kept.append(f"... {len(value) - len(kept)} more")
            break
        kept.append(item)
    return kept


def output_chars(output: Any) -> int:
    """A stored output's size, as the note lists it: a string's length, else its JSON text's."""
    if output is None:
        return 0
    return len(output) if isinstance(output, str) else dumps_length(output)
