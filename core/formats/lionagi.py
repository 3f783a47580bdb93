"""The native format: lionagi Branch JSON (old and current dumps, bare or wrapped with its run manifest)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.lionagi_prompt import prompt_text
from foldscope.core.formats.lionagi_views import VIEW_EVENT, is_request, request_views
from foldscope.core.formats.spec import FormatSpec, no_compaction, no_window
from foldscope.core.formats.stream import head_values, json_problem
from foldscope.core.model.session import (
    PENDING_TRACE,
    FullRecord,
    Message,
    NotASession,
    ReadError,
    Request,
    Session,
    Usage,
    bad_usage_warning,
    new_message,
    storable_time,
    usage_figures,
    usage_object_warning,
)
from foldscope.core.model.views import TrackedView, ViewSharer

FORMAT = "lionagi"

# lionagi's message classes, by the last part of lion_class, and the kind each maps to.
KIND_OF_CLASS = {
    "System": "system",
    "Instruction": "instruction",
    "AssistantResponse": "assistant",
    "ActionRequest": "action_request",
    "ActionResponse": "action_response",
}
# A note is an AssistantResponse recognised by the provenance key the context tool writes on it
# (ADR-0130 Amendment 4). lionagi 0.36.0 predates that key, so its notes are known by this prefix.
NOTE_KEY = "context_first_index"
OLD_NOTE_PREFIX = "[CONTEXT COMPACTION]"
# Keys that mark a file as a run manifest rather than a Branch.
MANIFEST_KEYS = ("context_folds", "api_usage", "branch_id")
# Sibling names searched for a run manifest beside a bare Branch file (docs/session-format.md).
MANIFEST_GLOBS = ("{stem}.manifest.json", "run.json", "manifest.json", "run_manifest*.json")
MANIFEST_MAX_BYTES = 16 * 1024 * 1024


def sniff(head: bytes, path: Path) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    # A Branch dump names lionagi's classes early (branch metadata or the first message);
    # the wrapper opens with "branch". A run manifest alone is claimed too, so that read() can
    # say what it is instead of "unknown format".
    if b'"lionagi.' in text or text[1:].lstrip().startswith(b'"branch"'):
        return not _json_lines(text)
    return b'"branch_id"' in text and (b'"context_folds"' in text or b'"api_usage"' in text) and not _json_lines(text)


def _json_lines(head: bytes) -> bool:
    """Whether the head is JSON lines (two whole values, each on its line), never one Branch: a session of another
    agent quoting a Branch's JSON in a text holds the markers above (its quotes escaped, `\\"lionagi.`)."""
    return len(head_values(head, 2)) == 2


# A reader that can leave its trace for later (core.formats.load_session's trace_later): the GUI's first step shows
# the record and view before the requests are built (a sixth of a large Branch's read: docs/performance.md).
TRACE_LATER = True


def read(path: Path, trace: bool = True) -> Session:
    """The Branch file's session; without `trace`, the trace is left for core.formats.finish_trace to build."""
    file = str(path)
    top = parse_json(path)
    if not isinstance(top, dict):
        raise ReadError(file, "$", f"expected a JSON object, found {_type_name(top)}")
    if "messages" not in top and isinstance(top.get("branch"), dict):
        return from_wrapper(top, file, "$", trace)
    if "messages" in top:
        manifest_path, manifest = manifest_beside(path, top.get("id"))
        session = session_from_branch(top, file, "$")
        session.manifest = manifest
        if manifest_path is not None:
            session.extras["manifest_path"] = str(manifest_path)  # an input too: export and save never write over it
        return _finish(session, top, manifest, session.events, trace)
    if any(key in top for key in MANIFEST_KEYS):
        raise NotASession(file, "$", "this is a run manifest, not a Branch: open the Branch file beside it")
    raise ReadError(file, "$", "no `messages` and no `branch`: not a lionagi Branch record")


def from_wrapper(wrapper: dict[str, Any], file: str, base: str, trace: bool = True) -> Session:
    """The session a wrapper holds ({branch, manifest, events, children}): the file's, or one of its children's."""
    branch = _expect(wrapper.get("branch"), dict, file, f"{base}.branch")
    manifest = wrapper.get("manifest")
    if manifest is not None and not isinstance(manifest, dict):
        raise ReadError(file, f"{base}.manifest", f"expected an object or null, found {_type_name(manifest)}")
    session = session_from_branch(branch, file, f"{base}.branch")
    session.manifest = manifest
    events = wrapper.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ReadError(file, f"{base}.events", "expected a list of objects")
    # A `view` event is what the file states for the trace (core.formats.lionagi_views); it is not an action
    # in the session's log, and the writer states the views anew from the trace.
    stated = [e for e in events if e.get("kind") == VIEW_EVENT]
    session.events = [e for e in events if e.get("kind") != VIEW_EVENT]
    children = wrapper.get(CHILDREN_KEY, [])
    if not isinstance(children, list) or not all(isinstance(c, dict) for c in children):
        raise ReadError(file, f"{base}.{CHILDREN_KEY}", "expected a list of sessions")
    session.children = [_child(c, file, f"{base}.{CHILDREN_KEY}[{i}]") for i, c in enumerate(children)]
    # Keys of the wrapper foldscope does not interpret go back out as they came.
    session.extras["wrapper"] = {
        "keys": list(wrapper),
        "extra": {k: v for k, v in wrapper.items() if k not in ("branch", "manifest", "events", CHILDREN_KEY, CHILD_KEY)},
    }
    return _finish(session, branch, manifest, session.events + stated, trace)


def _child(item: dict[str, Any], file: str, place: str) -> Session:
    """A subagent's session the file carries (as a Claude Code reader found it beside its parent), with its links."""
    child = from_wrapper(item, file, place)
    facts = item.get(CHILD_KEY)
    facts = facts if isinstance(facts, dict) else {}
    child.extras.update({k: facts[k] for k in CHILD_LINKS if k in facts})
    if isinstance(facts.get("source"), str):
        child.source = facts["source"]  # the subagent's own file, as the parent's reader named it
    return child


def _finish(
    session: Session, branch: Mapping[str, Any], manifest: dict[str, Any] | None, events: list[dict[str, Any]], trace: bool
) -> Session:
    session.warnings.extend(time_warnings(session.record))
    session.model = _model_name(branch, manifest)
    window = manifest.get(WINDOW_KEY) if isinstance(manifest, dict) else None
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        session.extras["context_window"] = window  # stated by the file an export came from, as Codex's reader keeps it
    tools = manifest.get(TOOLS_KEY) if isinstance(manifest, dict) else None
    if isinstance(tools, list) and tools:
        session.extras["tools"] = tools  # sent by the file an export came from, as the Inspect AI reader keeps them
    elif tools is not None:
        session.warnings.append(f"the manifest's {TOOLS_KEY} is not a list of tool definitions: read as no tools")
    if trace:
        session.trace = build_trace(session.record, manifest, session.warnings, session.view, events)
    else:
        session.caches[PENDING_TRACE] = partial(build_trace, session.record, manifest, session.warnings, session.view, events)
    return session


def time_warnings(record: FullRecord) -> list[str]:
    """A warning for each created_at no clock gives (past 2^63 or not finite): the library keeps it as unknown."""
    out = [
        f"message {i}: created_at {m.created_at!r} is not a time; the library keeps it as unknown"
        for i, m in enumerate(record)
        if m.created_at is not None and storable_time(m.created_at) is None
    ]
    return out[:1] + ([f"and {len(out) - 1} more such times"] if len(out) > 1 else [])


def parse_json(path: Path) -> Any:
    file = str(path)
    data = path.read_bytes()
    value = fast_json.loads(data)  # msgspec, from the bytes (no text made); where it refuses, the json module's way
    if value is not fast_json.REFUSED:
        return value
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReadError(file, f"byte {exc.start}", "not UTF-8 text") from None
    # The bytes go before the parse: held through it, they were a whole file's size on top of the text and the
    # tree, the peak of a Branch's import (tests/core/formats/test_lionagi_memory.py).
    del data
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadError(file, f"line {exc.lineno} column {exc.colno}", json_problem(exc)) from None
    except RecursionError:
        raise ReadError(file, "", fast_json.TOO_DEEP) from None


def session_from_branch(branch: dict[str, Any], file: str, base: str = "$") -> Session:
    """Map a Branch dict (`Branch.to_dict` shape) into a Session; the dict is not modified."""
    pile = _expect(branch.get("messages"), dict, file, f"{base}.messages")
    items = _expect(pile.get("collections"), list, file, f"{base}.messages.collections")
    messages: dict[str, Message] = {}
    collection_order: list[str] = []
    for i, item in enumerate(items):
        message = message_from_dict(item, file, f"{base}.messages.collections[{i}]")
        if message.id in messages:
            raise ReadError(file, f"{base}.messages.collections[{i}].id", f"duplicate message id {message.id!r}")
        messages[message.id] = message
        collection_order.append(message.id)

    # The current shape orders the Pile by its progression; the old shape (July 2025 cookbook
    # dumps) has none, and the collections' own order is the record's.
    order = collection_order
    progression = pile.get("progression")
    if progression is not None:
        place = f"{base}.messages.progression"
        _expect(progression, dict, file, place)
        order = _id_list(progression.get("order"), file, f"{place}.order", messages)
        if len(order) != len(messages):
            missing = next(mid for mid in collection_order if mid not in set(order))
            raise ReadError(file, f"{place}.order", f"message {missing!r} is in collections but not in the order")
    record = FullRecord(messages[mid] for mid in order)

    metadata = _expect(branch.get("metadata", {}), dict, file, f"{base}.metadata")
    view = list(order)
    current = metadata.get("current_progression")
    if current is not None:
        place = f"{base}.metadata.current_progression"
        _expect(current, dict, file, place)
        if "order" in current:
            view = _id_list(current["order"], file, f"{place}.order", messages, what="the full record")

    shell = {k: v for k, v in pile.items() if k != "collections"}
    if isinstance(shell.get("progression"), dict):
        shell["progression"] = {k: v for k, v in shell["progression"].items() if k != "order"}
    session = Session(
        record=record,
        view=view,
        format=FORMAT,
        source=file,
        branch={k: v for k, v in branch.items() if k != "messages"},
    )
    # What the writer needs to give the Branch back exactly: the Pile around the messages and
    # where `messages` sat among the Branch's keys.
    session.extras["lionagi_pile"] = shell
    session.extras["branch_keys"] = list(branch.keys())
    return session


def message_from_dict(item: Any, file: str, place: str) -> Message:
    _expect(item, dict, file, place)
    mid = item.get("id")
    if not isinstance(mid, str) or not mid:
        raise ReadError(file, f"{place}.id", f"expected a non-empty string id, found {_type_name(mid)}")
    metadata = _expect(item.get("metadata", {}), dict, file, f"{place}.metadata")
    lion_class = metadata.get("lion_class")
    if not isinstance(lion_class, str):
        raise ReadError(file, f"{place}.metadata.lion_class", f"expected a class name, found {_type_name(lion_class)}")
    kind = KIND_OF_CLASS.get(lion_class.rsplit(".", 1)[-1])
    if kind is None:
        raise ReadError(file, f"{place}.metadata.lion_class", f"unknown message class {lion_class!r}")
    content = _expect(item.get("content"), dict, file, f"{place}.content")
    created_at = item.get("created_at")
    if created_at is not None and (isinstance(created_at, bool) or not isinstance(created_at, (int, float))):
        raise ReadError(file, f"{place}.created_at", f"expected a number, found {_type_name(created_at)}")
    _check_content(kind, content, file, f"{place}.content")
    if kind == "assistant" and _is_note(metadata, content):
        kind = "note"
    return new_message(mid, kind, created_at, content, metadata, file, 0, path=place, raw=item)


# The content field each kind must carry, and the type it must have when present.
_TEXT_FIELD = {"system": "system_message", "instruction": "instruction", "assistant": "assistant_response"}


def _check_content(kind: str, content: Mapping[str, Any], file: str, place: str) -> None:
    field = _TEXT_FIELD.get(kind)
    if field is not None:
        # Old dumps hold a text or a list of parts here; anything is rendered, but it must exist.
        if field not in content:
            raise ReadError(file, place, f"a {kind} message without `{field}`")
        return
    function = content.get("function")
    if function is not None and not isinstance(function, str):
        raise ReadError(file, f"{place}.function", f"expected a string, found {_type_name(function)}")
    arguments = content.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise ReadError(file, f"{place}.arguments", f"expected an object, found {_type_name(arguments)}")


def _is_note(metadata: Mapping[str, Any], content: Mapping[str, Any]) -> bool:
    extra = metadata.get("extra")
    if NOTE_KEY in metadata or (isinstance(extra, dict) and NOTE_KEY in extra):
        return True
    text = content.get("assistant_response")
    return isinstance(text, str) and text.startswith(OLD_NOTE_PREFIX)


def _id_list(value: Any, file: str, place: str, known: Mapping[str, Any], what: str = "collections") -> list[str]:
    _expect(value, list, file, place)
    seen: set[str] = set()
    for i, mid in enumerate(value):
        if not isinstance(mid, str):
            raise ReadError(file, f"{place}[{i}]", f"expected a message id, found {_type_name(mid)}")
        if mid not in known:
            raise ReadError(file, f"{place}[{i}]", f"names {mid!r}, which is not in {what}")
        if mid in seen:
            raise ReadError(file, f"{place}[{i}]", f"names {mid!r} twice")
        seen.add(mid)
    return list(value)


def _expect(value: Any, kind: type, file: str, place: str) -> Any:
    if not isinstance(value, kind):
        raise ReadError(file, place, f"expected {_type_name(kind())}, found {_type_name(value)}")
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def find_manifest_beside(path: Path, branch_id: Any) -> dict[str, Any] | None:
    """A run manifest in the Branch file's folder whose `branch_id` names this Branch, if any."""
    return manifest_beside(path, branch_id)[1]


def manifest_beside(path: Path, branch_id: Any) -> tuple[Path | None, dict[str, Any] | None]:
    """(its path, the manifest) for a run manifest beside the Branch file naming this Branch; (None, None) if none."""
    if not isinstance(branch_id, str):
        return None, None
    seen: set[Path] = set()
    for pattern in MANIFEST_GLOBS:
        for candidate in sorted(path.parent.glob(pattern.format(stem=path.stem))):
            if candidate in seen or candidate == path or not candidate.is_file():
                continue
            seen.add(candidate)
            try:
                if candidate.stat().st_size > MANIFEST_MAX_BYTES:
                    continue
                data = json.loads(candidate.read_bytes())
            except (OSError, ValueError, RecursionError):
                continue  # an unreadable neighbour is not this session's problem
            if isinstance(data, dict) and data.get("branch_id") == branch_id:
                return candidate, data
    return None, None


def _model_name(branch: Mapping[str, Any], manifest: Mapping[str, Any] | None) -> str | None:
    if manifest and isinstance(manifest.get("model"), str):
        return manifest["model"]
    try:
        model = branch["chat_model"]["endpoint"]["config"]["kwargs"]["model"]
    except (KeyError, TypeError):
        return None
    return model if isinstance(model, str) else None


def usage_from(data: Any, warn: Callable[[str], None] | None = None) -> Usage | None:
    """Usage from an Anthropic (`input_tokens` + cache parts) or OpenAI (`prompt_tokens`) usage object; a figure
    of the wrong type makes it unknown (None), named through `warn`."""
    if not isinstance(data, Mapping):
        if data is not None and warn is not None:
            warn(usage_object_warning(data))
        return None
    if isinstance(data.get("usage"), Mapping):
        data = data["usage"]

    def unknown(bad: list[str]) -> Usage | None:
        if warn is not None:
            warn(bad_usage_warning(bad))
        return None

    if "input_tokens" in data:
        creation = data.get("cache_creation")
        got, bad = usage_figures(data, ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))
        hour, bad_1h = usage_figures(creation if isinstance(creation, Mapping) else {}, ("ephemeral_1h_input_tokens",))
        if bad or bad_1h:
            return unknown(bad + bad_1h)
        return Usage(
            input=got["input_tokens"],
            cache_read=got["cache_read_input_tokens"],
            cache_write=got["cache_creation_input_tokens"],
            output=got["output_tokens"],
            cache_write_1h=min(hour["ephemeral_1h_input_tokens"], got["cache_creation_input_tokens"]),
        )
    if "prompt_tokens" in data:
        details = data.get("prompt_tokens_details")
        got, bad = usage_figures(data, ("prompt_tokens", "completion_tokens"))
        cached, bad_c = usage_figures(details if isinstance(details, Mapping) else {}, ("cached_tokens",))
        if bad or bad_c:
            return unknown(bad + bad_c)
        read = min(cached["cached_tokens"], got["prompt_tokens"])
        return Usage(input=got["prompt_tokens"] - read, cache_read=read, output=got["completion_tokens"])
    return None


def build_trace(
    record: FullRecord,
    manifest: Mapping[str, Any] | None,
    warnings: list[str],
    final_view: Sequence[str] | None = None,
    events: Sequence[Mapping[str, Any]] = (),
) -> list[Request]:
    """One request per assistant response (but one marked `not_a_request`), compiled from the view as it stood
    before that response.

    With the session's final view, each request's view is rebuilt from the notes, clipped copies and
    fold records (core.formats.lionagi_views); without it, it is the record before the response.

    Reported usage comes from the manifest's `api_usage` (by `response_id`, else by position), else
    from the response's own `model_response.usage` as old lionagi dumps keep it.
    """
    entries = manifest.get("api_usage") if manifest else None
    entries = entries if isinstance(entries, list) else []
    by_response = {e["response_id"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("response_id"), str)}
    position = {id(e): i for i, e in enumerate(entries)}  # each entry's place, for a warning (not a search per response)
    trace: list[Request] = []
    before: list[str] = TrackedView()  # only appended to: each request shares it at the cost of what it added
    sharer = ViewSharer()
    views = request_views(record, final_view, manifest, warnings, events) if final_view is not None else None
    for message in record:
        if message.kind == "assistant" and not is_request(message):
            continue  # a placeholder that answered no request: in the record only, never in a view
        if message.kind == "assistant":
            k = len(trace)
            entry = by_response.get(message.id)
            if entry is None and not by_response and k < len(entries):
                entry = entries[k]
            place = f"api_usage[{position[id(entry)]}]" if entry is not None else f"response {message.id}"

            def warn(problem: str, place: str = place) -> None:
                warnings.append(f"{place}: {problem}")

            usage = usage_from(entry, warn) if entry is not None else None
            if usage is None:
                usage = usage_from(message.metadata.get("model_response"), warn)
            if usage is None:  # a session built in memory may keep the response's usage on the message itself
                usage = usage_from(message.metadata.get("usage"), warn)
            model = entry.get("model") if isinstance(entry, dict) and isinstance(entry.get("model"), str) else None
            at = entry.get("at") if isinstance(entry, dict) and isinstance(entry.get("at"), (int, float)) else None
            view = views[message.id] if views is not None else sharer.view(before)
            trace.append(Request(k, view, message.id, usage, at if at is not None else message.created_at, model))
        before.append(message.id)
    if entries and not by_response and len(entries) != len(trace):
        warnings.append(f"the manifest lists {len(entries)} api_usage entries for {len(trace)} assistant responses")
    return trace


from foldscope.core.formats.lionagi_write import (  # noqa: E402  (the writer half)
    CHILD_KEY,
    CHILD_LINKS,
    CHILDREN_KEY,
    TOOLS_KEY,
    WINDOW_KEY,
    native_dict,
    write_session,
)

SPEC = FormatSpec(
    name=FORMAT,
    title="lionagi",
    sniff=sniff,
    read=read,
    trace_later=TRACE_LATER,
    samples=None,
    unseen_head=False,
    provider_text=False,
    follow=None,
    first_part=False,
    sessions=None,
    window=no_window,
    compaction=no_compaction,
    no_summary=None,
    cache="explicit",
    usage_precision="exact",
    no_requests=None,
    prompt_text=prompt_text,
)

__all__ = ["FORMAT", "SPEC", "sniff", "read", "write_session", "native_dict", "session_from_branch", "usage_from"]
