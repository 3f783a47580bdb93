"""What a compaction took out of the view and what the agent fetched of it again: the `dropped` and `refetched` of
core.forensics.compactions' report, each call's fetched path or command read from its arguments (fetch_key)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.core.model.session import Message, Session
from foldscope.core.model.views import added
from foldscope.core.request.tokens import count_text

PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file")
COMMAND_KEYS = ("command", "cmd")


@dataclass(frozen=True)
class Refetch:
    """A call after the compaction that fetched dropped material again: the same path read or command run."""

    request: int
    index: int  # the call's index in the full record
    tool: str
    what: str  # the path or the command
    tokens: int  # the result it brought back

    def as_dict(self) -> dict[str, Any]:
        return {"request": self.request, "index": self.index, "tool": self.tool, "what": self.what, "tokens": self.tokens}


def _arguments(m: Message) -> Mapping[str, Any]:
    args = m.content.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    if isinstance(args, Mapping) and set(args) == {"input"} and isinstance(args["input"], str):
        try:
            inner = json.loads(args["input"])
            return inner if isinstance(inner, Mapping) else args
        except ValueError:
            return args
    return args if isinstance(args, Mapping) else {}


def fetch_key(m: Message) -> tuple[str, str] | None:
    """What a call fetched: ("path", p) for a read of a file, ("command", c) for a command run; None otherwise."""
    if m.kind not in ("action_request", "action_response"):
        return None
    args = _arguments(m)
    for key in PATH_KEYS:
        if isinstance(args.get(key), str) and args[key]:
            return ("path", args[key])
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            return ("command", value.strip())
    return None


KeyOf = Callable[[Message], "tuple[str, str] | None"]


_FETCHING = frozenset(("action_request", "action_response"))  # the kinds fetch_key reads (a result holds its call's)


class FetchKeys:
    """fetch_key of each call's arguments, worked out once: they are JSON read again each time, and a result holds its
    call's arguments (the same object, as the readers make them), so a call and its result are read once, not twice.
    fetch_key of a call or a result is its arguments' alone."""

    def __init__(self) -> None:
        self._keys: dict[int, tuple[Any, tuple[str, str] | None]] = {}

    def __call__(self, m: Message) -> tuple[str, str] | None:
        if m.kind not in _FETCHING:
            return None
        arguments = m.content.get("arguments")  # None where there are none: fetch_key gives those None
        got = self._keys.get(id(arguments))
        if got is None or got[0] is not arguments:  # kept with its answer, so no other object takes its id meanwhile
            got = self._keys[id(arguments)] = (arguments, fetch_key(m))
        return got[1]


def literal_text(m: Message) -> str:
    """The text whose literals count: a call's argument values (its keys are the tool's, not the session's)."""
    if m.kind != "action_request":
        return m.text
    return "\n".join(_values(_arguments(m)))


def _values(value: Any) -> list[str]:
    if type(value) is str:  # most of a call's values: asked first, where the Mapping check is an ABC's (slower)
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in ((v,) if type(v) is str else _values(v))]
    if isinstance(value, list):
        return [s for v in value for s in ((v,) if type(v) is str else _values(v))]
    return [str(value)] if value is not None and not isinstance(value, bool) else []


def tokens_of(m: Message, tokens_by_id: Mapping[str, int]) -> int:
    """A message's tokens as its requests counted them, else its text counted alone."""
    n = tokens_by_id.get(m.id)
    return n if n is not None else count_text(m.text)


def dropped_facts(messages: Sequence[Message], tokens_by_id: Mapping[str, int], key_of: KeyOf = fetch_key) -> dict[str, Any]:
    """What left the view: messages by kind, tool results by tool (with their tokens) and the paths they held.
    `key_of`: fetch_key, or its answers kept (FetchKeys)."""
    by_kind: dict[str, int] = {}
    by_tool: dict[str, dict[str, int]] = {}
    paths: list[str] = []
    for m in messages:
        by_kind[m.kind] = by_kind.get(m.kind, 0) + 1
        if m.kind == "action_response":
            tool = str(m.content.get("function") or "unknown")
            cell = by_tool.setdefault(tool, {"results": 0, "tokens": 0})
            cell["results"] += 1
            cell["tokens"] += tokens_of(m, tokens_by_id)
            key = key_of(m)
            if key is not None and key[0] == "path" and key[1] not in paths:
                paths.append(key[1])
    return {"messages": len(messages), "by_kind": by_kind, "results_by_tool": by_tool, "paths": paths}


def refetched(
    session: Session, start: int, end: int, dropped: Sequence[Message], tokens_by_id: Mapping[str, int], key_of: KeyOf = fetch_key
) -> list[Refetch]:
    """Calls in requests start..end-1 that read a dropped path again or ran a dropped command again."""
    wanted = {key for m in dropped if (key := key_of(m)) is not None}
    if not wanted:
        return []
    record, out, seen = session.record, [], set(m.id for m in dropped)
    before: Sequence[str] = ()
    for k in range(start, min(end, len(session.trace))):
        view = session.trace[k].view
        new = added(view, before)  # most requests only add
        new = view if new is None else new
        before = view
        for mid in new:
            if mid in seen or mid not in record:
                continue
            seen.add(mid)
            m = record.get(mid)
            if m.kind != "action_request":
                continue
            key = key_of(m)
            if key is None or key not in wanted:
                continue
            rid = m.content.get("action_response_id")
            result = record.get(rid) if isinstance(rid, str) and rid in record else None
            out.append(
                Refetch(
                    k,
                    record.index_of(mid),
                    str(m.content.get("function") or ""),
                    key[1],
                    tokens_of(result, tokens_by_id) if result is not None else 0,
                )
            )
    return out
