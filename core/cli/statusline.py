"""`foldscope statusline` (Claude Code's status line command) and `foldscope follow FILE --line`: one line saying the
next request's predicted input against the agent's window and compaction point, the last request's cache and
when it expires, the bill so far and its waste, and a warning at a limit.

The status line runs after each assistant message with a JSON object on standard input (`transcript_path` and
more). It must never be in the way: this module imports only the standard library, core.readout.status's light
half and core.cli.statusline_reader (the kept figures, the warm reader that reads ahead) until the file has grown
(then the measure is imported), and any failure prints one plain line and exits 0, since a failing command blanks
the user's bar. `--install` prints the settings.json entry (`--agent pi`: core.cli.statusline_pi, pi's footer);
`--write` writes it, keeping the user's other settings and a backup.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from foldscope.core.cli import statusline_reader as reader
from foldscope.core.cli.terminal_text import terminal_safe
from foldscope.core.model.money_text import under_a_hundredth_of_a_cent

TYPE_CHECKING = False  # typing and argparse cost the client a few ms of its start-up: only the checker reads these
if TYPE_CHECKING:
    import argparse
    from typing import Any

BAR = 10  # cells of the bar over the context window
ENV_PROFILE = "FOLDSCOPE_PROFILE"  # a policy profile (YAML) the warning's line and ceiling come from
CAUSE_WORDS = {"append": "append", "first": "first write", "provider": "provider miss", "unexplained": "write no rule explains"}


SUMMARY = "a status line for Claude Code and pi's footer (JSON on stdin): the next request's size, the cache, the cost"
DESCRIPTION = (
    "One line, run by the agent after each answer: the next request's predicted input against the context window and "
    "the compaction point, what the last request read from and wrote to the cache and why a write was not an append, "
    "when the cached prefix expires, the bill so far and its wasted part, and a warning at the compaction point or a "
    "profile's line and ceiling; the figures `requests` and `cache` give for the file at that moment. Claude Code hands "
    'it {"transcript_path": FILE} on stdin (--install prints the settings.json entry, --install --write puts it there); '
    "pi's footer runs it through the extension foldscope ships (--install --agent pi)."
)


def register(subparsers) -> None:
    add_statusline(subparsers.add_parser("statusline", help=SUMMARY, description=DESCRIPTION))
    add_follow(subparsers.add_parser("follow", help="follow a growing session file: --line prints the status line each time it grows"))


def add_statusline(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file", metavar="FILE", help="the transcript (default: transcript_path of the JSON on stdin)")
    p.add_argument("--lines", type=int, choices=(1, 2), default=1, help="1 (default) or 2: a second line with sources")
    p.add_argument("--no-color", action="store_true", help="plain text, no ANSI colour")
    p.add_argument("--profile", metavar="YAML", help=f"the policy profile for the warning (default: ${ENV_PROFILE})")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--install", action="store_true", help="print the settings.json entry for the agent (--agent)")
    p.add_argument(
        "--agent",
        # claude_code: the name sessions, usage and --format give the agent; the rest are told where their line goes
        choices=("claude", "claude_code", "pi", *ELSEWHERE),
        default="claude",
        help="with --install: claude or claude_code (default: Claude Code), or pi (its footer); another agent's name "
        "says how to see the line beside it",
    )
    p.add_argument("--write", action="store_true", help="with --install: write it into the settings (a backup kept)")
    p.add_argument(
        "--settings",
        metavar="FILE",
        help="the settings.json --write changes (default ~/.claude/settings.json; pi: ~/.pi/agent/settings.json)",
    )
    p.set_defaults(run=run_statusline)


def add_follow(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the session file the agent is writing")
    p.add_argument("--line", action="store_true", required=True, help="print the status line each time the file grows")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between looks (default 1)")
    p.add_argument("--polls", type=int, metavar="N", help="stop after N looks (default: until interrupted)")
    p.add_argument("--lines", type=int, choices=(1, 2), default=1, help="1 (default) or 2: a second line with sources")
    p.add_argument("--no-color", action="store_true", help="plain text, no ANSI colour")
    p.add_argument("--profile", metavar="YAML", help=f"the policy profile for the warning (default: ${ENV_PROFILE})")
    p.set_defaults(run=run_follow)


def main(argv: list[str]) -> int:
    """The entry point's fast way in (foldscope.app.main): parse only this command's flags, import nothing else."""
    args = plain_flags(argv)
    if args is None:
        from foldscope.core.cli.output import Parser

        parser = Parser(prog="foldscope statusline", description=DESCRIPTION)  # a refusal in one line, as every command's
        add_statusline(parser)
        args = parser.parse_args(argv)
    return run_statusline(args)


DEFAULTS: dict[str, Any] = {
    "file": None,
    "lines": 1,
    "no_color": False,
    "profile": None,
    "json": False,
    "install": False,
    "agent": "claude",
    "write": False,
    "settings": None,
}


def plain_flags(argv: list[str]) -> Any:
    """The flags as add_statusline's parser reads them, for the plain spellings a settings entry uses (`--no-color`,
    `--json`, `--lines 1|2`, `--file F`, `--profile F`), without importing argparse (with gettext, a few ms of each
    run); None for anything else (an abbreviation, `--flag=value`, --install, --help, a mistake): the parser reads it."""
    import types

    values = dict(DEFAULTS)
    k = 0
    while k < len(argv):
        flag = argv[k]
        if flag in ("--no-color", "--json"):
            values[flag[2:].replace("-", "_")] = True
        elif flag == "--lines" and argv[k + 1 : k + 2] in (["1"], ["2"]):
            values["lines"] = int(argv[k + 1])
            k += 1
        elif flag in ("--file", "--profile") and k + 1 < len(argv) and argv[k + 1] and not argv[k + 1].startswith("-"):
            values[flag[2:]] = argv[k + 1]
            k += 1
        else:
            return None
        k += 1
    return types.SimpleNamespace(**values)


def _folder() -> Path:
    """The state's folder: the cache folder's `statusline` (core.model.folders.cache_folder finds it on Linux without
    importing platformdirs, which cost each run about a quarter of a bare interpreter's start-up)."""
    from foldscope.core.model.folders import cache_folder

    return cache_folder() / "statusline"


def _colour(args: Any, hooked: bool) -> bool:
    """ANSI colour unless asked not to (--no-color, NO_COLOR, TERM=dumb); Claude Code's bar shows it (a hook's
    output is a pipe), elsewhere only a terminal does."""
    if args.no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return hooked or sys.stdout.isatty()


def run_statusline(args: Any) -> int:
    try:
        if args.install:
            return install(args)
        path, hooked = args.file, False
        if path is None and sys.stdin.isatty():  # typed at a terminal: nothing will come on stdin, so say what would
            print(
                'foldscope: statusline reads {"transcript_path": FILE} on stdin as Claude Code and pi hand it; at a '
                "terminal give --file FILE, or --install to set the agent up (foldscope statusline --help)",
                file=sys.stderr,
            )
            return 2
        if path is None:
            try:
                stdin = json.loads(sys.stdin.read() or "null")
            except ValueError as exc:  # name the place: the bare decoder's words said neither what nor where
                found = exc if isinstance(exc, json.JSONDecodeError) else None
                where = f" (line {found.lineno}, column {found.colno}: {found.msg.lower()})" if found else ""
                _say(f'foldscope: the status line\'s input is not JSON{where}; it takes {{"transcript_path": FILE}} on stdin')
                return 0
            if not isinstance(stdin, dict) or not isinstance(stdin.get("transcript_path"), str):
                _say("foldscope: no transcript_path in the status line's input")
                return 0
            if "\0" in stdin["transcript_path"]:  # no file can be named so: said here, not as the OS's "embedded null byte"
                _say("foldscope: the status line's input: transcript_path holds a NUL character, which no file name can")
                return 0
            path, hooked = stdin["transcript_path"], True
            if not _written(path):  # Claude Code runs the line before its first exchange writes the transcript
                _say(f"foldscope: waiting for the session's first message ({terminal_safe(Path(path).name)} not written yet)")
                return 0
        profile = args.profile or os.environ.get(ENV_PROFILE) or None
        figures = status_figures(path, profile, detach=hooked)
        if hooked:
            figures["agent_says"] = agent_says(stdin)
            # The window Claude Code says it runs the model in is the window: a [1m] model's 1,000,000, which the
            # transcript (naming the model without [1m]) cannot tell, with its compaction point by its rule.
            from foldscope.core.readout.status import under_agent_window

            figures = under_agent_window(figures, figures["agent_says"]["window"])
        if args.json:
            print(json.dumps(figures, indent=2, ensure_ascii=True))
        else:
            _say(render(figures, time.time(), _colour(args, hooked), args.lines))
    except Exception as exc:  # a failing status line blanks the user's bar: one plain line instead, exit 0
        _say(f"foldscope: {reader.short(exc)}")
    return 0


def agent_says(stdin: dict[str, Any]) -> dict[str, Any]:
    """What Claude Code's own object says of the window and the cost, shown beside foldscope's on the second line
    (its cost is its own estimate, subagents included; its window is the one it runs the model in)."""
    window, cost = stdin.get("context_window"), stdin.get("cost")
    window = window if isinstance(window, dict) else {}
    cost = cost if isinstance(cost, dict) else {}
    size, usd = window.get("context_window_size"), cost.get("total_cost_usd")
    return {
        "window": size if isinstance(size, int) and not isinstance(size, bool) else None,
        "cost_usd": usd if isinstance(usd, (int, float)) and not isinstance(usd, bool) else None,
    }


def _written(path: str) -> bool:
    """The transcript the agent named has something in it: Claude Code hands its path (at start, after /clear or a
    /reload-plugins) before the first exchange writes it, and the bar said "cannot read the file: No such file"."""
    try:
        return os.path.getsize(path) > 0
    except (OSError, ValueError):
        return False


def _say(text: str) -> None:
    try:
        print(text)
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass


def status_figures(path: str, profile: str | None = None, folder: Path | None = None, detach: bool = False) -> dict[str, Any]:
    """The figures for the file now: from the kept JSON when the file has not changed, else from the warm reader
    when one runs, else from the kept engine reading only what the file gained, else from a fresh read.
    `figures["_run"]` says which, and the bytes read. With `detach` the reading is done by a child in a session of
    its own, which then stays as the warm reader (core.cli.statusline_reader)."""
    folder = folder or _folder()
    kept = reader.kept(path, profile, folder)
    if kept is not None:
        return kept
    served = reader.ask(folder, path, profile)
    if served is not None:
        return served
    if detach and hasattr(os, "fork"):
        return reader.detached(path, profile, folder)
    return reader.update(path, profile, folder)


# --- the line -------------------------------------------------------------------------------------------------


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds >= 2 * 86400:
        return f"{seconds // 86400}d"
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}:{seconds % 60:02d}"


def _usd(value: float | None) -> str:
    """Cents, as Claude Code's own line gives them; a bill under a cent with its digits ($0.0016, as `sessions` and
    core.readout.words.dollars give it), never $0.00, which reads as free."""
    if value is None:
        return "n/a"
    return under_a_hundredth_of_a_cent(value) or (f"${value:,.4f}" if 0 < abs(value) < 0.01 else f"${value:,.2f}")


def cause_words(cache: dict[str, Any]) -> str:
    """The cause of the last write in words: what changed for a rewrite, the gap for an expiry, the miss reason."""
    cause = cache.get("cause")
    if cause is None:
        return "no write"
    if cause == "rewrite":
        where = cache.get("rewrite") or {}
        at = f" at message #{where['message']}" if where.get("message") is not None else ""
        return f"rewrite: {where.get('why', 'the request changed')}{at}"
    if cause == "expired":
        gap = cache.get("gap_s")
        return f"expired: {_duration(gap)} gap" if gap is not None else "expired"
    if cause == "provider" and cache.get("miss_reason"):
        return f"provider miss ({cache['miss_reason']})"
    return CAUSE_WORDS.get(cause, cause)


def expiry_words(cache: dict[str, Any], now: float) -> str:
    touched = cache.get("touched")
    if not touched:
        return "nothing cached"
    if touched.get("at") is None:
        return "expiry unknown (no times in the file)"
    if cache.get("implicit"):  # the provider keeps what it caches by itself for minutes, not a set lifetime (Cost tab)
        return f"last read {_duration(max(0.0, now - touched['at']))} ago (the provider's own cache)"
    left = touched["at"] + touched["lifetime_s"] - now
    life = "1h" if touched["lifetime_s"] >= 3600 else "5m"
    return f"expires in {_duration(left)} ({life})" if left > 0 else f"expired {_duration(-left)} ago"


def _next_named(nxt: dict[str, Any]) -> str:
    """What the first line's "next" figure is, by its name, and the estimate beside it when that is another figure:
    "predicted input, estimate 44,432" read as one figure named twice."""
    named = f"next {nxt['size']:,} is the {nxt['size_name']}"
    return named if nxt["size_name"] == "estimate" else f"{named} (the estimate, count x scale: {nxt['estimate']:,})"


def render(figures: dict[str, Any], now: float, colour: bool = False, lines: int = 1) -> str:
    """The status line (and with `lines=2` a second line naming where the limits came from)."""
    nxt = figures["next"]
    size = nxt["size"]
    agent = {lim["name"]: lim for lim in nxt["agent"]}
    window, compact = agent.get("context window"), agent.get("compaction point")
    scale = window or compact
    parts = []
    if scale:
        filled = min(BAR, round(size / scale["tokens"] * BAR))
        mark = min(BAR - 1, int(compact["tokens"] / scale["tokens"] * BAR)) if compact and window else None
        cells = "".join("█" if k < filled else ("|" if k == mark else "░") for k in range(BAR))
        hot = (
            "31"
            if "compaction point" in nxt["reached"] or "context window" in nxt["reached"]
            else "33"
            if compact and size >= 0.9 * compact["tokens"]
            else "32"
        )
        limit = f" of {window['tokens']:,}" if window else ""
        towards = f" ({size / compact['tokens']:.0%} of compaction {compact['tokens']:,})" if compact else ""
        parts.append(f"{_paint(cells, hot, colour)} next {size:,}{limit}{towards}")
    else:
        parts.append(f"next {size:,}")
    cache = figures.get("cache")
    if cache:
        cause = cause_words(cache)
        odd = cache.get("cause") in ("rewrite", "expired", "provider", "unexplained")
        est = "~" if cache.get("estimated") else ""  # foldscope's estimate, the file having usage totals only
        if cache.get("implicit"):  # the provider caches by itself: what a short read missed, never a write
            short = cache.get("short") or 0
            wrote = f"short {short:,} {_paint(terminal_safe(cause), '33', colour)}" if short else "read all it could"
        else:
            wrote = (
                f"write {est}{cache['write']:,} {_paint(terminal_safe(cause), '33' if odd else '2', colour)}"
                if cache["write"]
                else "no write"
            )
        said = " (usage estimated from totals)" if est else ""
        parts.append(f"cache read {est}{cache['read']:,} {wrote}{said} · {expiry_words(cache, now)}")
    cost = figures.get("cost") or {}
    if cost.get("bill_usd") is not None:
        wasted = cost.get("waste_usd")
        parts.append(f"{_usd(cost['bill_usd'])}" + (f" (wasted {_usd(wasted)})" if wasted else ""))
    if nxt["reached"]:
        limits = {lim["name"]: lim for lim in nxt["agent"] + nxt["policy"]}
        said = ", ".join(f"{name} {limits[name]['tokens']:,}" for name in nxt["reached"])
        parts.append(_paint(f"⚠ next request at or past the {said}", "1;31", colour))
    line = " · ".join(parts)
    if lines == 2:
        sources = [f"{lim['name']}: {terminal_safe(lim['source'])}" for lim in nxt["agent"] + nxt["policy"]]
        second = (
            f"{figures['requests']:,} requests, model {terminal_safe(str(figures.get('model') or 'unknown'))}; "
            + _next_named(nxt)
            + ("; " + "; ".join(sources) if sources else "")
        )
        says = figures.get("agent_says") or {}
        if says.get("window") is not None or says.get("cost_usd") is not None:
            told = [
                f"window {says['window']:,}" if says.get("window") is not None else "",
                f"cost {_usd(says['cost_usd'])}" if says.get("cost_usd") is not None else "",
            ]
            second += "; Claude Code says: " + ", ".join(x for x in told if x)
        line += "\n" + _paint(second, "2", colour)
    return line


# --- install --------------------------------------------------------------------------------------------------


def settings_entry() -> dict[str, Any]:
    """Claude Code's statusLine entry, naming the foldscope it can run: the one on PATH, else this one (run as
    .venv/bin/foldscope, it is on no PATH, and a bare `foldscope` would fail in Claude Code with nothing said)."""
    import shutil

    own = Path(sys.executable).with_name("foldscope")
    command = shutil.which("foldscope") or (str(own) if own.exists() else "foldscope")
    return {"statusLine": {"type": "command", "command": f"{command} statusline", "padding": 0}}


# The agents `sessions --agent` names whose own screen foldscope does not set its line in: `--install --agent codex`
# was refused as an invalid choice, where docs/cli.md gives such an agent `follow FILE --line`.
ELSEWHERE = ("codex", "gemini_cli", "qwen_code", "copilot_cli", "opencode", "cline", "aider")


def elsewhere_words(agent: str) -> str:
    """Where an agent foldscope does not install into sees the line: `follow FILE --line` beside it."""
    from foldscope.core.formats.registry import format_title

    title = format_title(agent)
    why = (
        "its footer ([tui] status_line) takes only Codex's own items, no command (openai/codex#20244)"
        if agent == "codex"
        else "foldscope sets its line up only in Claude Code's status line and pi's footer"
    )
    return (
        f"{title}: no status line to install ({why}); run `foldscope follow FILE --line` in a terminal pane or a "
        f"tmux split beside it, FILE the session file {title} is writing (`foldscope sessions --agent {agent}` "
        "lists them); nothing was written"
    )


def install(args: Any) -> int:
    """Print the settings.json entry; with --write put it in the settings, the rest kept and the old file backed up."""
    if getattr(args, "agent", "claude") == "pi":
        from foldscope.core.cli import statusline_pi

        return statusline_pi.install(args)
    if getattr(args, "agent", "claude") in ELSEWHERE:
        print(elsewhere_words(args.agent))
        return 0
    entry = settings_entry()
    print(json.dumps(entry, indent=2))
    target = Path(args.settings).expanduser() if args.settings else Path.home() / ".claude" / "settings.json"
    if not args.write:
        replaced = _other_status_line(target, entry["statusLine"])
        if replaced:
            print(f"{target} has a statusLine of its own ({replaced}): --write replaces it, keeping the file as a backup")
        print("(add this to ~/.claude/settings.json, or run `foldscope statusline --install --write`)")
        return 0
    from foldscope.core.cli.statusline_install import write_settings

    def put(settings: dict[str, Any]) -> None:
        replaced = _other_status_line(None, entry["statusLine"], settings)
        if replaced:
            print(f"replaces the statusLine {replaced} (the backup keeps it)")
        settings.update(entry)

    return write_settings(target, put)


def _other_status_line(target: Path | None, ours: dict[str, Any], settings: Any = None) -> str | None:
    """The user's own statusLine in the settings (read from `target` when not given) where it is not `ours`, as JSON
    with its control characters escaped; None when there is none, it is ours, or the file does not read."""
    if settings is None and target is not None:
        try:
            settings = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    old = settings.get("statusLine") if isinstance(settings, dict) else None
    if old is None or old == ours:
        return None
    return json.dumps(old, ensure_ascii=True)


# --- follow FILE --line ---------------------------------------------------------------------------------------


def run_follow(args: Any) -> int:
    """Print the status line for FILE now and each time it grows (for a terminal pane or tmux: Codex runs no
    status line command; pi's footer takes the shipped extension, `statusline --install --agent pi`)."""
    profile = args.profile or os.environ.get(ENV_PROFILE) or None
    colour = _colour(args, False)
    engine = None
    size = -1
    polls = 0
    said = ""  # the last problem printed: a file still missing is said once, not at every look
    try:
        while args.polls is None or polls < args.polls:
            polls += 1
            try:
                now_size = os.stat(args.file).st_size
                if now_size != size:
                    if engine is None or now_size < size:
                        from foldscope.core.readout.status import StatusEngine

                        engine = StatusEngine(args.file, profile)
                    size = now_size
                    _say(render(engine.update(), time.time(), colour, args.lines))
                    said = ""
            except Exception as exc:  # the pane keeps following: one plain line, and the next look starts afresh
                engine, size = None, -1
                if f"foldscope: {reader.short(exc)}" != said:
                    said = f"foldscope: {reader.short(exc)}"
                    _say(said)
            if args.polls is None or polls < args.polls:
                time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0
    return 0
