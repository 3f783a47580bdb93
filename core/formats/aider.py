"""Reader for Aider's chat history (`.aider.chat.history.md`): a usage timeline, one request per usage line, the conversation as the record.

The writer is Aider-AI/aider @ 5dc9490bb35f9729ef2c95d00a19ccd30c26339c : aider/io.py (InputOutput.append_chat_history,
user_input, ai_output, tool_output) and aider/coders/base_coder.py (send_message, calculate_and_show_tokens_and_cost,
show_usage_report). The file holds what the person typed and what the model answered, and one usage line per model
reply; it does not hold the requests (the system prompt, the repo map and the files aider sends with every message,
nor chat summaries), so the head of every request is unseen and no request can be rebuilt from the file. Mapping,
in the vocabulary of DESIGN.md:
- `# aider chat started at YYYY-MM-DD HH:MM:SS` begins a run (an aider process; its local time, no zone): each
  run is one session of the file, `--session N` (or `--sample N`) reads the N-th, counting every run from 1, as an
  Inspect AI log's samples. A run with no message (aider started and quit) is listed as no session.
- `#### text` lines (one per line of the input, each ending in two spaces, a markdown line break) -> an
  instruction; an input beginning with `/` or `!` is a command, not sent (a `/ask X` or `/code X` logs X again
  as its own input, which is); `/clear` and `/reset` empty the conversation aider sends.
- `> text` lines are aider's own output (files added, edits applied, commits, warnings): never sent, kept as
  unsent lines. `> Model: M with F edit format` (or `Main model:`) names the model of the requests after it.
- Other lines are the model's reply (ai_output writes it whole after the call). A reply followed by its usage
  line is one request, whose view is the conversation before it; a reply after a usage line with no input between
  answers aider's own follow-up (a reflection: lint or test errors, a file to add), whose message the file does
  not hold (the request's unseen input). A reply with no usage line before the next input was cut off (^C): a
  request without usage. Text after the last usage line of an input is aider's multi-line output.
- The usage line `> Tokens: 3.2k sent, 2.5k cache write, 1.1k cache hit, 344 received. Cost: $0.02 message, $0.05
  session.` (older: exact figures with commas, `request` for `message`; the cost on the next line, without `> `,
  when both cache figures are there). Figures of 1,000 and more are rounded ("3.2k", "10k"); when the provider
  returned no usage aider wrote its own count instead; `sent` sums the calls of one reply (a reply continued past
  the output limit), the cache figures are its last call's. So every figure is approximate, and the format says so
  (SPEC.usage_precision). `sent` is the whole input (litellm's prompt_tokens, which counts cache reads, plus the
  cache writes aider adds for Anthropic): fresh input = sent - cache write - cache hit, cache read = hit.
"""

from __future__ import annotations

import os
import re
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foldscope.core.formats.spec import FormatSpec, Sessions, no_compaction, no_window
from foldscope.core.formats.stream import SessionBuilder, SourceLines
from foldscope.core.model.session import USAGE_LIMIT, ReadError, Session, Usage

FORMAT = "aider"
HISTORY = ".aider.chat.history.md"  # aider/args.py: the default --chat-history-file, in the git root
ENV = "AIDER_CHAT_HISTORY_FILE"  # configargparse's AIDER_ prefix: the variable that moves the file
MAX_BYTES = 512 * 1024 * 1024  # a history larger than this is refused
SEARCH_DEPTH = 3  # how far below a folder the user names `sessions` looks for projects' history files

_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
_SNIFF = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*# aider chat started at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_FIGURE = r"\d[\d,]*(?:\.\d+)?k?"
USAGE_LINE = re.compile(
    rf"^> Tokens: (?P<sent>{_FIGURE}) sent(?:, (?P<write>{_FIGURE}) cache write)?(?:, (?P<hit>{_FIGURE}) cache hit)?, "
    rf"(?P<received>{_FIGURE}) received\.(?P<cost>.*)$"
)
_COST = re.compile(r"Cost: \$(?P<message>[\d.]+) (?:message|request), \$(?P<session>[\d.]+) session\.")
_MODEL = re.compile(r"^> (?:Main model|Model): (?P<model>\S+) with (?P<edit>\S+) edit format")
_VERSION = re.compile(r"^> Aider v(?P<version>\S+?)\s*$")
_CLEARS = ("/clear", "/reset")


def sniff(head: bytes, path: Path) -> bool:
    return bool(_SNIFF.match(head))


# -- the file as runs of classified lines ---------------------------------------------------------------------------
@dataclass
class _Run:
    """One aider run: its start line and time, and its lines as (line number, kind, text)."""

    number: int
    line: int
    started: float | None
    started_text: str
    lines: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def holds_conversation(self) -> bool:
        return any(kind in ("user", "usage") for _n, kind, _t in self.lines)


def _lines(path: Path) -> tuple[list[str], array, bool]:
    """The file's lines (their ends taken off), where each starts in bytes, and whether it was all UTF-8."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ReadError(str(path), "", f"cannot read the file: {exc.strerror or exc}") from None
    if size > MAX_BYTES:
        raise ReadError(str(path), "", f"the history is {size:,} bytes, larger than the {MAX_BYTES:,} foldscope reads")
    data = path.read_bytes()
    starts = array("q")
    offset = 0
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    texts = []
    clean = True
    for raw in raw_lines:
        starts.append(offset)
        offset += len(raw) + 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text, clean = raw.decode("utf-8", errors="replace"), False
        texts.append(text.rstrip("\r"))
    starts.append(min(offset, len(data)))
    return texts, starts, clean


def _runs(texts: list[str]) -> list[_Run]:
    """The file split at each `# aider chat started at` line, each line classified: start, user, usage, cost (a usage
    line's cost on the next line), aider (aider's own output) or text (the model's reply, or a blank line)."""
    # aider ends each of its own lines with two spaces (append_chat_history's markdown line break); where the file
    # kept them, a `> ` or `####` line without them is the model's own markdown (a quote, a heading).
    strict = any(t.endswith("  ") and (t.startswith("> ") or t.startswith("####")) for t in texts)
    runs: list[_Run] = []
    current: _Run | None = None
    for n, text in enumerate(texts, 1):
        start = _START.match(text)
        if start:
            current = _Run(len(runs) + 1, n, _local_time(start.group(1)), start.group(1))
            runs.append(current)
            continue
        if current is None:
            if text.strip():
                current = _Run(1, n, None, "")
                runs.append(current)
            else:
                continue
        ours = not strict or text.endswith("  ")
        if text.startswith("> Tokens: ") or USAGE_LINE.match(text):  # one that does not parse is said, not skipped
            kind = "usage"
        elif text.startswith("Cost: $") and current.lines and current.lines[-1][1] == "usage" and "Cost:" not in current.lines[-1][2]:
            kind = "cost"
        elif (text.startswith("#### ") or text.rstrip() == "####") and ours:
            kind = "user"
        elif (text.startswith("> ") or text.rstrip() == ">") and ours:
            kind = "aider"
        else:
            kind = "text"
        current.lines.append((n, kind, text))
    return runs


def _local_time(text: str) -> float | None:
    """aider's run start (datetime.now(), the machine's local time without a zone) as a timestamp."""
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%d %H:%M:%S"))
    except (ValueError, OverflowError):
        return None


def figure(text: str) -> int:
    """A usage figure as aider prints it: `344`, `1,234`, `3.2k` (3,200), `10k` (10,000)."""
    text = text.replace(",", "")
    value = round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    if value >= USAGE_LIMIT:
        raise ValueError(f"a usage figure past 2^63 ({text})")
    return value


def usage_of(text: str) -> tuple[Usage, float | None] | None:
    """A usage line's usage (fresh input = sent - cache write - cache hit) and aider's cost of the message, or None."""
    match = USAGE_LINE.match(text)
    if match is None:
        return None
    sent, received = figure(match["sent"]), figure(match["received"])
    write = figure(match["write"]) if match["write"] else 0
    hit = figure(match["hit"]) if match["hit"] else 0
    cost = _COST.search(match["cost"])
    return Usage(input=max(sent - write - hit, 0), cache_read=hit, cache_write=write, output=received), (
        float(cost["message"]) if cost else None
    )


# -- the sessions a file holds --------------------------------------------------------------------------------------
def _read_runs(path: Path) -> tuple[list[str], array, bool, list[_Run]]:
    texts, starts, clean = _lines(path)
    runs = _runs(texts)
    if not runs:
        raise ReadError(str(path), "", "the history holds no aider run")
    return texts, starts, clean, runs


def samples(path: str | Path) -> list[dict[str, Any]]:
    """The runs of the history that hold a conversation (`--session N` reads run N), with their requests and inputs."""
    _texts, _starts, _clean, runs = _read_runs(Path(path))
    return [
        {
            "id": str(run.number),
            "epoch": None,
            "name": str(run.number),
            "title": f"aider chat started at {run.started_text}" if run.started_text else "aider chat",
            "requests": sum(1 for _n, kind, _t in run.lines if kind == "usage"),
            "messages": sum(1 for i, (_n, kind, _t) in enumerate(run.lines) if kind == "user" and _first_of_block(run.lines, i)),
        }
        for run in runs
        if run.holds_conversation
    ]


def _first_of_block(lines: list[tuple[int, str, str]], i: int) -> bool:
    return i == 0 or lines[i - 1][1] != "user"


def _choose(path: Path, runs: list[_Run], sample: str | None) -> _Run:
    held = [r for r in runs if r.holds_conversation]
    if sample is None:
        if len(held) > 1:
            names = ", ".join(f"{r.number} ({r.started_text})" for r in held[:6]) + (", ..." if len(held) > 6 else "")
            raise ReadError(str(path), "", f"the history holds {len(held)} aider runs ({names}): choose one with --session N")
        if held:
            return held[0]
        raise ReadError(str(path), "", "no messages found: the history's aider runs hold no conversation")
    chosen = next((r for r in runs if str(r.number) == sample.strip()), None)
    if chosen is None:
        raise ReadError(str(path), "", f"no aider run {sample!r} in the history (runs: {', '.join(str(r.number) for r in held)})")
    if not chosen.holds_conversation:  # aider started and quit: the reader found nothing, and said only that
        raise ReadError(
            str(path),
            "",
            f"aider run {chosen.number} holds no conversation (runs that do: {', '.join(str(r.number) for r in held) or 'none'})",
        )
    return chosen


def read(path: Path, sample: str | None = None) -> Session:
    path = Path(path)
    texts, starts, clean, runs = _read_runs(path)
    run = _choose(path, runs, sample)
    builder = SessionBuilder(path, FORMAT)
    stat = path.stat()
    builder.source = SourceLines(builder.file, stat.st_size, stat.st_mtime_ns, starts)
    if not clean:
        builder.warn(0, "bytes that are not UTF-8, read as U+FFFD")
    builder.extras["cwd"] = str(path.resolve().parent)  # aider writes its history in the project's git root
    builder.extras["sample"] = str(run.number)
    builder.extras["header"] = {"run": run.number, "started": run.started_text or None, "cwd": builder.extras["cwd"]}
    _Reader(builder, run).run()
    session = builder.build()
    return session


class _Reader:
    """One run's lines into the record and the trace: inputs, replies, usage lines, aider's output."""

    def __init__(self, builder: SessionBuilder, run: _Run) -> None:
        self.b = builder
        self.run_ = run
        self.model: str | None = None
        self.version: str | None = None
        self.reply: list[tuple[int, str]] = []  # the reply's lines so far
        self.replies = 0  # replies since the last input: the second answers aider's own follow-up
        self.cleared = False  # the view was emptied by /clear since the last request
        self.first_at = run.started

    def run(self) -> None:
        lines = self.run_.lines
        i = 0
        while i < len(lines):
            n, kind, text = lines[i]
            self.b.line = n
            if kind == "user":
                j = i
                while j < len(lines) and lines[j][1] == "user":
                    j += 1
                self._input(lines[i:j])
                i = j
                continue
            if kind == "usage":
                cost_line = lines[i + 1][2] if i + 1 < len(lines) and lines[i + 1][1] == "cost" else ""
                self._usage(n, text + " " + cost_line)
            elif kind == "aider" or kind == "cost":
                self._aider(n, text)
            else:
                self.reply.append((n, text))
            i += 1
        self._cut_off()
        self.b.extras["aider"] = {"version": self.version, "model": self.model}

    def _input(self, block: list[tuple[int, str, str]]) -> None:
        self._cut_off()
        self.replies = 0
        lines = [t[5:] if t.startswith("#### ") else "" for _n, _k, t in block]
        text = "\n".join(line.rstrip() if line.endswith("  ") else line for line in lines).strip("\n")
        first = block[0][0]
        if text.startswith(("/", "!")):
            for n, _k, _t in block:
                self.b.unsent("aider command", n, self.b.source.starts[n - 1] if self.b.source else 0)
            if text.split(maxsplit=1)[0] in _CLEARS:
                self.b.view = []  # aider sends none of the conversation before it (cmd_clear: done and cur messages)
            return
        mid = self.b.add(f"run{self.run_.number}-input{first}", "instruction", {"instruction": text}, first, at=self.first_at)
        self.first_at = None
        self.b.also_from(mid, tuple(n for n, _k, _t in block))

    def _aider(self, n: int, text: str) -> None:
        model = _MODEL.match(text)
        if model:
            self.model = model["model"]
        version = _VERSION.match(text)
        if version:
            self.version = version["version"]
        self.b.unsent("aider output", n, self.b.source.starts[n - 1] if self.b.source else 0)

    def _usage(self, n: int, text: str) -> None:
        try:
            got = usage_of(text)
        except ValueError as exc:
            self.b.warn(n, f"{exc}: the request's usage is read as unknown")
            got = None
        else:
            if got is None:
                self.b.warn(n, "a usage line aider does not write: the request's usage is read as unknown")
        self._request(n, got[0] if got else None, got[1] if got else None)

    def _request(self, n: int | None, usage: Usage | None, cost: float | None) -> None:
        """The reply gathered so far as one request's response, with its usage line's figures."""
        lines = self._trimmed()
        first = lines[0][0] if lines else (n or 0)
        b = self.b
        b.start_response(f"run{self.run_.number}-reply{first}", first, None, self.model, {"model": self.model} if self.model else None)
        if self.replies:
            b.unseen_input("aider's follow-up message (lint or test errors, files to add), which the history does not hold")
        b.report_usage(usage)
        if cost is not None:
            b.turn_meta(aider_cost_usd=cost)
        b.turn_text("\n".join(t for _n, t in lines))
        if n is not None:
            b.unsent("aider usage", n, b.source.starts[n - 1] if b.source else 0)
        b.end_turn()
        b.close_request()
        response = b.trace[-1].response_id
        if response is not None:  # the reply's original is its lines, not only its first (the library keeps it)
            b.also_from(response, tuple(line for line, _t in lines))
        self.reply = []
        self.replies += 1

    def _cut_off(self) -> None:
        """Text left when the next input or the run's end comes: a reply cut off before its usage line, or, after a
        usage line, aider's own output written over several lines."""
        lines = self._trimmed()
        if lines and not self.replies:
            self._request(None, None, None)
        elif lines:
            for n, _t in lines:
                self.b.unsent("aider output", n, self.b.source.starts[n - 1] if self.b.source else 0)
        self.reply = []

    def _trimmed(self) -> list[tuple[int, str]]:
        lines = list(self.reply)
        while lines and not lines[0][1].strip():
            lines.pop(0)
        while lines and not lines[-1][1].strip():
            lines.pop()
        return lines


# -- where aider keeps its sessions ---------------------------------------------------------------------------------
def _places(environ: Mapping[str, str], home: Path, cwd: Path, folders: Sequence[Path]) -> list[Path]:
    """Where aider's histories are on this machine: `$AIDER_CHAT_HISTORY_FILE`, the current folder's history and its
    git root's (where aider writes it), and the folders the user names (searched SEARCH_DEPTH folders down)."""
    out: list[Path] = []
    moved = environ.get(ENV)
    if moved:
        out.append(Path(moved).expanduser().absolute())
    cwd = cwd.absolute()
    out.append(cwd / HISTORY)
    root = _git_root(cwd)
    if root is not None:
        out.append(root / HISTORY)
    out += [Path(f).expanduser().absolute() for f in folders]
    seen: set[Path] = set()
    return [p for p in out if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


def _git_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:
            return None
    return None


_SKIP = {"node_modules", "__pycache__", "venv", ".venv", ".git", ".tox", "site-packages"}


def _session_files(root: Path) -> Iterator[Path]:
    """A history file named itself, or the history files in a folder and its folders, SEARCH_DEPTH down (hidden
    folders, virtual environments and node_modules skipped)."""
    try:
        if root.is_file():
            yield root
            return
        if not root.is_dir():
            return
    except OSError:
        return
    base = len(root.parts)
    for folder, dirs, files in os.walk(root, onerror=lambda _e: None):
        depth = len(Path(folder).parts) - base
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith(".")) if depth < SEARCH_DEPTH else []
        if HISTORY in files:
            yield Path(folder) / HISTORY


def _project(path: Path) -> str:
    return str(path.parent)


SPEC = FormatSpec(
    name=FORMAT,
    title="Aider",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=samples,
    unseen_head=True,
    provider_text=False,
    follow=None,  # a reply is written whole after its call, its usage after it: the file grows by replies, not lines
    first_part=False,
    sessions=Sessions(env=ENV, default="", folder=".", files=_session_files, project=_project, places=_places),
    window=no_window,
    compaction=no_compaction,
    no_summary="aider summarises older messages silently (ChatSummary): the history records no compaction",
    cache="explicit",
    usage_precision="approximate",
    no_requests=(
        "Aider's history holds the conversation and one usage line per reply, not the requests "
        "(system prompt, repo map and files sent are not in it)"
    ),
)
