"""The formats foldscope reads: one explicit list of declarations (core.formats.spec), asked wherever a format matters."""

from __future__ import annotations

from foldscope.core.formats import (
    aider,
    claude_code,
    cline,
    codex,
    copilot_cli,
    gemini_cli,
    inspect_log,
    lionagi,
    opencode,
    pi,
    qwen_code,
    raw_payload,
)
from foldscope.core.formats.spec import FormatSpec

# Order matters only when two formats' sniffs would both claim a file: the first one wins. A new format is one
# module declaring its SPEC and one entry here (docs/formats.md).
FORMATS: list[FormatSpec] = [
    lionagi.SPEC,
    qwen_code.SPEC,  # before Claude Code's, whose sniff would take its user and assistant records too
    claude_code.SPEC,
    codex.SPEC,
    pi.SPEC,
    inspect_log.SPEC,
    gemini_cli.SPEC,
    opencode.SPEC,
    cline.SPEC,
    copilot_cli.SPEC,
    aider.SPEC,
    raw_payload.SPEC,
]


def format_named(name: str | None) -> FormatSpec | None:
    """The declaration of the format called `name`, or None for a name no reader declares."""
    return next((spec for spec in FORMATS if spec.name == name), None)


def followed() -> list[FormatSpec]:
    """The formats read line by line as their file grows."""
    return [spec for spec in FORMATS if spec.follow is not None]


def format_title(name: str) -> str:
    """The format as a person names it (its agent: "GitHub Copilot CLI", not copilot_cli), as `sessions` and the agent
    sessions dialog name it; a name no reader declares as it is."""
    spec = format_named(name)
    return spec.title if spec is not None else name


def sample_flag(name: str) -> str:
    """The flag that names one session of a file holding several, as the format's own words and errors give it: an
    Aider history's runs `--session N`, the rest (an Inspect AI log's samples, an OpenCode database) `--sample ID`;
    every command takes either."""
    return "--session" if name == "aider" else "--sample"


def session_name(path: str, name: str, sample: str | None) -> str:
    """How a row names one session of a file: the file, and for a file of several the flag that opens this one
    (`FILE --session 2`, `FILE --sample 1:1`), so the row can be pasted back into any command."""
    return path if sample is None else f"{path} {sample_flag(name)} {sample}"


def sessions_word(name: str) -> str:
    """What the format calls the sessions one file holds, with sample_flag: an Aider history's "runs", else "sessions"."""
    return "runs" if name == "aider" else "sessions"


def agents() -> list[FormatSpec]:
    """The agents whose sessions are found on a machine (core.formats.discover)."""
    return [spec for spec in FORMATS if spec.sessions is not None]


def sending_format(session) -> str:
    """The format of the agent that sent the session's requests: the file's, or for a Branch foldscope exported from
    another agent's session, the source's (the export's manifest names it)."""
    source = (session.manifest or {}).get("source_format") if isinstance(session.manifest, dict) else None
    return source if isinstance(source, str) and source else session.format
