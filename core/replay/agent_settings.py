"""Each agent's own compaction knob: where a compact-at fraction of the window puts its compaction, and the setting
(environment variable, or config file and key) a person writes to get it; a lionagi run takes a profile instead.

The key names, files and defaults below are the agents' documented ones (each with its source), so a recommendation
from `tune` is a line a person can paste. Where an agent's knob cannot reach the fraction (Claude Code's override
only lowers its default point), the point is where the agent really compacts, and the setting says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from foldscope.core.formats.claude_code import BUFFER, OUTPUT_RESERVE

LIONAGI = "lionagi"


@dataclass(frozen=True)
class Knob:
    """One agent's compaction knob: what it is called, where it is written, its default, and where that is documented."""

    agent: str  # the session format that names the agent (core.formats)
    title: str
    key: str  # the environment variable or the config key, as the agent spells it
    where: str  # where the key is written
    default: str  # the agent's default, in words
    source: str  # where the key and its default are documented
    point: Callable[[float, int], int]  # (compact-at fraction, window) -> the size at which the agent compacts
    value: Callable[[float, int], str]  # (compact-at fraction, window) -> the key's value
    line: Callable[[str], str]  # the value -> the line to write
    note: Callable[[float, int], str] = lambda f, w: ""


# Claude Code compacts at its window less the summary's output reserve (min(max output, 20,000)) and a 13,000 buffer
# (deobfuscated in anthropics/claude-code#31806); the window is the model's, or autoCompactWindow where lower: a
# setting of ~/.claude/settings.json, 100,000 to 1,000,000 tokens, which `/autocompact N` writes
# (https://code.claude.com/docs/en/settings). So compacting at P takes autoCompactWindow = P + 33,000. The older
# CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is not offered: it only lowers the point, is reported ignored from settings.json's
# env block (anthropics/claude-code#63186, #64773) and to have stopped taking effect from v2.1.220 (#82761).
CLAUDE_KEY = "autoCompactWindow"
CLAUDE_LEAST, CLAUDE_MOST = 100_000, 1_000_000  # what the setting takes


def _claude_value(fraction: float, window: int) -> int:
    """The autoCompactWindow that puts the point at `fraction` of the window, within what the setting takes."""
    return max(CLAUDE_LEAST, min(int(fraction * window) + OUTPUT_RESERVE + BUFFER, window, CLAUDE_MOST))


def _claude_point(fraction: float, window: int) -> int:
    return min(_claude_value(fraction, window), window) - OUTPUT_RESERVE - BUFFER


def _claude_note(fraction: float, window: int) -> str:
    wanted = int(fraction * window)
    point = _claude_point(fraction, window)
    if point >= window - OUTPUT_RESERVE - BUFFER:
        return (
            f"{fraction:g} of the window is at or past Claude Code's own point ({window - OUTPUT_RESERVE - BUFFER:,} of "
            f"{window:,}, the window less 33,000): leaving {CLAUDE_KEY} unset does the same"
        )
    if point > wanted:
        return f"{CLAUDE_KEY} takes {CLAUDE_LEAST:,} at the least, so Claude Code compacts at {point:,}, not {wanted:,}"
    value = _claude_value(fraction, window)
    return f"it compacts at the setting less 33,000 (20,000 for the summary, a 13,000 buffer); /autocompact {value} sets the same"


# Codex (~/.codex/config.toml, https://github.com/openai/codex/blob/main/docs/config.md): model_auto_compact_token_limit
# is the token count at which it compacts; by default nine tenths of the model's window (core.formats.codex).
# pi (~/.pi/agent/settings.json, packages/coding-agent/docs/settings.md in badlogic/pi-mono): compaction.reserveTokens,
# 16,384 by default; pi compacts when the context passes the window less it.
# Cline (its VS Code global state, set from the context window bar; src/core/storage/utils/state-helpers.ts in
# cline/cline): autoCondenseThreshold, a fraction of the window, 0.75 by default, with useAutoCondense on.
# Gemini CLI (~/.gemini/settings.json, docs/get-started/configuration.md in google-gemini/gemini-cli):
# model.compressionThreshold, a fraction of the model's token limit, 0.5 by default.
KNOBS: dict[str, Knob] = {
    k.agent: k
    for k in (
        Knob(
            "claude_code",
            "Claude Code",
            CLAUDE_KEY,
            "~/.claude/settings.json (or /autocompact N in a session)",
            "unset: the model's window, so it compacts at the window less 33,000",
            "https://code.claude.com/docs/en/settings; anthropics/claude-code#31806 (the threshold's code)",
            _claude_point,
            lambda f, w: str(_claude_value(f, w)),
            lambda v: f'"{CLAUDE_KEY}": {v}',
            _claude_note,
        ),
        Knob(
            "codex",
            "Codex",
            "model_auto_compact_token_limit",
            "~/.codex/config.toml",
            "nine tenths of the model's window",
            "https://github.com/openai/codex/blob/main/docs/config.md",
            lambda f, w: int(f * w),
            lambda f, w: str(int(f * w)),
            lambda v: f"model_auto_compact_token_limit = {v}",
        ),
        Knob(
            "pi",
            "pi",
            "compaction.reserveTokens",
            "~/.pi/agent/settings.json (or .pi/settings.json in the project)",
            "16384",
            "https://github.com/badlogic/pi-mono/blob/main/packages/coding-agent/docs/settings.md",
            lambda f, w: w - (w - int(f * w)),
            lambda f, w: str(w - int(f * w)),
            lambda v: f'"compaction": {{"reserveTokens": {v}}}',
        ),
        Knob(
            "cline",
            "Cline",
            "autoCondenseThreshold",
            "Cline's settings (the auto-condense marker on its context window bar), with useAutoCondense on",
            "0.75",
            "https://github.com/cline/cline/blob/main/src/core/storage/utils/state-helpers.ts",
            lambda f, w: int(f * w),
            lambda f, w: f"{f:g}",
            lambda v: f"useAutoCondense: true, autoCondenseThreshold: {v}",
        ),
        Knob(
            "gemini_cli",
            "Gemini CLI",
            "model.compressionThreshold",
            "~/.gemini/settings.json (or .gemini/settings.json in the project)",
            "0.5",
            "https://github.com/google-gemini/gemini-cli/blob/main/docs/get-started/configuration.md",
            lambda f, w: int(f * w),
            lambda f, w: f"{f:g}",
            lambda v: f'"model": {{"compressionThreshold": {v}}}',
        ),
        Knob(
            "qwen_code",
            "Qwen Code",
            "model.chatCompression.contextPercentageThreshold",
            "~/.qwen/settings.json (or .qwen/settings.json in the project)",
            "0.7",
            "https://qwenlm.github.io/qwen-code-docs/en/cli/configuration",
            lambda f, w: int(f * w),
            lambda f, w: f"{f:g}",
            lambda v: f'"model": {{"chatCompression": {{"contextPercentageThreshold": {v}}}}}',
        ),
    )
}


def knob(agent: str) -> Knob | None:
    return KNOBS.get(agent)


def compaction_point(agent: str, fraction: float, window: int) -> tuple[int, str]:
    """Where the agent compacts with its knob set for `fraction` of a `window`-token window, and why there."""
    k = KNOBS.get(agent)
    if k is None:
        return int(fraction * window), f"{fraction:g} of the {window:,}-token window (the agent has no knob of its own: a lionagi profile)"
    return k.point(fraction, window), f"{k.title}'s {k.key} for {fraction:g} of the {window:,}-token window"


def agent_setting(agent: str, fraction: float, window: int) -> dict[str, Any] | None:
    """The setting that makes `agent` compact at `fraction` of its window: key, where it goes, value, the line to
    write, the point it gives, the default it replaces and the source; None for an agent without a knob."""
    k = KNOBS.get(agent)
    if k is None:
        return None
    value = k.value(fraction, window)
    return {
        "agent": agent,
        "title": k.title,
        "key": k.key,
        "where": k.where,
        "value": value,
        "line": k.line(value),
        "window": window,
        "compacts_at": k.point(fraction, window),
        "default": k.default,
        "note": k.note(fraction, window),
        "source": k.source,
    }


def lionagi_profile(name: str, keys: Mapping[str, Any]) -> str:
    """A profile a lionagi run and `--profile FILE` take: the policy keys as YAML, the strategy (no policy key: a
    replay's --strategy) and the point's name in a comment first, so the text saved as it is loads as the policy."""
    strategy = keys.get("strategy")
    lines = [f"# {name}: foldscope replay FILE --profile THIS_FILE" + (f" --strategy {strategy}" if strategy else "")]
    for key, value in keys.items():
        if value is None or key == "strategy":
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)
        lines.append(f"{key}: {text}")
    return "\n".join(lines)


def compaction_profile_keys(fraction: float, window: int) -> dict[str, Any]:
    """The policy keys for summarise-everything compaction at `fraction` of a window: the window as the ceiling, the
    line at the fraction, and a target below it (the compaction ignores it; a policy needs one under the line)."""
    return {
        "max_input_tokens": window,
        "context_fold_at": fraction,
        "context_fold_target": None if fraction > 0.6 else round(fraction / 2, 3),
        "strategy": "compaction",
    }
