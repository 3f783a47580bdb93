"""What this machine says a Claude Code session was started with: memory files, custom agents, skills, MCP servers.

Claude Code sends its memory files (the user's `~/.claude/CLAUDE.md` and rules, then `CLAUDE.md`, `CLAUDE.local.md`
and `.claude/CLAUDE.md` in the session's folder and each folder above it, and the project's `.claude/rules/*.md`),
and one line per custom agent (`.claude/agents/*.md`) and per skill (`.claude/skills/*/SKILL.md`: name and
description), with the system prompt and tools its session file does not hold. This reads those files where they
exist on this machine now (they may have changed since the session), read-only; a rule scoped to paths
(`paths:` in its front matter) is loaded only when a matching file is read, so it is not the head. MCP servers are
named from the settings that configure them (`~/.claude.json`, `.mcp.json`, `.claude/settings*.json`): their tools'
definitions are not on disk, so they are named, never sized. Anything absent or unreadable is left out, never an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from foldscope.core.model import environment

MEMORY_NAMES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
MAX_BYTES = 2_000_000  # a memory file past this is not what an agent loads; it is skipped rather than read


@dataclass(frozen=True)
class SetupFile:
    """A file the agent sends part of, with the text it sends (the whole file, or an agent's or skill's line)."""

    path: str
    text: str


@dataclass
class AgentSetup:
    """What the machine holds for a session's folder: files whose text the head carries, servers only named."""

    memory: list[SetupFile] = field(default_factory=list)
    agents: list[SetupFile] = field(default_factory=list)
    skills: list[SetupFile] = field(default_factory=list)
    mcp_servers: list[tuple[str, str]] = field(default_factory=list)  # (server, the settings file naming it)


def user_home(home: Path | None = None) -> Path:
    """The home whose agent settings are read: `home`, else $FOLDSCOPE_AGENT_HOME (tests keep the user's out), else ~."""
    if home is not None:
        return home
    chosen = environment.folder("FOLDSCOPE_AGENT_HOME")  # None for a file named there (the start says so)
    return chosen if chosen is not None else Path.home()


def claude_home(home: Path | None = None) -> Path:
    """Claude Code's own folder: $CLAUDE_CONFIG_DIR (unless a home is chosen), else ~/.claude."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured and home is None and environment.folder("FOLDSCOPE_AGENT_HOME") is None:
        return Path(configured)
    return user_home(home) / ".claude"


def claude_json(home: Path | None = None) -> Path:
    """Where Claude Code keeps its user state and MCP servers: `.claude.json` in $CLAUDE_CONFIG_DIR, else in ~."""
    user = claude_home(home)
    return user / ".claude.json" if user != user_home(home) / ".claude" else user_home(home) / ".claude.json"


def _text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def front_matter(text: str) -> dict[str, str]:
    """The `key: value` lines of a Markdown file's leading `---` block (no YAML parser: flat keys are all we need)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            out[key.strip()] = value.strip().strip("'\"")
    return {}


def _rules(folder: Path) -> list[SetupFile]:
    """The rules a folder's `rules/` holds that load with every request (not scoped to paths)."""
    out: list[SetupFile] = []
    try:
        paths = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    except OSError:
        return out
    for path in paths:
        text = _text(path)
        if text is not None and "paths" not in front_matter(text):
            out.append(SetupFile(str(path), text))
    return out


def _listed(folder: Path, pattern: str) -> list[SetupFile]:
    """Agents or skills: the `name: description` line the agent sends for each (its front matter's)."""
    out: list[SetupFile] = []
    try:
        paths = sorted(folder.glob(pattern)) if folder.is_dir() else []
    except OSError:
        return out
    for path in paths:
        text = _text(path)
        if text is None:
            continue
        meta = front_matter(text)
        name = meta.get("name") or (path.parent.name if path.name == "SKILL.md" else path.stem)
        out.append(SetupFile(str(path), f"- {name}: {meta.get('description', '')}"))
    return out


def _servers(path: Path, project: str | None) -> list[tuple[str, str]]:
    """MCP server names a settings file configures (for `~/.claude.json`, also the project's own entry)."""
    text = _text(path)
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    tables = [data.get("mcpServers")]
    projects = data.get("projects")
    if project and isinstance(projects, dict) and isinstance(projects.get(project), dict):
        tables.append(projects[project].get("mcpServers"))
    return [(str(name), str(path)) for table in tables if isinstance(table, dict) for name in table]


def agent_setup(cwd: str | None, home: Path | None = None) -> AgentSetup:
    """The memory files, agents, skills and MCP servers a Claude Code session in `cwd` loads on this machine."""
    user = claude_home(home)
    setup = AgentSetup()
    seen: set[str] = set()

    def memory(path: Path) -> None:
        text = _text(path)
        key = os.path.realpath(path)
        if text is not None and key not in seen:
            seen.add(key)
            setup.memory.append(SetupFile(str(path), text))

    memory(user / "CLAUDE.md")
    setup.memory.extend(_rules(user / "rules"))
    folders: list[Path] = []
    if cwd:
        here = Path(cwd)
        folders = [here, *here.parents] if here.is_absolute() else [here]
    for folder in reversed(folders):  # the outermost first, as the agent loads them
        for name in MEMORY_NAMES:
            memory(folder / name)
    if folders:
        setup.memory.extend(_rules(folders[0] / ".claude" / "rules"))
    for base in [user, *([folders[0] / ".claude"] if folders else [])]:
        setup.agents.extend(_listed(base / "agents", "*.md"))
        setup.skills.extend(_listed(base / "skills", "*/SKILL.md"))
    settings = [claude_json(home), user / "settings.json"]
    if folders:
        settings += [folders[0] / ".mcp.json", folders[0] / ".claude" / "settings.json", folders[0] / ".claude" / "settings.local.json"]
    named: set[str] = set()
    for path in settings:
        for server, where in _servers(path, cwd):
            if server not in named:
                named.add(server)
                setup.mcp_servers.append((server, where))
    return setup
