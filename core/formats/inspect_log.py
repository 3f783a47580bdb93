"""Reader for Inspect AI eval logs (`.json`, one JSON document, and `.eval`, a zip archive of JSON): one sample is one session.

Mapping, in the vocabulary of DESIGN.md:
- Each `model` event of the sample is one request: its view is the event's `input` (the messages as
  sent; newer logs keep them once in the sample's `message_pool` and name them by `input_refs`, a list
  of [start, end) ranges), its response the event's `output.choices[0].message`, its usage
  `output.usage`. Inspect's `input_tokens` is fresh input for Anthropic-style usage (total_tokens counts
  cache reads and writes beside it) and all input for OpenAI-style usage (total_tokens is input plus
  output, cache reads inside input); Usage.input is always fresh input.
- A message is the same message wherever it reappears: by its `id`, else (older logs) by its content.
  system -> system, user -> instruction, assistant -> assistant plus one action_request per tool call,
  tool -> action_response linked by `tool_call_id`. `attachment://HASH` (earlier `tc://HASH`) strings
  are replaced by the sample's `attachments[HASH]`.
- A `compaction` event (inspect_ai.event.CompactionEvent: tokens_before, tokens_after, source) becomes a
  note (out of the view: the next request's input is the view after it) and a compaction event.
- The active view is the sample's final `messages`. The tool definitions of the last model event go to
  extras["tools"]. The system prompt and tools are in the file, so there is no unseen head.
- extras["inspect"]: the sample's id and epoch, and the log's samples (`samples(path)` lists them).
A log with several samples is read with `read(path, sample="ID")` or `"ID:EPOCH"`; without one, the
first sample is read only when it is the only one.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.images import describe as describe_image
from foldscope.core.formats.spec import FormatSpec, no_compaction, no_window
from foldscope.core.formats.stream import as_int, json_problem, parse_time, text_of
from foldscope.core.model.session import (
    FullRecord,
    Message,
    Provenance,
    ReadError,
    Request,
    Session,
    Usage,
    bad_usage_warning,
    sha256_of,
    usage_figures,
    usage_object_warning,
)

if TYPE_CHECKING:
    import zipfile  # imported where an archive is opened: every command imports this reader, few open a .eval

FORMAT = "inspect"
MAX_BYTES = 1024 * 1024 * 1024  # a log, or the uncompressed members of an archive, larger than this is refused
_ZIP = b"PK\x03\x04"
_ATTACHMENT_SCHEMES = ("attachment://", "tc://")  # tc:// in logs of early 2025
_JSON_LOG = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


def sniff(head: bytes, path: Path) -> bool:
    """A zip whose first member is an Inspect log's (`_journal/`, `header.json`, `samples/`), or a JSON log's opening keys."""
    if head.startswith(_ZIP):
        name_length = int.from_bytes(head[26:28], "little")
        first = head[30 : 30 + name_length]
        return first.startswith((b"_journal/", b"header.json", b"samples/", b"summaries.json", b"reductions.json"))
    return bool(_JSON_LOG.match(head)) and b'"eval"' in head


@dataclass(frozen=True)
class SampleInfo:
    """One sample of a log: how `--sample` names it, and what it holds."""

    id: str
    epoch: int
    where: str  # the JSON path (.json) or archive member (.eval) that holds it

    @property
    def name(self) -> str:
        return f"{self.id}:{self.epoch}"


class _Log:
    """An open log: its header and its samples, read lazily from a zip or at once from a JSON document."""

    def __init__(self, path: Path) -> None:
        self.path, self.file = path, str(path)
        self.archive: zipfile.ZipFile | None = None
        self.document: dict[str, Any] | None = None
        try:
            size = path.stat().st_size
            if size > MAX_BYTES:
                raise ReadError(self.file, "", f"an eval log of {size} bytes is larger than {MAX_BYTES}")
            with open(path, "rb") as handle:
                is_zip = handle.read(4) == _ZIP
            if is_zip:
                self._open_archive()
            else:
                self.document = _document(self.file, "", path.read_bytes())
        except OSError as exc:
            raise ReadError(self.file, "", f"cannot read the file: {exc.strerror or exc}") from None

    def _open_archive(self) -> None:
        import zipfile

        try:
            self.archive = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, EOFError) as exc:
            raise ReadError(self.file, "", f"not a readable .eval archive ({exc})") from None
        total = sum(info.file_size for info in self.archive.infolist())
        if total > MAX_BYTES:
            raise ReadError(self.file, "", f"the archive holds {total} bytes uncompressed, more than {MAX_BYTES}")

    def member(self, name: str) -> Any:
        assert self.archive is not None
        import zipfile

        try:
            data = self.archive.read(name)
        except KeyError:
            raise ReadError(self.file, name, "missing from the archive") from None
        except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, zlib.error, OSError) as exc:
            # zlib.error: compressed bytes that do not inflate (a damaged archive), not a subclass of the others
            raise ReadError(self.file, name, f"cannot be read from the archive ({exc})") from None
        return _document(self.file, name, data)

    def header(self) -> dict[str, Any]:
        if self.document is not None:
            return self.document
        assert self.archive is not None
        names = set(self.archive.namelist())
        for name in ("header.json", "_journal/start.json"):
            if name in names:
                value = self.member(name)
                return value if isinstance(value, dict) else {}
        return {}

    def samples(self) -> list[SampleInfo]:
        if self.document is not None:
            samples = self.document.get("samples")
            if samples is None:
                return []
            if not isinstance(samples, list):
                raise ReadError(self.file, "$.samples", "expected a list")
            out = []
            for i, sample in enumerate(samples):
                if not isinstance(sample, dict):
                    raise ReadError(self.file, f"$.samples[{i}]", "expected an object")
                out.append(SampleInfo(str(sample.get("id", i + 1)), _epoch(sample.get("epoch")), f"$.samples[{i}]"))
            return out
        assert self.archive is not None
        out = []
        for name in self.archive.namelist():
            match = re.fullmatch(r"samples/(.+)_epoch_(\d+)\.json", name)
            if match:
                out.append(SampleInfo(match.group(1), int(match.group(2)), name))
        return sorted(out, key=lambda s: (_natural(s.id), s.epoch))

    def sample(self, info: SampleInfo) -> dict[str, Any]:
        if self.document is not None:
            value = self.document["samples"][int(info.where[len("$.samples[") : -1])]
        else:
            value = self.member(info.where)
        if not isinstance(value, dict):
            raise ReadError(self.file, info.where, "a sample is not a JSON object")
        return value

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()


def _natural(text: str) -> tuple:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _epoch(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _document(file: str, member: str, data: bytes) -> Any:
    """One JSON document; a bad byte or a syntax error is named by its line and column."""
    where = f"{member}: " if member else ""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReadError(file, f"{where}byte {exc.start}", "not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadError(file, f"{where}line {exc.lineno} column {exc.colno}", json_problem(exc)) from None
    except RecursionError:
        raise ReadError(file, member, fast_json.TOO_DEEP) from None


def samples(path: str | Path) -> list[dict[str, Any]]:
    """The log's samples, for `foldscope inspect LOG`: id, epoch, name (ID:EPOCH), model events and messages."""
    log = _Log(Path(path))
    try:
        out = []
        for info in log.samples():
            sample = log.sample(info)
            events, messages = _list(sample.get("events")), _list(sample.get("messages"))
            out.append(
                {
                    "id": info.id,
                    "epoch": info.epoch,
                    "name": info.name,
                    "requests": sum(1 for e in events if isinstance(e, dict) and e.get("event") == "model"),
                    "messages": len(messages),
                }
            )
        return out
    finally:
        log.close()


def choose(infos: list[SampleInfo], wanted: str | None, file: str) -> SampleInfo:
    """The sample `wanted` names (ID or ID:EPOCH); the only one when it is None."""
    if not infos:
        raise ReadError(file, "", "the log holds no samples")
    if wanted is None:
        if len(infos) == 1:
            return infos[0]
        names = ", ".join(i.name for i in infos[:8]) + (", ..." if len(infos) > 8 else "")
        raise ReadError(
            file, "", f"the log holds {len(infos)} samples ({names}): choose one with --sample ID (foldscope inspect LOG lists them)"
        )
    sample_id, _, epoch = wanted.rpartition(":") if ":" in wanted else (wanted, "", "")
    found = [i for i in infos if i.id == sample_id and (not epoch or str(i.epoch) == epoch)]
    if not found and epoch and not sample_id:
        found = [i for i in infos if i.id == wanted]
    if len(found) == 1:
        return found[0]
    if found:
        raise ReadError(
            file, "", f"sample {sample_id} has epochs {', '.join(str(i.epoch) for i in found)}: choose one as --sample {sample_id}:EPOCH"
        )
    raise ReadError(
        file, "", f"no sample {wanted!r} in the log (samples: {', '.join(i.name for i in infos[:8])}{', ...' if len(infos) > 8 else ''})"
    )


def read(path: Path, sample: str | None = None) -> Session:
    path = Path(path)
    log = _Log(path)
    try:
        infos = log.samples()
        info = choose(infos, sample, str(path))
        header = log.header()
        value = log.sample(info)
    finally:
        log.close()
    session = _SampleReader(str(path), info, value).session()
    evaluation = _dict(header.get("eval"))
    model = evaluation.get("model") if isinstance(evaluation.get("model"), str) else None
    session.model = session.model or model
    session.extras["inspect"] = {"sample": info.id, "epoch": info.epoch, "task": evaluation.get("task"), "samples": [i.name for i in infos]}
    return session


class _SampleReader:
    """Builds one sample's Session: the record in order of first appearance, one request per model event."""

    def __init__(self, file: str, info: SampleInfo, sample: dict[str, Any]) -> None:
        self.file, self.info, self.sample = file, info, sample
        attachments = sample.get("attachments")
        self.attachments = attachments if isinstance(attachments, dict) else {}
        pool = sample.get("message_pool")
        self.pool = pool if isinstance(pool, list) else []
        self.entries: dict[str, dict[str, Any]] = {}  # message key -> what becomes its record messages
        self.order: list[str] = []
        self.calls: dict[str, str] = {}  # tool call id -> action_request id
        self.answers: dict[str, str] = {}  # tool call id -> action_response id
        self.warnings: list[str] = []

    def where(self, path: str) -> str:
        return f"{self.info.where}{path[1:]}" if self.info.where.startswith("$") else f"{self.info.where}:{path}"

    def resolved(self, block: dict[str, Any]) -> dict[str, Any]:
        """An image block with its `attachment://` reference replaced by the sample's attachment (a data URL)."""
        image = block.get("image")
        if isinstance(image, str) and image.startswith("attachment://"):
            found = self.attachments.get(image[len("attachment://") :])
            if isinstance(found, str):
                return {**block, "image": found}
        return block

    def image_rule(self) -> tuple[str, str | None]:
        """Whose rule counts this sample's images, from its first model event's model ("openai/gpt-4o")."""
        events = self.sample.get("events")
        model = (
            next(
                (e["model"] for e in events if isinstance(e, dict) and e.get("event") == "model" and isinstance(e.get("model"), str)), None
            )
            if isinstance(events, list)
            else None
        )
        provider = "openai" if model and model.startswith(("openai/", "azureai/")) else "anthropic"
        return provider, model

    # -- messages ---------------------------------------------------------------------------
    def key(self, message: Mapping[str, Any]) -> str:
        mid = message.get("id")
        if isinstance(mid, str) and mid:
            return mid
        return "m-" + sha256_of({k: message.get(k) for k in ("role", "content", "tool_calls", "tool_call_id")})[:16]

    def take(self, message: Any, path: str, at: float | None) -> str:
        """The key of a message, entered into the record on first sight."""
        if not isinstance(message, dict):
            raise ReadError(self.file, self.where(path), "a message is not a JSON object")
        message = self.resolve(message)
        key = self.key(message)
        if key not in self.entries:
            self.entries[key] = {"message": message, "path": path, "at": at}
            self.order.append(key)
            for call in message.get("tool_calls") or ():
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    self.calls[call["id"]] = f"{key}:{call['id']}"
            if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
                self.answers.setdefault(message["tool_call_id"], key)
        return key

    def resolve(self, value: Any) -> Any:
        """`attachment://HASH` strings replaced by the sample's attachments."""
        if isinstance(value, str):
            for scheme in _ATTACHMENT_SCHEMES:
                if value.startswith(scheme):
                    found = self.attachments.get(value[len(scheme) :])
                    return found if isinstance(found, str) else value
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def ids_of(self, key: str) -> list[str]:
        """The record ids one source message became: an assistant message is itself then its calls."""
        message = self.entries[key]["message"]
        calls = [c for c in message.get("tool_calls") or () if isinstance(c, dict) and isinstance(c.get("id"), str)]
        return [key] + [f"{key}:{c['id']}" for c in calls]

    def input_of(self, event: dict[str, Any], path: str) -> list[Any]:
        refs = event.get("input_refs")
        if isinstance(refs, list) and refs and not event.get("input"):
            out = []
            for n, ref in enumerate(refs):
                if (
                    not isinstance(ref, list)
                    or len(ref) != 2
                    or not all(isinstance(x, int) for x in ref)
                    or not 0 <= ref[0] <= ref[1] <= len(self.pool)
                ):
                    raise ReadError(
                        self.file, self.where(f"{path}.input_refs[{n}]"), f"not a range of the sample's {len(self.pool)} pooled messages"
                    )
                out.extend(self.pool[ref[0] : ref[1]])
            return out
        value = event.get("input")
        if value is None:
            return []
        if not isinstance(value, list):
            raise ReadError(self.file, self.where(f"{path}.input"), "expected a list of messages")
        return value

    # -- the session ------------------------------------------------------------------------
    def session(self) -> Session:
        events = self.sample.get("events")
        requests, notes, tools = self.walk(events if isinstance(events, list) else [])
        final = self.sample.get("messages")
        final_keys = [self.take(m, f"$.messages[{i}]", None) for i, m in enumerate(final)] if isinstance(final, list) else []
        if not self.entries:
            raise ReadError(self.file, self.info.where, f"sample {self.info.name} holds no messages")
        record = FullRecord()
        for key in self.order:
            for message in self.build(key):
                record.append(message)
        session_events = [self.compaction(n, note, record) for n, note in enumerate(notes)]
        trace = [self.request(k, r) for k, r in enumerate(requests)]
        view = [mid for key in _unique(final_keys) for mid in self.ids_of(key)]
        if not view and trace:
            last = trace[-1]
            view = list(last.view) + ([mid for mid in self.ids_of(last.response_id)] if last.response_id else [])
        models = [r.model for r in trace if r.model]
        session = Session(
            record=record,
            view=view,
            format=FORMAT,
            source=self.file,
            events=session_events,
            trace=trace,
            warnings=self.warnings,
            model=models[-1] if models else None,
        )
        if tools:
            session.extras["tools"] = tools
        return session

    def walk(self, events: list) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list | None]:
        """The sample's events in order: each model call's input, response and usage; each compaction; the newest tools."""
        requests: list[dict[str, Any]] = []
        notes: list[dict[str, Any]] = []
        tools: list | None = None
        for n, event in enumerate(events):
            if not isinstance(event, dict):
                continue
            path = f"$.events[{n}]"
            kind = event.get("event")
            at = parse_time(event.get("timestamp"))
            if kind == "model":
                requests.append(self.model_call(event, path, at))
                if isinstance(event.get("tools"), list) and event["tools"]:
                    tools = self.resolve(event["tools"])
            elif kind == "compaction":
                notes.append({"event": event, "path": path, "at": at, "at_request": len(requests)})
        return requests, notes, tools

    def model_call(self, event: dict, path: str, at: float | None) -> dict[str, Any]:
        """A model event as a request to be: the keys of its input, of its response, its time, model and usage."""
        view = [self.take(m, f"{path}.input[{i}]", at) for i, m in enumerate(self.input_of(event, path))]
        output = _dict(event.get("output"))
        choices = _list(output.get("choices"))
        answer = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        response = self.take(answer, f"{path}.output.choices[0].message", at) if answer is not None else None
        model = event.get("model") if isinstance(event.get("model"), str) else None
        return {
            "view": view,
            "response": response,
            "at": at,
            "model": model,
            "usage": _usage(output.get("usage"), model, self.warnings, self.where(path)),
        }

    def compaction(self, n: int, note: dict[str, Any], record: FullRecord) -> dict[str, Any]:
        """A compaction event as a note appended to the record; its session event returned."""
        event = note["event"]
        note_id = f"compaction-{n + 1}"
        before, after = as_int(event.get("tokens_before")), as_int(event.get("tokens_after"))
        kind = event.get("source") if isinstance(event.get("source"), str) else "inspect"
        text = (
            f"Compaction by {kind}"
            + (f": {before:,} tokens before, {after:,} after" if before else "")
            + " (the next request's input is the view after it)"
        )
        record.append(
            Message(
                note_id,
                "note",
                note["at"],
                {"assistant_response": text},
                {"compaction": True, "source_event": event},
                Provenance(self.file, 0, self.where(note["path"])),
            )
        )
        return {
            "kind": "compaction",
            "source": "inspect",
            "at_request": note["at_request"],
            "note_id": note_id,
            "trigger": kind,
            "pre_tokens": before or None,
            "post_tokens": after or None,
        }

    def request(self, k: int, r: dict[str, Any]) -> Request:
        """Request k: the ids its input's keys stand for, and its response when that was not already in its input."""
        sent = tuple(mid for key in _unique(r["view"]) for mid in self.ids_of(key))
        response = r["response"]
        if response in r["view"]:
            response = None  # a response that was already in its own input is not this request's
        return Request(k, sent, response, r["usage"], r["at"], r["model"])

    def build(self, key: str) -> Iterator[Message]:
        entry = self.entries[key]
        message, at = entry["message"], entry["at"]
        provenance = Provenance(self.file, 0, self.where(entry["path"]))
        role = message.get("role")
        content = message.get("content")
        text = text_of(content) if not isinstance(content, str) else content
        meta: dict[str, Any] = {"role": role}
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content):
            meta["images"] = [
                facts
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "image"
                and (facts := describe_image(self.resolved(b), *self.image_rule())) is not None
            ]
        if role == "system":
            yield Message(key, "system", at, {"system_message": text}, meta, provenance)
        elif role == "assistant":
            reasoning = [
                str(b["reasoning"])
                for b in _list(content)
                if isinstance(b, dict) and b.get("type") == "reasoning" and isinstance(b.get("reasoning"), str)
            ]
            if reasoning:
                meta["thinking"] = "\n\n".join(reasoning)
            yield Message(key, "assistant", at, {"assistant_response": text}, meta, provenance)
            for call in message.get("tool_calls") or ():
                if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                    continue
                args = call.get("arguments")
                args = args if isinstance(args, Mapping) else {"input": args}
                answer = self.answers.get(call["id"])
                yield Message(
                    f"{key}:{call['id']}",
                    "action_request",
                    at,
                    {"function": str(call.get("function", "")), "arguments": args, "action_response_id": answer},
                    {"call_id": call["id"]},
                    provenance,
                )
        elif role == "tool":
            call_id = message.get("tool_call_id")
            request = self.calls.get(call_id) if isinstance(call_id, str) else None
            meta.update({"call_id": call_id, "is_error": message.get("error") is not None})
            if request is None:
                meta["orphan"] = True
                self.warnings.append(f"{self.file}: {self.where(entry['path'])}: tool result {call_id!r} has no tool call; kept unlinked")
            yield Message(
                key,
                "action_response",
                at,
                {"function": str(message.get("function") or ""), "arguments": {}, "output": text, "action_request_id": request},
                meta,
                provenance,
            )
        else:
            yield Message(key, "instruction", at, {"instruction": text}, meta, provenance)


def _unique(keys: list[str]) -> list[str]:
    """The keys in order, each once (a message sent twice in one request is one message of its view)."""
    return list(dict.fromkeys(keys))


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _usage(raw: Any, model: str | None, warnings: list[str], where: str) -> Usage | None:
    """Inspect's ModelUsage as Usage (fresh input apart from cache reads and writes; see the module docstring)."""
    if not isinstance(raw, dict):
        if raw is not None:
            warnings.append(f"{where}: {usage_object_warning(raw)}")
        return None
    got, bad = usage_figures(
        {k: v for k, v in raw.items() if v is not None or k == "input_tokens"},
        ("input_tokens", "output_tokens", "input_tokens_cache_read", "input_tokens_cache_write"),
    )
    if bad:  # Inspect writes null for a figure the provider did not report; any other odd value is named
        warnings.append(f"{where}: {bad_usage_warning(bad)}")
        return None
    total = raw.get("total_tokens")
    fresh, output = got["input_tokens"], got["output_tokens"]
    read, write = got["input_tokens_cache_read"], got["input_tokens_cache_write"]
    openai_style = isinstance(total, int) and total == fresh + output and (read or write)
    if openai_style or (not isinstance(total, int) and (model or "").startswith(("openai/", "azureai/"))):
        fresh = max(fresh - read - write, 0)
    return Usage(input=fresh, cache_read=read, cache_write=write, output=output)


SPEC = FormatSpec(
    name=FORMAT,
    title="Inspect AI",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=samples,
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
)
