"""What a session format is: the one frozen declaration (FormatSpec) each reader module makes, and the parts it names.

Every place that once asked "is this file claude_code?" asks the declaration instead (core.formats.registry holds
the list): adding a format is one reader module with its SPEC, one entry in that list, its tests and fixtures
(docs/formats.md). A field is required: a declaration states each fact, None or False where the format lacks it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from foldscope.core.formats.stream import SessionBuilder
from foldscope.core.model.session import Session

# How the provider's prompt cache shows in the file's usage: "explicit" writes billed apart from reads (Anthropic's
# cache_creation), "implicit" reads only (OpenAI's and Gemini's automatic caching: no write is ever reported), or
# "none" (the file holds no usage to speak of a cache).
CacheModel = Literal["explicit", "implicit", "none"]
CACHE_MODELS: tuple[CacheModel, ...] = ("explicit", "implicit", "none")

# How exact the usage the file reports is: "exact", the provider's counts as it returned them; "approximate", the
# agent's rounded figures or its own estimate where the provider returned none (Aider's "3.2k sent"). Every screen
# and --json marks an approximate session's figures so (core.readout.usage_precision).
UsagePrecision = Literal["exact", "approximate"]
USAGE_PRECISIONS: tuple[UsagePrecision, ...] = ("exact", "approximate")

# A figure and where it comes from, as a screen names it (core.readout.agent_limits makes it a Limit).
Figure = tuple[int, str]


class LineFeed(Protocol):
    """A reader's line mapper kept open between a follower's polls (core.formats.follow)."""

    @property
    def branched(self) -> bool:
        """The file stopped reading as one line after another (a tree switched branch): read it again whole."""
        ...

    def feed(self, line: int, offset: int, value: Any) -> None: ...

    def snapshot(self) -> Session:
        """The session as read so far."""
        ...


def folder_name(path: Path) -> str:
    """A session file's folder's name: the project, where an agent keeps a folder of sessions per project."""
    return path.parent.name


@dataclass(frozen=True)
class Sessions:
    """Where an agent keeps its sessions on a machine: `$env`, else `~/default`, then `folder`, holding `files`."""

    env: str  # the environment variable that moves the agent's folder
    default: str  # the agent's folder under the home, when the variable is unset ("" when the variable moves the home)
    folder: str  # the folder of sessions inside the agent's folder
    files: Callable[[Path], Iterator[Path]]  # the session files under that folder, subagents' files left out
    project: Callable[[Path], str] = folder_name  # the project of a session whose file names no working folder
    # An agent that writes its sessions into each project, not into one folder of its own (Aider's history in the
    # git root): the places to look, from the environment, the home, the current folder and the folders the user
    # names (`sessions --in`); each place is a session file or a folder `files` walks. None: `$env` or `~/default`.
    places: Callable[[Mapping[str, str], Path, Path, Sequence[Path]], list[Path]] | None = None
    # The folders `files` walks under a place, said as a pattern, where the place alone would not name them (Cline's
    # tasks under each editor's user data): what `sessions` says it looked in. None: the place itself.
    where: Callable[[Path], str] | None = None


@dataclass(frozen=True)
class FormatSpec:
    """One session format, declared once by its reader module."""

    name: str  # what load_session's `format=`, Session.format and the CLI's --format call it
    title: str  # the agent or tool as a person names it
    sniff: Callable[[bytes, Path], bool]  # from the file's first bytes (never its name): is it this format?
    read: Callable[..., Session]  # read(path) -> Session; ReadError on bad input
    trace_later: bool  # read(path, trace=False) leaves the trace for finish_trace (the record shown first)
    samples: Callable[[Path], list[dict[str, Any]]] | None  # one file holds several sessions: list them (--sample)
    unseen_head: bool  # the file lacks the system prompt and tools the provider was sent (an unseen head)
    provider_text: bool  # the prediction counts the provider's text, whatever the model (core.request.provider_text)
    follow: Callable[[SessionBuilder], LineFeed] | None  # read line by line as the file grows, or None
    first_part: bool  # the first lines read as the file's start: a large file shows them while the rest is read
    sessions: Sessions | None  # where the agent keeps its sessions on a machine, or None
    window: Callable[[str | None], Figure | None]  # the agent's rule for a model's window (None: its default window)
    compaction: Callable[[int], Figure | None]  # where the agent compacts by itself, for a window of that size
    no_summary: str | None  # why a compaction's summary request is not beside the file (None: the general reason)
    cache: CacheModel
    usage_precision: UsagePrecision  # the reported usage as the provider counted it, or the agent's approximation
    # Why the file does not hold what each request sent (composition and replay say it in one line), or None: it does
    # (its head aside, which unseen_head says).
    no_requests: str | None
    # What the machine holds for a session's folder that the agent sends in its head (memory files, agents, skills,
    # MCP servers: core.formats.agent_setup), read as setup(cwd, home); None: the format names none.
    setup: Callable[[str | None, Path | None], Any] | None = None
    # How the agent renders a message into the prompt where that is not the message's text (lionagi's headings), the
    # text or None for the message's own: what the prediction counts (core.request.provider_text); None: always its text.
    prompt_text: Callable[[Any], str | None] | None = None


def no_window(model: str | None) -> Figure | None:
    """A format that documents no window of its own."""
    return None


def no_compaction(window: int) -> Figure | None:
    """A format that documents no compaction rule of its own."""
    return None


def project_files(root: Path, suffix: str = ".jsonl") -> Iterator[Path]:
    """The files with `suffix` one folder down (`root/<project>/<file>`), sorted, unreadable folders skipped."""
    return (p for project in _children(root) if project.is_dir() for p in _children(project) if p.suffix == suffix)


def chat_files(root: Path, keep: Callable[[Path], bool]) -> Iterator[Path]:
    """The files `keep` takes in `root/<project>/chats/` (Gemini CLI's and Qwen Code's layout), sorted, unreadable
    folders skipped; a subagent's folder inside `chats/` is not walked."""
    return (p for project in _children(root) for p in _children(project / "chats") if keep(p))


def chats_project(path: Path) -> str:
    """The project of a file in `<project>/chats/`: the folder the agent named after it."""
    return path.parent.parent.name


def walk_files(root: Path, pattern: str) -> Iterator[Path]:
    """The files under `root` at any depth whose name matches `pattern`, unreadable folders skipped."""
    for folder, _dirs, files in os.walk(root, onerror=lambda _e: None):
        for name in files:
            if Path(name).match(pattern):
                yield Path(folder) / name


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []
