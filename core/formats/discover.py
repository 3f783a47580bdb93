"""The agent sessions on this machine: where each agent keeps its files, and a row per session found.

Where each agent writes, its format's declaration says (FormatSpec.sessions: the folder, the environment
variable that moves it, the files in it), for Claude Code, Codex, pi, Gemini CLI, Qwen Code, OpenCode and Cline
(with Roo Code and Kilo Code); Aider writes its history into each project, so its places are the file
`$AIDER_CHAT_HISTORY_FILE` names, the current folder's and its git root's, and the folders the user names;
docs/readers.md lists the folders. For example:
- Claude Code: `$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl` (default ~/.claude); a session's
  `<session>/subagents/` and older `agent-*.jsonl` files are its subagents, not sessions of their own.
- Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (default ~/.codex).
A row is read from the file's reported usage only (no tokenising): agent, project, start, size,
requests, model and cost. A file that does not read is listed with its problem, never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.formats.registry import agents, format_named, session_name
from foldscope.core.model.one_line import one_line
from foldscope.core.model.session import ReadError, Session


@dataclass(frozen=True)
class Found:
    """One session file on this machine and the facts its list row shows."""

    agent: str
    path: str
    project: str
    start: float | None
    size: int
    mtime: float
    requests: int | None = None
    model: str | None = None
    cost_usd: float | None = None
    problem: str | None = None
    end: float | None = None  # the last message's or request's time: with `start`, the session's wall time
    sample: str | None = None  # the session of a file holding several (an OpenCode database): --sample names it
    title: str | None = None  # the agent's own title for the session, else its first prompt (title_source says which)
    title_source: str | None = None

    def as_dict(self) -> dict[str, Any]:
        row = {
            "agent": self.agent,
            "path": self.path,
            "project": self.project,
            "start": self.start,
            "end": self.end,
            "size": self.size,
            "modified": self.mtime,
            "requests": self.requests,
            "model": self.model,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "problem": self.problem,
            "title": self.title,
            "title_source": self.title_source,
        }
        spec = format_named(self.agent)
        if spec is not None and spec.usage_precision != "exact":  # the other agents' rows stay as they were
            row["usage_precision"] = spec.usage_precision
        return row if self.sample is None else {**row, "sample": self.sample}


def roots(environ: Mapping[str, str] | None = None, home: Path | None = None) -> dict[str, Path]:
    """Each agent's folder of sessions, as its environment variable or its default says (an agent that keeps its
    sessions in each project: the first of its places)."""
    return {agent: found[0] for agent, found in places(environ, home).items() if found}


def places(
    environ: Mapping[str, str] | None = None, home: Path | None = None, cwd: Path | None = None, folders: Sequence[Path] = ()
) -> dict[str, list[Path]]:
    """Where each agent's sessions are looked for: its folder (`$env`, else `~/default`, then `folder`), or, for an
    agent that writes them into each project (Aider), the places its declaration names from the environment, the
    current folder `cwd` and the `folders` the user names."""
    environ = os.environ if environ is None else environ
    home = Path.home() if home is None else home
    out = {}
    for spec in agents():
        assert spec.sessions is not None
        if spec.sessions.places is not None:
            out[spec.name] = spec.sessions.places(environ, home, Path.cwd() if cwd is None else cwd, folders)
            continue
        base = environ.get(spec.sessions.env)
        out[spec.name] = [(Path(base) if base else home / spec.sessions.default) / spec.sessions.folder]
    return out


def session_files(agent: str, root: Path) -> Iterator[Path]:
    """The session files under an agent's folder (subagent files left out), unreadable folders skipped."""
    spec = format_named(agent)
    if spec is None or spec.sessions is None:
        return
    for path in spec.sessions.files(root):
        try:
            if path.is_file():
                yield path
        except OSError:
            continue


def project_of(agent: str, path: Path, session: Session | None) -> str:
    """The project a session ran in: the cwd its file names, else as its agent names it (its folder's name)."""
    if session is not None:
        for key in ("cwd",):
            meta = session.extras.get("session_meta")
            if isinstance(meta, list) and meta and isinstance(meta[0], dict) and isinstance(meta[0].get(key), str):
                return meta[0][key]
            header = session.extras.get("header")
            if isinstance(header, dict) and isinstance(header.get(key), str):
                return header[key]
            if isinstance(session.extras.get("cwd"), str):
                return session.extras["cwd"]
    spec = format_named(agent)
    return spec.sessions.project(path) if spec is not None and spec.sessions is not None else path.parent.name


def describe(agent: str, path: Path, sample: str | None = None) -> Found:
    """A session's list row from its reported usage (core.model.session_totals prices it); `sample` names one
    session of a file holding several."""
    from foldscope.core.formats import load_session
    from foldscope.core.model.session_totals import rolled_up

    stat = path.stat()
    try:
        session = load_session(path, agent, sample)
    except ReadError as exc:
        return Found(agent, str(path), project_of(agent, path, None), None, stat.st_size, stat.st_mtime, problem=exc.problem, sample=sample)
    totals = rolled_up(session)["total"]
    times = [m.created_at for m in session.record if m.created_at is not None]
    times += [r.at for s in (session, *session.children) for r in s.trace if r.at is not None]
    title, source = title_of(session)
    return Found(
        agent,
        str(path),
        project_of(agent, path, session),
        min(times) if times else None,
        stat.st_size,
        stat.st_mtime,
        totals.requests,
        session.model,
        totals.cost_usd,
        end=max(times) if times else None,
        sample=sample,
        title=title,
        title_source=source,
    )


def sessions_in(agent: str, path: Path) -> list[str | None]:
    """The sessions a file holds, each a row: a file of several (an OpenCode database) lists them, else one."""
    spec = format_named(agent)
    if spec is None or spec.samples is None:
        return [None]
    try:
        listed = spec.samples(path)
    except ReadError:
        return [None]  # described alone, the file says its problem
    return [str(s["name"]) for s in own_samples(listed)] if len(listed) > 1 else [None]


def own_samples(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sessions of a file a user chooses among: a session a subagent ran (its `parent` named) is its parent's, not
    one of its own, while that parent is there to count it (one whose parent is gone is, or it would count nowhere)."""
    names = {str(s["name"]) for s in listed}
    return [s for s in listed if str(s.get("parent") or "") not in names]


def file_sessions(path: Path, named: str | None = None) -> list[tuple[str | None, str]]:
    """Each session a file holds as a folder command reads it, with the name its row gives it (registry.session_name):
    a file of several (an Aider history's runs, an Inspect AI log's samples, an OpenCode database) one per session, as
    `sessions` lists them; any other file once, by its path, a file no reader claims too (read, it says why).
    `named`: the name the rows give the file (a remote one's URL, read from a local copy), else its path."""
    from foldscope.core.formats import detect_format

    try:
        agent = detect_format(path)
    except (ReadError, OSError):
        return [(None, named or str(path))]
    return [(sample, session_name(named or str(path), agent, sample)) for sample in sessions_in(agent, path)]


# What an agent writes as the user's turn before the user's own words: harness tags (<command-name>, <environment_context>,
# <user_message_time>), Claude Code's local-command caveat, Codex's AGENTS.md, an interruption.
_TAGS = re.compile(r"^\s*(?:<([\w-]+)[^>]*>.*?</\1>\s*)+", re.DOTALL)
_NOT_A_PROMPT = ("Caveat: The messages below", "# AGENTS.md", "[Request interrupted", "<")
TITLE_CHARS = 80


def title_of(session: Session) -> tuple[str | None, str | None]:
    """What tells this session apart in a list: the agent's own title (Claude Code's summary line, the latest), else
    the user's first prompt, on one line; with which it is ("agent" or "first prompt")."""
    summaries = session.extras.get("summaries")
    if isinstance(summaries, list):
        named = [str(s["summary"]) for s in summaries if isinstance(s, dict) and isinstance(s.get("summary"), str)]
        if named and named[-1].strip():
            return _one_line(named[-1]), "agent"
    for message in session.record:
        if message.kind != "instruction":
            continue
        text = _TAGS.sub("", message.text).strip()
        if text and not text.startswith(_NOT_A_PROMPT):
            return _one_line(text), "first prompt"
    return None, None


def _one_line(text: str) -> str:
    return one_line(text, TITLE_CHARS)


def find_sessions(
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    each: Callable[[int, int, Found], None] | None = None,
    agents_: Collection[str] | None = None,
    cwd: Path | None = None,
    folders: Sequence[Path] = (),
) -> list[Found]:
    """Every agent session on this machine, newest start first (a file that gave no time by its last change), as the
    CLI's `sessions` and the GUI's Open Agent Session list both show them. `each(done, total, found)`
    hears of every session as it is read (the files are listed first, then each is read: the slow part). `agents_`:
    only these agents' folders are read. `cwd` and `folders`: where an agent that keeps its sessions in each project
    (Aider) looks besides its environment variable (the current folder and its git root; the folders named)."""
    listed = dict.fromkeys(
        (agent, path)
        for agent, looked in places(environ, home, cwd, folders).items()
        if agents_ is None or agent in agents_
        for root in looked
        for path in session_files(agent, root)
    )
    files = [(agent, path, sample) for agent, path in listed for sample in sessions_in(agent, path)]
    found = []
    for done, (agent, path, sample) in enumerate(files, 1):
        found.append(describe(agent, path, sample))
        if each is not None:
            each(done, len(files), found[-1])
    return sorted(found, key=lambda f: f.start if f.start is not None else f.mtime, reverse=True)


def session_entries(paths: Iterable[str]) -> list[str]:
    """The paths a folder command reads as sessions: a Cline task's files named once (one_file_a_task), and an
    OpenCode storage's message and part files left out, each read with its session (`storage/session/<project>/<id>.json`
    reads `storage/message/<id>/` and `storage/part/<message>/`): `usage` on a storage folder skipped every one of
    them as not a session file, 14 lines for 2 sessions."""
    return [p for p in one_file_a_task(paths) if not _opencode_piece(Path(p))]


def _opencode_piece(path: Path) -> bool:
    """A message or part file of OpenCode's older storage: `message/<session>/*.json` or `part/<message>/*.json` beside a
    `session/` folder, or the storage's own `migration` mark (storage.ts) beside it."""
    if path.name == "migration" and (path.parent / "session").is_dir():
        return True
    kind = path.parent.parent
    return kind.name in ("message", "part") and (kind.parent / "session").is_dir()


def one_file_a_task(paths: Iterable[str]) -> list[str]:
    """The paths with each Cline task named once: either of its files reads the whole task, so a folder walked whole
    (`usage`, `tune`, `replay DIR`) counted a task of both files twice. Its ui_messages.json stands for it, else its
    API history, as discovery lists it (cline._session_files); its other files (task_metadata.json) are left out with it."""
    from foldscope.core.formats.cline import API, COMPANIONS, UI

    given = list(paths)
    named = set(given)
    out = []
    for p in given:
        path = Path(p)
        if path.name in COMPANIONS:
            stands = next((str(path.parent / n) for n in (UI, API) if str(path.parent / n) in named), None)
            if stands is not None and stands != p:
                continue
        out.append(p)
    return out
