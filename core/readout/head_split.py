"""The unseen head split where the file or the machine says what it holds, the rest one block named as such.

The unseen head (the system prompt, tools and memory a Claude Code, Codex or pi file does not hold) is one figure
per stretch, measured from the reports (core.request.trace). Its parts come from, in order of trust:
- the user's own figures, `/context` pasted into a file (`--head FILE`, core.formats.context_paste): its head
  categories (system prompt, system tools, MCP tools, custom agents, memory files, skills);
- else, for a Claude Code session whose folder is on this machine, what the machine holds for it
  (core.formats.agent_setup): memory files, custom agents and skills, each counted exactly (o200k_base) and named
  by path. A session from another machine (its folder absent here) takes nothing from this user's setup.
MCP servers named in the settings or in the file's own calls (`mcp__server__tool`) are named, never sized.
The parts never change the head: they fill it in order, and what they leave is "unseen head, not split"; figures
that come to more than the head are scaled down to it, and the note says by how much. So a request's split adds up
to its own stretch's head exactly, on every request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.formats.agent_setup import AgentSetup
from foldscope.core.formats.context_paste import ContextPaste, read_context
from foldscope.core.formats.registry import format_named
from foldscope.core.model.session import Session
from foldscope.core.request.count import count_text

NOT_SPLIT = "unseen head, not split"
# The order the parts are shown in: /context's own.
SAID_ITEMS = 4  # the things a part's note names, largest first
ORDER = ("system prompt", "system tools", "MCP tools", "custom agents", "memory files", "skills")


@dataclass(frozen=True)
class HeadPart:
    """A part of one request's unseen head: its tokens, where the figure comes from, and what it names."""

    name: str
    tokens: int
    source: str
    items: tuple[tuple[str, int], ...] = ()  # (path or label, tokens), largest first

    @property
    def said(self) -> str:
        """Its source, then the largest things it names (a category's note)."""
        named = ", ".join(f"{n} {t:,}" for n, t in self.items[:SAID_ITEMS])
        more = f" and {len(self.items) - SAID_ITEMS:,} more" if len(self.items) > SAID_ITEMS else ""
        return f"{self.source}: {named}{more}" if named else self.source

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tokens": self.tokens, "source": self.source, "items": [{"name": n, "tokens": t} for n, t in self.items]}


@dataclass(frozen=True)
class HeadSources:
    """What is known of a session's head before it is fitted to a request's: named parts with their figures, and
    what is named but not sized (MCP servers)."""

    parts: tuple[HeadPart, ...] = ()
    named: tuple[str, ...] = ()  # "MCP server github (.mcp.json)", unsized

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.parts)

    def split(self, head: int) -> list[HeadPart]:
        """The parts of a head of `head` tokens: these parts, scaled down when they come to more, and the rest as
        one block; they add up to `head` exactly (none for a head of 0)."""
        if head <= 0:
            return []
        named = [p for p in self.parts if p.tokens > 0]
        total = sum(p.tokens for p in named)
        rest_note = "what neither the file, the machine nor a --head file names" + (
            f"; named, not sized: {', '.join(self.named)}" if self.named else ""
        )
        if total <= head:
            rest = [HeadPart(NOT_SPLIT, head - total, rest_note)] if head > total else []
            return named + rest
        shares = _largest_remainder([p.tokens for p in named], head)
        why = f"; scaled by {head / total:.3f}: the figures come to {total:,}, more than the head of {head:,} measured from the reports"
        return [HeadPart(p.name, n, p.source + why, p.items) for p, n in zip(named, shares)]


def _largest_remainder(weights: Sequence[int], total: int) -> list[int]:
    """Integers in proportion to `weights` that add up to `total` exactly."""
    whole = sum(weights)
    exact = [w * total / whole for w in weights]
    out = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def _counted(name: str, files: Sequence[Any], source: str) -> HeadPart | None:
    items = sorted(((f.path, count_text(f.text)) for f in files), key=lambda item: -item[1])
    tokens = sum(n for _, n in items)
    return HeadPart(name, tokens, source, tuple(items)) if tokens else None


def mcp_from_calls(session: Session) -> list[str]:
    """MCP servers the file's own calls name (`mcp__server__tool`), in the order first called."""
    seen: dict[str, None] = {}
    for m in session.record:
        if m.kind == "action_request":
            name = str(m.content.get("function", ""))
            if name.startswith("mcp__") and name.count("__") >= 2:
                seen.setdefault(name.split("__")[1], None)
    return list(seen)


def head_sources(session: Session, paste: ContextPaste | None = None, home: Path | None = None) -> HeadSources:
    """What names parts of this session's head: the user's `/context` figures when given, else (for a Claude Code
    session) the memory files, agents and skills this machine holds for its folder."""
    spec = format_named(session.format)
    cwd = session.extras.get("cwd") if isinstance(session.extras.get("cwd"), str) else None
    # the format's own declaration says what the machine holds for its sessions (Claude Code's: core.formats.agent_setup),
    # read only when the session's folder is on this machine: a file from elsewhere is not this user's setup
    here = cwd is not None and _is_dir(cwd)
    setup = spec.setup(cwd, home) if here and spec is not None and spec.setup is not None else AgentSetup()
    if paste is not None:
        where = f"/context pasted in {paste.source}"
        by_name = {c.name: c for c in paste.categories}
        parts = [
            HeadPart(name, by_name[name].tokens, f"{where}, line {by_name[name].line}", tuple(by_name[name].items))
            for name in ORDER
            if name in by_name
        ]
    else:
        found = [
            _counted("memory files", setup.memory, "the memory files on this machine now, counted exactly (o200k_base)"),
            _counted("custom agents", setup.agents, "the agents' names and descriptions on this machine now, counted exactly"),
            _counted("skills", setup.skills, "the skills' names and descriptions on this machine now, counted exactly"),
        ]
        parts = [p for p in found if p is not None]
    servers = {name: where for name, where in setup.mcp_servers}
    for name in mcp_from_calls(session):
        servers.setdefault(name, "the file's calls")
    named: list[str] = []
    if paste is None or not any(p.name == "MCP tools" for p in parts):
        named = [f"MCP server {name} ({where})" for name, where in servers.items()]
    return HeadSources(tuple(parts), tuple(named))


def _is_dir(path: str) -> bool:
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


# The user's `/context` files by the session file they were given for (`--head FILE` beside it): every screen that
# composes that session's requests takes them, so the CLI, the report and the GUI show one split.
_PASTES: dict[str, ContextPaste] = {}


def use_head_file(session_source: str, path: str | Path) -> ContextPaste:
    """Read a `--head` file (ReadError when damaged) and use it for the session read from `session_source`."""
    paste = read_context(path)
    _PASTES[str(Path(session_source).resolve())] = paste
    return paste


def paste_for(session: Session) -> ContextPaste | None:
    try:
        return _PASTES.get(str(Path(session.source).resolve()))
    except (OSError, ValueError):
        return None


def sources_for(session: Session) -> HeadSources:
    """The session's head sources: its `--head` file's figures when one was given, else the machine's."""
    return head_sources(session, paste_for(session))
